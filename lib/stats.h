/*
 * stats: robust statistics for timing samples. Median, MAD, percentiles,
 * seeded bootstrap confidence intervals, log-log least-squares fits and
 * rank tests. Pure functions; inputs are never modified.
 */
#ifndef TW_STATS_H
#define TW_STATS_H

#include <stddef.h>
#include <stdint.h>

/* Median of n values (mean of the two middle ones for even n). NAN if n == 0. */
double stats_median(const double *v, size_t n);

/* Median absolute deviation from the median (unscaled). NAN if n == 0. */
double stats_mad(const double *v, size_t n);

/* Percentile p in [0, 100], linear interpolation between closest ranks
 * (the "R-7" / Excel PERCENTILE.INC definition). NAN if n == 0. */
double stats_percentile(const double *v, size_t n, double p);

double stats_mean(const double *v, size_t n);
/* Sample standard deviation (n - 1). NAN if n < 2. */
double stats_stddev(const double *v, size_t n);

/* Deterministic PRNG (splitmix64 seeded xorshift) for the bootstrap. */
struct stats_rng {
	uint64_t s;
};
void stats_rng_seed(struct stats_rng *r, uint64_t seed);
uint64_t stats_rng_next(struct stats_rng *r);
/* Uniform integer in [0, n). */
size_t stats_rng_below(struct stats_rng *r, size_t n);
/* Uniform in [0, 1), 53 bits. */
double stats_rng_uniform(struct stats_rng *r);
/* A uniformly random permutation of 0..n-1 into out (Fisher-Yates). */
void stats_rng_permutation(struct stats_rng *r, size_t *out, size_t n);
/* A standard normal deviate (Box-Muller, the cosine half), for simulations. */
double stats_rng_normal(struct stats_rng *r);

/* Percentile bootstrap 95% CI of the median: `iters` resamples with the given
 * seed. Returns 0 or -EINVAL (n == 0 or iters == 0). */
int stats_bootstrap_median_ci(const double *v, size_t n, unsigned iters, uint64_t seed,
                              double ci[2]);

/* Median of the paired ratios a[i] / b[i] and its percentile bootstrap 95%
 * CI (pairs are resampled together). Returns 0 or -EINVAL (n == 0, iters == 0,
 * or a ratio that is not finite, such as b[i] == 0). */
int stats_paired_ratio(const double *a, const double *b, size_t n, unsigned iters, uint64_t seed,
                       double *median, double ci[2]);

/* Distribution-free 95% CI of the median: the order statistics
 * [x_(k), x_(n+1-k)] with k the largest rank for which P(B < k) <= 0.025,
 * B ~ Binomial(n, 1/2) (the sign-test interval). Its coverage is at least
 * 95% for any continuous distribution, where a percentile bootstrap of a
 * median under-covers small samples. Returns 0, or -EINVAL when n < 6
 * (no such interval exists) or a value is not finite. */
int stats_median_ci_order(const double *v, size_t n, double ci[2]);

/* The same interval at another confidence level in (0, 1): P(B < k) <=
 * (1 - level) / 2; 0.90 gives the interval whose inclusion in [1 - m,
 * 1 + m] is a TOST at alpha = 0.05. Exact for any n (the binomial is summed
 * in logs). Returns 0, or -EINVAL when the level is outside (0, 1), n is
 * too small for it, or a value is not finite. */
int stats_median_ci_order_level(const double *v, size_t n, double level, double ci[2]);

/* Rousseeuw and Croux's Qn scale estimate, as a standard deviation for
 * normal data: STATS_QN_SCALE times the C(h, 2)-th smallest of the
 * n (n - 1) / 2 pairwise distances, h = n / 2 + 1, times the finite-sample
 * factor d_n (Croux and Rousseeuw 1992: tabulated for n <= 9, n / (n + 1.4)
 * or n / (n + 3.8) beyond). `pairs` is scratch of n (n - 1) / 2 values.
 * 0 for n == 1, NAN for n == 0. */
#define STATS_QN_SCALE 2.2219
double stats_qn(const double *v, size_t n, double *pairs);

/* Least-squares fit of log(y) = intercept + slope * log(x) with the slope's
 * 95% CI (Student t with n - 2 degrees of freedom). Points with x <= 0 or
 * y <= 0 are rejected: -EINVAL. Needs n >= 3 for a CI (n == 2 gives a CI
 * of [slope, slope]). */
struct stats_fit {
	double slope;
	double intercept;
	double slope_ci[2];
	double r2;
	size_t n;
};
int stats_loglog_fit(const double *x, const double *y, size_t n, struct stats_fit *out);

/* Two-sided Student t quantile for 95% with df degrees of freedom. */
double stats_t95(size_t df);

/* Mann-Whitney U test, two-sided, normal approximation with tie correction
 * and a continuity correction of 1/2. Returns the p-value (1.0 when either
 * side is empty or every value is tied). */
double stats_mann_whitney_p(const double *a, size_t na, const double *b, size_t nb);

/* Which side a one-sided test looks at. */
enum stats_tail { STATS_TWO_SIDED = 0, STATS_GREATER = 1, STATS_LESS = -1 };

/* Wilcoxon signed-rank test of paired differences d[i] against a median of
 * 0: zeros are dropped (Wilcoxon's rule), tied magnitudes share their mean
 * rank. Exact null distribution of W+ when there are no ties and at most
 * STATS_SIGNED_RANK_EXACT differences remain; otherwise the normal
 * approximation with tie correction and a continuity correction of 1/2.
 * STATS_GREATER tests "median > 0", STATS_LESS "median < 0". Returns the
 * p-value; 1.0 when no nonzero difference remains or an input is not
 * finite. */
#define STATS_SIGNED_RANK_EXACT 30
double stats_signed_rank_p(const double *d, size_t n, enum stats_tail tail);

/* Paired equivalence of a[i] / b[i] to 1 within a relative margin m (two
 * one-sided tests, TOST): signed-rank tests of log(a/b) > log(1 - m) and
 * of log(a/b) < log(1 + m). p is the larger of the two one-sided p-values;
 * p < alpha shows equivalence at level alpha. Returns 0, or -EINVAL when
 * n == 0, m is not in (0, 1) or a ratio is not finite and positive. */
int stats_tost_ratio(const double *a, const double *b, size_t n, double margin, double *p);

/* Equivalence read from a confidence interval of a ratio: 1 when
 * [lo, hi] lies inside [1 - m, 1 + m], else 0. */
int stats_ci_equivalent(double lo, double hi, double margin);

#endif
