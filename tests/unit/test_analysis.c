/*
 * test_analysis: the threads/map32 analysis on synthetic series: buckets,
 * the knee (a step that holds), slope classes, growth a + b n, a run shaped like the 2008 report,
 * budgeted repetitions, the VMA ladder, the thread clamp and ENOMEM causes.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "analysis.h"

/* A deterministic wobble of +-2% so that no series is perfectly smooth. */
static double wobble(size_t i)
{
	return 1.0 + 0.02 * sin((double)i * 1.7);
}

/* Buckets per-create costs cost[live] for live = 0..n-1. */
static size_t bucket_costs(const double *cost, size_t n, size_t width, struct analysis_bucket *out)
{
	struct analysis_sample *s = calloc(n, sizeof(*s));
	size_t nb;

	assert_non_null(s);
	for (size_t i = 0; i < n; i++) {
		s[i].live = (uint32_t)i;
		s[i].ns = cost[i];
	}
	nb = analysis_bucketize(s, n, width, out, n);
	free(s);
	return nb;
}

static void test_bucket_width(void **state)
{
	(void)state;
	assert_int_equal(analysis_bucket_width(4096), 64);
	assert_int_equal(analysis_bucket_width(100000), ANALYSIS_BUCKET_MAX);
	assert_int_equal(analysis_bucket_width(1024), 32);
	assert_int_equal(analysis_bucket_width(10), 1);
	assert_int_equal(analysis_bucket_width(0), 1);
}

static void test_bucketize(void **state)
{
	/* Out of order, two ramps pooled, and bucket [4, 8) empty. */
	const struct analysis_sample s[] = {
	    {9, 400}, {0, 100}, {1, 300}, {2, 200}, {3, 100}, {8, 400}, {0, 100}, {11, 400},
	};
	struct analysis_bucket b[8];
	size_t nb = analysis_bucketize(s, sizeof(s) / sizeof(s[0]), 4, b, 8);

	(void)state;
	assert_int_equal(nb, 2);
	assert_int_equal(b[0].n, 5);
	assert_true(b[0].x == 0);
	assert_true(b[0].median_ns == 100);
	assert_true(fabs(b[0].p99_ns - 296) < 1e-9); /* R-7 between 200 and 300 */
	assert_true(fabs(b[0].rate - 1e7) < 1e-3);
	assert_int_equal(b[1].n, 3);
	assert_true(b[1].x == 8);
	assert_true(b[1].median_ns == 400);
	assert_true(fabs(b[1].rate - 2.5e6) < 1e-3);
	/* Nothing to bucket. */
	assert_int_equal(analysis_bucketize(s, 0, 4, b, 8), 0);
	assert_int_equal(analysis_bucketize(s, 8, 0, b, 8), 0);
	/* Room for one bucket only. */
	assert_int_equal(analysis_bucketize(s, 8, 4, b, 1), 1);
	assert_true(b[0].x == 0);
}

static void test_rates(void **state)
{
	struct analysis_bucket b[3] = {{.rate = 50}, {.rate = 20}, {.rate = 30}};
	/* A cold first bucket, then a steady state with one slow bucket. */
	struct analysis_bucket c[6] = {{.rate = 9},  {.rate = 40}, {.rate = 42},
	                               {.rate = 38}, {.rate = 25}, {.rate = 41}};
	struct analysis_rates r;

	(void)state;
	assert_int_equal(analysis_rates(b, 3, &r), 0);
	assert_true(r.first == 50 && r.last == 30 && r.min == 20);
	assert_true(r.steady == 25); /* the median of 20 and 30 */
	assert_int_equal(analysis_rates(c, 6, &r), 0);
	assert_true(r.min == 9 && r.first == 9);
	assert_true(r.steady == 40); /* 25, 38, 40, 41, 42: not the cold 9 */
	assert_int_equal(analysis_rates(c, 1, &r), 0);
	assert_true(r.steady == 9);
	assert_int_not_equal(analysis_rates(b, 0, &r), 0);
}

