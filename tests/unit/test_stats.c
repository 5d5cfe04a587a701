/*
 * test_stats: every statistic of probes/lib/stats.c against values worked
 * out by hand (the working is in the comment next to each expected value).
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "stats.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))
#define EPS 1e-9

static void assert_near(double got, double want, double eps)
{
	if (!(fabs(got - want) <= eps))
		fail_msg("got %.12g, want %.12g (+- %g)", got, want, eps);
}

static void test_median(void **state)
{
	const double odd[] = {5, 1, 3};
	const double even[] = {4, 1, 3, 2};
	const double dup[] = {2, 9, 2, 1, 2};
	const double one[] = {7};
	double copy[N(even)];

	(void)state;
	/* sorted 1 3 5: the middle one is 3 */
	assert_near(stats_median(odd, N(odd)), 3.0, EPS);
	/* sorted 1 2 3 4: (2 + 3) / 2 = 2.5 */
	memcpy(copy, even, sizeof(even));
	assert_near(stats_median(copy, N(copy)), 2.5, EPS);
	/* the input is left as it was */
	assert_memory_equal(copy, even, sizeof(even));
	/* sorted 1 2 2 2 9: the middle one is 2 */
	assert_near(stats_median(dup, N(dup)), 2.0, EPS);
	assert_near(stats_median(one, 1), 7.0, EPS);
	assert_true(isnan(stats_median(one, 0)));
}

static void test_median_large(void **state)
{
	double v[101];

	(void)state;
	/* 0, 100, 200, ..., 10000 stored in a scrambled order (i * 37 mod 101
	 * visits every residue once): the median is the 51st value, 5000. */
	for (int i = 0; i < 101; i++)
		v[i] = (double)((i * 37) % 101) * 100.0;
	assert_near(stats_median(v, 101), 5000.0, EPS);
	/* Without the last value: 100 values, the 50th and 51st of the sorted
	 * remainder; the dropped value is (100 * 37) mod 101 = 64, i.e. 6400,
	 * which is above the middle, so the middle pair is 4900 and 5000. */
	assert_near(stats_median(v, 100), 4950.0, EPS);
}

static void test_median_vs_sort(void **state)
{
	struct stats_rng r;
	double v[64];

	(void)state;
	/* The median is found by selection, percentiles by sorting; at p = 50
	 * R-7 is the median for odd and even n alike (h = (n - 1) / 2). Many
	 * ties (values 0..9) stress the selection's partitioning. */
	stats_rng_seed(&r, 5);
	for (int t = 0; t < 500; t++) {
		size_t n = 1 + stats_rng_below(&r, 64);

		for (size_t i = 0; i < n; i++)
			v[i] = (double)stats_rng_below(&r, t % 2 ? 10 : 1000);
		assert_near(stats_median(v, n), stats_percentile(v, n, 50), EPS);
	}
}

static void test_mad(void **state)
{
	const double v[] = {1, 1, 2, 2, 4, 6, 9};
	const double w[] = {1, 2, 3, 4};
	const double c[] = {3, 3, 3};

	(void)state;
	/* median 2; |x - 2| = 1 1 0 0 2 4 7, sorted 0 0 1 1 2 4 7: median 1 */
	assert_near(stats_mad(v, N(v)), 1.0, EPS);
	/* median 2.5; |x - 2.5| = 1.5 0.5 0.5 1.5: median (0.5 + 1.5) / 2 = 1 */
	assert_near(stats_mad(w, N(w)), 1.0, EPS);
	/* no spread at all */
	assert_near(stats_mad(c, N(c)), 0.0, EPS);
	assert_true(isnan(stats_mad(v, 0)));
}

