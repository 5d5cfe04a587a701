/*
 * test_recommend_costs: result.costs (lib/recommend_costs.c) from probe
 * documents through rec_inputs_costs() and rec_compute(): each cost's
 * arithmetic, the limits that make a problem (lib/defaults.h) on either
 * side, the cause and fix carried only for a problem, a probe that was
 * skipped, and inputs that are refused with the field named.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "defaults.h"
#include "recommend.h"

/* A probe document with status ok, the scalars given as name/value pairs
 * (NULL-terminated) and the info object given as JSON text. */
static json_t *doc(const char *probe, const char *info, ...)
{
	json_t *d = json_pack("{s:s s:i s:s s:n s:o s:{} s:{} s:{}}", "probe", probe, "protocol", 1,
	                      "status", "ok", "reason", "info", json_loads(info, 0, NULL),
	                      "scalars", "series", "params");
	json_t *sc = json_object_get(d, "scalars");
	va_list ap;
	const char *name;

	va_start(ap, info);
	while ((name = va_arg(ap, const char *)))
		json_object_set_new(
		    sc, name, json_pack("{s:f s:s}", "value", va_arg(ap, double), "unit", "ratio"));
	va_end(ap);
	return d;
}

/* The efficiency's CI is neff ± half (a fraction of it). */
static json_t *createscale_ci(double c1, double n1, double ceff, double neff, double half)
{
	return doc("createscale", "{}", "cached_1_rate", c1, "nocache_1_rate", n1,
	           "cached_2_efficiency", ceff, "nocache_2_efficiency", neff,
	           "nocache_2_efficiency_ci_lo", neff * (1 - half), "nocache_2_efficiency_ci_hi",
	           neff * (1 + half), NULL);
}

static json_t *createscale(double c1, double n1, double ceff, double neff)
{
	return createscale_ci(c1, n1, ceff, neff, 0.005);
}

static json_t *handoff(double same, double ratio)
{
	return doc("handoff",
	           "{\"cross_placement\": \"llc\", \"mechanism\": \"a halting vCPU\", "
	           "\"fix\": \"let it poll\"}",
	           "same_cpu_ns", same, "cross_ratio", ratio, "cross_ratio_ci_lo", ratio - 1,
	           "cross_ratio_ci_hi", ratio + 1, NULL);
}

static json_t *stackmem(double glibc, double glibc_huge)
{
	return doc("stackmem",
	           "{\"thp_enabled\": \"always\", \"map_stack_nohugepage\": false, "
	           "\"fix\": \"map stacks with MAP_STACK\"}",
	           "glibc_bytes_per_thread", glibc, "glibc_bytes_per_thread_ci_lo", glibc - 1024,
	           "glibc_bytes_per_thread_ci_hi", glibc + 1024, "glibc_huge_bytes_per_thread",
	           glibc_huge, "plain_bytes_per_thread", 8192.0, "plain_huge_bytes_per_thread", 0.0,
	           "huge_bytes_per_thread", 2097152.0, NULL);
}

/* result.costs of the three documents (any NULL), which this takes. */
static json_t *costs_of(json_t *cs, json_t *ho, json_t *sm)
{
	json_t *in = rec_inputs_build(NULL, NULL, NULL, NULL, NULL), *r, *c;
	char err[256] = "";

	rec_inputs_costs(in, cs, ho, sm);
	r = rec_compute(in, err, sizeof(err));
	if (!r)
		fail_msg("rec_compute: %s", err);
	c = json_incref(json_object_get(r, "costs"));
	assert_non_null(c);
	json_decref(r);
	json_decref(in);
	json_decref(cs);
	json_decref(ho);
	json_decref(sm);
	return c;
}

static double num(const json_t *costs, const char *cost, const char *key)
{
	const json_t *v = json_object_get(json_object_get(costs, cost), key);

	assert_true(json_is_number(v));
	return json_number_value(v);
}

static const char *text(const json_t *costs, const char *cost, const char *key)
{
	return json_string_value(json_object_get(json_object_get(costs, cost), key));
}

static int problem(const json_t *costs, const char *cost)
{
	return json_is_true(json_object_get(json_object_get(costs, cost), "problem"));
}