static void test_knee(void **state)
{
	double cost[1024];
	struct analysis_bucket b[64];
	size_t nb;

	(void)state;
	/* Flat: no knee, even with a slow drift to 5x. */
	for (size_t i = 0; i < 1024; i++)
		cost[i] = 20000.0 * (1.0 + 4.0 * (double)i / 1024.0) * wobble(i);
	nb = bucket_costs(cost, 1024, 32, b);
	assert_int_equal(nb, 32);
	assert_int_equal(analysis_knee(b, nb), -1);

	/* A step to 12x at live = 320: the knee is the bucket at 320. */
	for (size_t i = 0; i < 1024; i++)
		cost[i] = (i < 320 ? 20000.0 : 240000.0) * wobble(i);
	nb = bucket_costs(cost, 1024, 32, b);
	assert_int_equal(analysis_knee(b, nb), 10);
	assert_true(b[10].x == 320);

	/* A step of only 3x is a knee as well. */
	for (size_t i = 0; i < 1024; i++)
		cost[i] = (i < 320 ? 20000.0 : 60000.0) * wobble(i);
	nb = bucket_costs(cost, 1024, 32, b);
	assert_int_equal(analysis_knee(b, nb), 10);

	/* A step of 1.5x is not. */
	for (size_t i = 0; i < 1024; i++)
		cost[i] = (i < 320 ? 20000.0 : 30000.0) * wobble(i);
	nb = bucket_costs(cost, 1024, 32, b);
	assert_int_equal(analysis_knee(b, nb), -1);

	/* A burst of host load over two buckets, then back: no knee. */
	for (size_t i = 0; i < 1024; i++)
		cost[i] = (i >= 320 && i < 384 ? 100000.0 : 20000.0) * wobble(i);
	nb = bucket_costs(cost, 1024, 32, b);
	assert_int_equal(analysis_knee(b, nb), -1);

	/* Nor a longer one that passes before the end. */
	for (size_t i = 0; i < 1024; i++)
		cost[i] = (i >= 320 && i < 480 ? 100000.0 : 20000.0) * wobble(i);
	nb = bucket_costs(cost, 1024, 32, b);
	assert_int_equal(analysis_knee(b, nb), -1);

	/* A step in the last two buckets is too short to hold. */
	for (size_t i = 0; i < 1024; i++)
		cost[i] = (i < 960 ? 20000.0 : 240000.0) * wobble(i);
	nb = bucket_costs(cost, 1024, 32, b);
	assert_int_equal(analysis_knee(b, nb), -1);

	/* One stalled create in a bucket does not make a knee: the rate is
	 * taken from the median. */
	for (size_t i = 0; i < 1024; i++)
		cost[i] = 20000.0 * wobble(i);
	cost[100] = 50e6;
	nb = bucket_costs(cost, 1024, 32, b);
	assert_int_equal(analysis_knee(b, nb), -1);

	/* The old kernel past the window: a step (the first failing walk),
	 * then a linear climb (each retry walks more VMAs). */
	for (size_t i = 0; i < 1024; i++)
		cost[i] = 20000.0 + (i >= 128 ? 40000.0 + 500.0 * (double)i : 0);
	nb = bucket_costs(cost, 1024, 32, b);
	assert_int_equal(analysis_knee(b, nb), 4);
	assert_true(b[4].x == 128);

	/* One bucket, or none: no knee. */
	assert_int_equal(analysis_knee(b, 1), -1);
	assert_int_equal(analysis_knee(b, 0), -1);
}

/* The 2008 report: about 35,000 cycles per create while the 1 GiB
 * MAP_32BIT window has room for 8 MiB stacks (128 of them), about
 * 25,000,000 once it is full: under 100 threads per second. */
static void test_report_2008(void **state)
{
	const double ghz = 2.4, window = 1 << 30, stack = 8 << 20;
	const size_t n = 4096, fits = (size_t)(window / stack);
	double *cost = calloc(n, sizeof(double));
	struct analysis_bucket b[64];
	struct analysis_rates r;
	size_t nb;
	long knee;

	(void)state;
	assert_non_null(cost);
	for (size_t i = 0; i < n; i++)
		cost[i] = (i < fits ? 35000.0 : 25e6) * wobble(i) / ghz; /* ns */
	nb = bucket_costs(cost, n, analysis_bucket_width(n), b);
	assert_int_equal(nb, 64);
	assert_int_equal(analysis_rates(b, nb, &r), 0);
	assert_true(r.first > 60000 && r.first < 75000);
	assert_true(r.last < 100);
	assert_true(r.min < 100);
	knee = analysis_knee(b, nb);
	assert_int_equal(knee, 2);
	assert_true(b[knee].x == 128);
	/* About three orders of magnitude between before and after. */
	assert_true(r.first / r.last > 500 && r.first / r.last < 1000);
	free(cost);
}

