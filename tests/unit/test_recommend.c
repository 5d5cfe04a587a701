/*
 * test_recommend: the recommendation's rules, its arithmetic checked by
 * hand, its edge cases, its rejection of malformed inputs, the inputs built
 * from probe documents, and the conclusions of the 2008 LKML discussion
 * reproduced from that discussion's own figures.
 */
#include <errno.h>
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

#include "recommend.h"

#include "recommend_fixture.h"

/* The capacity map32 measured at the workload's stack size wins
 * over floor(window / slot); at another stack size it does not apply. */
static void test_measured_capacity(void **state)
{
	json_t *r;

	(void)state;
	r = compute("{\"workload\":{\"threads\":200,\"stack_bytes\":8388608},"
	            "\"ctxsw\":{\"low_ns\":1000,\"high_ns\":2000,\"ratio\":0.5,"
	            "\"ratio_ci95\":[0.45,0.55]},"
	            "\"map32\":{\"window_bytes\":1066192896,\"capacity_stacks\":126,"
	            "\"stack_bytes\":8388608}}");
	CLOSE(fig(r, "window_stacks"), 126);
	CLOSE(fig(r, "threads_missing"), 74);
	assert_string_equal(json_string_value(json_object_get(json_object_get(r, "figures"),
	                                                      "window_stacks_source")),
	                    "measured");
	assert_true(reason_has(r, "held 126 stacks of 8,388,608 bytes"));
	assert_true(reason_has(r, "= 127 would fit"));
	json_decref(r);
	r = compute("{\"workload\":{\"threads\":200,\"stack_bytes\":1044480},"
	            "\"ctxsw\":{\"low_ns\":1000,\"high_ns\":2000,\"ratio\":0.5,"
	            "\"ratio_ci95\":[0.45,0.55]},"
	            "\"map32\":{\"window_bytes\":10485760,\"capacity_stacks\":1,"
	            "\"stack_bytes\":8388608}}");
	CLOSE(fig(r, "window_stacks"), 10);
	assert_string_equal(json_string_value(json_object_get(json_object_get(r, "figures"),
	                                                      "window_stacks_source")),
	                    "computed");
	json_decref(r);
}

/* --- the rules ---------------------------------------------------------- */

static void test_no_ctxsw(void **state)
{
	json_t *r = compute("{\"workload\":{\"threads\":100}}");

	(void)state;
	expect(r, "high", "none", "no_ctxsw");
	assert_true(reason_has(r, "ctxsw"));
	assert_true(isnan(fig(r, "switch_saving_ns")));
	assert_true(isnan(fig(r, "flip_threads")));
	json_decref(r);
	/* null counts as missing */
	r = compute("{\"ctxsw\":null}");
	expect(r, "high", "none", "no_ctxsw");
	json_decref(r);
}

static void test_no_significant_benefit(void **state)
{
	json_t *r;

	(void)state;
	/* the CI includes 1.0 and its best case is under 5%: strong */
	r = compute("{\"ctxsw\":{\"low_ns\":995,\"high_ns\":1000,\"ratio\":0.995,"
	            "\"ratio_ci95\":[0.97,1.02]}}");
	expect(r, "high", "strong", "no_benefit");
	assert_true(reason_has(r, "not significant"));
	assert_true(isnan(fig(r, "flip_threads")));
	assert_true(isnan(fig(r, "flip_switches_per_thread")));
	json_decref(r);
	/* the CI includes 1.0 but allows a benefit of 10%: weak */
	r = compute("{\"ctxsw\":{\"low_ns\":950,\"high_ns\":1000,\"ratio\":0.95,"
	            "\"ratio_ci95\":[0.90,1.01]}}");
	expect(r, "high", "weak", "no_benefit");
	json_decref(r);
	/* the CI touching 1.0 is not below it */
	r = compute("{\"ctxsw\":{\"low_ns\":900,\"high_ns\":1000,\"ratio\":0.9,"
	            "\"ratio_ci95\":[0.8,1.0]}}");
	expect(r, "high", "weak", "no_benefit");
	json_decref(r);
	/* the saving is high_ns x (1 - ratio), not the medians' difference */
	r = compute("{\"ctxsw\":{\"low_ns\":2798,\"high_ns\":2830,\"ratio\":1.01,"
	            "\"ratio_ci95\":[0.995,1.016]}}");
	CLOSE(fig(r, "switch_saving_ns"), 2830 * (1 - 1.01));
	CLOSE(fig_at(r, "switch_saving_ci_ns", 0), 2830 * (1 - 1.016));
	CLOSE(fig_at(r, "switch_saving_ci_ns", 1), 2830 * (1 - 0.995));
	assert_true(reason_has(r, "lose 28.3 ns per switch, 2,830 × (1 - 1.01)"));
	json_decref(r);
	/* low stacks slower */
	r = compute("{\"ctxsw\":{\"low_ns\":1100,\"high_ns\":1000,\"ratio\":1.1,"
	            "\"ratio_ci95\":[1.05,1.15]}}");
	expect(r, "high", "strong", "no_benefit");
	assert_true(reason_has(r, "lose 100 ns per switch"));
	CLOSE(fig(r, "switch_saving_ns"), -100);
	json_decref(r);
	/* A saving that is not significant has no break-even, even
	 * where the creates cost something (20 threads, 10 past the window) */
	r = compute("{\"workload\":{\"threads\":20,\"stack_bytes\":%d,"
	            "\"switches_per_thread\":1e3},"
	            "\"ctxsw\":{\"low_ns\":1990,\"high_ns\":2000,\"ratio\":0.995,"
	            "\"ratio_ci95\":[0.97,1.02]},"
	            "\"map32\":{\"window_bytes\":10485760,\"fail_ns\":[[10,1e6],[1e6,1e6]]}}",
	            HAND_STACK);
	expect(r, "high", "strong", "no_benefit");
	assert_true(fig(r, "extra_total_ns") > 0);
	assert_true(isnan(fig(r, "break_even_switches")));
	assert_true(
	    json_is_null(json_object_get(json_object_get(r, "figures"), "break_even_switches_ci")));
	assert_false(reason_has(r, "Break-even"));
	json_decref(r);
	/* a CI below 1 around a ratio above it (inconsistent figures): the
	 * point estimate shows no saving, so no benefit */
	r = compute("{\"ctxsw\":{\"low_ns\":1000,\"high_ns\":1000,\"ratio\":1.05,"
	            "\"ratio_ci95\":[0.85,0.95]}}");
	expect(r, "high", "weak", "no_benefit");
	CLOSE(fig(r, "switch_saving_ns"), -50);
	json_decref(r);
}

static void test_fits(void **state)
{
	json_t *r;

	(void)state;
	/* 10 threads, C = 10: all fit, 50% benefit */
	r = compute("{\"workload\":{\"threads\":10,\"stack_bytes\":%d}," HAND "}", HAND_STACK);
	expect(r, "low", "strong", "fits");
	CLOSE(fig(r, "window_stacks"), 10);
	CLOSE(fig(r, "threads_missing"), 0);
	CLOSE(fig(r, "switch_saving_ns"), 1000);
	CLOSE(fig_at(r, "switch_saving_ci_ns", 0), 900);
	CLOSE(fig_at(r, "switch_saving_ci_ns", 1), 1100);
	assert_true(isnan(fig(r, "break_even_switches")));
	assert_true(isnan(fig(r, "flip_switches_per_thread")));
	/* switches unknown: the 11th thread flips it */
	CLOSE(fig(r, "flip_threads"), 11);
	/* E read at the first create that would miss: C = 10 threads alive */
	CLOSE(fig(r, "extra_create_at_threads"), 10);
	assert_true(reason_has(r, "= 10 stacks"));
	json_decref(r);
	/* a significant benefit under 5%: weak */
	r = compute("{\"workload\":{\"threads\":10},\"ctxsw\":{\"low_ns\":970,\"high_ns\":1000,"
	            "\"ratio\":0.97,\"ratio_ci95\":[0.96,0.975]}}");
	expect(r, "low", "weak", "fits");
	json_decref(r);
	/* exactly 5%: strong (the threshold is ratio <= 0.95) */
	r = compute("{\"workload\":{\"threads\":10},\"ctxsw\":{\"low_ns\":950,\"high_ns\":1000,"
	            "\"ratio\":0.95,\"ratio_ci95\":[0.94,0.96]},\"map32\":{\"window_bytes\":1e9}}");
	expect(r, "low", "strong", "fits");
	json_decref(r);
}

