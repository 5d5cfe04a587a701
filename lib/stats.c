/*
 * stats: robust statistics for timing samples (see stats.h). Medians are
 * found by selection on a scratch copy; the bootstrap uses a seeded
 * xorshift64* generator so that a run can be reproduced from its seed.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"
#include "xmalloc.h"

static double *stats_copy(const double *v, size_t n)
{
	double *c = xmalloc(n * sizeof(*c));

	memcpy(c, v, n * sizeof(*c));
	return c;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Rearranges a[0..n) so that a[k] holds the k-th smallest value, everything
 * before it is <= a[k] and everything after it is >= a[k]. */
static void select_kth(double *a, size_t n, size_t k)
{
	size_t lo = 0, hi = n - 1;

	while (hi > lo) {
		size_t mid = lo + (hi - lo) / 2, i = lo, j = hi;
		double pivot = a[mid];

		while (i <= j) {
			while (a[i] < pivot)
				i++;
			while (a[j] > pivot)
				j--;
			if (i <= j) {
				double t = a[i];

				a[i] = a[j];
				a[j] = t;
				i++;
				if (j == 0)
					break;
				j--;
			}
		}
		if (k <= j)
			hi = j;
		else if (k >= i)
			lo = i;
		else
			return;
	}
}

/* Median of a scratch array that may be reordered. */
static double median_inplace(double *a, size_t n)
{
	size_t k = n / 2;
	double upper, lower;

	select_kth(a, n, k);
	upper = a[k];
	if (n % 2)
		return upper;
	/* The lower middle value is the largest of the part below k. */
	lower = a[0];
	for (size_t i = 1; i < k; i++)
		if (a[i] > lower)
			lower = a[i];
	return (lower + upper) / 2;
}

double stats_median(const double *v, size_t n)
{
	double *c, m;

	if (n == 0)
		return NAN;
	c = stats_copy(v, n);
	m = median_inplace(c, n);
	free(c);
	return m;
}

double stats_mad(const double *v, size_t n)
{
	double *c, med, mad;

	if (n == 0)
		return NAN;
	c = stats_copy(v, n);
	med = median_inplace(c, n);
	for (size_t i = 0; i < n; i++)
		c[i] = fabs(v[i] - med);
	mad = median_inplace(c, n);
	free(c);
	return mad;
}

/* R-7 percentile of values already sorted ascending. */
static double percentile_sorted(const double *s, size_t n, double p)
{
	double h = (double)(n - 1) * p / 100.0;
	size_t lo = (size_t)floor(h);

	if (lo + 1 >= n)
		return s[n - 1];
	return s[lo] + (h - (double)lo) * (s[lo + 1] - s[lo]);
}

double stats_percentile(const double *v, size_t n, double p)
{
	double *c, r;

	if (n == 0 || !(p >= 0 && p <= 100))
		return NAN;
	c = stats_copy(v, n);
	qsort(c, n, sizeof(*c), cmp_double);
	r = percentile_sorted(c, n, p);
	free(c);
	return r;
}

double stats_mean(const double *v, size_t n)
{
	double sum = 0;

	if (n == 0)
		return NAN;
	for (size_t i = 0; i < n; i++)
		sum += v[i];
	return sum / (double)n;
}

double stats_stddev(const double *v, size_t n)
{
	double mean, ss = 0;

	if (n < 2)
		return NAN;
	mean = stats_mean(v, n);
	for (size_t i = 0; i < n; i++)
		ss += (v[i] - mean) * (v[i] - mean);
	return sqrt(ss / (double)(n - 1));
}

static uint64_t splitmix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

void stats_rng_seed(struct stats_rng *r, uint64_t seed)
{
	r->s = splitmix64(seed);
	/* xorshift never leaves the all-zero state. */
	if (r->s == 0)
		r->s = 0x9e3779b97f4a7c15ull;
}

uint64_t stats_rng_next(struct stats_rng *r)
{
	uint64_t x = r->s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	r->s = x;
	return x * 0x2545f4914f6cdd1dull;
}

size_t stats_rng_below(struct stats_rng *r, size_t n)
{
	uint64_t bound = n, threshold, x;

	if (n <= 1)
		return 0;
	/* Rejects the few low values that would make the modulo biased. */
	threshold = (0 - bound) % bound;
	do
		x = stats_rng_next(r);
	while (x < threshold);
	return (size_t)(x % bound);
}

double stats_rng_uniform(struct stats_rng *r)
{
	return (double)(stats_rng_next(r) >> 11) / 9007199254740992.0;
}

void stats_rng_permutation(struct stats_rng *r, size_t *out, size_t n)
{
	for (size_t i = 0; i < n; i++)
		out[i] = i;
	for (size_t i = n; i > 1; i--) {
		size_t j = stats_rng_below(r, i), t = out[i - 1];

		out[i - 1] = out[j];
		out[j] = t;
	}
}