static void test_slope_class(void **state)
{
	(void)state;
	assert_int_equal(analysis_slope_class(-0.3), ANALYSIS_FLAT);
	assert_int_equal(analysis_slope_class(0.0), ANALYSIS_FLAT);
	assert_int_equal(analysis_slope_class(0.19), ANALYSIS_FLAT);
	assert_int_equal(analysis_slope_class(0.2), ANALYSIS_SUBLINEAR);
	assert_int_equal(analysis_slope_class(0.5), ANALYSIS_SUBLINEAR);
	assert_int_equal(analysis_slope_class(0.7), ANALYSIS_SUBLINEAR);
	assert_int_equal(analysis_slope_class(0.71), ANALYSIS_LINEAR);
	assert_int_equal(analysis_slope_class(1.3), ANALYSIS_LINEAR);
	assert_int_equal(analysis_slope_class(1.5), ANALYSIS_LINEAR);
	assert_int_equal(analysis_slope_class(1.51), ANALYSIS_QUADRATIC);
	assert_int_equal(analysis_slope_class(2.0), ANALYSIS_QUADRATIC);
	assert_string_equal(analysis_class_name(ANALYSIS_FLAT), "flat");
	assert_string_equal(analysis_class_name(ANALYSIS_SUBLINEAR), "sublinear");
	assert_string_equal(analysis_class_name(ANALYSIS_LINEAR), "linear");
}

/* Fail latency against VMA count, three kinds of kernel. */
static void test_fit_class(void **state)
{
	double x[12], y[12];
	struct stats_fit fit;
	enum analysis_class cls;

	(void)state;
	for (size_t i = 0; i < 12; i++)
		x[i] = 300.0 * pow(1.5, (double)i);
	/* A tree: about 600 ns whatever the count. */
	for (size_t i = 0; i < 12; i++)
		y[i] = 600.0 * wobble(i);
	assert_int_equal(analysis_fit_class(x, y, 12, &fit, &cls), 0);
	assert_int_equal(cls, ANALYSIS_FLAT);
	assert_true(fabs(fit.slope) < 0.05);
	assert_true(fit.slope_ci[0] <= fit.slope && fit.slope <= fit.slope_ci[1]);
	/* O(log n) looks flat too. */
	for (size_t i = 0; i < 12; i++)
		y[i] = 100.0 * log2(x[i]);
	assert_int_equal(analysis_fit_class(x, y, 12, &fit, &cls), 0);
	assert_int_equal(cls, ANALYSIS_FLAT);
	/* The 2008 list walk: a fixed cost plus ~450 ns per VMA. */
	for (size_t i = 0; i < 12; i++)
		y[i] = (5000.0 + 450.0 * x[i]) * wobble(i);
	assert_int_equal(analysis_fit_class(x, y, 12, &fit, &cls), 0);
	assert_int_equal(cls, ANALYSIS_LINEAR);
	assert_true(fit.slope > 0.9 && fit.slope < 1.05);
	/* Square root: in between. */
	for (size_t i = 0; i < 12; i++)
		y[i] = 50.0 * sqrt(x[i]);
	assert_int_equal(analysis_fit_class(x, y, 12, &fit, &cls), 0);
	assert_int_equal(cls, ANALYSIS_SUBLINEAR);
	assert_true(fabs(fit.slope - 0.5) < 1e-9);
	/* Unusable input. */
	assert_int_not_equal(analysis_fit_class(x, y, 1, &fit, &cls), 0);
	y[3] = 0;
	assert_int_not_equal(analysis_fit_class(x, y, 12, &fit, &cls), 0);
}