static void test_no_ci_and_assumed_window(void **state)
{
	json_t *r;

	(void)state;
	/* no CI: the point estimate decides, never strong */
	r = compute("{\"workload\":{\"threads\":10},\"ctxsw\":{\"low_ns\":500,\"high_ns\":1000},"
	            "\"map32\":{\"window_bytes\":1e9}}");
	expect(r, "low", "weak", "fits");
	CLOSE(fig(r, "switch_ratio"), 0.5); /* low_ns / high_ns when no ratio is given */
	assert_true(
	    json_is_null(json_object_get(json_object_get(r, "figures"), "switch_ratio_ci")));
	assert_true(reason_has(r, "no CI"));
	json_decref(r);
	/* no map32: the x86-64 window (1 GiB) is assumed, never strong */
	r = compute("{\"workload\":{\"threads\":100},\"ctxsw\":{\"low_ns\":500,\"high_ns\":1000,"
	            "\"ratio_ci95\":[0.45,0.55]}}");
	expect(r, "low", "weak", "fits");
	assert_true(json_is_true(json_object_get(json_object_get(r, "figures"), "window_assumed")));
	CLOSE(fig(r, "window_bytes"), REC_DEFAULT_WINDOW);
	CLOSE(fig(r, "window_stacks"), 127); /* floor(2^30 / (8 MiB + 4 KiB)) */
	/* ... and the sentence says so, not only the reasons */
	assert_non_null(strstr(json_string_value(json_object_get(r, "sentence")),
	                       "window is assumed, not measured"));
	json_decref(r);
	/* a measured window is not called assumed */
	r = compute("{\"workload\":{\"threads\":100},\"ctxsw\":{\"low_ns\":500,\"high_ns\":1000,"
	            "\"ratio_ci95\":[0.45,0.55]},\"map32\":{\"window_bytes\":1e9}}");
	assert_null(strstr(json_string_value(json_object_get(r, "sentence")), "assumed"));
	json_decref(r);
}

static void test_window_zero(void **state)
{
	json_t *r;

	(void)state;
	r = compute("{\"workload\":{\"threads\":10},\"ctxsw\":{\"low_ns\":500,\"high_ns\":1000,"
	            "\"ratio_ci95\":[0.45,0.55]},\"map32\":{\"window_bytes\":0}}");
	expect(r, "high", "strong", "no_window");
	assert_true(reason_has(r, "MAP_32BIT is unavailable"));
	CLOSE(fig(r, "window_stacks"), 0);
	assert_true(isnan(fig(r, "flip_threads")));
	assert_true(isnan(fig(r, "flip_switches_per_thread")));
	json_decref(r);
	/* a stack larger than the window: no slot either */
	r = compute(
	    "{\"workload\":{\"threads\":1,\"stack_bytes\":2e9,\"switches_per_thread\":1e12},"
	    "\"ctxsw\":{\"low_ns\":500,\"high_ns\":1000,\"ratio_ci95\":[0.45,0.55]},"
	    "\"map32\":{\"window_bytes\":1073741824}}");
	expect(r, "high", "strong", "no_window");
	json_decref(r);
}

/* arm64: no MAP_32BIT window and no segment selectors, so the
 * question does not arise; the inputs name the architecture. */
static void test_not_applicable_arch(void **state)
{
	json_t *fp = json_pack("{s:s}", "arch", "aarch64"), *in, *r;
	char err[128];

	(void)state;
	in = rec_inputs_build(fp, NULL, NULL, NULL, NULL);
	assert_string_equal(json_string_value(json_object_get(in, "arch")), "aarch64");
	r = rec_compute(in, err, sizeof(err));
	assert_non_null(r);
	expect(r, "high", "strong", "not_applicable");
	assert_true(json_is_false(json_object_get(r, "applicable")));
	assert_non_null(strstr(json_string_value(json_object_get(r, "sentence")),
	                       "not applicable on this architecture (aarch64)"));
	assert_true(reason_has(r, "no segment selectors"));
	json_decref(r);
	json_decref(in);
	json_decref(fp);
	/* x86-64 is the one architecture where it applies */
	r = compute("{\"arch\":\"x86_64\",\"workload\":{\"threads\":10},\"ctxsw\":{\"low_ns\":500,"
	            "\"high_ns\":1000,\"ratio_ci95\":[0.45,0.55]},\"map32\":{\"window_bytes\":0}}");
	expect(r, "high", "strong", "no_window");
	assert_true(json_is_true(json_object_get(r, "applicable")));
	json_decref(r);
	rejects("arch: must be a string", "{\"arch\":5}");
}

static void test_zero_threads(void **state)
{
	json_t *r;

	(void)state;
	r = compute("{\"workload\":{\"threads\":0,\"stack_bytes\":%d}," HAND "}", HAND_STACK);
	expect(r, "high", "weak", "no_threads");
	CLOSE(fig(r, "threads_missing"), 0);
	CLOSE(fig(r, "flip_threads"), 1); /* one thread fits and would gain */
	json_decref(r);
}

/* C = 10, N = 20, E = 1e6 ns, s = 1000 ns: the break-even is
 * (20 - 10) * 1e6 / (10 * 1000) = 1000 switches per low-stack thread, with
 * s from 900 to 1100 ns giving 909.09 to 1111.1. */
static void test_break_even_by_hand(void **state)
{
	static const struct {
		double spt;
		const char *verdict, *confidence;
		double flip_threads;
	} cases[] = {
	    /* low wins while (n - 10) * 1e6 < 10 * spt * 1000 */
	    {2000, "low", "strong", 30}, /* above the CI's top: 1111 */
	    {1050, "low", "weak", 21},   /* inside the CI */
	    {1000, "high", "weak", 19},  /* at the break-even: not above it */
	    {950, "high", "weak", 19},   /* inside the CI */
	    {500, "high", "strong", 14}, /* below the CI's bottom: 909 */
	    {0, "high", "strong", 10},   /* no switching: only a fitting count */
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		json_t *r = compute("{\"workload\":{\"threads\":20,\"stack_bytes\":%d,"
		                    "\"switches_per_thread\":%g}," HAND "}",
		                    HAND_STACK, cases[i].spt);

		expect(r, cases[i].verdict, cases[i].confidence, "break_even");
		CLOSE(fig(r, "window_stacks"), 10);
		CLOSE(fig(r, "threads_missing"), 10);
		CLOSE(fig(r, "extra_create_ns"), 1e6);
		CLOSE(fig(r, "extra_create_vmas"), 40);
		CLOSE(fig(r, "extra_total_ns"), 1e7);
		CLOSE(fig(r, "break_even_switches"), 1000);
		CLOSE(fig_at(r, "break_even_switches_ci", 0), 1e7 / (10 * 1100.0));
		CLOSE(fig_at(r, "break_even_switches_ci", 1), 1e7 / (10 * 900.0));
		CLOSE(fig(r, "benefit_total_ns"), 10 * cases[i].spt * 1000);
		CLOSE(fig(r, "flip_switches_per_thread"), 1000);
		CLOSE(fig(r, "flip_threads"), cases[i].flip_threads);
		assert_false(json_is_true(
		    json_object_get(json_object_get(r, "figures"), "extra_create_extrapolated")));
		assert_true(reason_has(r, "Break-even"));
		assert_true(reason_has(r, "= 1,000 context switches"));
		/* the expected thread count names the setting it comes from */
		assert_true(reason_has(r,
		                       "expects 20 threads (workload_threads in threadwatchd.conf; "
		                       "--threads for threadwatch recommend)"));
		json_decref(r);
	}
}