double stats_rng_normal(struct stats_rng *r)
{
	/* u in (0, 1): never 0, whose log is -inf */
	double u = ((double)(stats_rng_next(r) >> 11) + 0.5) / 9007199254740992.0;

	return sqrt(-2 * log(u)) * cos(2 * M_PI * stats_rng_uniform(r));
}

/* Percentile bootstrap of the median of v: resamples n values with
 * replacement `iters` times and takes the 2.5th and 97.5th percentiles of
 * the resampled medians. */
static void bootstrap_median(const double *v, size_t n, unsigned iters, uint64_t seed, double ci[2])
{
	double *meds = xmalloc(iters * sizeof(*meds));
	double *res = xmalloc(n * sizeof(*res));
	struct stats_rng rng;

	stats_rng_seed(&rng, seed);
	for (unsigned it = 0; it < iters; it++) {
		for (size_t i = 0; i < n; i++)
			res[i] = v[stats_rng_below(&rng, n)];
		meds[it] = median_inplace(res, n);
	}
	qsort(meds, iters, sizeof(*meds), cmp_double);
	ci[0] = percentile_sorted(meds, iters, 2.5);
	ci[1] = percentile_sorted(meds, iters, 97.5);
	free(res);
	free(meds);
}

int stats_bootstrap_median_ci(const double *v, size_t n, unsigned iters, uint64_t seed,
                              double ci[2])
{
	if (n == 0 || iters == 0)
		return -EINVAL;
	bootstrap_median(v, n, iters, seed, ci);
	return 0;
}

int stats_paired_ratio(const double *a, const double *b, size_t n, unsigned iters, uint64_t seed,
                       double *median, double ci[2])
{
	double *r;

	if (n == 0 || iters == 0)
		return -EINVAL;
	r = xmalloc(n * sizeof(*r));
	for (size_t i = 0; i < n; i++) {
		r[i] = a[i] / b[i];
		if (!isfinite(r[i])) {
			free(r);
			return -EINVAL;
		}
	}
	/* Resampling pairs together is resampling their ratios. */
	*median = stats_median(r, n);
	bootstrap_median(r, n, iters, seed, ci);
	free(r);
	return 0;
}

/* Two-sided 95% quantiles of Student's t: exact for df 1..30, then anchor
 * points interpolated linearly in 1/df (the normal 1.96 at df = infinity). */
static const double t95_small[30] = {
    12.706204736, 4.302652730, 3.182446305, 2.776445105, 2.570581836, 2.446911851,
    2.364624252,  2.306004135, 2.262157163, 2.228138852, 2.200985160, 2.178812830,
    2.160368656,  2.144786688, 2.131449546, 2.119905299, 2.109815578, 2.100922040,
    2.093024054,  2.085963447, 2.079613845, 2.073873068, 2.068657610, 2.063898562,
    2.059538553,  2.055529439, 2.051830516, 2.048407142, 2.045229642, 2.042272456,
};

static const struct {
	double df, t;
} t95_large[] = {
    {30, 2.042272456}, {40, 2.021075390},  {50, 2.008559112},  {60, 2.000297822},
    {80, 1.990063421}, {100, 1.983971519}, {120, 1.979930405}, {INFINITY, 1.959963985},
};

double stats_t95(size_t df)
{
	size_t n = sizeof(t95_large) / sizeof(t95_large[0]);
	double inv = 1.0 / (double)df;

	if (df == 0)
		return NAN;
	if (df <= 30)
		return t95_small[df - 1];
	for (size_t i = 1; i < n; i++) {
		double inv_lo = 1.0 / t95_large[i - 1].df, inv_hi = 1.0 / t95_large[i].df;

		if ((double)df <= t95_large[i].df) {
			double f = (inv_lo - inv) / (inv_lo - inv_hi);

			return t95_large[i - 1].t + f * (t95_large[i].t - t95_large[i - 1].t);
		}
	}
	return t95_large[n - 1].t;
}

int stats_loglog_fit(const double *x, const double *y, size_t n, struct stats_fit *out)
{
	double mx = 0, my = 0, sxx = 0, sxy = 0, syy = 0, sse = 0, half;

	if (n < 2)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		if (!(x[i] > 0 && y[i] > 0 && isfinite(x[i]) && isfinite(y[i])))
			return -EINVAL;
		mx += log(x[i]);
		my += log(y[i]);
	}
	mx /= (double)n;
	my /= (double)n;
	for (size_t i = 0; i < n; i++) {
		double dx = log(x[i]) - mx, dy = log(y[i]) - my;

		sxx += dx * dx;
		sxy += dx * dy;
		syy += dy * dy;
	}
	if (!(sxx > 0))
		return -EINVAL;
	out->n = n;
	out->slope = sxy / sxx;
	out->intercept = my - out->slope * mx;
	for (size_t i = 0; i < n; i++) {
		double e = log(y[i]) - (out->intercept + out->slope * log(x[i]));

		sse += e * e;
	}
	out->r2 = syy > 0 ? 1.0 - sse / syy : 1.0;
	half = n > 2 ? stats_t95(n - 2) * sqrt(sse / (double)(n - 2) / sxx) : 0.0;
	out->slope_ci[0] = out->slope - half;
	out->slope_ci[1] = out->slope + half;
	return 0;
}

