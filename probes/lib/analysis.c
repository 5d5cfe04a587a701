/*
 * analysis: bucketing, knee, slope class, budgeted repetitions, the VMA
 * ladder, the thread-count clamp and ENOMEM causes for the threads and
 * map32 probes.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "analysis.h"
#include "stats.h"

static int cmp_slope(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

size_t analysis_bucket_width(size_t max_live)
{
	size_t w = (max_live + 31) / 32;

	if (w < 1)
		return 1;
	return w > ANALYSIS_BUCKET_MAX ? ANALYSIS_BUCKET_MAX : w;
}

static void bucket_fill(struct analysis_bucket *b, size_t x, const double *v, size_t n)
{
	b->x = (double)x;
	b->n = n;
	b->median_ns = stats_median(v, n);
	/* From the median, not the total: one create stalled by preemption
	 * would otherwise pass for a collapse of the whole bucket. */
	b->rate = b->median_ns > 0 ? 1e9 / b->median_ns : NAN;
	b->p99_ns = stats_percentile(v, n, 99);
}

size_t analysis_bucketize(const struct analysis_sample *s, size_t n, size_t width,
                          struct analysis_bucket *out, size_t max_out)
{
	size_t nb, *start, *fill, written = 0;
	double *v;

	if (!n || !width || !max_out)
		return 0;
	nb = 0;
	for (size_t i = 0; i < n; i++)
		if (s[i].live / width + 1 > nb)
			nb = s[i].live / width + 1;
	/* Counting sort by bucket: start[b] is where bucket b begins in v. */
	start = calloc(nb + 1, sizeof(*start));
	fill = calloc(nb, sizeof(*fill));
	v = malloc(n * sizeof(*v));
	if (!start || !fill || !v) {
		fputs("analysis: out of memory\n", stderr);
		abort();
	}
	for (size_t i = 0; i < n; i++)
		start[s[i].live / width + 1]++;
	for (size_t b = 0; b < nb; b++)
		start[b + 1] += start[b];
	for (size_t i = 0; i < n; i++) {
		size_t b = s[i].live / width;

		v[start[b] + fill[b]++] = s[i].ns;
	}
	for (size_t b = 0; b < nb && written < max_out; b++)
		if (fill[b])
			bucket_fill(&out[written++], b * width, v + start[b], fill[b]);
	free(v);
	free(fill);
	free(start);
	return written;
}

static double rate_median(const struct analysis_bucket *b, size_t from, size_t to);

int analysis_rates(const struct analysis_bucket *b, size_t n, struct analysis_rates *out)
{
	if (!n)
		return -EINVAL;
	out->first = b[0].rate;
	out->last = b[n - 1].rate;
	out->min = b[0].rate;
	for (size_t i = 1; i < n; i++)
		if (b[i].rate < out->min)
			out->min = b[i].rate;
	out->steady = n > 1 ? rate_median(b, 1, n) : b[0].rate;
	return 0;
}

/* The median rate of buckets [from, to). */
static double rate_median(const struct analysis_bucket *b, size_t from, size_t to)
{
	double v[ANALYSIS_KNEE_HOLD], *all, m;

	if (to - from <= ANALYSIS_KNEE_HOLD) {
		for (size_t i = from; i < to; i++)
			v[i - from] = b[i].rate;
		return stats_median(v, to - from);
	}
	all = malloc((to - from) * sizeof(*all));
	if (!all) {
		fputs("analysis: out of memory\n", stderr);
		abort();
	}
	for (size_t i = from; i < to; i++)
		all[i - from] = b[i].rate;
	m = stats_median(all, to - from);
	free(all);
	return m;
}

long analysis_knee(const struct analysis_bucket *b, size_t n)
{
	for (size_t i = 1; i + ANALYSIS_KNEE_HOLD <= n; i++) {
		size_t from = i > ANALYSIS_KNEE_HOLD ? i - ANALYSIS_KNEE_HOLD : 0;
		double limit = rate_median(b, from, i) / ANALYSIS_KNEE_FACTOR;
		size_t k;

		if (!(limit > 0))
			continue;
		for (k = i; k < i + ANALYSIS_KNEE_HOLD; k++)
			if (!(b[k].rate < limit))
				break;
		if (k == i + ANALYSIS_KNEE_HOLD && rate_median(b, i, n) < limit)
			return (long)i;
	}
	return -1;
}