static void test_arithmetic(void **state)
{
	json_t *c;

	(void)state;
	c = costs_of(createscale(100000, 40000, 0.8, 0.3), handoff(1000, 20), stackmem(8192, 0));
	/* 10^9 / 100,000 creates per second: 10 us; without the cache 25 us */
	assert_float_equal(num(c, "create", "ns"), 10000, 1e-6);
	assert_float_equal(num(c, "create", "without_cache_ns"), 25000, 1e-6);
	assert_non_null(
	    strstr(text(c, "create", "finding"), "takes 10 µs here: 10^9 ns / 100,000"));
	/* 1 us x 20 */
	assert_float_equal(num(c, "handoff", "cross_ns"), 20000, 1e-6);
	assert_non_null(strstr(text(c, "handoff", "finding"),
	                       "another core of its last-level cache takes 20 µs here: 20 [19, 21] "
	                       "times the 1 µs"));
	assert_float_equal(num(c, "creators", "efficiency"), 0.3, 1e-12);
	assert_non_null(strstr(text(c, "creators", "finding"), "together 0.6× one creator"));
	assert_float_equal(num(c, "memory", "bytes_per_thread"), 8192, 0);
	assert_non_null(strstr(text(c, "memory", "finding"), "keeps 8 KiB [7, 9] resident"));
	json_decref(c);
}

/* Each limit on both sides; the cause and fix only with a problem. */
static void test_limits(void **state)
{
	json_t *c, *p;

	(void)state;
	c = costs_of(createscale(1e5, 4e4, 0.9, TW_CREATORS_PROBLEM_EFFICIENCY * 1.01),
	             handoff(1000, TW_HANDOFF_PROBLEM_RATIO * 0.99),
	             stackmem(TW_STACK_PROBLEM_BYTES - 4096, 0));
	assert_false(problem(c, "creators") || problem(c, "handoff") || problem(c, "memory") ||
	             problem(c, "create"));
	assert_true(json_is_null(json_object_get(json_object_get(c, "handoff"), "fix")));
	assert_true(json_is_null(json_object_get(json_object_get(c, "memory"), "cause")));
	assert_int_equal(json_array_size(json_object_get(c, "problems")), 0);
	json_decref(c);

	c = costs_of(createscale(1e5, 4e4, 0.9, TW_CREATORS_PROBLEM_EFFICIENCY * 0.99),
	             handoff(1000, TW_HANDOFF_PROBLEM_RATIO * 1.01),
	             stackmem(TW_STACK_PROBLEM_BYTES * 2, TW_STACK_PROBLEM_BYTES * 2));
	assert_true(problem(c, "creators") && problem(c, "handoff") && problem(c, "memory"));
	assert_string_equal(text(c, "handoff", "cause"), "a halting vCPU");
	assert_string_equal(text(c, "handoff", "fix"), "let it poll");
	assert_string_equal(text(c, "memory", "fix"), "map stacks with MAP_STACK");
	assert_non_null(strstr(text(c, "memory", "cause"),
	                       "THP is always here and this kernel does not give MAP_STACK "
	                       "stacks VM_NOHUGEPAGE"));
	assert_non_null(
	    strstr(text(c, "memory", "finding"),
	           "keeps 2,048 KiB [2,047, 2,049] resident with glibc's stacks, on huge "
	           "pages"));
	assert_non_null(strstr(text(c, "creators", "cause"), "mmap_lock"));
	p = json_object_get(c, "problems");
	assert_int_equal(json_array_size(p), 3);
	assert_string_equal(json_string_value(json_array_get(p, 0)), "creators");
	assert_string_equal(json_string_value(json_array_get(p, 1)), "handoff");
	assert_string_equal(json_string_value(json_array_get(p, 2)), "memory");
	json_decref(c);
}

/* A CI that straddles the limit decides nothing: neither a problem nor
 * clear, on either side of it (the flag flipped from run to run). */