/* A value to rank, marked or not (from sample a; a positive difference). */
struct rank_item {
	double v;
	int marked;
};

static int cmp_rank(const void *a, const void *b)
{
	return cmp_double(&((const struct rank_item *)a)->v, &((const struct rank_item *)b)->v);
}

/* Sorts it[0..n) and returns the sum of the ranks of the marked items;
 * tied values share the mean of the ranks they span. *ties gets
 * sum(t^3 - t) over the groups of t tied values. */
static double rank_sum_marked(struct rank_item *it, size_t n, double *ties)
{
	double sum = 0;

	*ties = 0;
	qsort(it, n, sizeof(*it), cmp_rank);
	for (size_t i = 0; i < n;) {
		size_t j = i;

		while (j + 1 < n && it[j + 1].v == it[i].v)
			j++;
		double t = (double)(j - i + 1), rank = (double)(i + j) / 2.0 + 1.0;

		for (size_t k = i; k <= j; k++)
			if (it[k].marked)
				sum += rank;
		*ties += t * t * t - t;
		i = j + 1;
	}
	return sum;
}

double stats_mann_whitney_p(const double *a, size_t na, const double *b, size_t nb)
{
	size_t n = na + nb;
	struct rank_item *it;
	double rank_a, ties, u, mu, var, z;

	if (na == 0 || nb == 0)
		return 1.0;
	it = xmalloc(n * sizeof(*it));
	for (size_t i = 0; i < na; i++)
		it[i] = (struct rank_item){a[i], 1};
	for (size_t i = 0; i < nb; i++)
		it[na + i] = (struct rank_item){b[i], 0};
	rank_a = rank_sum_marked(it, n, &ties);
	free(it);
	u = rank_a - (double)na * (double)(na + 1) / 2.0;
	mu = (double)na * (double)nb / 2.0;
	var = (double)na * (double)nb / 12.0 *
	      ((double)(n + 1) - ties / ((double)n * (double)(n - 1)));
	if (!(var > 0))
		return 1.0;
	/* Continuity correction of one half, as in the usual tables. */
	z = (fabs(u - mu) - 0.5) / sqrt(var);
	if (z < 0)
		z = 0;
	return fmin(1.0, erfc(z / sqrt(2.0)));
}

/* P(W+ >= w) (upper) under the null for n untied ranks 1..n: counts the
 * subsets of {1..n} by their sum (dynamic programming over ranks). */
static double signed_rank_exact_upper(size_t n, double w)
{
	size_t max = n * (n + 1) / 2;
	double *cnt = xmalloc((max + 1) * sizeof(*cnt)), tail = 0;

	memset(cnt, 0, (max + 1) * sizeof(*cnt));
	cnt[0] = 1;
	for (size_t r = 1; r <= n; r++)
		for (size_t s = max; s >= r; s--)
			cnt[s] += cnt[s - r];
	for (size_t s = 0; s <= max; s++)
		if ((double)s >= w - 1e-9)
			tail += cnt[s];
	free(cnt);
	return tail / ldexp(1.0, (int)n);
}

/* Ranks the nonzero |d| (ties get their mean rank); returns how many remain,
 * W+ in *wplus and the tie term sum(t^3 - t) in *ties; -1 on a bad input. */
static long signed_rank_w(const double *d, size_t n, double *wplus, double *ties)
{
	struct rank_item *it = xmalloc((n ? n : 1) * sizeof(*it));
	size_t m = 0;

	for (size_t i = 0; i < n; i++) {
		if (!isfinite(d[i])) {
			free(it);
			return -1;
		}
		if (d[i] != 0)
			it[m++] = (struct rank_item){fabs(d[i]), d[i] > 0};
	}
	*wplus = rank_sum_marked(it, m, ties);
	free(it);
	return (long)m;
}