static void test_percentile(void **state)
{
	const double v[] = {40, 15, 50, 35, 20}; /* sorted 15 20 35 40 50 */

	(void)state;
	/* h = (n - 1) * p / 100 = 4p/100, value s[floor h] + frac(h) * gap */
	/* p 0: h 0 -> 15 */
	assert_near(stats_percentile(v, N(v), 0), 15.0, EPS);
	/* p 40: h 1.6 -> 20 + 0.6 * (35 - 20) = 29 */
	assert_near(stats_percentile(v, N(v), 40), 29.0, EPS);
	/* p 50: h 2 -> 35 */
	assert_near(stats_percentile(v, N(v), 50), 35.0, EPS);
	/* p 90: h 3.6 -> 40 + 0.6 * (50 - 40) = 46 */
	assert_near(stats_percentile(v, N(v), 90), 46.0, EPS);
	/* p 100: h 4 -> 50 */
	assert_near(stats_percentile(v, N(v), 100), 50.0, EPS);
	/* p 2.5: h 0.1 -> 15 + 0.1 * 5 = 15.5 */
	assert_near(stats_percentile(v, N(v), 2.5), 15.5, EPS);
	assert_true(isnan(stats_percentile(v, N(v), 101)));
	assert_true(isnan(stats_percentile(v, N(v), -1)));
	assert_true(isnan(stats_percentile(v, 0, 50)));
}

static void test_mean_stddev(void **state)
{
	const double v[] = {2, 4, 4, 4, 5, 5, 7, 9};

	(void)state;
	/* sum 40 over 8 values */
	assert_near(stats_mean(v, N(v)), 5.0, EPS);
	/* squared deviations 9 1 1 1 0 0 4 16 = 32; sqrt(32 / 7) = 2.138089935 */
	assert_near(stats_stddev(v, N(v)), 2.138089935299395, 1e-12);
	assert_true(isnan(stats_stddev(v, 1)));
	assert_true(isnan(stats_mean(v, 0)));
}

static void test_rng(void **state)
{
	struct stats_rng a, b, c;
	unsigned counts[6] = {0};
	int differ = 0;

	(void)state;
	stats_rng_seed(&a, 42);
	stats_rng_seed(&b, 42);
	stats_rng_seed(&c, 43);
	for (int i = 0; i < 1000; i++) {
		uint64_t x = stats_rng_next(&a);

		assert_true(x == stats_rng_next(&b));
		differ |= x != stats_rng_next(&c);
	}
	assert_true(differ);
	/* 60000 draws below 6: each face expects 10000 with a standard
	 * deviation of sqrt(60000 * 1/6 * 5/6) = 91; 500 is 5.5 of them. */
	for (int i = 0; i < 60000; i++) {
		size_t k = stats_rng_below(&a, 6);

		assert_true(k < 6);
		counts[k]++;
	}
	for (int k = 0; k < 6; k++)
		assert_true(counts[k] > 9500 && counts[k] < 10500);
	assert_int_equal(stats_rng_below(&a, 1), 0);
	/* seed 0 must not leave the generator stuck at zero */
	stats_rng_seed(&a, 0);
	assert_true(stats_rng_next(&a) != 0 || stats_rng_next(&a) != 0);
}

/* The simulations' deviates: uniform in [0, 1) with mean 1/2, and normal
 * with mean 0, standard deviation 1 and 4.55% beyond 2 (two-sided); over
 * 200000 draws the standard errors are 0.0007, 0.0022, 0.0016 and 0.0005,
 * and the margins are 5 of them. */
static void test_rng_deviates(void **state)
{
	struct stats_rng r;
	double su = 0, sn = 0, sn2 = 0;
	unsigned tail = 0;
	const int n = 200000;

	(void)state;
	stats_rng_seed(&r, 7);
	for (int i = 0; i < n; i++) {
		double u = stats_rng_uniform(&r), z = stats_rng_normal(&r);

		assert_true(u >= 0 && u < 1 && isfinite(z));
		su += u;
		sn += z;
		sn2 += z * z;
		tail += fabs(z) > 2;
	}
	assert_near(su / n, 0.5, 0.0035);
	assert_near(sn / n, 0, 0.011);
	assert_near(sqrt(sn2 / n), 1, 0.008);
	assert_near((double)tail / n, 0.0455, 0.0025);
}