static void test_switches_unknown(void **state)
{
	json_t *r;

	(void)state;
	r = compute("{\"workload\":{\"threads\":20,\"stack_bytes\":%d,"
	            "\"switches_per_thread\":null}," HAND "}",
	            HAND_STACK);
	expect(r, "high", "weak", "switches_unknown");
	CLOSE(fig(r, "break_even_switches"), 1000);
	CLOSE(fig(r, "flip_switches_per_thread"), 1000);
	CLOSE(fig(r, "flip_threads"), 10); /* back inside the window */
	assert_true(isnan(fig(r, "benefit_total_ns")));
	assert_true(reason_has(r, "1,000"));
	assert_true(strstr(json_string_value(json_object_get(r, "sentence")), "1,000"));
	json_decref(r);
	/* absent counts as unknown */
	r = compute("{\"workload\":{\"threads\":20,\"stack_bytes\":%d}," HAND "}", HAND_STACK);
	expect(r, "high", "weak", "switches_unknown");
	json_decref(r);
}

/* The flip points are real: just past them the verdict is the other one,
 * just short of them it is unchanged. */
static void check_flip_threads(double threads, double spt)
{
	json_t *r =
	    compute("{\"workload\":{\"threads\":%g,\"stack_bytes\":%d,"
	            "\"switches_per_thread\":%g},"
	            "\"ctxsw\":{\"low_ns\":1000,\"high_ns\":2000,\"ratio_ci95\":[0.45,0.55]},"
	            "\"map32\":{\"window_bytes\":10485760,\"retry_ns\":[[10,1e3],[1e4,1e6]]}}",
	            threads, HAND_STACK, spt);
	double flip = fig(r, "flip_threads"), be = fig(r, "flip_switches_per_thread");
	const char *v = verdict(r);
	json_t *o;

	assert_false(isnan(flip));
	/* at the flip count the verdict is the other one */
	o = compute("{\"workload\":{\"threads\":%g,\"stack_bytes\":%d,\"switches_per_thread\":%g},"
	            "\"ctxsw\":{\"low_ns\":1000,\"high_ns\":2000,\"ratio_ci95\":[0.45,0.55]},"
	            "\"map32\":{\"window_bytes\":10485760,\"retry_ns\":[[10,1e3],[1e4,1e6]]}}",
	            flip, HAND_STACK, spt);
	assert_string_not_equal(verdict(o), v);
	json_decref(o);
	/* one step back toward the workload it is still the same */
	o = compute("{\"workload\":{\"threads\":%g,\"stack_bytes\":%d,\"switches_per_thread\":%g},"
	            "\"ctxsw\":{\"low_ns\":1000,\"high_ns\":2000,\"ratio_ci95\":[0.45,0.55]},"
	            "\"map32\":{\"window_bytes\":10485760,\"retry_ns\":[[10,1e3],[1e4,1e6]]}}",
	            flip + (flip < threads ? 1 : -1), HAND_STACK, spt);
	assert_string_equal(verdict(o), v);
	json_decref(o);
	/* switches per thread just either side of the break-even */
	if (!isnan(be)) {
		o = compute(
		    "{\"workload\":{\"threads\":%g,\"stack_bytes\":%d,"
		    "\"switches_per_thread\":%.17g},"
		    "\"ctxsw\":{\"low_ns\":1000,\"high_ns\":2000,\"ratio_ci95\":[0.45,0.55]},"
		    "\"map32\":{\"window_bytes\":10485760,\"retry_ns\":[[10,1e3],[1e4,1e6]]}}",
		    threads, HAND_STACK, be * 1.001);
		assert_string_equal(verdict(o), "low");
		json_decref(o);
		o = compute(
		    "{\"workload\":{\"threads\":%g,\"stack_bytes\":%d,"
		    "\"switches_per_thread\":%.17g},"
		    "\"ctxsw\":{\"low_ns\":1000,\"high_ns\":2000,\"ratio_ci95\":[0.45,0.55]},"
		    "\"map32\":{\"window_bytes\":10485760,\"retry_ns\":[[10,1e3],[1e4,1e6]]}}",
		    threads, HAND_STACK, be * 0.999);
		assert_string_equal(verdict(o), "high");
		json_decref(o);
	}
	json_decref(r);
}

static void test_flip_points(void **state)
{
	(void)state;
	/* E(n) = 200 n ns here (2 n VMAs on y = 100 x), C = 10, s = 1000 ns */
	check_flip_threads(5, 10);      /* low, fits: flips above the window */
	check_flip_threads(12, 1e6);    /* low past the window: flips further up */
	check_flip_threads(50, 10);     /* high: flips back down */
	check_flip_threads(10000, 1e5); /* high, far out */
	check_flip_threads(11, 0.01);   /* high just past the window: flips to C */
}

static void test_extra_keys_ignored(void **state)
{
	json_t *r;

	(void)state;
	r = compute("{\"zzz\":[1,2],\"cpu\":{\"vendor\":\"GenuineIntel\",\"family\":15,"
	            "\"model\":4,\"fsgsbase\":false,\"microcode\":\"0x1\",\"other\":{}},"
	            "\"workload\":{\"threads\":10,\"stack_bytes\":%d,\"note\":\"x\"},"
	            "\"ctxsw\":{\"low_ns\":1000,\"high_ns\":2000,\"ratio\":0.5,"
	            "\"ratio_ci95\":[0.45,0.55],\"pairs\":31},"
	            "\"map32\":{\"window_bytes\":10485760,\"class\":\"linear\"},\"threads\":{}}",
	            HAND_STACK);
	expect(r, "low", "strong", "fits");
	json_decref(r);
}

/* --- rejection ---------------------------------------------------------- */

static void test_rejections(void **state)
{
	json_t *nan;
	char err[128];

	(void)state;
	rejects("inputs: must be a JSON object", "[1,2]");
	rejects("ctxsw: must be an object", "{\"ctxsw\":5}");
	rejects("workload: must be an object", "{\"workload\":[]}");
	rejects("map32: must be an object", "{\"map32\":\"x\"}");
	rejects("threads: must be an object", "{\"threads\":true}");
	rejects("cpu: must be an object", "{\"cpu\":1}");
	rejects("ctxsw.low_ns: must be a number", "{\"ctxsw\":{\"low_ns\":\"9\",\"high_ns\":1}}");
	rejects("ctxsw.low_ns: missing", "{\"ctxsw\":{\"high_ns\":1}}");
	rejects("ctxsw.high_ns: missing", "{\"ctxsw\":{\"low_ns\":1}}");
	rejects("ctxsw.high_ns: must not be negative", "{\"ctxsw\":{\"low_ns\":1,\"high_ns\":-1}}");
	rejects("ctxsw.low_ns: must be positive", "{\"ctxsw\":{\"low_ns\":0,\"high_ns\":1}}");
	rejects("ctxsw.ratio: must be a number",
	        "{\"ctxsw\":{\"low_ns\":1,\"high_ns\":1,\"ratio\":null}}");
	rejects("ctxsw.ratio_ci95: must be an array [lo, hi]",
	        "{\"ctxsw\":{\"low_ns\":1,\"high_ns\":1,\"ratio_ci95\":[0.9]}}");
	rejects("ctxsw.ratio_ci95[1]: must be a number",
	        "{\"ctxsw\":{\"low_ns\":1,\"high_ns\":1,\"ratio_ci95\":[0.9,\"1\"]}}");
	rejects("ctxsw.ratio_ci95: lo must not exceed hi",
	        "{\"ctxsw\":{\"low_ns\":1,\"high_ns\":1,\"ratio_ci95\":[1.1,0.9]}}");
	rejects("workload.threads: must be a whole number", "{\"workload\":{\"threads\":1.5}}");
	rejects("workload.threads: must not be negative", "{\"workload\":{\"threads\":-1}}");
	rejects("workload.threads: must be at most 4194304", "{\"workload\":{\"threads\":5e6}}");
	rejects("workload.threads: must be a number", "{\"workload\":{\"threads\":null}}");
	rejects("workload.stack_bytes: must be positive", "{\"workload\":{\"stack_bytes\":0}}");
	rejects("workload.switches_per_thread: must not be negative",
	        "{\"workload\":{\"switches_per_thread\":-3}}");
	rejects("workload.switches_per_thread: must be a number",
	        "{\"workload\":{\"switches_per_thread\":\"many\"}}");
	rejects("map32.window_bytes: must be at most 4294967296",
	        "{\"map32\":{\"window_bytes\":5e9}}");
	rejects("map32.fail_ns: must be an array of [x, y] points", "{\"map32\":{\"fail_ns\":{}}}");
	rejects("map32.fail_ns[0]: must be an [x, y] pair", "{\"map32\":{\"fail_ns\":[[1]]}}");
	rejects("map32.fail_ns[1]: y: must not be negative",
	        "{\"map32\":{\"fail_ns\":[[1,2],[2,-2]]}}");
	rejects("map32.fail_ns[0]: x: must be a number", "{\"map32\":{\"fail_ns\":[[true,2]]}}");
	rejects("threads.low_create_ns[3]: x must increase",
	        "{\"threads\":{\"low_create_ns\":[[1,1],[2,1],[3,1],[2.5,1]]}}");
	rejects("threads.high_create_ns[1]: x must increase",
	        "{\"threads\":{\"high_create_ns\":[[1,1],[1,2]]}}");
	rejects("cpu.vendor: must be a string", "{\"cpu\":{\"vendor\":7}}");
	rejects("cpu.family: must be a number", "{\"cpu\":{\"family\":\"15\"}}");
	rejects("cpu.fsgsbase: must be a boolean", "{\"cpu\":{\"fsgsbase\":\"yes\"}}");
	/* NaN and infinities cannot even be built as JSON values, and the
	 * parser refuses them in text */
	assert_null(json_loads("{\"ctxsw\":{\"low_ns\":NaN,\"high_ns\":1}}", 0, NULL));
	assert_null(json_loads("{\"ctxsw\":{\"low_ns\":1e999,\"high_ns\":1}}", 0, NULL));
	nan = json_real(NAN);
	assert_null(nan);
	/* and a NULL document is rejected, not a crash */
	assert_null(rec_compute(NULL, err, sizeof(err)));
	assert_string_equal(err, "inputs: must be a JSON object");
}

