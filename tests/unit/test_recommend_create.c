/*
 * test_recommend_create: the extra cost of low-stack creates
 * (lib/recommend_create.c), checked by hand: curves read on log-log axes
 * and extrapolated as walks, the threads probe's curves, the map32 terms
 * (the fill below the window's capacity, the failing call and the retry
 * from it on), the sum over a workload's creates, churn, and what the
 * reasons say on kernels that walk and on kernels that do not.
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

static void test_cost_unknown_and_empty_curves(void **state)
{
	json_t *r;

	(void)state;
	r = compute("{\"workload\":{\"threads\":20,\"stack_bytes\":%d,\"switches_per_thread\":1e9},"
	            "\"ctxsw\":{\"low_ns\":1000,\"high_ns\":2000,\"ratio_ci95\":[0.45,0.55]},"
	            "\"map32\":{\"window_bytes\":10485760,\"fail_ns\":[]},"
	            "\"threads\":{\"low_create_ns\":[],\"high_create_ns\":[]}}",
	            HAND_STACK);
	expect(r, "high", "weak", "cost_unknown");
	assert_true(isnan(fig(r, "extra_create_ns")));
	assert_true(isnan(fig(r, "break_even_switches")));
	assert_true(reason_has(r, "unknown"));
	json_decref(r);
	/* points off the log axes (0) are unusable too */
	r = compute("{\"workload\":{\"threads\":20,\"stack_bytes\":%d,\"switches_per_thread\":1e9},"
	            "\"ctxsw\":{\"low_ns\":1000,\"high_ns\":2000,\"ratio_ci95\":[0.45,0.55]},"
	            "\"map32\":{\"window_bytes\":10485760,\"fail_ns\":[[0,5],[10,0]]}}",
	            HAND_STACK);
	expect(r, "high", "weak", "cost_unknown");
	json_decref(r);
}

static void test_single_point_curve(void **state)
{
	json_t *r;

	(void)state;
	/* one point: flat, and reading it elsewhere is an extrapolation */
	r = compute("{\"workload\":{\"threads\":20,\"stack_bytes\":%d,\"switches_per_thread\":1e6},"
	            "\"ctxsw\":{\"low_ns\":1000,\"high_ns\":2000,\"ratio_ci95\":[0.45,0.55]},"
	            "\"map32\":{\"window_bytes\":10485760,\"fail_ns\":[[100,5000]]}}",
	            HAND_STACK);
	expect(r, "low", "weak", "break_even");
	CLOSE(fig(r, "extra_create_ns"), 5000);
	assert_true(json_is_true(
	    json_object_get(json_object_get(r, "figures"), "extra_create_extrapolated")));
	assert_true(reason_has(r, "single usable point"));
	json_decref(r);
}