enum analysis_class analysis_slope_class(double slope)
{
	if (slope < ANALYSIS_SLOPE_FLAT)
		return ANALYSIS_FLAT;
	if (slope > ANALYSIS_SLOPE_QUADRATIC)
		return ANALYSIS_QUADRATIC;
	if (slope > ANALYSIS_SLOPE_LINEAR)
		return ANALYSIS_LINEAR;
	return ANALYSIS_SUBLINEAR;
}

const char *analysis_class_name(enum analysis_class c)
{
	static const char *const names[] = {
	    [ANALYSIS_FLAT] = "flat",     [ANALYSIS_SUBLINEAR] = "sublinear",
	    [ANALYSIS_LINEAR] = "linear", [ANALYSIS_QUADRATIC] = "quadratic",
	    [ANALYSIS_STEP] = "step",
	};

	return names[c];
}

int analysis_fit_class(const double *x, const double *y, size_t n, struct stats_fit *fit,
                       enum analysis_class *cls)
{
	int r;

	if (n < 2)
		return -EINVAL;
	r = stats_loglog_fit(x, y, n, fit);
	if (r < 0)
		return r;
	*cls = analysis_slope_class(fit->slope);
	return 0;
}

/* Least squares y = a + b u over n points; the sum of squared residuals.
 * -1 when u does not vary. */
static double linear_fit(const double *u, const double *y, size_t n, double *a, double *b)
{
	double mu = 0, my = 0, suu = 0, suy = 0, sse = 0;

	for (size_t i = 0; i < n; i++) {
		mu += u[i];
		my += y[i];
	}
	mu /= (double)n;
	my /= (double)n;
	for (size_t i = 0; i < n; i++) {
		suu += (u[i] - mu) * (u[i] - mu);
		suy += (u[i] - mu) * (y[i] - my);
	}
	if (!(suu > 0))
		return -1;
	*b = suy / suu;
	*a = my - *b * mu;
	for (size_t i = 0; i < n; i++) {
		double e = y[i] - (*a + *b * u[i]);

		sse += e * e;
	}
	return sse;
}

/* The exponent k in (0, 2] of the best y = a + b x^k, in steps of 0.02
 * (x is scaled by its largest value, so x^k stays in (0, 1]). */
static double best_exponent(const double *x, const double *y, size_t n)
{
	double *u = malloc(n * sizeof(*u)), best = NAN, best_sse = INFINITY;

	if (!u) {
		fputs("analysis: out of memory\n", stderr);
		abort();
	}
	for (int step = 1; step <= 100; step++) {
		double k = 0.02 * step, a, b, sse;

		for (size_t i = 0; i < n; i++)
			u[i] = pow(x[i] / x[n - 1], k);
		sse = linear_fit(u, y, n, &a, &b);
		if (sse >= 0 && sse < best_sse) {
			best_sse = sse;
			best = k;
		}
	}
	free(u);
	return best;
}

/* Theil-Sen over points [from, to): the median of the pairwise slopes, and
 * its 95% CI from Kendall's tau (Sen 1968): with N slopes sorted and
 * C = 1.96 sqrt(n (n - 1) (2n + 5) / 18), the slopes of rank (N - C) / 2
 * and (N + C) / 2 + 1, clamped to the smallest and the largest. One
 * outlying rung moves at most the n - 1 slopes it is part of. */