static void test_too_many_points(void **state)
{
	json_t *in = json_object(), *pts = json_array(), *threads = json_object();
	char err[128];

	(void)state;
	for (int i = 0; i <= REC_MAX_POINTS; i++)
		json_array_append_new(pts, json_pack("[ii]", i + 1, 5));
	json_object_set_new(threads, "low_create_ns", pts);
	json_object_set_new(in, "threads", threads);
	assert_null(rec_compute(in, err, sizeof(err)));
	assert_string_equal(err, "threads.low_create_ns: more than 100000 points");
	json_decref(in);
}

/* --- inputs from probe documents --------------------------------------- */

static json_t *doc(const char *probe, const char *status, json_t *scalars, json_t *series)
{
	return json_pack("{s:s s:i s:s s:o s:o}", "probe", probe, "protocol", 1, "status", status,
	                 "scalars", scalars, "series", series);
}

static json_t *series(const char *x_unit, const char *y_unit, const char *points)
{
	json_t *p = json_loads(points, 0, NULL);

	assert_non_null(p);
	return json_pack("{s:s s:s s:o}", "x_unit", x_unit, "y_unit", y_unit, "points", p);
}

static void test_inputs_build(void **state)
{
	struct rec_workload w = {
	    .threads = 20, .stack_bytes = HAND_STACK, .switches_per_thread = 2000};
	json_t *fp =
	    json_pack("{s:s s:{s:s s:i s:i s:b s:s}}", "arch", "x86_64", "cpu", "vendor",
	              "GenuineIntel", "family", 15, "model", 4, "fsgsbase", 0, "microcode", "0x17");
	json_t *ctxsw =
	    doc("ctxsw", "ok",
	        json_pack("{s:{s:f s:s} s:{s:f s:s} s:{s:f s:s} s:{s:f s:s} s:{s:f s:s}}", "low_ns",
	                  "value", 1000.0, "unit", "ns", "high_ns", "value", 2000.0, "unit", "ns",
	                  "ratio", "value", 0.5, "unit", "ratio", "ratio_ci_lo", "value", 0.45,
	                  "unit", "ratio", "ratio_ci_hi", "value", 0.55, "unit", "ratio"),
	        json_object());
	json_t *map32 =
	    doc("map32", "ok",
	        json_pack("{s:{s:i s:s}}", "window_bytes", "value", 10485760, "unit", "bytes"),
	        json_pack("{s:o}", "fail_median_ns",
	                  series("vmas", "ns", "[[10,5e5],[10,1.5e6],[1e6,1e6]]")));
	json_t *threads =
	    doc("threads", "ok", json_object(),
	        json_pack("{s:o s:o}", "low_median_ns", series("threads", "ns", "[[0,5],[32,7]]"),
	                  "high_median_ns", series("threads", "ns", "[[0,5],[32,6]]")));
	json_t *in = rec_inputs_build(fp, ctxsw, map32, threads, &w), *r, *exp;
	char err[128];

	(void)state;
	/* the documented shape, repeated x merged into its mean */
	exp = json_loads(
	    "{\"cpu\":{\"vendor\":\"GenuineIntel\",\"family\":15,\"model\":4,"
	    "\"fsgsbase\":false},"
	    "\"workload\":{\"threads\":20,\"stack_bytes\":1044480,"
	    "\"switches_per_thread\":2000},"
	    "\"ctxsw\":{\"low_ns\":1000,\"high_ns\":2000,\"ratio\":0.5,"
	    "\"ratio_ci95\":[0.45,0.55]},"
	    "\"map32\":{\"window_bytes\":10485760,\"fail_ns\":[[10,1000000],[1000000,1000000]]},"
	    "\"threads\":{\"low_create_ns\":[[0,5],[32,7]],"
	    "\"high_create_ns\":[[0,5],[32,6]]}}",
	    0, NULL);
	assert_non_null(exp);
	if (!json_equal(in, exp)) {
		char *got = json_dumps(in, JSON_COMPACT);

		fail_msg("built inputs differ: %s", got);
	}
	r = rec_compute(in, err, sizeof(err));
	assert_non_null(r);
	expect(r, "low", "strong", "break_even");
	CLOSE(fig(r, "break_even_switches"), 1000);
	json_decref(r);
	json_decref(exp);
	json_decref(in);

	/* nothing measured: the workload alone, confidence none */
	in = rec_inputs_build(NULL, NULL, NULL, NULL, NULL);
	exp = json_loads("{\"workload\":{\"threads\":10000,\"stack_bytes\":8388608,"
	                 "\"switches_per_thread\":null}}",
	                 0, NULL);
	assert_true(json_equal(in, exp));
	r = rec_compute(in, err, sizeof(err));
	expect(r, "high", "none", "no_ctxsw");
	json_decref(r);
	json_decref(exp);
	json_decref(in);

	/* documents that did not end ok are not figures */
	json_object_set_new(ctxsw, "status", json_string("error"));
	in = rec_inputs_build(fp, ctxsw, NULL, NULL, &w);
	assert_null(json_object_get(in, "ctxsw"));
	json_decref(in);

	/* no MAP_32BIT off x86-64: a window of 0, and not applicable there */
	json_object_set_new(fp, "arch", json_string("aarch64"));
	json_object_set_new(ctxsw, "status", json_string("ok"));
	in = rec_inputs_build(fp, ctxsw, NULL, NULL, &w);
	r = rec_compute(in, err, sizeof(err));
	expect(r, "high", "strong", "not_applicable");
	assert_true(reason_has(r, "MAP_32BIT is unavailable"));
	json_decref(r);
	json_decref(in);

	json_decref(fp);
	json_decref(ctxsw);
	json_decref(map32);
	json_decref(threads);
}

static void test_text(void **state)
{
	json_t *r = compute("{\"workload\":{\"threads\":20,\"stack_bytes\":%d,"
	                    "\"switches_per_thread\":2000}," HAND "}",
	                    HAND_STACK);
	char *t = rec_text(r);

	(void)state;
	/* the plain sentence first, then the verdict in words a newcomer reads */
	assert_int_equal(
	    strncmp(t, "Change: low (MAP_32BIT) thread stacks pay on this host.\n", 56), 0);
	assert_non_null(strstr(t, "\nverdict: low stacks (MAP_32BIT), confidence: strong\n"));
	assert_non_null(strstr(t, "\nreasons:\n  - "));
	assert_non_null(strstr(t, "\nbreak-even: 1,000 switches per thread\n"));
	/* the raw figures (many null) are --json's, not the text's */
	assert_null(strstr(t, "figures:"));
	assert_null(strstr(t, "null"));
	/* lines are wrapped */
	for (const char *l = t; *l; l += strcspn(l, "\n") + (l[strcspn(l, "\n")] != 0))
		assert_true(strcspn(l, "\n") <= 82); /* a few bytes of UTF-8 (×, µ) */
	free(t);
	json_decref(r);
}