static void test_log_log_interpolation(void **state)
{
	json_t *r;

	(void)state;
	/* y = 10 x between (100, 1000) and (10000, 100000): slope 1 on log-log
	 * axes; 500 threads are 1000 VMAs, so E = 10,000 ns. The creates
	 * k = 10 .. 499 past C = 10 read the retry at 2 k VMAs (map32's window
	 * taken as 2 C VMAs, none outside it), 20 k ns each: 20 x (499 x 500 /
	 * 2 - 9 x 10 / 2) = 2,494,100 ns in all */
	r = compute(
	    "{\"workload\":{\"threads\":500,\"stack_bytes\":%d,\"switches_per_thread\":1},"
	    "\"ctxsw\":{\"low_ns\":1000,\"high_ns\":2000,\"ratio_ci95\":[0.45,0.55]},"
	    "\"map32\":{\"window_bytes\":10485760,\"retry_ns\":[[100,1000],[10000,100000]]}}",
	    HAND_STACK);
	CLOSE(fig(r, "extra_create_ns"), 10000);
	CLOSE(fig(r, "extra_create_vmas"), 1000);
	CLOSE(fig(r, "extra_total_ns"), 2494100);
	CLOSE(fig(r, "extra_beyond_ns"), 2494100);
	CLOSE(fig(r, "extra_ramp_ns"), 0);
	CLOSE(fig(r, "break_even_switches"), 2494100 / (10 * 1000.0));
	json_decref(r);
	/* beyond the last point the last segment's slope carries on:
	 * 50,000 threads are 100,000 VMAs, so E = 1,000,000 ns */
	r = compute(
	    "{\"workload\":{\"threads\":50000,\"stack_bytes\":%d},"
	    "\"ctxsw\":{\"low_ns\":1000,\"high_ns\":2000,\"ratio_ci95\":[0.45,0.55]},"
	    "\"map32\":{\"window_bytes\":10485760,\"retry_ns\":[[100,1000],[10000,100000]]}}",
	    HAND_STACK);
	CLOSE(fig(r, "extra_create_ns"), 1e6);
	assert_true(json_is_true(
	    json_object_get(json_object_get(r, "figures"), "extra_create_extrapolated")));
	assert_true(reason_has(r, "extrapolated"));
	json_decref(r);
	/* a power law y = x^2 between two points, read in the middle */
	r = compute("{\"workload\":{\"threads\":50,\"stack_bytes\":%d},"
	            "\"ctxsw\":{\"low_ns\":1000,\"high_ns\":2000,\"ratio_ci95\":[0.45,0.55]},"
	            "\"map32\":{\"window_bytes\":10485760,\"retry_ns\":[[10,100],[1000,1000000]]}}",
	            HAND_STACK);
	CLOSE(fig(r, "extra_create_ns"), 10000); /* 100 VMAs squared */
	json_decref(r);
}

static void test_threads_curves(void **state)
{
	json_t *r;

	(void)state;
	/* E = low - high at the workload's count: 30,000 - 10,000; the creates
	 * with 0 to 10 threads alive cost the same, those with 11 to 19 alive
	 * 20,000 ns more each: 9 x 20,000 = 180,000 ns, a break-even of
	 * 180,000 / (10 x 1000) = 18 switches */
	r = compute("{\"workload\":{\"threads\":20,\"stack_bytes\":%d,\"switches_per_thread\":1},"
	            "\"ctxsw\":{\"low_ns\":1000,\"high_ns\":2000,\"ratio_ci95\":[0.45,0.55]},"
	            "\"map32\":{\"window_bytes\":10485760},"
	            "\"threads\":{\"low_create_ns\":[[1,10000],[10,10000],[11,30000],[40,30000]],"
	            "\"high_create_ns\":[[1,10000],[40,10000]]}}",
	            HAND_STACK);
	assert_string_equal(json_string_value(json_object_get(json_object_get(r, "figures"),
	                                                      "extra_create_source")),
	                    "threads");
	CLOSE(fig(r, "extra_create_ns"), 20000);
	CLOSE(fig(r, "extra_total_ns"), 180000);
	CLOSE(fig(r, "extra_create_mean_ns"), 9000);
	CLOSE(fig(r, "break_even_switches"), 18);
	expect(r, "high", "strong", "break_even");
	json_decref(r);
	/* low creates cheaper than high: no extra cost, not a negative one */
	r = compute("{\"workload\":{\"threads\":20,\"stack_bytes\":%d,\"switches_per_thread\":1},"
	            "\"ctxsw\":{\"low_ns\":1000,\"high_ns\":2000,\"ratio_ci95\":[0.45,0.55]},"
	            "\"map32\":{\"window_bytes\":10485760},"
	            "\"threads\":{\"low_create_ns\":[[1,9000],[40,9000]],"
	            "\"high_create_ns\":[[1,10000],[40,10000]]}}",
	            HAND_STACK);
	CLOSE(fig(r, "extra_create_ns"), 0);
	CLOSE(fig(r, "break_even_switches"), 0);
	expect(r, "low", "strong", "break_even");
	json_decref(r);
	/* map32.fail_ns, when usable, is preferred to the threads curves */
	r = compute("{\"workload\":{\"threads\":20,\"stack_bytes\":%d}," HAND ","
	            "\"threads\":{\"low_create_ns\":[[1,9000],[40,9000]],"
	            "\"high_create_ns\":[[1,10000],[40,10000]]}}",
	            HAND_STACK);
	assert_string_equal(json_string_value(json_object_get(json_object_get(r, "figures"),
	                                                      "extra_create_source")),
	                    "map32");
	CLOSE(fig(r, "extra_create_ns"), 1e6);
	json_decref(r);
	/* one curve only is not enough */
	r = compute("{\"workload\":{\"threads\":20,\"stack_bytes\":%d},"
	            "\"ctxsw\":{\"low_ns\":1000,\"high_ns\":2000,\"ratio_ci95\":[0.45,0.55]},"
	            "\"map32\":{\"window_bytes\":10485760},"
	            "\"threads\":{\"low_create_ns\":[[1,9000],[40,9000]]}}",
	            HAND_STACK);
	expect(r, "high", "weak", "cost_unknown");
	json_decref(r);
}

