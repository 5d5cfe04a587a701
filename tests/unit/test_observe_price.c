/*
 * test_observe_price: obs_price() and obs_text() (lib/observe_price.c,
 * observe_text.c) on workloads of known figures: the arithmetic of each
 * cost, recomputed from its own printed operands; each finding on both
 * sides of its limit; figures left null when a probe's cost or the
 * observer's figure is missing; the order, dearest first; a per-workload
 * verdict; and a table with hostile names that holds no control byte.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "defaults.h"
#include "observe.h"

/* The host's costs: a create 25 us (40,000/s), a switch 2 us, a hand-off
 * across CPUs cross_ratio switches, a glibc stack 8 KiB; ctxsw and map32
 * as the recommendation needs them (a low stack saves nothing). */
static json_t *inputs(double cross_ratio)
{
	json_error_t je;
	json_t *in = json_loads(
	    "{\"createscale\":{\"cached_1_rate\":40000},"
	    "\"handoff\":{\"same_cpu_ns\":2000,\"fix\":\"pin the pair\"},"
	    "\"stackmem\":{\"glibc_bytes_per_thread\":8192,\"thp_enabled\":\"madvise\"},"
	    "\"ctxsw\":{\"low_ns\":2000,\"high_ns\":2000,\"ratio\":1.0,\"ratio_ci95\":[0.99,1.01]},"
	    "\"map32\":{\"window_bytes\":1073741824,\"fail_ns\":[[10,1e4],[1e6,1e4]]}}",
	    0, &je);

	if (!in)
		fail_msg("inputs: %s", je.text);
	json_object_set_new(json_object_get(in, "handoff"), "cross_ratio", json_real(cross_ratio));
	return in;
}

static json_t *workload(const char *comm, double cps, double sps, long count, long thp)
{
	return json_pack("{s:s s:s s:[i] s:i s:f s:f s:{s:f s:f s:f} s:f s:{s:i s:i s:i s:i}}",
	                 "kind", "process", "comm", comm, "pids", 1, "threads", 10, "creates_per_s",
	                 cps, "exits_per_s", cps, "switches_per_s", "total", sps, "voluntary", sps,
	                 "involuntary", 0.0, "migrations_per_s", 0.0, "stacks", "count", (int)count,
	                 "resident_bytes", (int)(thp * 2097152 + (count - thp) * 8192),
	                 "thp_backed", (int)thp, "thp_bytes", (int)(thp * 2097152));
}

static json_t *doc_of(json_t *w1, json_t *w2, json_t *w3)
{
	return json_pack("{s:[o o o] s:f s:{} s:{}}", "workloads", w1, w2, w3, "window_s", 10.0,
	                 "mechanisms", "observer");
}

static const json_t *by_comm(const json_t *doc, const char *comm)
{
	const json_t *w;
	size_t i;

	json_array_foreach(
	    json_object_get(doc, "workloads"), i,
	    w) if (!strcmp(json_string_value(json_object_get(w, "comm")), comm)) return w;
	fail_msg("no workload %s", comm);
	return NULL;
}

static int has_finding(const json_t *w, const char *kind)
{
	const json_t *f;
	size_t i;

	json_array_foreach(json_object_get(w, "findings"), i,
	                   f) if (!strcmp(json_string_value(json_object_get(f, "kind")), kind) &&
	                          json_string_value(json_object_get(f, "cause")) &&
	                          json_string_value(json_object_get(f, "fix"))) return 1;
	return 0;
}

/* "A creates/s x B µs = C% of one CPU" must recompute: A x B / 1e4 ~ C. */
static void recomputes(const char *finding, const char *what)
{
	char fmt[96];
	double a, b, c;

	snprintf(fmt, sizeof(fmt), "%%lf %s x %%lf µs = %%lf%%%%", what);
	if (sscanf(finding, fmt, &a, &b, &c) != 3)
		fail_msg("not a formula: %s", finding);
	if (fabs(a * b / 1e4 - c) > 0.0005 * c + 1e-9)
		fail_msg("%s: %g x %g / 1e4 = %g, printed %g", finding, a, b, a * b / 1e4, c);
}