static void theil_sen(const double *x, const double *y, size_t from, size_t to, double *b,
                      double ci[2])
{
	size_t n = to - from, m = 0, N = n * (n - 1) / 2;
	double *sl = malloc((N ? N : 1) * sizeof(*sl)), c, lo, hi;

	if (!sl) {
		fputs("analysis: out of memory\n", stderr);
		abort();
	}
	for (size_t i = from; i < to; i++)
		for (size_t j = i + 1; j < to; j++)
			sl[m++] = (y[j] - y[i]) / (x[j] - x[i]);
	qsort(sl, N, sizeof(*sl), cmp_slope);
	*b = stats_median(sl, N);
	c = 1.959964 * sqrt((double)n * (double)(n - 1) * (2.0 * (double)n + 5) / 18.0);
	lo = round(((double)N - c) / 2);
	hi = round(((double)N + c) / 2 + 1);
	ci[0] = sl[lo < 1 ? 0 : (size_t)lo - 1];
	ci[1] = sl[hi > (double)N ? N - 1 : (size_t)hi - 1];
	free(sl);
}

/* A side [from, to) of a ladder is level beside a jump when what its
 * Theil-Sen slope adds across the side is under a quarter of the jump. A
 * CI that reaches 0 is not enough: a side of 3 or 4 rungs never has a
 * significant slope, and a quick map32 ladder under a linear walk (8 rungs,
 * the top two at 16,256 and 16,342 VMAs) was called a step that way. */
static int level(const double *x, const double *y, size_t from, size_t to, double jump)
{
	double b, ci[2];

	theil_sen(x, y, from, to, &b, ci);
	return b * (x[to - 1] - x[from]) < jump / 4;
}

/* The median of y[from, to). */
static double median_of(const double *y, size_t from, size_t to)
{
	return stats_median(y + from, to - from);
}

/* A step: some split leaves at least 3 rungs on each side, the upper
 * side's median ANALYSIS_RISE_FLAT or more above the lower side's, and
 * both sides level beside that jump: a cache or TLB level crossed once,
 * not a walk. */
static int is_step(const double *x, const double *y, size_t n)
{
	for (size_t k = 3; k + 3 <= n; k++) {
		double lo = median_of(y, 0, k), jump = median_of(y, k, n) - lo;

		if (jump >= ANALYSIS_RISE_FLAT * lo && level(x, y, 0, k, jump) &&
		    level(x, y, k, n, jump))
			return 1;
	}
	return 0;
}

int analysis_growth_fit(const double *x, const double *y, size_t n, struct analysis_growth *g)
{
	struct stats_fit lf;
	double *r, at_min;

	if (n < 3)
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		if (!(x[i] > 0 && y[i] > 0 && isfinite(x[i]) && isfinite(y[i])) ||
		    (i && !(x[i] > x[i - 1])))
			return -EINVAL;
	if (stats_loglog_fit(x, y, n, &lf) < 0)
		return -EINVAL;
	theil_sen(x, y, 0, n, &g->b, g->b_ci);
	r = malloc(n * sizeof(*r));
	if (!r) {
		fputs("analysis: out of memory\n", stderr);
		abort();
	}
	for (size_t i = 0; i < n; i++)
		r[i] = y[i] - g->b * x[i];
	g->a = stats_median(r, n);
	free(r);
	at_min = g->a + g->b * x[0];
	/* Over the fitted cost at the smallest count, or the measured one when
	 * the fit crosses zero there. */
	g->rise = g->b * (x[n - 1] - x[0]) / (at_min > 0 ? at_min : y[0]);
	g->exponent = best_exponent(x, y, n);
	g->loglog = lf.slope;
	if (is_step(x, y, n))
		g->cls = ANALYSIS_STEP;
	else if (!(g->b_ci[0] > 0) || g->b < ANALYSIS_FLOOR_NS_PER_UNIT)
		g->cls = ANALYSIS_FLAT; /* not the rise: a budget-cut ladder spans little */
	else
		g->cls = analysis_slope_class(g->exponent);
	return 0;
}

unsigned analysis_reps(double budget_ns, double cost_ns, unsigned min, unsigned max)
{
	double r;

	if (!(cost_ns > 0))
		return max;
	r = floor(budget_ns / cost_ns);
	if (!(r >= min))
		return min;
	return r > max ? max : (unsigned)r;
}

