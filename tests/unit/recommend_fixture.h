/*
 * recommend_fixture: what the recommendation's unit tests share: inputs
 * written as printf-style JSON, the checks on a result, and the
 * hand-checkable host.
 */
#ifndef TW_RECOMMEND_FIXTURE_H
#define TW_RECOMMEND_FIXTURE_H

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "recommend.h"

/* --- helpers ------------------------------------------------------------ */

static inline json_t *load(const char *fmt, va_list ap)
{
	char text[8192];
	json_error_t je;
	json_t *in;
	int n = vsnprintf(text, sizeof(text), fmt, ap);

	assert_true(n > 0 && (size_t)n < sizeof(text));
	in = json_loads(text, 0, &je);
	if (!in)
		fail_msg("test input does not parse: %s: %s", je.text, text);
	return in;
}

/* Computes the result of inputs given as printf-formatted JSON; fails the
 * test when they are rejected. */
static inline json_t *compute(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static inline json_t *compute(const char *fmt, ...)
{
	char err[256] = "";
	json_t *in, *res;
	va_list ap;

	va_start(ap, fmt);
	in = load(fmt, ap);
	va_end(ap);
	res = rec_compute(in, err, sizeof(err));
	if (!res)
		fail_msg("inputs rejected: %s", err);
	json_decref(in);
	return res;
}

/* Expects the inputs to be rejected with exactly `msg`. */
static inline void rejects(const char *msg, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static inline void rejects(const char *msg, const char *fmt, ...)
{
	char err[256] = "";
	json_t *in, *res;
	va_list ap;

	va_start(ap, fmt);
	in = load(fmt, ap);
	va_end(ap);
	res = rec_compute(in, err, sizeof(err));
	if (res)
		fail_msg("accepted, expected \"%s\"", msg);
	assert_string_equal(err, msg);
	json_decref(in);
}

static inline const char *verdict(const json_t *r)
{
	return json_string_value(json_object_get(r, "verdict"));
}

static inline const char *confidence(const json_t *r)
{
	return json_string_value(json_object_get(r, "confidence"));
}

static inline const char *rule(const json_t *r)
{
	return json_string_value(json_object_get(r, "rule"));
}

/* A figure, NAN when null. */
static inline double fig(const json_t *r, const char *key)
{
	const json_t *v = json_object_get(json_object_get(r, "figures"), key);

	assert_non_null(v);
	return json_is_number(v) ? json_number_value(v) : NAN;
}

static inline double fig_at(const json_t *r, const char *key, size_t i)
{
	const json_t *v = json_object_get(json_object_get(r, "figures"), key);

	assert_true(json_is_array(v));
	return json_number_value(json_array_get(v, i));
}

/* Whether some reason contains `needle`. */
static inline int reason_has(const json_t *r, const char *needle)
{
	const json_t *v;
	size_t i;

	json_array_foreach(json_object_get(r, "reasons"), i,
	                   v) if (strstr(json_string_value(v), needle)) return 1;
	return 0;
}

static inline void expect(const json_t *r, const char *v, const char *c, const char *ru)
{
	assert_string_equal(verdict(r), v);
	assert_string_equal(confidence(r), c);
	assert_string_equal(rule(r), ru);
	assert_true(json_array_size(json_object_get(r, "reasons")) >= 1);
	assert_true(strlen(json_string_value(json_object_get(r, "sentence"))) > 20);
}

#define CLOSE(a, b) assert_float_equal((a), (double)(b), 1e-6 * fabs((double)(b)) + 1e-9)

/* A hand-checkable host: 1 MiB slots (stack + guard), a 10 MiB window, so
 * C = 10; a switch saves 1000 ns (2000 vs 1000, ratio 0.5, CI 0.45 to
 * 0.55, so 900 to 1100 ns); a miss costs a flat 1,000,000 ns. */
#define HAND                                                                                       \
	"\"ctxsw\":{\"low_ns\":1000,\"high_ns\":2000,\"ratio\":0.5,\"ratio_ci95\":[0.45,0.55]},"   \
	"\"map32\":{\"window_bytes\":10485760,\"fail_ns\":[[10,1e6],[1e6,1e6]]}"
#define HAND_STACK 1044480

#endif