/* E from map32: fail at 2 C in-window VMAs + retry at 2 n VMAs - plain,
 * a curve beyond its end extrapolated linearly, and the cross-check with
 * the threads probe where it measured n. */
static void test_map32_terms(void **state)
{
	json_t *r;

	(void)state;
	/* C = 10: fail read at 20 VMAs (interpolated, 20 x 100 ns); n = 30:
	 * retry at 60 VMAs, beyond its last point (40, 4000): the line
	 * through it with the least-squares slope 100 ns per VMA, so 6000;
	 * plain flat 500. E = 2000 + 6000 - 500. The threads probe measured
	 * low - high at 30 threads, read on log-log axes: 1000 x 30^(ln 10 /
	 * ln 64) - 1000, about 5,574 ns, so E is about 1.35 of it. */
	r = compute(
	    "{\"workload\":{\"threads\":30,\"stack_bytes\":%d,\"switches_per_thread\":1},"
	    "\"ctxsw\":{\"low_ns\":1000,\"high_ns\":2000,\"ratio_ci95\":[0.45,0.55]},"
	    "\"map32\":{\"window_bytes\":10485760,\"fail_ns\":[[10,1000],[40,4000]],"
	    "\"retry_ns\":[[10,1000],[20,2000],[40,4000]],\"plain_ns\":[[10,500],[100,500]]},"
	    "\"threads\":{\"low_create_ns\":[[1,1000],[64,10000]],"
	    "\"high_create_ns\":[[1,1000],[64,1000]]}}",
	    HAND_STACK);
	assert_string_equal(json_string_value(json_object_get(json_object_get(r, "figures"),
	                                                      "extra_create_source")),
	                    "map32");
	CLOSE(fig(r, "extra_create_fail_vmas"), 20);
	CLOSE(fig(r, "extra_create_fail_ns"), 2000);
	CLOSE(fig(r, "extra_create_vmas"), 60);
	CLOSE(fig(r, "extra_create_retry_ns"), 6000);
	CLOSE(fig(r, "extra_create_plain_ns"), 500);
	CLOSE(fig(r, "extra_create_ns"), 7500);
	assert_true(json_is_true(
	    json_object_get(json_object_get(r, "figures"), "extra_create_extrapolated")));
	assert_true(reason_has(r, "extrapolated linearly"));
	CLOSE(fig(r, "extra_create_measured_ns"), 1000 * pow(30, log(10) / log(64)) - 1000);
	CLOSE(fig(r, "extra_create_vs_measured"), 7500 / fig(r, "extra_create_measured_ns"));
	assert_true(reason_has(r, "Cross-check"));
	json_decref(r);
	/* a threads probe that saw no extra cost: no ratio to 0 (it read "inf
	 * times that"), the reason says the create was no dearer */
	r = compute(
	    "{\"workload\":{\"threads\":30,\"stack_bytes\":%d},"
	    "\"ctxsw\":{\"low_ns\":1000,\"high_ns\":2000,\"ratio_ci95\":[0.45,0.55]},"
	    "\"map32\":{\"window_bytes\":10485760,\"fail_ns\":[[10,1000],[20,2000]],"
	    "\"retry_ns\":[[10,1000],[20,2000],[40,4000]],\"plain_ns\":[[10,500],[100,500]]},"
	    "\"threads\":{\"low_create_ns\":[[1,1000],[64,1000]],"
	    "\"high_create_ns\":[[1,1000],[64,1000]]}}",
	    HAND_STACK);
	CLOSE(fig(r, "extra_create_measured_ns"), 0);
	assert_true(json_is_null(
	    json_object_get(json_object_get(r, "figures"), "extra_create_vs_measured")));
	assert_true(reason_has(
	    r,
	    "no dearer than a high-policy one, where the extra cost per create above is 7,500 ns"));
	assert_false(reason_has(r, "inf"));
	json_decref(r);
	/* without the retry curve its term is 0, and the reasons say so */
	r = compute("{\"workload\":{\"threads\":30,\"stack_bytes\":%d},"
	            "\"ctxsw\":{\"low_ns\":1000,\"high_ns\":2000,\"ratio_ci95\":[0.45,0.55]},"
	            "\"map32\":{\"window_bytes\":10485760,\"fail_ns\":[[10,1000],[40,4000]]}}",
	            HAND_STACK);
	CLOSE(fig(r, "extra_create_ns"), 2000);
	assert_true(isnan(fig(r, "extra_create_retry_ns")));
	assert_true(reason_has(r, "map32.retry_ns not measured"));
	json_decref(r);
}