/* --- the 2008 discussion -------------------------------------------------
 *
 * Pardo's mail (LKML, 2008-08-12): on the P4 a context switch took about
 * 3,000 cycles with 32-bit (low) stacks and 4,800 with 64-bit (high) ones;
 * creating a thread took about 35,000 cycles, rising to about 25,000,000
 * once the MAP_32BIT window was full. On the other machines switches took
 * 800-1200 cycles, with 64-bit stacks as fast (two machines) or 5-10%
 * faster (four). Andi Kleen's reply defends the P4 case.
 *
 * Converted at a stated clock rate: the P4 at 3.0 GHz (3 cycles per ns),
 * the others at 2.0 GHz. The mails give no confidence intervals; the tests
 * assume +-3% around the P4's ratio and, for the other machines, use the
 * mail's own 5-10% spread (or +-1% for "indistinguishable").
 */
#define P4_HZ 3.0e9
#define OTHER_HZ 2.0e9
#define NS(cycles, hz) ((cycles) / (hz)*1e9)

/* The P4 of the mail with a workload, extra map32 keys and extra sections. */
static json_t *p4(const char *workload, const char *map32_extra, const char *extra)
{
	double low = NS(3000, P4_HZ), high = NS(4800, P4_HZ), ratio = low / high;

	return compute("{\"cpu\":{\"vendor\":\"GenuineIntel\",\"family\":15,\"model\":4},"
	               "\"workload\":%s,"
	               "\"ctxsw\":{\"low_ns\":%.17g,\"high_ns\":%.17g,\"ratio\":%.17g,"
	               "\"ratio_ci95\":[%.17g,%.17g]},"
	               "\"map32\":{\"window_bytes\":1073741824%s}%s}",
	               workload, low, high, ratio, ratio * 0.97, ratio * 1.03, map32_extra, extra);
}

static void test_2008_p4_few_threads(void **state)
{
	json_t *r;

	(void)state;
	/* 100 threads with glibc's 8 MiB stacks: 127 fit in the 1 GiB window */
	r = p4("{\"threads\":100,\"stack_bytes\":8388608}", "", "");
	expect(r, "low", "strong", "fits");
	CLOSE(fig(r, "switch_saving_ns"), 600); /* 1600 - 1000 ns */
	CLOSE(fig(r, "window_stacks"), 127);
	json_decref(r);
	/* a few thousand small (64 KiB) stacks fit too */
	r = p4("{\"threads\":4000,\"stack_bytes\":65536}", "", "");
	expect(r, "low", "strong", "fits");
	CLOSE(fig(r, "window_stacks"), 15420); /* floor(2^30 / 69632) */
	json_decref(r);
}

/* The linear search: a create at 35,000 cycles (11,667 ns) while the
 * window has room, 25,000,000 cycles (8,333,333 ns) once it is full. The
 * workload: 10,000 threads with 256 KiB stacks, so 4,032 fit ("slowdown
 * after allocating a few thousand threads"). Each switch saves 600 ns.
 * The creates with 4,100 to 9,999 threads alive cost 8,321,666 ns more
 * each, 5,900 x 8,321,666 = 49,097,829,400 ns; the 68 with 4,032 to 4,099
 * alive lie on the steep log-log segment from (4000, 11,667) to (4100,
 * 8,333,333), y = 11,667 (k / 4000)^p with p = ln(8,333,333 / 11,667) /
 * ln(4100 / 4000) = 266.1, and add 121,571,705 ns (summed in Python):
 * 49,219,401,105 ns (49.2 s) in all, a break-even of 49,219,401,105 /
 * (4,032 x 600) = 20,345 switches per low-stack thread.
 *
 * A realistic workload of that kind (thread-per-request servers that
 * create threads fast enough to notice under 100 creates per second) runs
 * short-lived threads: a thread that blocks on I/O some hundreds of times
 * in its life makes about 1,000 switches, twenty times too few. */
#define P4_CREATE_CURVES                                                                           \
	",\"threads\":{\"low_create_ns\":[[1,11667],[4000,11667],[4100,8333333],"                  \
	"[10000,8333333]],\"high_create_ns\":[[1,11667],[10000,11667]]}"

static void test_2008_p4_thousands_of_threads(void **state)
{
	json_t *r;

	(void)state;
	r = p4("{\"threads\":10000,\"stack_bytes\":262144,\"switches_per_thread\":1000}", "",
	       P4_CREATE_CURVES);
	expect(r, "high", "strong", "break_even");
	CLOSE(fig(r, "window_stacks"), 4032);
	CLOSE(fig(r, "threads_missing"), 5968);
	CLOSE(fig(r, "extra_create_ns"), 8333333 - 11667);
	/* the sum is taken in 1,024 blocks (lib/recommend_create.c): within 1e-4 */
	assert_float_equal(fig(r, "extra_total_ns"), 49219401105.0, 1e-4 * 49219401105.0);
	assert_float_equal(fig(r, "break_even_switches"), 20345.32, 1e-4 * 20345.32);
	json_decref(r);
	/* switches unknown: high, weak, the break-even stated */
	r = p4("{\"threads\":10000,\"stack_bytes\":262144}", "", P4_CREATE_CURVES);
	expect(r, "high", "weak", "switches_unknown");
	assert_true(reason_has(r, "20,34"));
	json_decref(r);
	/* only a switch-heavy workload (100,000 per thread) would repay it */
	r = p4("{\"threads\":10000,\"stack_bytes\":262144,\"switches_per_thread\":100000}", "",
	       P4_CREATE_CURVES);
	expect(r, "low", "strong", "break_even");
	json_decref(r);
	/* the same from map32, glibc's 8 MiB stacks (127 fit): the failing
	 * call walks the 254 VMAs of the full window (417 ns each), the retry
	 * the 20,000 VMAs of 10,000 threads, 8,333,333 ns; a plain mmap costs
	 * 2,000 ns. The creates with k = 127 .. 9,999 alive each pay 105,918 +
	 * 83,333 x 2k / 200 - 2,000 ns (the retry read at 2 C + 2 (k - C) = 2k
	 * VMAs): 9,873 x 103,918 + 833.33 x (9,999 x 10,000 / 2 - 126 x 127 /
	 * 2) = 1,025,982,414 + 41,655,665,877 = 42,681,648,291 ns, a break-even
	 * of that / (127 x 600) = 560,127 switches */
	r = p4("{\"threads\":10000,\"stack_bytes\":8388608,\"switches_per_thread\":1000}",
	       ",\"fail_ns\":[[254,105918],[1016,423672]],"
	       "\"retry_ns\":[[200,83333],[20000,8333333]],"
	       "\"plain_ns\":[[200,2000],[20000,2000]]",
	       "");
	expect(r, "high", "strong", "break_even");
	CLOSE(fig(r, "extra_create_fail_vmas"), 254);
	CLOSE(fig(r, "extra_create_fail_ns"), 105918);
	CLOSE(fig(r, "extra_create_retry_ns"), 8333333);
	CLOSE(fig(r, "extra_create_plain_ns"), 2000);
	CLOSE(fig(r, "extra_create_ns"), 105918 + 8333333 - 2000);
	assert_float_equal(fig(r, "break_even_switches"), 560127, 1e-4 * 560127);
	assert_true(isnan(fig(r, "extra_create_measured_ns")));
	json_decref(r);
}

