/*
 * clock: the time bases probes measure with. CLOCK_MONOTONIC nanoseconds
 * everywhere; TSC cycles on x86-64, with the TSC frequency calibrated
 * against CLOCK_MONOTONIC.
 */
#ifndef TW_CLOCK_H
#define TW_CLOCK_H

#include <stdint.h>

uint64_t clock_ns(void);

/* Wall-clock time as Unix nanoseconds (for timestamps only, never for
 * durations). */
int64_t clock_wall_ns(void);

/* CLOCK_MONOTONIC in seconds, and the wall clock in Unix milliseconds: the
 * units the daemon plans and stores in (one helper each, for every
 * module). */
double clock_mono_s(void);
int64_t clock_wall_ms(void);

/* TSC value (serialised read). 0 on hosts without a TSC. */
uint64_t clock_cycles(void);

/* Non-zero when clock_cycles() counts real cycles (x86-64 with a TSC). */
int clock_have_tsc(void);

/* Calibrates and returns the TSC frequency in Hz over about `ms`
 * milliseconds (cached after the first call). 0 without a TSC. */
double clock_tsc_hz(unsigned ms);

/* A Unix time in ms as RFC 3339 UTC with milliseconds ("2026-12-04T23:10:07.123Z")
 * into buf (at least 32 bytes), floored (a time before 1970 too): the one
 * formatter of every timestamp the programs print. 0, or -ERANGE for a
 * year outside 0..9999 (buf is then ""). */
int clock_rfc3339_ms(int64_t ms, char *buf, unsigned len);

/* The same for a Unix time in ns. */
void clock_rfc3339(int64_t wall_ns, char *buf, unsigned len);

#endif