/* The hand host's switches (s = 1000 ns, 900 to 1100) with `workload`
 * (the object's inside) and a map32 section. */
static json_t *hand_with(const char *workload, const char *map32)
{
	return compute("{\"workload\":{%s,\"stack_bytes\":%d},"
	               "\"ctxsw\":{\"low_ns\":1000,\"high_ns\":2000,\"ratio_ci95\":[0.45,0.55]},"
	               "%s}",
	               workload, HAND_STACK, map32);
}

/* The ramp below capacity. C = 10, n = 10 (all fit); the fill
 * ladder is y = 100 x, so create k (k threads alive) walks the 2 k window
 * VMAs below its hole for 200 k ns; a plain mmap is a flat 100 ns. Each
 * create costs max(0, 200 k - 100): 0 at k = 0 (below its first point the
 * fill ladder is read as 200 x / 2: 0 at 0 VMAs), then 100, 300, ..., 1700: 200 x 45 - 9 x 100 =
 * 8,100 ns in all, 810 per create. s = 1000 ns, so the break-even is 8,100 / (10 x 1000) = 0.81
 * switches per thread (0.736 to 0.9 with s from 900 to 1100 ns): every thread fits, yet the creates
 * are not free. */
#define RAMP_MAP32                                                                                 \
	"\"map32\":{\"window_bytes\":10485760,\"fill_ns\":[[2,200],[20,2000]],"                    \
	"\"plain_ns\":[[1,100],[100,100]]}"

static void test_ramp_below_capacity(void **state)
{
	json_t *r;

	(void)state;
	r = hand_with("\"threads\":10,\"switches_per_thread\":1", RAMP_MAP32);
	expect(r, "low", "strong", "break_even"); /* 10 x 1 x 1000 = 10,000 > 8,100 */
	CLOSE(fig(r, "threads_missing"), 0);
	CLOSE(fig(r, "extra_ramp_ns"), 8100);
	CLOSE(fig(r, "extra_beyond_ns"), 0);
	CLOSE(fig(r, "extra_total_ns"), 8100);
	CLOSE(fig(r, "extra_create_mean_ns"), 810);
	CLOSE(fig(r, "break_even_switches"), 0.81);
	CLOSE(fig_at(r, "break_even_switches_ci", 0), 8100 / 11000.0);
	CLOSE(fig_at(r, "break_even_switches_ci", 1), 0.9);
	CLOSE(fig(r, "benefit_total_ns"), 10000);
	assert_true(reason_has(r, "map32.fill_ns"));
	json_decref(r);
	/* half a switch per thread does not repay it: high */
	r = hand_with("\"threads\":10,\"switches_per_thread\":0.5", RAMP_MAP32);
	expect(r, "high", "strong", "break_even");
	json_decref(r);
	/* switches unknown: no longer "fits", since the creates cost extra */
	r = hand_with("\"threads\":10", RAMP_MAP32);
	expect(r, "high", "weak", "switches_unknown");
	json_decref(r);
}