static void test_2008_other_cpus(void **state)
{
	/* cycles per switch (32-bit stack), 64-bit as a fraction of it */
	static const struct {
		double cycles, lo, hi;
	} cpus[] = {
	    {800, 0.99, 1.01},  {1200, 0.99, 1.01}, /* indistinguishable */
	    {800, 0.90, 0.95},  {1000, 0.90, 0.95}, /* 64-bit 5-10% faster */
	    {1200, 0.90, 0.95},
	};
	static const char *const workloads[] = {
	    "{\"threads\":10,\"switches_per_thread\":1e9}",
	    "{\"threads\":100}",
	    "{\"threads\":10000,\"stack_bytes\":65536,\"switches_per_thread\":1e12}",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cpus) / sizeof(cpus[0]); i++)
		for (size_t k = 0; k < sizeof(workloads) / sizeof(workloads[0]); k++) {
			double low = NS(cpus[i].cycles, OTHER_HZ);
			double high = low * (cpus[i].lo + cpus[i].hi) / 2;
			json_t *r =
			    compute("{\"workload\":%s,\"ctxsw\":{\"low_ns\":%.17g,"
			            "\"high_ns\":%.17g,\"ratio_ci95\":[%.17g,%.17g]},"
			            "\"map32\":{\"window_bytes\":1073741824}}",
			            workloads[k], low, high, 1 / cpus[i].hi, 1 / cpus[i].lo);

			expect(r, "high", "strong", "no_benefit");
			assert_true(isnan(fig(r, "flip_threads")));
			json_decref(r);
		}
}

static const char *sentence_of(const json_t *r)
{
	return json_string_value(json_object_get(r, "sentence"));
}

/* The sentence names the mechanism; "equivalent within +-2%"
 * only when the CI lies inside [0.98, 1.02]. */
static void test_equivalence_and_selector(void **state)
{
	json_t *r;

	(void)state;
	/* CI 0.99 to 1.006: inside [0.98, 1.02] */
	r = compute("{\"ctxsw\":{\"low_ns\":798,\"high_ns\":800,\"ratio\":0.998,"
	            "\"ratio_ci95\":[0.99,1.006]}}");
	expect(r, "high", "strong", "no_benefit");
	assert_non_null(strstr(sentence_of(r), "writes FS the same way"));
	assert_non_null(strstr(sentence_of(r), "equivalent within ±2% (ratio 0.998)"));
	assert_true(
	    json_is_true(json_object_get(json_object_get(r, "figures"), "switch_equivalent")));
	CLOSE(fig(r, "equivalence_margin"), 0.02);
	assert_true(reason_has(r, "lies inside [0.980, 1.020]"));
	json_decref(r);
	/* CI 0.97 to 1.02: not significant, but not shown equivalent either */
	r = compute("{\"ctxsw\":{\"low_ns\":995,\"high_ns\":1000,\"ratio\":0.995,"
	            "\"ratio_ci95\":[0.97,1.02]}}");
	assert_null(strstr(sentence_of(r), "equivalent"));
	assert_non_null(strstr(sentence_of(r), "not make context switches significantly faster"));
	assert_true(
	    json_is_false(json_object_get(json_object_get(r, "figures"), "switch_equivalent")));
	json_decref(r);
	/* a wider margin of 5% makes the same CI equivalent */
	r = compute("{\"ctxsw\":{\"low_ns\":995,\"high_ns\":1000,\"ratio\":0.995,"
	            "\"ratio_ci95\":[0.97,1.02],\"equivalence_margin\":0.05}}");
	assert_non_null(strstr(sentence_of(r), "equivalent within ±5%"));
	json_decref(r);
	/* no CI: never "equivalent" */
	r = compute("{\"ctxsw\":{\"low_ns\":1000,\"high_ns\":1000}}");
	assert_null(strstr(sentence_of(r), "equivalent"));
	assert_true(
	    json_is_null(json_object_get(json_object_get(r, "figures"), "switch_equivalent")));
	json_decref(r);
	/* the segment path costs 1.2% (CI above 1) */
	r = compute("{\"ctxsw\":{\"low_ns\":798,\"high_ns\":800,\"ratio\":0.998,"
	            "\"ratio_ci95\":[0.99,1.006],\"selector_ratio\":1.012,"
	            "\"selector_ratio_ci95\":[1.004,1.02]}}");
	assert_non_null(strstr(sentence_of(r), "; the 32-bit segment path would cost +1.2% here."));
	assert_true(
	    reason_has(r, "switch at 1.012 times the high-stack time (95% CI 1.004 to 1.020)"));
	CLOSE(fig(r, "selector_ratio"), 1.012);
	CLOSE(fig_at(r, "selector_ratio_ci", 1), 1.02);
	json_decref(r);
	/* the segment path saves 10% (CI below 1): cheaper, but unused */
	r = compute("{\"ctxsw\":{\"low_ns\":798,\"high_ns\":800,\"ratio\":0.998,"
	            "\"ratio_ci95\":[0.99,1.006],\"selector_ratio\":0.9,"
	            "\"selector_ratio_ci95\":[0.85,0.95]}}");
	assert_non_null(strstr(sentence_of(r), "the segment path is 10.0% cheaper on this CPU, but "
	                                       "this kernel does not use it"));
	json_decref(r);
	/* a selector CI holding 1.0: no measurable difference */
	r = compute("{\"ctxsw\":{\"low_ns\":798,\"high_ns\":800,\"ratio\":0.998,"
	            "\"ratio_ci95\":[0.99,1.006],\"selector_ratio\":1.004,"
	            "\"selector_ratio_ci95\":[0.99,1.02]}}");
	assert_non_null(
	    strstr(sentence_of(r), "makes no measurable difference here (ratio 1.004)"));
	json_decref(r);
}

/* "low" only when the CI's upper bound lies below 1 - m, and
 * never when the switches are equivalent. Every case is high, no_benefit. */
static void test_low_needs_margin(void **state)
{
#define W1G "\"map32\":{\"window_bytes\":1073741824,\"fail_ns\":[[10,100],[1e5,100]]}"
	static const struct {
		const char *in, *confidence, *sentence, *reason;
	} cases[] = {
	    /* the example: one-sided below 1, yet inside [0.98, 1.02] */
	    {"{\"workload\":{\"threads\":100},\"ctxsw\":{\"low_ns\":995,\"high_ns\":1000,"
	     "\"ratio\":0.995,\"ratio_ci95\":[0.991,0.998]}," W1G "}",
	     "strong", "equivalent within ±2%", "no benefit: equivalent within ±2%"},
	    /* ... at 10,000 threads and 1,000,000 switches per thread */
	    {"{\"workload\":{\"threads\":10000,\"switches_per_thread\":1e6},\"ctxsw\":{"
	     "\"low_ns\":995,\"high_ns\":1000,\"ratio\":0.995,\"ratio_ci95\":[0.991,0.998]}," W1G
	     "}",
	     "strong", "equivalent within ±2%", "lies inside [0.980, 1.020]"},
	    /* below 1 but not below 1 - m, and not equivalent */
	    {"{\"workload\":{\"threads\":100},\"ctxsw\":{\"low_ns\":985,\"high_ns\":1000,"
	     "\"ratio\":0.985,\"ratio_ci95\":[0.97,0.99]}," W1G "}",
	     "strong", "not shown to save the ±2% margin",
	     "the CI's upper bound is not below 0.980"},
	    /* a wider margin asks for more: 0.96 is below 0.98 but not below 0.95 */
	    {"{\"workload\":{\"threads\":100},\"ctxsw\":{\"low_ns\":930,\"high_ns\":1000,"
	     "\"ratio\":0.93,\"ratio_ci95\":[0.9,0.96],\"equivalence_margin\":0.05}," W1G "}",
	     "weak", "not shown to save the ±5% margin", "not below 0.950"},
	    /* without a CI the point estimate must clear the margin too */
	    {"{\"workload\":{\"threads\":10},\"ctxsw\":{\"low_ns\":990,\"high_ns\":1000}," W1G "}",
	     "weak", "not shown to save the ±2% margin", "the ratio is not below 0.980"},
	};
#undef W1G

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		json_t *r = compute("%s", cases[i].in);

		expect(r, "high", cases[i].confidence, "no_benefit");
		if (!strstr(sentence_of(r), cases[i].sentence) || !reason_has(r, cases[i].reason))
			fail_msg("case %zu: %s", i, sentence_of(r));
		json_decref(r);
	}
}

/* With FSGSBASE the selector arm measures a selector load plus
 * wrfsbase against wrfsbase, and the sentence says so. */