static void test_bootstrap_median(void **state)
{
	const double v[] = {12, 15, 11, 19, 14, 13, 18, 10, 16, 17, 14, 12, 30};
	const double two[] = {1, 3};
	const double same[] = {4, 4, 4, 4};
	double ci[2], ci2[2];

	(void)state;
	assert_int_equal(stats_bootstrap_median_ci(v, N(v), 2000, 7, ci), 0);
	assert_int_equal(stats_bootstrap_median_ci(v, N(v), 2000, 7, ci2), 0);
	/* the same seed gives the same interval, bit for bit */
	assert_memory_equal(ci, ci2, sizeof(ci));
	/* sorted 10 11 12 12 13 14 14 15 16 17 18 19 30: median 14; a
	 * resampled median is always one of the data, so the interval lies
	 * inside [10, 30] and holds 14 */
	assert_true(ci[0] <= 14 && ci[1] >= 14);
	assert_true(ci[0] >= 10 && ci[1] <= 30);
	assert_true(ci[0] < ci[1]);
	/* Two values 1 and 3: a resample is {1,1}, {1,3}/{3,1} or {3,3}, so
	 * its median is 1, 2 or 3 with probability 1/4, 1/2, 1/4. Both tails
	 * hold 25% of the resamples, far beyond 2.5%: the interval is [1, 3]. */
	assert_int_equal(stats_bootstrap_median_ci(two, 2, 2000, 1, ci), 0);
	assert_near(ci[0], 1.0, EPS);
	assert_near(ci[1], 3.0, EPS);
	/* no spread: every resample has median 4 */
	assert_int_equal(stats_bootstrap_median_ci(same, N(same), 500, 3, ci), 0);
	assert_near(ci[0], 4.0, EPS);
	assert_near(ci[1], 4.0, EPS);
	assert_int_equal(stats_bootstrap_median_ci(v, 0, 2000, 7, ci), -EINVAL);
}

static void test_paired_ratio(void **state)
{
	const double a[] = {2, 3, 8, 10, 12};
	const double b[] = {1, 3, 4, 4, 4};
	const double p[] = {1, 100};
	const double zero[] = {1, 0};
	double med, med2, ci[2], ci2[2];

	(void)state;
	/* ratios 2 1 2 2.5 3, sorted 1 2 2 2.5 3: median 2 */
	assert_int_equal(stats_paired_ratio(a, b, N(a), 2000, 9, &med, ci), 0);
	assert_near(med, 2.0, EPS);
	assert_true(ci[0] >= 1.0 && ci[0] <= 2.0);
	assert_true(ci[1] >= 2.0 && ci[1] <= 3.0);
	assert_int_equal(stats_paired_ratio(a, b, N(a), 2000, 9, &med2, ci2), 0);
	assert_memory_equal(ci, ci2, sizeof(ci));
	/* Pairs are resampled together: (1, 1) and (100, 100) both have ratio
	 * 1, so every resample's median ratio is 1. Resampling the two sides
	 * apart would give ratios like 1/100 and 100. */
	assert_int_equal(stats_paired_ratio(p, p, 2, 2000, 9, &med, ci), 0);
	assert_near(med, 1.0, EPS);
	assert_near(ci[0], 1.0, EPS);
	assert_near(ci[1], 1.0, EPS);
	/* a zero denominator has no ratio */
	assert_int_equal(stats_paired_ratio(p, zero, 2, 2000, 9, &med, ci), -EINVAL);
	assert_int_equal(stats_paired_ratio(a, b, 0, 2000, 9, &med, ci), -EINVAL);
}

static void test_t95(void **state)
{
	(void)state;
	/* table values of the 0.975 quantile of Student's t */
	assert_near(stats_t95(1), 12.706204736, 1e-9);
	assert_near(stats_t95(2), 4.302652730, 1e-9);
	assert_near(stats_t95(10), 2.228138852, 1e-9);
	assert_near(stats_t95(30), 2.042272456, 1e-9);
	assert_near(stats_t95(60), 2.000297822, 1e-9);
	/* df 1000 lies between the anchors 120 (1.979930) and infinity
	 * (1.959964); linear in 1/df: f = (1/120 - 1/1000) / (1/120) = 0.88,
	 * 1.979930 - 0.88 * 0.019966 = 1.962356; the true value is 1.962339 */
	assert_near(stats_t95(1000), 1.962339, 1e-4);
	/* never below the normal quantile, and falling with df */
	assert_true(stats_t95(1000000) >= 1.959963 && stats_t95(45) < stats_t95(35));
	assert_true(isnan(stats_t95(0)));
}

