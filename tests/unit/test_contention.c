/*
 * test_contention: lib/contention.c, the rule that marks a run as taken
 * under contention (steal at least 2% during it, or a 1-minute load
 * average of at least 1 per CPU at its start; nothing recorded: not
 * contended), and what detection does with the marks (lib/detect.c):
 * contended runs are left out while they are at most half of the history,
 * and judged with the rest once the host is mostly contended.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>
#include <jansson.h>

#include "contention.h"
#include "detect.h"

static int contended(double steal_pct, double loadavg1, long ncpus)
{
	struct contention_reading r = {steal_pct, loadavg1};

	return contention_of_run(&r, ncpus);
}

/* Steal: 2% of the CPU time is the limit, whatever the CPU count. */
static void test_steal(void **state)
{
	(void)state;
	assert_int_equal(contended(0.0, 0.0, 4), 0);
	assert_int_equal(contended(1.99, 0.0, 4), 0);
	assert_int_equal(contended(CONTENTION_STEAL_PCT, 0.0, 4), 1);
	assert_int_equal(contended(2.0, NAN, 64), 1);
	assert_int_equal(contended(35.0, 0.1, 1), 1);
}

/* Load: at least one runnable task per CPU; an unknown CPU count (< 1)
 * counts as one CPU. */
static void test_load_per_cpu(void **state)
{
	(void)state;
	assert_int_equal(contended(0.0, 3.99, 4), 0);
	assert_int_equal(contended(0.0, 4.0, 4), 1);
	assert_int_equal(contended(NAN, 1.0, 2), 0);
	assert_int_equal(contended(NAN, 2.0, 2), 1);
	assert_int_equal(contended(0.0, 0.99, 0), 0);
	assert_int_equal(contended(0.0, 1.0, 0), 1);
	assert_int_equal(contended(0.0, 1.0, -1), 1);
}

/* Nothing recorded (NAN, as older histories have), or a reading that is
 * not a number, marks nothing. */
static void test_unrecorded(void **state)
{
	(void)state;
	assert_int_equal(contended(NAN, NAN, 4), 0);
	assert_int_equal(contended(INFINITY, NAN, 4), 0);
	assert_int_equal(contended(NAN, -INFINITY, 4), 0);
}

#define N 120
#define STEP_AT 60

/* A history of N runs at 1000 with a deterministic ±1% ripple and a 20%
 * step at STEP_AT; the runs from `busy_from` on are marked contended. */
static size_t events_with_busy_from(size_t busy_from)
{
	static const double ripple[] = {-0.01, 0.004, -0.003, 0.01, 0.0, -0.006, 0.007};
	json_t *id = json_pack("{s:s}", "kernel", "6.1.0-18-amd64");
	struct detect_fp fp = {1, id};
	struct detect_point p[N];
	struct detect_config c;
	struct detect_event *ev = NULL;
	size_t nev = 0;

	for (size_t i = 0; i < N; i++)
		p[i] = (struct detect_point){
		    .run_id = (int64_t)i + 1,
		    .t_ms = 1796284316000 + (int64_t)i * 6 * 3600 * 1000,
		    .value = 1000 * (i >= STEP_AT ? 1.2 : 1.0) *
		             (1 + ripple[i % (sizeof(ripple) / sizeof(ripple[0]))]),
		    .fp_id = 1,
		    .contended = i >= busy_from,
		};
	detect_config_default(&c);
	struct detect_series s = {
	    .metric = "ctxsw.high_ns", .unit = "ns", .pts = p, .n = N, .fps = &fp, .n_fps = 1};
	int rc = detect_scan(&c, &s, &ev, &nev);

	assert_int_equal(rc, (int)nev);
	detect_events_free(ev, nev);
	json_decref(id);
	return nev;
}

/* The step is found when no run is contended; when exactly half the runs
 * (the step's) are, they are left out and nothing is found; one more
 * contended run makes the host mostly contended, and every run is judged
 * again, step included. */
static void test_mostly_contended(void **state)
{
	(void)state;
	assert_int_equal(events_with_busy_from(N), 1);
	assert_int_equal(events_with_busy_from(STEP_AT), 0);
	assert_int_equal(events_with_busy_from(STEP_AT - 1), 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_steal),
	    cmocka_unit_test(test_load_per_cpu),
	    cmocka_unit_test(test_unrecorded),
	    cmocka_unit_test(test_mostly_contended),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