static void test_selector_fsgsbase(void **state)
{
	static const char *const fmt =
	    "{\"cpu\":{\"fsgsbase\":%s},\"ctxsw\":{\"low_ns\":798,\"high_ns\":800,"
	    "\"ratio\":0.998,\"ratio_ci95\":[0.99,1.006],\"selector_ratio\":%s,"
	    "\"selector_ratio_ci95\":%s}}";
	json_t *r;

	(void)state;
	r = compute(fmt, "true", "1.012", "[1.004,1.02]");
	assert_non_null(strstr(sentence_of(r), "a selector load followed by wrfsbase costs +1.2% "
	                                       "over wrfsbase alone"));
	assert_null(strstr(sentence_of(r), "the 32-bit segment path would cost"));
	assert_true(reason_has(r, "selector load + wrfsbase against wrfsbase alone"));
	json_decref(r);
	r = compute(fmt, "true", "1.004", "[0.99,1.02]");
	assert_non_null(strstr(sentence_of(r), "makes no measurable difference against wrfsbase "
	                                       "alone here (ratio 1.004)"));
	json_decref(r);
	/* without FSGSBASE it is the segment path itself */
	r = compute(fmt, "false", "1.012", "[1.004,1.02]");
	assert_non_null(strstr(sentence_of(r), "; the 32-bit segment path would cost +1.2% here."));
	assert_false(reason_has(r, "wrfsbase against wrfsbase alone"));
	json_decref(r);
}

/* Equivalence is a TOST at alpha = 0.05, so it is read from the
 * 90% CI when one is given; the 95% CI stands in without it. */
static void test_equivalence_90(void **state)
{
	static const char *const fmt =
	    "{\"ctxsw\":{\"low_ns\":997,\"high_ns\":1000,\"ratio\":0.997,"
	    "\"ratio_ci95\":[0.975,1.015]%s}}";
	json_t *r;

	(void)state;
	r = compute(fmt, ",\"ratio_ci90\":[0.982,1.012]");
	assert_non_null(strstr(sentence_of(r), "equivalent within ±2%"));
	assert_true(reason_has(r, "ratio's 90% (a TOST at alpha 0.05) CI, 0.982 to 1.012, lies "
	                          "inside [0.980, 1.020]"));
	CLOSE(fig_at(r, "switch_equivalence_ci", 0), 0.982);
	json_decref(r);
	r = compute(fmt, "");
	assert_null(strstr(sentence_of(r), "equivalent"));
	assert_true(reason_has(r, "ratio's 95% CI, 0.975 to 1.015, does not lie inside"));
	json_decref(r);
	rejects("ctxsw.ratio_ci90: lo must not exceed hi",
	        "{\"ctxsw\":{\"low_ns\":1,\"high_ns\":1,\"ratio_ci90\":[2,1]}}");
}

static void test_aa_control(void **state)
{
	json_t *r;

	(void)state;
	/* holding 1.0: the strong no_benefit stays strong */
	r = compute("{\"ctxsw\":{\"low_ns\":798,\"high_ns\":800,\"ratio\":0.998,"
	            "\"ratio_ci95\":[0.99,1.006],\"aa_ratio_ci95\":[0.995,1.004]}}");
	expect(r, "high", "strong", "no_benefit");
	assert_true(reason_has(r, "it holds 1.0"));
	assert_true(json_is_false(json_object_get(json_object_get(r, "figures"), "aa_biased")));
	json_decref(r);
	/* excluding 1.0: a possible bias (or a 1-in-20 chance), so nothing is strong */
	r = compute("{\"ctxsw\":{\"low_ns\":798,\"high_ns\":800,\"ratio\":0.998,"
	            "\"ratio_ci95\":[0.99,1.006],\"aa_ratio_ci95\":[1.004,1.03]}}");
	expect(r, "high", "weak", "no_benefit");
	assert_true(reason_has(r, "a bias of this size is possible, or a 1-in-20 chance"));
	assert_true(json_is_true(json_object_get(json_object_get(r, "figures"), "aa_biased")));
	json_decref(r);
}

/* The selector arm runs in child processes; its control, high stacks
 * sampled the same way, takes a child's own cost out. A selector 1.6%
 * dearer than the parent's high stacks but level with its control is no
 * cost of the segment path: the clause says no measurable difference. */
static void test_selector_control(void **state)
{
	json_t *r, *f;

	(void)state;
	r = compute("{\"ctxsw\":{\"low_ns\":798,\"high_ns\":800,\"ratio\":0.998,"
	            "\"ratio_ci95\":[0.99,1.006],\"selector_ratio\":1.016,"
	            "\"selector_ratio_ci95\":[1.01,1.02],\"selector_child_ratio\":1.001,"
	            "\"selector_child_ratio_ci95\":[0.996,1.007]}}");
	f = json_object_get(r, "figures");
	CLOSE(json_number_value(json_object_get(f, "selector_ratio")), 1.001);
	assert_string_equal(json_string_value(json_object_get(f, "selector_against")), "child");
	assert_true(reason_has(r, "switch at 1.001 times the time of high stacks sampled the same "
	                          "way, in a child process (the selector arm's control)"));
	assert_false(reason_has(r, "would cost"));
	json_decref(r);
	/* Without the control: against the parent's high stacks, as before. */
	r = compute("{\"ctxsw\":{\"low_ns\":798,\"high_ns\":800,\"ratio\":0.998,"
	            "\"ratio_ci95\":[0.99,1.006],\"selector_ratio\":1.016,"
	            "\"selector_ratio_ci95\":[1.01,1.02]}}");
	f = json_object_get(r, "figures");
	assert_string_equal(json_string_value(json_object_get(f, "selector_against")), "high");
	assert_true(reason_has(r, "times the high-stack time"));
	json_decref(r);
	rejects("ctxsw.selector_child_ratio_ci95: lo must not exceed hi",
	        "{\"ctxsw\":{\"low_ns\":1,\"high_ns\":1,\"selector_child_ratio_ci95\":[2,1]}}");
}

static void test_mechanism_rejects(void **state)
{
	(void)state;
	rejects("ctxsw.equivalence_margin: must be below 0.5 (a fraction of 1)",
	        "{\"ctxsw\":{\"low_ns\":1,\"high_ns\":1,\"equivalence_margin\":0.5}}");
	rejects("ctxsw.equivalence_margin: must be positive",
	        "{\"ctxsw\":{\"low_ns\":1,\"high_ns\":1,\"equivalence_margin\":0}}");
	rejects("ctxsw.selector_ratio: must be a number",
	        "{\"ctxsw\":{\"low_ns\":1,\"high_ns\":1,\"selector_ratio\":\"x\"}}");
	rejects("ctxsw.selector_ratio_ci95: lo must not exceed hi",
	        "{\"ctxsw\":{\"low_ns\":1,\"high_ns\":1,\"selector_ratio_ci95\":[2,1]}}");
	rejects("ctxsw.aa_ratio_ci95: must be an array [lo, hi]",
	        "{\"ctxsw\":{\"low_ns\":1,\"high_ns\":1,\"aa_ratio_ci95\":[1]}}");
	rejects("ctxsw.aa_ratio_ci95[1]: must not be negative",
	        "{\"ctxsw\":{\"low_ns\":1,\"high_ns\":1,\"aa_ratio_ci95\":[0,-1]}}");
}

/* The margin, the selector arm and the A/A control reach the
 * inputs from the ctxsw document's scalars. */
static void test_inputs_build_mechanism(void **state)
{
	json_t *ctxsw = doc(
	    "ctxsw", "ok",
	    json_pack("{s:{s:f} s:{s:f} s:{s:f} s:{s:f} s:{s:f} s:{s:f} s:{s:f} s:{s:f} s:{s:f} "
	              "s:{s:f} s:{s:f}}",
	              "ratio_ci90_lo", "value", 0.995, "ratio_ci90_hi", "value", 1.005, "low_ns",
	              "value", 800.0, "high_ns", "value", 800.0, "equivalence_margin", "value",
	              0.03, "selector_ratio", "value", 1.012, "selector_ratio_ci_lo", "value",
	              1.004, "selector_ratio_ci_hi", "value", 1.02, "aa_ratio", "value", 1.001,
	              "aa_ratio_ci_lo", "value", 0.99, "aa_ratio_ci_hi", "value", 1.01),
	    json_object());
	json_t *in = rec_inputs_build(NULL, ctxsw, NULL, NULL, NULL), *exp;

	(void)state;
	exp = json_loads("{\"low_ns\":800,\"high_ns\":800,\"ratio_ci90\":[0.995,1.005],"
	                 "\"equivalence_margin\":0.03,"
	                 "\"selector_ratio\":1.012,\"selector_ratio_ci95\":[1.004,1.02],"
	                 "\"aa_ratio_ci95\":[0.99,1.01]}",
	                 0, NULL);
	assert_non_null(exp);
	if (!json_equal(json_object_get(in, "ctxsw"), exp)) {
		char *got = json_dumps(json_object_get(in, "ctxsw"), JSON_COMPACT);

		fail_msg("built ctxsw inputs differ: %s", got);
	}
	json_decref(exp);
	json_decref(in);
	json_decref(ctxsw);
}