size_t analysis_ladder(double start, double stop, double ratio, double *out, size_t max)
{
	size_t n = 0;
	double v;

	if (!max || !(start > 0) || !(stop >= start) || !(ratio > 1))
		return 0;
	for (v = start; n < max; v *= ratio) {
		double r = round(v);

		if (r >= stop)
			break;
		if (n && r <= out[n - 1])
			continue;
		out[n++] = r;
	}
	/* The last rung is always `stop` (replacing the one before when the
	 * table is full). */
	if (n == max)
		n--;
	if (!n || out[n - 1] < round(stop))
		out[n++] = round(stop);
	return n;
}

const char *analysis_clamp_name(enum analysis_clamp c)
{
	static const char *const names[] = {
	    [ANALYSIS_CLAMP_NONE] = "none",
	    [ANALYSIS_CLAMP_THREADS_MAX] = "threads_max",
	    [ANALYSIS_CLAMP_NPROC] = "rlimit_nproc",
	    [ANALYSIS_CLAMP_PIDS] = "cgroup_pids",
	    [ANALYSIS_CLAMP_MAP_COUNT] = "max_map_count",
	    [ANALYSIS_CLAMP_MEMORY] = "memory",
	};

	return names[c];
}

/* Half of what is free in a shared pool (limit less what is used). */
static uint64_t half_free(uint64_t limit, uint64_t used)
{
	if (limit == UINT64_MAX || limit == 0)
		return UINT64_MAX;
	return limit > used ? (limit - used) / 2 : 0;
}

uint64_t analysis_clamp_threads(const struct sys_limits *l, uint64_t vmas_now, uint64_t stack_bytes,
                                uint64_t page, uint64_t requested, struct analysis_room *room,
                                enum analysis_clamp *why)
{
	const uint64_t *rooms[] = {&room->threads_max, &room->nproc, &room->pids, &room->map_count,
	                           &room->memory};
	const enum analysis_clamp reasons[] = {ANALYSIS_CLAMP_THREADS_MAX, ANALYSIS_CLAMP_NPROC,
	                                       ANALYSIS_CLAMP_PIDS, ANALYSIS_CLAMP_MAP_COUNT,
	                                       ANALYSIS_CLAMP_MEMORY};
	uint64_t n = requested, per_thread;

	room->threads_max = half_free(l->threads_max, l->threads_now);
	room->nproc = half_free(l->nproc_soft, l->threads_now);
	room->pids = half_free(l->pids_max, l->pids_current);
	/* Two VMAs per stack (the stack and its guard); a tenth of the limit
	 * stays free for the rest of the process. */
	if (l->max_map_count) {
		uint64_t usable = l->max_map_count - l->max_map_count / 10;

		room->map_count = usable > vmas_now ? (usable - vmas_now) / 2 : 0;
	} else {
		room->map_count = UINT64_MAX;
	}
	per_thread = l->overcommit_memory == 2 ? stack_bytes + page : 64 * 1024;
	room->memory = l->mem_available ? l->mem_available / 2 / per_thread : UINT64_MAX;
	*why = ANALYSIS_CLAMP_NONE;
	for (size_t i = 0; i < sizeof(rooms) / sizeof(rooms[0]); i++)
		if (*rooms[i] < n) {
			n = *rooms[i];
			*why = reasons[i];
		}
	return n;
}

enum analysis_enomem analysis_enomem_cause(uint64_t vmas, uint64_t max_map_count, unsigned need,
                                           int was_map32, int plain_ok)
{
	if (max_map_count && vmas + need > max_map_count)
		return ANALYSIS_ENOMEM_MAX_MAP_COUNT;
	if (was_map32 && plain_ok)
		return ANALYSIS_ENOMEM_WINDOW_FULL;
	return ANALYSIS_ENOMEM_OTHER;
}

const char *analysis_enomem_name(enum analysis_enomem e)
{
	static const char *const names[] = {
	    [ANALYSIS_ENOMEM_WINDOW_FULL] = "window_full",
	    [ANALYSIS_ENOMEM_MAX_MAP_COUNT] = "max_map_count",
	    [ANALYSIS_ENOMEM_OTHER] = "enomem",
	};

	return names[e];
}