/* a + b n, classed on its own ladder: flat, linear and quadratic walks. */
static void test_growth(void **state)
{
	double x[12], y[12];
	struct analysis_growth g;

	(void)state;
	for (size_t i = 0; i < 12; i++)
		x[i] = 254.0 * pow(1.55, (double)i); /* 254 .. 31,000 VMAs */
	/* A large fixed part: 200 us plus 10 ns per VMA. The log-log slope is
	 * small, yet the walk is linear. */
	for (size_t i = 0; i < 12; i++)
		y[i] = (200000.0 + 10.0 * x[i]) * wobble(i);
	assert_int_equal(analysis_growth_fit(x, y, 12, &g), 0);
	assert_true(g.loglog < 0.3);
	assert_int_equal(g.cls, ANALYSIS_LINEAR);
	assert_true(g.b > 8 && g.b < 12);
	assert_true(g.b_ci[0] > 0 && g.b_ci[0] <= g.b && g.b <= g.b_ci[1]);
	assert_true(g.exponent > 0.7 && g.exponent < 1.3);
	assert_true(g.rise > 1);
	/* A walk without the fixed part: linear too, exponent near 1. */
	for (size_t i = 0; i < 12; i++)
		y[i] = (2000.0 + 450.0 * x[i]) * wobble(i);
	assert_int_equal(analysis_growth_fit(x, y, 12, &g), 0);
	assert_int_equal(g.cls, ANALYSIS_LINEAR);
	assert_true(fabs(g.exponent - 1) < 0.1);
	/* Flat with noise (+-2% and one outlier rung): flat. */
	for (size_t i = 0; i < 12; i++)
		y[i] = 600.0 * wobble(i) * (i == 7 ? 1.3 : 1.0);
	assert_int_equal(analysis_growth_fit(x, y, 12, &g), 0);
	assert_int_equal(g.cls, ANALYSIS_FLAT);
	assert_true(g.rise < ANALYSIS_RISE_FLAT);
	/* A tree, O(log n): flat however steady its rise. */
	for (size_t i = 0; i < 12; i++)
		y[i] = 1000.0 + 100.0 * log2(x[i]);
	assert_int_equal(analysis_growth_fit(x, y, 12, &g), 0);
	assert_int_equal(g.cls, ANALYSIS_FLAT);
	/* Square root above a fixed part: sublinear. */
	for (size_t i = 0; i < 12; i++)
		y[i] = 1000.0 + 50.0 * sqrt(x[i]);
	assert_int_equal(analysis_growth_fit(x, y, 12, &g), 0);
	assert_int_equal(g.cls, ANALYSIS_SUBLINEAR);
	assert_true(fabs(g.exponent - 0.5) < 0.05);
	/* Unusable input. */
	assert_int_equal(analysis_growth_fit(x, y, 2, &g), -EINVAL);
	y[3] = 0;
	assert_int_equal(analysis_growth_fit(x, y, 12, &g), -EINVAL);
	y[3] = 1;
	x[3] = x[2];
	assert_int_equal(analysis_growth_fit(x, y, 12, &g), -EINVAL);
}

/* The three ladders that fooled least squares. */
static void test_growth_robust(void **state)
{
	double x[10], y[10];
	struct analysis_growth g;

	(void)state;
	for (size_t i = 0; i < 10; i++)
		x[i] = 254.0 * pow(1.6, (double)i); /* 254 .. 17,000 VMAs */
	/* Flat at 500 ns (+-2%) with one top rung at 2x: flat. */
	for (size_t i = 0; i < 10; i++)
		y[i] = 500.0 * wobble(i) * (i == 9 ? 2.0 : 1.0);
	assert_int_equal(analysis_growth_fit(x, y, 10, &g), 0);
	assert_int_equal(g.cls, ANALYSIS_FLAT);
	/* A cache step from 400 to 720 ns halfway up: a step, not linear. */
	for (size_t i = 0; i < 10; i++)
		y[i] = (i < 5 ? 400.0 : 720.0) * wobble(i);
	assert_int_equal(analysis_growth_fit(x, y, 10, &g), 0);
	assert_int_equal(g.cls, ANALYSIS_STEP);
	assert_string_equal(analysis_class_name(g.cls), "step");
	/* A quick ladder of a linear walk (the pre-3.8 double, 8 rungs, the top two
	 * almost at one count) as measured: linear, not a step, though a side
	 * of 3 rungs has no significant slope of its own. */
	{
		static const double qx[] = {254, 508, 1016, 2032, 4064, 8128, 16256, 16342};
		static const double qy[] = {61826.5, 127289,  260295,  532864,
		                            1082622, 2320209, 5038320, 4989385};

		assert_int_equal(analysis_growth_fit(qx, qy, 8, &g), 0);
		assert_string_equal(analysis_class_name(g.cls), "linear");
	}
	/* ... and a step near the bottom too */
	for (size_t i = 0; i < 10; i++)
		y[i] = (i < 3 ? 400.0 : 720.0) * wobble(i);
	assert_int_equal(analysis_growth_fit(x, y, 10, &g), 0);
	assert_int_equal(g.cls, ANALYSIS_STEP);
	/* A real walk of 0.5 ns per VMA over 400 ns, on a ladder the budget
	 * cut to 3 rungs: not flat (3 noisy rungs cannot pin the exponent,
	 * so the class is any rising one). */
	for (size_t i = 0; i < 3; i++)
		y[i] = (400.0 + 0.5 * x[i]) * wobble(i);
	assert_int_equal(analysis_growth_fit(x, y, 3, &g), 0);
	assert_int_not_equal(g.cls, ANALYSIS_FLAT);
	assert_true(g.b_ci[0] > 0);
	assert_true(g.b > 0.4 && g.b < 0.6);
	/* ... on a full ladder as well */
	for (size_t i = 0; i < 10; i++)
		y[i] = (400.0 + 0.5 * x[i]) * wobble(i);
	assert_int_equal(analysis_growth_fit(x, y, 10, &g), 0);
	assert_int_equal(g.cls, ANALYSIS_LINEAR);
	/* A slope under the floor (0.05 ns per VMA) is flat, however steady. */
	for (size_t i = 0; i < 10; i++)
		y[i] = 200.0 + 0.05 * x[i];
	assert_int_equal(analysis_growth_fit(x, y, 10, &g), 0);
	assert_int_equal(g.cls, ANALYSIS_FLAT);
	/* An exponent near 2 is quadratic, not linear. */
	for (size_t i = 0; i < 10; i++)
		y[i] = (400.0 + 1e-3 * x[i] * x[i]) * wobble(i);
	assert_int_equal(analysis_growth_fit(x, y, 10, &g), 0);
	assert_int_equal(g.cls, ANALYSIS_QUADRATIC);
	assert_string_equal(analysis_class_name(g.cls), "quadratic");
}