static void test_fit_exact(void **state)
{
	const double x[] = {1, 2, 4, 8, 16, 32};
	double lin[6], flat[6];
	struct stats_fit f;

	(void)state;
	for (int i = 0; i < 6; i++) {
		lin[i] = 3.0 * x[i]; /* y = 3 x: slope 1, intercept ln 3 */
		flat[i] = 5.0;       /* y = 5: slope 0, intercept ln 5 */
	}
	assert_int_equal(stats_loglog_fit(x, lin, 6, &f), 0);
	assert_near(f.slope, 1.0, 1e-12);
	assert_near(f.intercept, log(3.0), 1e-12);
	assert_near(f.slope_ci[0], 1.0, 1e-6);
	assert_near(f.slope_ci[1], 1.0, 1e-6);
	assert_near(f.r2, 1.0, 1e-12);
	assert_int_equal(f.n, 6);
	assert_int_equal(stats_loglog_fit(x, flat, 6, &f), 0);
	assert_near(f.slope, 0.0, 1e-12);
	assert_near(f.intercept, log(5.0), 1e-12);
	assert_near(f.slope_ci[0], 0.0, 1e-6);
	assert_near(f.slope_ci[1], 0.0, 1e-6);
}

static void test_fit_noisy(void **state)
{
	const double x[] = {1, 2, 4, 8};
	/* log2 y = 1 1 3 3 */
	const double y[] = {2, 2, 8, 8};
	double xs[20], ys[20];
	struct stats_fit f;

	(void)state;
	/* In log2 units (the slope does not depend on the base):
	 * u = log2 x = 0 1 2 3, mean 1.5; w = log2 y = 1 1 3 3, mean 2.
	 * du = -1.5 -0.5 0.5 1.5, dw = -1 -1 1 1.
	 * Sxx = 2.25 + 0.25 + 0.25 + 2.25 = 5, Sxy = 1.5 + 0.5 + 0.5 + 1.5 = 4,
	 * Syy = 4. slope = 4 / 5 = 0.8; intercept = 2 - 0.8 * 1.5 = 0.8 (log2),
	 * i.e. 0.8 ln 2 in natural logs.
	 * fitted 0.8 1.6 2.4 3.2, residuals 0.2 -0.6 0.6 -0.2, SSE 0.8.
	 * r2 = 1 - 0.8 / 4 = 0.8.
	 * se = sqrt(SSE / (n - 2) / Sxx) = sqrt(0.8 / 2 / 5) = sqrt(0.08)
	 *    = 0.2828427; t95(2) = 4.3026527; half width 1.2169740.
	 * CI = [0.8 - 1.2169740, 0.8 + 1.2169740] = [-0.4169740, 2.0169740]. */
	assert_int_equal(stats_loglog_fit(x, y, 4, &f), 0);
	assert_near(f.slope, 0.8, 1e-12);
	assert_near(f.intercept, 0.8 * log(2.0), 1e-12);
	assert_near(f.r2, 0.8, 1e-12);
	assert_near(f.slope_ci[0], -0.4169740, 1e-6);
	assert_near(f.slope_ci[1], 2.0169740, 1e-6);

	/* y = sqrt(x) with +-5% alternating noise over x = 1..20: the fit
	 * stays near 0.5 and its interval holds 0.5 */
	for (int i = 0; i < 20; i++) {
		xs[i] = i + 1;
		ys[i] = sqrt(xs[i]) * (i % 2 ? 1.05 : 0.95);
	}
	assert_int_equal(stats_loglog_fit(xs, ys, 20, &f), 0);
	assert_true(fabs(f.slope - 0.5) < 0.05);
	assert_true(f.slope_ci[0] < 0.5 && f.slope_ci[1] > 0.5);
	assert_true(f.slope_ci[1] - f.slope_ci[0] < 0.2);
	assert_true(f.r2 > 0.9 && f.r2 < 1.0);
}

static void test_fit_rejects(void **state)
{
	const double x[] = {1, 2, 4};
	const double y[] = {1, 2, 4};
	const double zero[] = {0, 2, 4};
	const double neg[] = {1, -2, 4};
	const double same[] = {3, 3, 3};
	struct stats_fit f;

	(void)state;
	assert_int_equal(stats_loglog_fit(zero, y, 3, &f), -EINVAL);
	assert_int_equal(stats_loglog_fit(x, neg, 3, &f), -EINVAL);
	assert_int_equal(stats_loglog_fit(same, y, 3, &f), -EINVAL);
	assert_int_equal(stats_loglog_fit(x, y, 1, &f), -EINVAL);
	/* two points: the line through them, with no interval to speak of */
	assert_int_equal(stats_loglog_fit(x, y, 2, &f), 0);
	assert_near(f.slope, 1.0, 1e-12);
	assert_near(f.slope_ci[0], 1.0, 1e-12);
	assert_near(f.slope_ci[1], 1.0, 1e-12);
}

