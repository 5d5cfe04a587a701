/*
 * units: the one parser and formatter of sizes ("8M", "128K", "4096") and
 * durations ("6h", "15m", "5s", "1h30m", "500ms") that the daemon's
 * configuration, the CLI's flags and the probes' flags all use.
 */
#ifndef TW_UNITS_H
#define TW_UNITS_H

#include <stddef.h>
#include <stdint.h>

/* An unsigned decimal with an optional fraction ("12", "1.5", ".5"; no
 * sign, no exponent) at the start of s. Returns the end, or NULL when s
 * does not start with one. */
const char *units_decimal(const char *s, double *out);

/* A duration: one or more NUMBER UNIT parts (ms, s, m, h, d, w), such as
 * "90s", "1h30m" or "1.5h"; a bare number is seconds, but only on its own.
 * Rounded to the microsecond. 0, -EINVAL (empty, negative, bad number or
 * suffix) or -ERANGE (too large to represent). */
int units_parse_duration(const char *s, double *seconds);

/* A size in bytes: NUMBER with an optional binary suffix (B; K, KB, KiB,
 * k; M, MB, MiB, m; G, GB, GiB, g; T, TB, TiB, t), optionally after a
 * space: "4096", "256K", "8M", "1.5G". A fraction of a byte is dropped.
 * 0, -EINVAL (empty, negative, bad number or suffix) or -ERANGE (above
 * UINT64_MAX). */
int units_parse_size(const char *s, uint64_t *bytes);

/* The shortest text that reads back as v, followed by suffix; without an
 * exponent unless allow_exp, or unless 24 decimals cannot say it (1e-129). */
void units_format_number(double v, const char *suffix, int allow_exp, char *buf, size_t len);
/* A duration the way units_parse_duration reads it: "6h", "1h30m",
 * "500ms", "0". */
void units_format_duration(double seconds, char *buf, size_t len);
/* A size the way units_parse_size reads it: "8M", "128K", "1000". */
void units_format_size(double bytes, char *buf, size_t len);

#endif