/* Past capacity, the failing walk plus the top-down retry, per
 * create. C = 10, n = 15; fail is y = 150 x, read at 2 C = 20 VMAs: 3,000
 * ns. map32's process held 24 VMAs in its window and 6 outside it (L); the
 * retry of create k steps once per stack that missed before it (k - 10),
 * and its curve, y = 50 x against all of the process's VMAs (stacks of two
 * VMAs and one step each), is read at 24 + 6 + 2 (k - 10): 1,500
 * + 100 (k - 10) ns. Plain is a flat 100 ns, the fill ladder absent (the
 * ramp counted as 0). Create k = 10 + j costs 3,000 + 1,500 + 100 j - 100 =
 * 4,400 + 100 j; j = 0 .. 4: 5 x 4,400 + 100 x 10 = 23,000 ns in all,
 * 1,533.3 per create; E at 15 alive (j = 5) is 4,900 ns, its retry read at
 * 40 VMAs. Break-even 23,000 / (10 x 1000) = 2.3 switches (2.09 to 2.56). */
#define BEYOND_MAP32                                                                               \
	"\"map32\":{\"window_bytes\":10485760,\"window_vmas\":24,\"outside_vmas\":6,"              \
	"\"fail_ns\":[[20,3000],[40,6000]],\"retry_ns\":[[20,1000],[100,5000]],"                   \
	"\"plain_ns\":[[1,100],[100,100]]}"

static void test_fail_retry_beyond_capacity(void **state)
{
	json_t *r;

	(void)state;
	r = hand_with("\"threads\":15,\"switches_per_thread\":3", BEYOND_MAP32);
	expect(r, "low", "strong", "break_even"); /* 10 x 3 x 1000 = 30,000 > 23,000 */
	CLOSE(fig(r, "extra_create_ns"), 4900);
	CLOSE(fig(r, "extra_create_fail_ns"), 3000);
	CLOSE(fig(r, "extra_create_retry_ns"), 2000);
	CLOSE(fig(r, "extra_create_vmas"), 40);
	CLOSE(fig(r, "extra_create_window_vmas"), 24);
	CLOSE(fig(r, "extra_create_outside_vmas"), 6);
	CLOSE(fig(r, "extra_ramp_ns"), 0);
	CLOSE(fig(r, "extra_beyond_ns"), 23000);
	CLOSE(fig(r, "extra_total_ns"), 23000);
	CLOSE(fig(r, "extra_create_mean_ns"), 23000 / 15.0);
	CLOSE(fig(r, "break_even_switches"), 2.3);
	assert_true(reason_has(r, "map32.fill_ns not measured"));
	/* The curves rise as walks do: this kernel walks, at the curves'
	 * slopes, 150 ns per window VMA and 2 x 50 per stack of the retry. */
	assert_true(reason_has(r, "pays an extra 4,900 ns (4.9 µs) on this kernel"));
	assert_true(reason_has(r, "grow here as a walk does, 150 ns per window VMA for the "
	                          "failing call and 100 ns per stack for the retry"));
	assert_true(reason_has(r, "once per stack that missed before it (5)"));
	assert_false(reason_has(r, "ladders are flat here"));
	json_decref(r);
}

/* The same window on a kernel whose ladders are flat (3.8 and later): the
 * text says what this kernel charges and counts the old kernels' walks
 * without pricing them at a slope that measures no walk. */