double stats_signed_rank_p(const double *d, size_t n, enum stats_tail tail)
{
	double w, ties, mu, var, z, p;
	long m = signed_rank_w(d, n, &w, &ties);

	if (m <= 0)
		return 1.0;
	mu = (double)m * (double)(m + 1) / 4.0;
	if (ties == 0 && m <= STATS_SIGNED_RANK_EXACT) {
		/* The null distribution is symmetric about mu: P(W+ <= w) is
		 * P(W+ >= 2 mu - w). */
		double up = signed_rank_exact_upper((size_t)m, w);
		double down = signed_rank_exact_upper((size_t)m, 2 * mu - w);

		if (tail == STATS_GREATER)
			return up;
		if (tail == STATS_LESS)
			return down;
		return fmin(1.0, 2 * fmin(up, down));
	}
	var = (double)m * (double)(m + 1) * (double)(2 * m + 1) / 24.0 - ties / 48.0;
	if (!(var > 0))
		return 1.0;
	if (tail == STATS_GREATER)
		z = (w - mu - 0.5) / sqrt(var);
	else if (tail == STATS_LESS)
		z = (mu - w - 0.5) / sqrt(var);
	else
		z = (fabs(w - mu) - 0.5) / sqrt(var);
	/* One-sided: the upper tail of z; two-sided: both tails of |z|. */
	p = tail == STATS_TWO_SIDED ? erfc(fmax(z, 0) / sqrt(2.0)) : 0.5 * erfc(z / sqrt(2.0));
	return fmin(1.0, p);
}

int stats_tost_ratio(const double *a, const double *b, size_t n, double margin, double *p)
{
	double *lo, *hi, p_lo, p_hi;

	if (n == 0 || !(margin > 0 && margin < 1))
		return -EINVAL;
	lo = xmalloc(n * sizeof(*lo));
	hi = xmalloc(n * sizeof(*hi));
	for (size_t i = 0; i < n; i++) {
		double r = a[i] / b[i];

		if (!(isfinite(r) && r > 0)) {
			free(lo);
			free(hi);
			return -EINVAL;
		}
		lo[i] = log(r) - log(1 - margin);
		hi[i] = log(r) - log(1 + margin);
	}
	/* Equivalent when the ratio is shown above 1 - m and below 1 + m. */
	p_lo = stats_signed_rank_p(lo, n, STATS_GREATER);
	p_hi = stats_signed_rank_p(hi, n, STATS_LESS);
	*p = fmax(p_lo, p_hi);
	free(lo);
	free(hi);
	return 0;
}

int stats_ci_equivalent(double lo, double hi, double margin)
{
	return lo >= 1 - margin && hi <= 1 + margin && lo <= hi;
}

/* log P(B = j) for B ~ Binomial(n, 1/2): in logs, since 2^-n underflows
 * a double from n = 1075 on. */
static double binom_half_logpmf(size_t n, size_t j)
{
	return lgamma((double)n + 1) - lgamma((double)j + 1) - lgamma((double)(n - j) + 1) -
	       (double)n * M_LN2;
}

int stats_median_ci_order_level(const double *v, size_t n, double level, double ci[2])
{
	double tail = (1 - level) / 2, cdf = 0, *c;
	size_t k = 0;

	if (!(level > 0 && level < 1))
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		if (!isfinite(v[i]))
			return -EINVAL;
	/* k = how many ranks from each end may be cut: P(B <= k - 1) <= tail. */
	for (size_t j = 0; j < n; j++) {
		cdf += exp(binom_half_logpmf(n, j));
		if (cdf > tail)
			break;
		k = j + 1;
	}
	if (k == 0 || k > n / 2)
		return -EINVAL;
	c = stats_copy(v, n);
	qsort(c, n, sizeof(*c), cmp_double);
	ci[0] = c[k - 1];
	ci[1] = c[n - k];
	free(c);
	return 0;
}

int stats_median_ci_order(const double *v, size_t n, double ci[2])
{
	return stats_median_ci_order_level(v, n, 0.95, ci);
}

/* Croux and Rousseeuw's (1992) finite-sample factors d_n of Qn for n = 2..9,
 * from their simulations; from n = 10 on, n / (n + 1.4) for odd n and
 * n / (n + 3.8) for even n. */
static const double qn_small_factor[] = {[2] = 0.399, [3] = 0.994, [4] = 0.512, [5] = 0.844,
                                         [6] = 0.611, [7] = 0.857, [8] = 0.669, [9] = 0.872};

double stats_qn(const double *v, size_t n, double *pairs)
{
	size_t h = n / 2 + 1, m = 0;
	double raw, d;

	if (n < 2)
		return n ? 0 : NAN;
	for (size_t i = 0; i < n; i++)
		for (size_t j = i + 1; j < n; j++)
			pairs[m++] = fabs(v[i] - v[j]);
	/* the k-th smallest distance, k = C(h, 2) */
	select_kth(pairs, m, h * (h - 1) / 2 - 1);
	raw = STATS_QN_SCALE * pairs[h * (h - 1) / 2 - 1];
	if (n < sizeof(qn_small_factor) / sizeof(qn_small_factor[0]))
		d = qn_small_factor[n];
	else
		d = (double)n / ((double)n + (n % 2 ? 1.4 : 3.8));
	return raw * d;
}