static void test_mann_whitney(void **state)
{
	const double males[] = {19, 22, 16, 29, 24};
	const double females[] = {20, 11, 17, 12};
	const double a[] = {1, 2, 2};
	const double b[] = {2, 3, 3};
	const double c[] = {5, 5, 5};

	(void)state;
	/* Textbook case. Combined ranks: 11f 1, 12f 2, 16m 3, 17f 4, 19m 5,
	 * 20f 6, 22m 7, 24m 8, 29m 9. R_m = 3 + 5 + 7 + 8 + 9 = 32,
	 * U = 32 - 5 * 6 / 2 = 17, mean 5 * 4 / 2 = 10,
	 * variance 5 * 4 * 10 / 12 = 16.667 (sd 4.0825),
	 * z = (|17 - 10| - 0.5) / 4.0825 = 1.59217, p = erfc(z / sqrt 2)
	 * = 0.1113469 (the exact test gives 0.111). */
	assert_near(stats_mann_whitney_p(males, 5, females, 4), 0.11134688653314048, 1e-9);
	/* symmetric in its arguments */
	assert_near(stats_mann_whitney_p(females, 4, males, 5), 0.11134688653314048, 1e-9);
	/* Ties. Combined 1 2 2 2 3 3: ranks 1, 3 3 3 (mean of 2..4),
	 * 5.5 5.5. R_a = 1 + 3 + 3 = 7, U = 7 - 6 = 1, mean 4.5.
	 * Tie term: 3^3 - 3 + 2^3 - 2 = 30; N = 6.
	 * variance = 9 / 12 * (7 - 30 / 30) = 4.5.
	 * z = (3.5 - 0.5) / sqrt 4.5 = sqrt 2; p = erfc(1) = 0.1572992. */
	assert_near(stats_mann_whitney_p(a, 3, b, 3), 0.15729920705028513, 1e-9);
	/* all tied: no evidence of a difference */
	assert_near(stats_mann_whitney_p(c, 3, c, 3), 1.0, EPS);
	assert_near(stats_mann_whitney_p(c, 0, b, 3), 1.0, EPS);
}

static void test_mann_whitney_separated(void **state)
{
	double lo[20], hi[20];

	(void)state;
	/* Fully separated samples of 20: U = 0, mean 200, variance
	 * 20 * 20 * 41 / 12 = 1366.67 (sd 36.968), z = 199.5 / 36.968 = 5.397,
	 * p = 6.8e-8. */
	for (int i = 0; i < 20; i++) {
		lo[i] = i;
		hi[i] = 100 + i;
	}
	assert_near(stats_mann_whitney_p(lo, 20, hi, 20),
	            erfc(199.5 / sqrt(20.0 * 20 * 41 / 12) / sqrt(2.0)), 1e-15);
	assert_true(stats_mann_whitney_p(lo, 20, hi, 20) < 1e-7);
}

static void test_signed_rank_exact(void **state)
{
	const double all_up[] = {1, 2, 3, 4, 5};
	const double one_down[] = {1, -2, 3, 4, 5};
	const double zeros[] = {0, 1, 0, 2, 3, 4, 5};
	const double nan_in[] = {1, NAN, 3};

	(void)state;
	/* n = 5, no ties: W+ = 1 + 2 + 3 + 4 + 5 = 15, reached by 1 of the
	 * 2^5 = 32 sign patterns: P(W+ >= 15) = 1/32 = 0.03125; two-sided
	 * twice that; "less" is P(W+ <= 15) = 1. */
	assert_near(stats_signed_rank_p(all_up, 5, STATS_GREATER), 1.0 / 32, EPS);
	assert_near(stats_signed_rank_p(all_up, 5, STATS_TWO_SIDED), 2.0 / 32, EPS);
	assert_near(stats_signed_rank_p(all_up, 5, STATS_LESS), 1.0, EPS);
	/* W+ = 1 + 3 + 4 + 5 = 13: W+ >= 13 when the negative ranks sum to
	 * at most 2, i.e. {}, {1}, {2}: 3/32 = 0.09375; two-sided 6/32. */
	assert_near(stats_signed_rank_p(one_down, 5, STATS_GREATER), 3.0 / 32, EPS);
	assert_near(stats_signed_rank_p(one_down, 5, STATS_TWO_SIDED), 6.0 / 32, EPS);
	/* zeros are dropped: the same as all_up */
	assert_near(stats_signed_rank_p(zeros, 7, STATS_GREATER), 1.0 / 32, EPS);
	/* nothing left, or a bad value: no evidence */
	assert_near(stats_signed_rank_p(zeros, 1, STATS_TWO_SIDED), 1.0, EPS);
	assert_near(stats_signed_rank_p(nan_in, 3, STATS_TWO_SIDED), 1.0, EPS);
}