static void test_prices(void **state)
{
	json_t *in = inputs(10.0);
	json_t *doc = doc_of(workload("pool", 100, 50, 10, 0), workload("churn", 2000, 4000, 0, 0),
	                     workload("hugestk", 0, 0, 200, 200));
	const json_t *churn, *pool, *huge, *c;

	(void)state;
	obs_price(doc, in);
	churn = by_comm(doc, "churn");
	pool = by_comm(doc, "pool");
	huge = by_comm(doc, "hugestk");
	/* 2000 x 25 us = 5% of a CPU; 4000 x 2 us = 0.8%, up to x 20 us = 8% */
	c = json_object_get(json_object_get(churn, "costs"), "create");
	assert_true(fabs(json_number_value(json_object_get(c, "cpu_share")) - 0.05) < 1e-9);
	recomputes(json_string_value(json_object_get(c, "finding")), "creates/s");
	c = json_object_get(json_object_get(churn, "costs"), "switch");
	assert_true(fabs(json_number_value(json_object_get(c, "cpu_share")) - 0.008) < 1e-9);
	assert_true(fabs(json_number_value(json_object_get(c, "cpu_share_max")) - 0.08) < 1e-9);
	recomputes(json_string_value(json_object_get(c, "finding")), "switches/s");
	assert_true(has_finding(churn, "creates"));
	assert_true(has_finding(churn, "handoff"));
	assert_false(has_finding(churn, "thp_stacks"));
	/* 100 x 25 us = 0.25%: under the 1% limit; 50 switches: not notable */
	assert_false(has_finding(pool, "creates"));
	assert_false(has_finding(pool, "handoff"));
	/* 200 stacks on huge pages; 400 MiB against glibc's 200 x 8 KiB */
	assert_true(has_finding(huge, "thp_stacks"));
	c = json_object_get(json_object_get(huge, "costs"), "memory");
	assert_int_equal((json_int_t)json_number_value(json_object_get(c, "excess_bytes")),
	                 200 * 2097152 - 200 * 8192);
	/* dearest first */
	assert_ptr_equal(json_array_get(json_object_get(doc, "workloads"), 0), churn);
	/* the low-stack verdict for the workload as observed */
	c = json_object_get(json_object_get(churn, "recommendation"), "verdict");
	assert_true(json_is_string(c));
	assert_true(!strcmp(json_string_value(c), "high") || !strcmp(json_string_value(c), "low"));
	json_decref(doc);
	json_decref(in);
}

static void test_handoff_limit(void **state)
{
	/* a hand-off of 4 switches or fewer is within the limit */
	json_t *in = inputs(TW_HANDOFF_PROBLEM_RATIO);
	json_t *doc = doc_of(workload("a", 0, 100000, 0, 0), workload("b", 0, 0, 0, 0),
	                     workload("c", 0, 0, 0, 0));

	(void)state;
	obs_price(doc, in);
	assert_false(has_finding(by_comm(doc, "a"), "handoff"));
	json_decref(doc);
	json_decref(in);
}

static void test_unmeasured(void **state)
{
	json_t *doc = doc_of(workload("a", 2000, 10, 0, 0), workload("b", 0, 0, 0, 0),
	                     workload("c", 0, 0, 0, 0));
	json_t *first = json_array_get(json_object_get(doc, "workloads"), 0);
	const json_t *w, *c;

	(void)state;
	/* creates the observer could not see */
	json_object_set_new(first, "creates_per_s", json_null());
	obs_price(doc, NULL);
	w = by_comm(doc, "a");
	c = json_object_get(json_object_get(w, "costs"), "create");
	assert_true(json_is_null(json_object_get(c, "cpu_share")));
	assert_non_null(strstr(json_string_value(json_object_get(c, "finding")), "not seen"));
	c = json_object_get(json_object_get(w, "costs"), "switch");
	assert_true(json_is_null(json_object_get(c, "cpu_share")));
	assert_non_null(strstr(json_string_value(json_object_get(c, "finding")), "no switch cost"));
	assert_true(json_is_null(json_object_get(json_object_get(w, "costs"), "cpu_share")));
	assert_true(json_is_null(json_object_get(w, "recommendation")));
	json_decref(doc);
}

static void test_text_hostile(void **state)
{
	json_t *in = inputs(10.0);
	json_t *doc = doc_of(workload("\x1b[2J<i id=x>", 2000, 0, 0, 0),
	                     workload("c1\xc2\x9b", 0, 0, 0, 0), workload("ok", 0, 0, 0, 0));
	char *text;

	(void)state;
	obs_price(doc, in);
	text = obs_text(doc, 0);
	assert_non_null(text);
	for (const unsigned char *p = (const unsigned char *)text; *p; p++)
		if ((*p < 0x20 && *p != '\n') || *p == 0x7f ||
		    (*p == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f))
			fail_msg("control byte 0x%02x in the table", *p);
	assert_non_null(strstr(text, "\\x1b[2J<i id=x>"));
	assert_non_null(strstr(text, "c1\\xc2\\x9b"));
	free(text);
	json_decref(doc);
	json_decref(in);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_prices),
	    cmocka_unit_test(test_handoff_limit),
	    cmocka_unit_test(test_unmeasured),
	    cmocka_unit_test(test_text_hostile),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