/* --- probes that failed or are disabled --------------------------------- */

/* A crashed ctxsw is named in the sentence, the reasons and failed_probes,
 * not passed off as "no figures were given". */
static void test_failed_ctxsw(void **state)
{
	json_t *r = compute("{\"workload\":{\"threads\":100},\"failed_probes\":[{\"probe\":"
	                    "\"ctxsw\",\"kind\":\"crash\",\"signal\":\"SIGSEGV\","
	                    "\"reason\":\"crashed with SIGSEGV (stderr: boom)\","
	                    "\"run_id\":7,\"t_ms\":1000}]}");
	const json_t *f = json_array_get(json_object_get(r, "failed_probes"), 0);

	(void)state;
	expect(r, "high", "none", "no_ctxsw");
	assert_int_equal(json_array_size(json_object_get(r, "failed_probes")), 1);
	assert_string_equal(json_string_value(json_object_get(f, "probe")), "ctxsw");
	assert_string_equal(json_string_value(json_object_get(f, "status")), "error");
	assert_string_equal(json_string_value(json_object_get(f, "kind")), "crash");
	assert_string_equal(json_string_value(json_object_get(f, "signal")), "SIGSEGV");
	assert_int_equal(json_integer_value(json_object_get(f, "run_id")), 7);
	assert_int_equal(json_integer_value(json_object_get(f, "t_ms")), 1000);
	assert_non_null(
	    strstr(sentence_of(r), "ctxsw's last run failed: crashed with SIGSEGV (stderr: boom)"));
	assert_true(reason_has(r, "ctxsw's last run failed: crashed with SIGSEGV"));
	assert_false(reason_has(r, "were given"));
	assert_int_equal(json_array_size(json_object_get(r, "disabled_probes")), 0);
	json_decref(r);
}

/* A probe whose figures come from an earlier ok run: the sentence and the
 * first reason say that its last run failed. */
static void test_failed_with_older_figures(void **state)
{
	json_t *r = compute("{\"workload\":{\"threads\":10,\"stack_bytes\":%d}," HAND
	                    ",\"failed_probes\":[{\"probe\":\"map32\",\"kind\":\"timeout\","
	                    "\"reason\":\"killed after the 30 s time limit\"}]}",
	                    HAND_STACK);
	const json_t *f = json_array_get(json_object_get(r, "failed_probes"), 0);

	(void)state;
	expect(r, "low", "strong", "fits");
	assert_string_equal(json_string_value(json_object_get(f, "kind")), "timeout");
	assert_true(json_is_null(json_object_get(f, "signal")));
	assert_true(json_is_null(json_object_get(f, "run_id")));
	assert_non_null(strstr(sentence_of(r), "(map32's last run failed: killed after the 30 s "
	                                       "time limit; its figures here are from its last ok "
	                                       "run.)"));
	assert_non_null(strstr(json_string_value(json_array_get(json_object_get(r, "reasons"), 0)),
	                       "map32's last run failed"));
	json_decref(r);
}

static void test_disabled_ctxsw(void **state)
{
	json_t *r = compute("{\"disabled_probes\":[\"ctxsw\"]}");

	(void)state;
	expect(r, "high", "none", "no_ctxsw");
	assert_non_null(strstr(sentence_of(r), "ctxsw is disabled in the configuration"));
	assert_int_equal(json_array_size(json_object_get(r, "failed_probes")), 0);
	assert_string_equal(
	    json_string_value(json_array_get(json_object_get(r, "disabled_probes"), 0)), "ctxsw");
	json_decref(r);
}

static void test_failed_rejects(void **state)
{
	(void)state;
	rejects("inputs.failed_probes: must be an array", "{\"failed_probes\":{}}");
	rejects("inputs.failed_probes[0].probe: must be ctxsw, map32 or threads",
	        "{\"failed_probes\":[{\"probe\":\"mine\",\"reason\":\"x\"}]}");
	rejects("inputs.failed_probes[0].reason: must be a non-empty string",
	        "{\"failed_probes\":[{\"probe\":\"ctxsw\"}]}");
	rejects("inputs.failed_probes[0].run_id: must be a whole number >= 0",
	        "{\"failed_probes\":[{\"probe\":\"ctxsw\",\"reason\":\"x\",\"run_id\":-1}]}");
	rejects("inputs.disabled_probes[0]: must be ctxsw, map32 or threads",
	        "{\"disabled_probes\":[\"mine\"]}");
}

/* The daemon and `threadwatch run` note failures and disabled probes in
 * the inputs they build; a probe the recommendation does not read is left
 * out. */
static void test_inputs_note(void **state)
{
	json_t *in = rec_inputs_build(NULL, NULL, NULL, NULL, NULL), *r;
	struct failure crash;
	char err[128];

	(void)state;
	failure_set(&crash, FAILURE_CRASH, 11);
	assert_int_equal(rec_inputs_note_failed(in, "ctxsw", &crash, "crashed with SIGSEGV", 3, 5),
	                 0);
	assert_int_equal(rec_inputs_note_failed(in, "mine", &crash, "crashed with SIGSEGV", 4, 5),
	                 -ENOENT);
	assert_int_equal(rec_inputs_note_disabled(in, "threads"), 0);
	assert_int_equal(rec_inputs_note_disabled(in, "mine"), -ENOENT);
	assert_int_equal(json_array_size(json_object_get(in, "failed_probes")), 1);
	assert_int_equal(json_array_size(json_object_get(in, "disabled_probes")), 1);
	r = rec_compute(in, err, sizeof(err));
	assert_non_null(r);
	assert_non_null(strstr(sentence_of(r), "ctxsw's last run failed: crashed with SIGSEGV"));
	assert_non_null(strstr(sentence_of(r), "threads is disabled in the configuration"));
	json_decref(r);
	json_decref(in);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_measured_capacity),
	    cmocka_unit_test(test_no_ctxsw),
	    cmocka_unit_test(test_failed_ctxsw),
	    cmocka_unit_test(test_failed_with_older_figures),
	    cmocka_unit_test(test_disabled_ctxsw),
	    cmocka_unit_test(test_failed_rejects),
	    cmocka_unit_test(test_inputs_note),
	    cmocka_unit_test(test_no_significant_benefit),
	    cmocka_unit_test(test_fits),
	    cmocka_unit_test(test_no_ci_and_assumed_window),
	    cmocka_unit_test(test_window_zero),
	    cmocka_unit_test(test_zero_threads),
	    cmocka_unit_test(test_break_even_by_hand),
	    cmocka_unit_test(test_switches_unknown),
	    cmocka_unit_test(test_flip_points),
	    cmocka_unit_test(test_extra_keys_ignored),
	    cmocka_unit_test(test_rejections),
	    cmocka_unit_test(test_too_many_points),
	    cmocka_unit_test(test_inputs_build),
	    cmocka_unit_test(test_text),
	    cmocka_unit_test(test_2008_p4_few_threads),
	    cmocka_unit_test(test_2008_p4_thousands_of_threads),
	    cmocka_unit_test(test_2008_other_cpus),
	    cmocka_unit_test(test_equivalence_and_selector),
	    cmocka_unit_test(test_low_needs_margin),
	    cmocka_unit_test(test_selector_fsgsbase),
	    cmocka_unit_test(test_equivalence_90),
	    cmocka_unit_test(test_not_applicable_arch),
	    cmocka_unit_test(test_aa_control),
	    cmocka_unit_test(test_selector_control),
	    cmocka_unit_test(test_mechanism_rejects),
	    cmocka_unit_test(test_inputs_build_mechanism),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