static void test_signed_rank_normal(void **state)
{
	const double tied[] = {1, -1, 2, 2, 2, 3};
	double d[40];

	(void)state;
	/* Ties: |d| 1 1 2 2 2 3 get ranks 1.5 1.5 4 4 4 6; W+ = 1.5 + 4 + 4 +
	 * 4 + 6 = 19.5. m = 6: mean 6 * 7 / 4 = 10.5; variance 6 * 7 * 13 / 24
	 * - (2^3 - 2 + 3^3 - 3) / 48 = 22.75 - 0.625 = 22.125;
	 * z = (19.5 - 10.5 - 0.5) / sqrt(22.125) = 1.807075,
	 * p = erfc(z / sqrt 2) / 2 = 0.0353749. */
	assert_near(stats_signed_rank_p(tied, 6, STATS_GREATER), 0.03537493353818884, 1e-9);
	assert_near(stats_signed_rank_p(tied, 6, STATS_TWO_SIDED), 0.07074986707637768, 1e-9);
	/* 40 untied values (more than the exact limit): -1..-10, 11..40.
	 * W+ = 11 + ... + 40 = 820 - 55 = 765; mean 40 * 41 / 4 = 410;
	 * variance 40 * 41 * 81 / 24 = 5535; z = 354.5 / sqrt(5535) = 4.76495,
	 * one-sided p = 9.4455e-7. */
	for (int i = 0; i < 40; i++)
		d[i] = i < 10 ? -(i + 1) : i + 1;
	assert_near(stats_signed_rank_p(d, 40, STATS_GREATER), 9.445497605131358e-07, 1e-12);
	assert_near(stats_signed_rank_p(d, 40, STATS_TWO_SIDED), 1.8890995210262717e-06, 1e-12);
}

/* ratios r[i] = a[i] / b[i] with b[i] = 1000 */
static void fill_ratios(double *a, double *b, size_t n, double (*r)(size_t))
{
	for (size_t i = 0; i < n; i++) {
		b[i] = 1000;
		a[i] = 1000 * r(i);
	}
}

static double r_tight(size_t i)
{
	return 1 + 0.001 * ((double)i - 10) / 10; /* 0.999 .. 1.0009 */
}

static double r_shifted(size_t i)
{
	return 1.10 + 0.001 * ((double)i - 10) / 10; /* about +10% */
}

static double r_noisy(size_t i)
{
	/* 1.3, 0.697, 1.306, 0.691, ...: centred near 1, +-30% */
	return 1 + 0.3 * (i % 2 ? -1 : 1) * (1 + (double)i / 100);
}