static void test_near_limit(void **state)
{
	const double lim = TW_CREATORS_PROBLEM_EFFICIENCY;
	json_t *c;

	(void)state;
	for (int side = -1; side <= 1; side += 2) {
		c = costs_of(createscale_ci(1e5, 4e4, 0.9, lim * (1 + side * 0.02), 0.05), NULL,
		             NULL);
		assert_false(problem(c, "creators"));
		assert_true(
		    json_is_true(json_object_get(json_object_get(c, "creators"), "near_limit")));
		assert_non_null(strstr(text(c, "creators", "finding"),
		                       "near the limit of 0.5, which its CI straddles"));
		assert_true(json_is_null(json_object_get(json_object_get(c, "creators"), "fix")));
		json_decref(c);
	}
	/* a CI wholly below it is a problem, wholly above it is clear */
	c = costs_of(createscale_ci(1e5, 4e4, 0.9, lim * 0.9, 0.05), NULL, NULL);
	assert_true(problem(c, "creators"));
	assert_false(json_is_true(json_object_get(json_object_get(c, "creators"), "near_limit")));
	json_decref(c);
	c = costs_of(createscale_ci(1e5, 4e4, 0.9, lim * 1.1, 0.05), NULL, NULL);
	assert_false(problem(c, "creators"));
	assert_null(strstr(text(c, "creators", "finding"), "near the limit"));
	json_decref(c);
}

/* No documents, or one skipped: each cost says it was not measured. */
static void test_unmeasured(void **state)
{
	json_t *c, *skipped = handoff(1000, 20), *in, *r;
	char err[256];

	(void)state;
	/* one probe measured: the other two costs say there was no run */
	c = costs_of(createscale(1e5, 4e4, 0.9, 0.8), NULL, NULL);
	assert_true(json_is_true(json_object_get(json_object_get(c, "create"), "measured")));
	for (const char *const *k = (const char *const[]){"handoff", "memory", NULL}; *k; k++) {
		assert_true(json_is_false(json_object_get(json_object_get(c, *k), "measured")));
		assert_true(json_is_null(json_object_get(json_object_get(c, *k), "problem")));
		assert_non_null(strstr(text(c, *k, "finding"), "Not measured: no "));
	}
	json_decref(c);
	json_object_set_new(skipped, "status", json_string("skipped"));
	json_object_set_new(skipped, "reason", json_string("the host is busy"));
	c = costs_of(NULL, skipped, NULL);
	assert_string_equal(text(c, "handoff", "finding"),
	                    "Not measured: handoff's latest run was skipped: the host is busy.");
	json_decref(c);
	/* none of the three (inputs written for the low-stack question): no costs */
	in = rec_inputs_build(NULL, NULL, NULL, NULL, NULL);
	r = rec_compute(in, err, sizeof(err));
	assert_non_null(r);
	assert_null(json_object_get(r, "costs"));
	json_decref(r);
	json_decref(in);
}

/* Inputs given by hand that are not what the probes give: refused, the
 * field named. */
static void test_refused(void **state)
{
	static const struct {
		const char *inputs, *err;
	} bad[] = {
	    {"{\"handoff\": 3}", "handoff: must be an object"},
	    {"{\"handoff\": {\"same_cpu_ns\": -1}}", "handoff.same_cpu_ns: must not be negative"},
	    {"{\"handoff\": {\"cross_ratio\": 0}}", "handoff.cross_ratio: must be positive"},
	    {"{\"handoff\": {\"cross_ratio_ci95\": [3, 2]}}",
	     "handoff.cross_ratio_ci95: lo must not exceed hi"},
	    {"{\"createscale\": {\"cached_1_rate\": \"fast\"}}",
	     "createscale.cached_1_rate: must be a number"},
	    {"{\"stackmem\": {\"fix\": 7}}", "stackmem.fix: must be a text of 1 to 1024 bytes"},
	    {"{\"stackmem\": {\"fix\": \"\"}}", "stackmem.fix: must be a text of 1 to 1024 bytes"},
	    {"{\"stackmem\": {\"map_stack_nohugepage\": 1}}",
	     "stackmem.map_stack_nohugepage: must be a boolean"},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		json_t *in = json_loads(bad[i].inputs, 0, NULL);
		char err[256] = "";

		assert_non_null(in);
		assert_null(rec_compute(in, err, sizeof(err)));
		if (!strstr(err, bad[i].err))
			fail_msg("%s: got \"%s\", want \"%s\"", bad[i].inputs, err, bad[i].err);
		json_decref(in);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_arithmetic), cmocka_unit_test(test_limits),
	    cmocka_unit_test(test_near_limit), cmocka_unit_test(test_unmeasured),
	    cmocka_unit_test(test_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