static void test_reps(void **state)
{
	(void)state;
	assert_int_equal(analysis_reps(1e9, 1e6, 5, 400), 400);
	assert_int_equal(analysis_reps(1e9, 1e7, 5, 400), 100);
	assert_int_equal(analysis_reps(1e9, 1e9, 5, 400), 5);
	assert_int_equal(analysis_reps(0, 1e6, 5, 400), 5);
	assert_int_equal(analysis_reps(-1, 1e6, 5, 400), 5);
	assert_int_equal(analysis_reps(1e9, 0, 5, 400), 400);
	assert_int_equal(analysis_reps(1e9, NAN, 5, 400), 400);
}

static void test_ladder(void **state)
{
	double v[48];
	size_t n;

	(void)state;
	n = analysis_ladder(300, 32765, 1.5, v, 48);
	assert_true(n >= 12 && n <= 13);
	assert_true(v[0] == 300);
	assert_true(v[n - 1] == 32765);
	for (size_t i = 1; i < n; i++) {
		assert_true(v[i] > v[i - 1]);
		assert_true(v[i] / v[i - 1] <= 1.5 + 0.01);
	}
	/* Nowhere to climb: one rung. */
	n = analysis_ladder(500, 500, 2, v, 48);
	assert_int_equal(n, 1);
	assert_true(v[0] == 500);
	/* A short table still ends at the top. */
	n = analysis_ladder(1, 1e6, 2, v, 4);
	assert_int_equal(n, 4);
	assert_true(v[0] == 1 && v[3] == 1e6);
	/* Small ratios never repeat a rung. */
	n = analysis_ladder(2, 10, 1.1, v, 48);
	for (size_t i = 1; i < n; i++)
		assert_true(v[i] > v[i - 1]);
	assert_true(v[n - 1] == 10);
	/* Bad input. */
	assert_int_equal(analysis_ladder(0, 10, 2, v, 48), 0);
	assert_int_equal(analysis_ladder(10, 5, 2, v, 48), 0);
	assert_int_equal(analysis_ladder(1, 10, 1, v, 48), 0);
}