static void test_tost(void **state)
{
	double a[20], b[20], p;

	(void)state;
	/* Equivalent: every ratio lies within 0.1% of 1, so every
	 * log(r) - log(0.98) is positive and every log(r) - log(1.02)
	 * negative; both one-sided exact p-values are 1 / 2^20. */
	fill_ratios(a, b, 20, r_tight);
	assert_int_equal(stats_tost_ratio(a, b, 20, 0.02, &p), 0);
	assert_near(p, 1.0 / 1048576, 1e-15);
	assert_true(p < 0.05);
	/* Not equivalent: about 1.10, so log(r) - log(1.02) is positive for
	 * every pair and the "below 1 + m" test has p = P(W+ <= 210) = 1. */
	fill_ratios(a, b, 20, r_shifted);
	assert_int_equal(stats_tost_ratio(a, b, 20, 0.02, &p), 0);
	assert_near(p, 1.0, EPS);
	/* ... and the paired test calls it different: 20 of 20 above. */
	assert_true(stats_signed_rank_p(a, 20, STATS_TWO_SIDED) < 1e-5);
	/* Too noisy to say: ratios +-30% about 1. Against 0.98 the ten ratios
	 * below 1 have the larger |log|, so W+ = 1 + ... + 10 = 55 and
	 * P(W+ >= 55) = 1018032 / 2^20 = 0.970871 (subsets of 1..20 with sum
	 * >= 55, counted by hand with the same recurrence); TOST fails. The
	 * two-sided signed-rank test of log r has W+ = 55 too: 2 * 33409 /
	 * 2^20 = 0.0637226, so no difference is shown either. */
	fill_ratios(a, b, 20, r_noisy);
	assert_int_equal(stats_tost_ratio(a, b, 20, 0.02, &p), 0);
	assert_near(p, 1018032.0 / 1048576, 1e-12);
	for (int i = 0; i < 20; i++)
		a[i] = log(a[i] / b[i]);
	assert_near(stats_signed_rank_p(a, 20, STATS_TWO_SIDED), 2 * 33409.0 / 1048576, 1e-12);
	/* bad input */
	assert_int_equal(stats_tost_ratio(a, b, 0, 0.02, &p), -EINVAL);
	assert_int_equal(stats_tost_ratio(b, b, 20, 0, &p), -EINVAL);
	assert_int_equal(stats_tost_ratio(b, b, 20, 1, &p), -EINVAL);
	b[3] = 0;
	assert_int_equal(stats_tost_ratio(a, b, 20, 0.02, &p), -EINVAL);
}

static void test_ci_equivalent(void **state)
{
	(void)state;
	assert_int_equal(stats_ci_equivalent(0.99, 1.01, 0.02), 1);
	/* the bounds are inclusive */
	assert_int_equal(stats_ci_equivalent(0.98, 1.02, 0.02), 1);
	/* one end outside: not shown equivalent */
	assert_int_equal(stats_ci_equivalent(0.97, 1.0, 0.02), 0);
	assert_int_equal(stats_ci_equivalent(1.01, 1.03, 0.02), 0);
	/* a reversed interval is not an interval */
	assert_int_equal(stats_ci_equivalent(1.01, 0.99, 0.02), 0);
	assert_int_equal(stats_ci_equivalent(NAN, 1.0, 0.02), 0);
}

static void test_median_ci_order(void **state)
{
	const double six[] = {6, 1, 5, 2, 4, 3};
	const double nine[] = {90, 10, 80, 20, 70, 30, 60, 40, 50};
	const double bad[] = {1, 2, 3, NAN, 5, 6};
	double v[39], ci[2];

	(void)state;
	/* n = 6: P(B <= 0) = 1/64 = 0.0156 <= 0.025, P(B <= 1) = 7/64 > 0.025,
	 * so k = 1: the whole range [x(1), x(6)] = [1, 6]. */
	assert_int_equal(stats_median_ci_order(six, 6, ci), 0);
	assert_near(ci[0], 1, EPS);
	assert_near(ci[1], 6, EPS);
	/* n = 9: P(B <= 1) = (1 + 9) / 512 = 0.0195, P(B <= 2) = (1 + 9 + 36) /
	 * 512 = 0.0898: k = 2, [x(2), x(8)] = [20, 80]. */
	assert_int_equal(stats_median_ci_order(nine, 9, ci), 0);
	assert_near(ci[0], 20, EPS);
	assert_near(ci[1], 80, EPS);
	/* n = 39: P(B <= 12) = 6515349244 / 2^39 = 0.01185, adding C(39, 13) =
	 * 8122425444 gives 0.0266: k = 13, [x(13), x(27)]. Values 0..38
	 * scrambled (i * 7 mod 39 visits each once): [12, 26]. */
	for (int i = 0; i < 39; i++)
		v[i] = (double)((i * 7) % 39);
	assert_int_equal(stats_median_ci_order(v, 39, ci), 0);
	assert_near(ci[0], 12, EPS);
	assert_near(ci[1], 26, EPS);
	/* too few values for a 95% interval, or a bad one */
	assert_int_equal(stats_median_ci_order(six, 5, ci), -EINVAL);
	assert_int_equal(stats_median_ci_order(bad, 6, ci), -EINVAL);
}