static void test_flat_kernel_charges(void **state)
{
	json_t *r;

	(void)state;
	r = hand_with("\"threads\":15,\"switches_per_thread\":3",
	              "\"map32\":{\"window_bytes\":10485760,\"window_vmas\":24,\"outside_vmas\":6,"
	              "\"fail_ns\":[[20,300],[40,310]],\"retry_ns\":[[20,700],[100,720]],"
	              "\"plain_ns\":[[1,700],[100,700]]}");
	assert_true(reason_has(r, "on this kernel, from map32's curves"));
	assert_true(reason_has(r, "map32's ladders are flat here"));
	assert_true(reason_has(r, "walk the 20 VMAs of the full window one by one"));
	assert_true(reason_has(r, "(5 steps, plus a few over the mappings above them)"));
	assert_false(reason_has(r, "grow here as a walk does"));
	assert_false(reason_has(r, "as the kernels before 3.8 charged it"));
	json_decref(r);
}

/* Churn. The workload of the case above recreates its threads at
 * 100 per second and switches 250 times a second: 250 / 100 = 2.5
 * switches per thread life, above the break-even of 2.3 but inside its CI
 * (2.09 to 2.56): low, weak. Per second the creates cost 100 x 1,533.3 =
 * 153,333 ns; in steady state 5 of 15 creates miss the window, the
 * low-stack threads make 10 / 15 of the switches and save 250 x 10 / 15 x
 * 1000 = 166,667 ns; low pays above 100 x 2.3 = 230 switches per second. */
static void test_churn(void **state)
{
	json_t *r;

	(void)state;
	r = hand_with("\"threads\":15,\"creates_per_second\":100,\"switches_per_second\":250",
	              BEYOND_MAP32);
	expect(r, "low", "weak", "break_even");
	CLOSE(fig(r, "switches_per_thread"), 2.5);
	CLOSE(fig(r, "creates_per_second"), 100);
	CLOSE(fig(r, "extra_cost_per_second_ns"), 100 * 23000 / 15.0);
	CLOSE(fig(r, "benefit_per_second_ns"), 250 * 10 / 15.0 * 1000);
	CLOSE(fig(r, "break_even_switches_per_second"), 230);
	assert_true(reason_has(r, "Churn: at 100 creates per second"));
	json_decref(r);
	/* 200 switches a second: 2 per life, under the CI's bottom: high */
	r = hand_with("\"threads\":15,\"creates_per_second\":100,\"switches_per_second\":200",
	              BEYOND_MAP32);
	expect(r, "high", "strong", "break_even");
	CLOSE(fig(r, "benefit_per_second_ns"), 200 * 10 / 15.0 * 1000);
	json_decref(r);
	/* churn with switches per thread life: the same verdict as without it */
	r = hand_with("\"threads\":15,\"creates_per_second\":100,\"switches_per_thread\":3",
	              BEYOND_MAP32);
	expect(r, "low", "strong", "break_even");
	CLOSE(fig(r, "benefit_per_second_ns"), 100 * 3 * 10 / 15.0 * 1000);
	json_decref(r);
	/* without churn the rates are null */
	r = hand_with("\"threads\":15,\"switches_per_thread\":3", BEYOND_MAP32);
	assert_true(isnan(fig(r, "extra_cost_per_second_ns")));
	assert_true(isnan(fig(r, "creates_per_second")));
	json_decref(r);
	rejects("workload.switches_per_second: needs workload.creates_per_second (a rate of "
	        "switches against a one-off create cost has no break-even)",
	        "{\"workload\":{\"switches_per_second\":10}}");
	rejects("workload.creates_per_second: must be positive",
	        "{\"workload\":{\"creates_per_second\":0}}");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_cost_unknown_and_empty_curves),
	    cmocka_unit_test(test_single_point_curve),
	    cmocka_unit_test(test_log_log_interpolation),
	    cmocka_unit_test(test_threads_curves),
	    cmocka_unit_test(test_map32_terms),
	    cmocka_unit_test(test_ramp_below_capacity),
	    cmocka_unit_test(test_fail_retry_beyond_capacity),
	    cmocka_unit_test(test_flat_kernel_charges),
	    cmocka_unit_test(test_churn),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