static void test_clamp(void **state)
{
	struct sys_limits l = {
	    .threads_max = 200000,
	    .threads_now = 1000,
	    .nproc_soft = UINT64_MAX,
	    .pids_max = UINT64_MAX,
	    .max_map_count = 65530,
	    .overcommit_memory = 0,
	    .mem_available = 16ull << 30,
	};
	struct analysis_room room;
	enum analysis_clamp why;
	uint64_t n;

	(void)state;
	n = analysis_clamp_threads(&l, 300, 8 << 20, 4096, 4096, &room, &why);
	assert_int_equal(n, 4096);
	assert_int_equal(why, ANALYSIS_CLAMP_NONE);
	assert_string_equal(analysis_clamp_name(why), "none");
	assert_true(room.threads_max == 99500);
	assert_true(room.nproc == UINT64_MAX);
	assert_true(room.pids == UINT64_MAX);
	/* 65530 less a tenth is 58977; less 300 in use, two per stack. */
	assert_true(room.map_count == (58977 - 300) / 2);
	assert_true(room.memory == (8ull << 30) / 65536);

	/* The tightest limit wins and is named. */
	l.max_map_count = 2000;
	n = analysis_clamp_threads(&l, 300, 8 << 20, 4096, 4096, &room, &why);
	assert_int_equal(n, (1800 - 300) / 2);
	assert_string_equal(analysis_clamp_name(why), "max_map_count");
	l.pids_max = 1500;
	l.pids_current = 100;
	n = analysis_clamp_threads(&l, 300, 8 << 20, 4096, 4096, &room, &why);
	assert_int_equal(n, 700);
	assert_string_equal(analysis_clamp_name(why), "cgroup_pids");
	l.nproc_soft = 1200;
	n = analysis_clamp_threads(&l, 300, 8 << 20, 4096, 4096, &room, &why);
	assert_int_equal(n, 100);
	assert_string_equal(analysis_clamp_name(why), "rlimit_nproc");
	/* Nothing left at all. */
	l.threads_max = 900;
	n = analysis_clamp_threads(&l, 300, 8 << 20, 4096, 4096, &room, &why);
	assert_int_equal(n, 0);
	assert_string_equal(analysis_clamp_name(why), "threads_max");

	/* Strict overcommit charges whole stacks against memory. */
	l = (struct sys_limits){.overcommit_memory = 2,
	                        .mem_available = 1ull << 30,
	                        .nproc_soft = UINT64_MAX,
	                        .pids_max = UINT64_MAX};
	n = analysis_clamp_threads(&l, 300, 8 << 20, 4096, 4096, &room, &why);
	assert_int_equal(n, (512ull << 20) / ((8 << 20) + 4096));
	assert_string_equal(analysis_clamp_name(why), "memory");
}

static void test_enomem_cause(void **state)
{
	(void)state;
	/* A full window: the plain call still works, far from the limit. */
	assert_int_equal(analysis_enomem_cause(300, 65530, 2, 1, 1), ANALYSIS_ENOMEM_WINDOW_FULL);
	/* At vm.max_map_count: never a full window, whatever else holds. */
	assert_int_equal(analysis_enomem_cause(65529, 65530, 2, 1, 1),
	                 ANALYSIS_ENOMEM_MAX_MAP_COUNT);
	assert_int_equal(analysis_enomem_cause(65530, 65530, 2, 0, 0),
	                 ANALYSIS_ENOMEM_MAX_MAP_COUNT);
	/* Neither: out of memory or commit. */
	assert_int_equal(analysis_enomem_cause(300, 65530, 2, 1, 0), ANALYSIS_ENOMEM_OTHER);
	/* Only a MAP_32BIT call can meet a full window. */
	assert_int_equal(analysis_enomem_cause(300, 65530, 2, 0, 1), ANALYSIS_ENOMEM_OTHER);
	assert_string_equal(analysis_enomem_name(ANALYSIS_ENOMEM_WINDOW_FULL), "window_full");
	assert_string_equal(analysis_enomem_name(ANALYSIS_ENOMEM_MAX_MAP_COUNT), "max_map_count");
	assert_string_equal(analysis_enomem_name(ANALYSIS_ENOMEM_OTHER), "enomem");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_bucket_width),  cmocka_unit_test(test_bucketize),
	    cmocka_unit_test(test_rates),         cmocka_unit_test(test_knee),
	    cmocka_unit_test(test_report_2008),   cmocka_unit_test(test_slope_class),
	    cmocka_unit_test(test_growth_robust), cmocka_unit_test(test_fit_class),
	    cmocka_unit_test(test_growth),        cmocka_unit_test(test_reps),
	    cmocka_unit_test(test_ladder),        cmocka_unit_test(test_clamp),
	    cmocka_unit_test(test_enomem_cause),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