/* Exact for any n. 2^-n underflows from n = 1075 on, which once
 * gave k = n and a reversed interval. Ranks checked against the binomial
 * summed exactly (Python's fractions): n = 1075: k = 505; n = 2000: k = 956
 * at 95% and 963 at 90%. */
static void test_median_ci_order_large(void **state)
{
	static const struct {
		size_t n;
		double level;
		size_t k;
	} cases[] = {
	    {1075, 0.95, 505}, {2000, 0.95, 956}, {2000, 0.90, 963}, {9, 0.90, 2}, {5, 0.90, 1}};
	static double v[2000];
	double ci[2];

	(void)state;
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		size_t n = cases[c].n;

		/* 0..n-1 scrambled: i * 7 mod n visits each once when 7 does not divide n */
		for (size_t i = 0; i < n; i++)
			v[i] = (double)((i * 7) % n);
		assert_int_equal(stats_median_ci_order_level(v, n, cases[c].level, ci), 0);
		assert_near(ci[0], (double)(cases[c].k - 1), EPS);
		assert_near(ci[1], (double)(n - cases[c].k), EPS);
	}
	/* the 95% wrapper is the same interval */
	for (size_t i = 0; i < 1075; i++)
		v[i] = (double)((i * 7) % 1075);
	assert_int_equal(stats_median_ci_order(v, 1075, ci), 0);
	assert_true(ci[0] < ci[1]);
	assert_near(ci[0], 504, EPS);
	/* too few values for the level, or no level */
	assert_int_equal(stats_median_ci_order_level(v, 4, 0.90, ci), -EINVAL);
	assert_int_equal(stats_median_ci_order_level(v, 100, 1.0, ci), -EINVAL);
}

/* Qn with Croux and Rousseeuw's small-sample factors is about unbiased for
 * the standard deviation of normal data at every n: brute force over
 * 20,000 samples per n (the mean of Qn within 4% of sigma = 3). n = 2 by
 * hand: 2.2219 * |x1 - x2| * 0.399. */
static void test_qn(void **state)
{
	const double two[] = {1, 3};
	double v[16], pairs[16 * 15 / 2];
	struct stats_rng r;

	(void)state;
	assert_near(stats_qn(two, 2, pairs), 2.2219 * 2 * 0.399, 1e-9);
	assert_near(stats_qn(two, 1, pairs), 0, 0);
	assert_true(isnan(stats_qn(two, 0, pairs)));
	stats_rng_seed(&r, 24);
	for (size_t n = 2; n <= 16; n++) {
		double sum = 0;

		for (int it = 0; it < 20000; it++) {
			for (size_t i = 0; i < n; i++)
				v[i] = 10 + 3 * stats_rng_normal(&r);
			sum += stats_qn(v, n, pairs);
		}
		if (fabs(sum / 20000 / 3 - 1) > 0.04)
			fail_msg("n = %zu: mean Qn / sigma = %.3f", n, sum / 20000 / 3);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_median),
	    cmocka_unit_test(test_median_large),
	    cmocka_unit_test(test_median_vs_sort),
	    cmocka_unit_test(test_mad),
	    cmocka_unit_test(test_percentile),
	    cmocka_unit_test(test_mean_stddev),
	    cmocka_unit_test(test_rng),
	    cmocka_unit_test(test_rng_deviates),
	    cmocka_unit_test(test_bootstrap_median),
	    cmocka_unit_test(test_paired_ratio),
	    cmocka_unit_test(test_t95),
	    cmocka_unit_test(test_fit_exact),
	    cmocka_unit_test(test_fit_noisy),
	    cmocka_unit_test(test_fit_rejects),
	    cmocka_unit_test(test_mann_whitney),
	    cmocka_unit_test(test_mann_whitney_separated),
	    cmocka_unit_test(test_signed_rank_exact),
	    cmocka_unit_test(test_signed_rank_normal),
	    cmocka_unit_test(test_tost),
	    cmocka_unit_test(test_ci_equivalent),
	    cmocka_unit_test(test_median_ci_order),
	    cmocka_unit_test(test_median_ci_order_large),
	    cmocka_unit_test(test_qn),
	};

	return cmocka_run_group_tests_name("stats", tests, NULL, NULL);
}
