/*
 * recommend_create: what a low-stack pthread_create costs more than a
 * high-stack one on the kernels before 3.8, create by create (the model of
 * doc/recommendation.md, "The model", step 3): below the window's capacity
 * the bottom-up walk to the create's hole, past it the failing walk of the
 * full window plus the top-down retry; and the sum of those over a
 * workload's creates.
 */
#include <errno.h>
#include <math.h>

#include "recommend.h"
#include "recommendp.h"

/* A sum of more terms than this is taken block by block, each block as its
 * size times the term at its mean k: exact for a term linear in k (a walk,
 * a + b n), and it keeps the bisection over 4 million threads cheap. */
#define SUM_BLOCKS 1024

double rec_curve_eval(const struct rec_curve *c, double x, int *extrapolated)
{
	size_t i = 0, lo, hi;
	double k;

	*extrapolated = x < c->x[0] || x > c->x[c->n - 1];
	if (c->n == 1 || x <= 0)
		return c->y[0];
	if (x >= c->x[c->n - 1]) {
		i = c->n - 2;
	} else if (x > c->x[0]) {
		for (lo = 0, hi = c->n - 1; hi - lo > 1;) {
			size_t mid = lo + (hi - lo) / 2;

			if (c->x[mid] <= x)
				lo = mid;
			else
				hi = mid;
		}
		i = lo;
	}
	if (x == c->x[i + 1])
		return c->y[i + 1];
	k = log(c->y[i + 1] / c->y[i]) / log(c->x[i + 1] / c->x[i]);
	return c->y[i] * pow(x / c->x[i], k);
}

/* The least-squares slope of all points, never below 0. */
double rec_curve_slope(const struct rec_curve *c)
{
	double mx = 0, my = 0, sxx = 0, sxy = 0;

	for (size_t i = 0; i < c->n; i++) {
		mx += c->x[i] / (double)c->n;
		my += c->y[i] / (double)c->n;
	}
	for (size_t i = 0; i < c->n; i++) {
		sxx += (c->x[i] - mx) * (c->x[i] - mx);
		sxy += (c->x[i] - mx) * (c->y[i] - my);
	}
	return sxx > 0 && sxy > 0 ? sxy / sxx : 0;
}

/* Beyond the last point: the line through it with the least-squares slope
 * (the walks cost a + b n), flagged as extrapolated. Below the first point
 * (the fill ladder starts at the full window, the ramp reads it below):
 * in proportion to the VMAs walked, y0 x / x0, not flagged: a walk of
 * fewer VMAs costs less, never more, and of a + b x this leaves out only
 * part of a. A single point is flat and any other x an extrapolation. */
double rec_curve_walk(const struct rec_curve *c, double x, int *extrapolated)
{
	size_t last = c->n - 1;

	if (c->n == 1 || (x >= c->x[0] && x <= c->x[last]))
		return rec_curve_eval(c, x, extrapolated);
	*extrapolated = x > c->x[last];
	if (x > c->x[last])
		return c->y[last] + rec_curve_slope(c) * (x - c->x[last]);
	return x > 0 ? c->y[0] * x / c->x[0] : 0;
}

int rec_curve_walks(const struct rec_curve *c)
{
	return c->n > 1 && c->y[0] > 0 &&
	       rec_curve_slope(c) * (c->x[c->n - 1] - c->x[0]) >= REC_WALK_RISE * c->y[0];
}

const char *rec_create_source(const struct rec_create *m)
{
	if (m->fill->n || m->fail->n || m->retry->n)
		return "map32";
	if (m->low->n && m->high->n)
		return "threads";
	return NULL;
}

/* A map32 term: the curve at x, NAN when it is absent. */
static double walk_term(const struct rec_curve *c, double x, int *extrapolated)
{
	int x1 = 0;
	double y;

	if (!c->n)
		return NAN;
	y = rec_curve_walk(c, x, &x1);
	*extrapolated |= x1;
	return y;
}

/* NAN counts as 0 in a sum of terms (a curve not measured). */
static double or0(double v)
{
	return isnan(v) ? 0 : v;
}

/* From the searches of v3.0's arch/x86/kernel/sys_x86_64.c, top-down
 * layout (doc/recommendation.md, step 3). With k < C the MAP_32BIT call
 * goes to bottomup: and arch_get_unmapped_area() walks the 2 k window VMAs
 * below its hole through vm_next: fill(2k). With k >= C it walks the whole
 * window and fails, fail(2C); glibc's retry then runs the top-down loop
 * from mmap_base, one find_vma() per step, each step `len` below the VMA it
 * met: one step per stack that missed before it (k - C) plus a few over
 * the mappings above them. map32's retry ladder adds packed stacks, two
 * VMAs and one step each, to a process of W window VMAs and L others, so
 * its curve read at W + L + 2 (k - C) VMAs is the retry k - C steps above
 * its first rung. Either way less the plain mmap of a high create, among
 * 2 k + L VMAs. */
static void term_map32(const struct rec_create *m, double k, struct rec_create_term *t)
{
	int x = 0;
	double low;

	t->plain_vmas = REC_VMAS_PER_THREAD * k + m->others;
	t->plain = walk_term(m->plain, t->plain_vmas, &x);
	if (k < m->cap) {
		t->fill_vmas = REC_VMAS_PER_THREAD * k;
		t->fill = walk_term(m->fill, t->fill_vmas, &x);
		low = or0(t->fill);
	} else {
		t->fail_vmas = REC_VMAS_PER_THREAD * m->cap;
		t->retry_vmas = m->window + m->others + REC_VMAS_PER_THREAD * (k - m->cap);
		t->fail = walk_term(m->fail, t->fail_vmas, &x);
		t->retry = walk_term(m->retry, t->retry_vmas, &x);
		low = or0(t->fail) + or0(t->retry);
	}
	t->extra = low - or0(t->plain);
	t->extrapolated = x;
}

/* From the threads probe: low less high create cost with k threads alive. */
static void term_threads(const struct rec_create *m, double k, struct rec_create_term *t)
{
	int x1 = 0, x2 = 0;

	t->low = rec_curve_eval(m->low, k, &x1);
	t->high = rec_curve_eval(m->high, k, &x2);
	t->extra = t->low - t->high;
	/* below the first bucket the curve is flat: only beyond counts */
	t->extrapolated =
	    (x1 && k > m->low->x[m->low->n - 1]) || (x2 && k > m->high->x[m->high->n - 1]);
}

void rec_create_term_unknown(struct rec_create_term *t)
{
	*t = (struct rec_create_term){.extra = NAN,
	                              .fill = NAN,
	                              .fail = NAN,
	                              .retry = NAN,
	                              .plain = NAN,
	                              .low = NAN,
	                              .high = NAN,
	                              .fill_vmas = NAN,
	                              .fail_vmas = NAN,
	                              .retry_vmas = NAN,
	                              .plain_vmas = NAN};
}

int rec_create_at(const struct rec_create *m, double k, struct rec_create_term *t)
{
	const char *src = rec_create_source(m);

	rec_create_term_unknown(t);
	if (!src)
		return -ENODATA;
	if (src[0] == 'm')
		term_map32(m, k, t);
	else
		term_threads(m, k, t);
	/* a low create is charged nothing, never credited, where it is not
	 * dearer: the model counts what low stacks add */
	if (!(t->extra > 0))
		t->extra = 0;
	return 0;
}

/* The sum over [a, b) of terms of one kind (all below C or all from C). */
static double sum_range(const struct rec_create *m, double a, double b, int *extrapolated)
{
	struct rec_create_term t;
	double sum = 0, step, lo, hi;

	if (b <= a)
		return 0;
	step = b - a <= SUM_BLOCKS ? 1 : (b - a) / SUM_BLOCKS;
	for (lo = a; lo < b; lo = hi) {
		hi = floor(lo + step) < b ? floor(lo + step) : b;
		if (hi <= lo)
			hi = lo + 1;
		rec_create_at(m, (lo + hi - 1) / 2, &t);
		sum += (hi - lo) * t.extra;
	}
	/* the walks grow with k: the last term reads furthest out */
	rec_create_at(m, b - 1, &t);
	*extrapolated |= t.extrapolated;
	return sum;
}

int rec_create_sum(const struct rec_create *m, double a, double b, double *sum, int *extrapolated)
{
	double split = m->cap < a ? a : m->cap > b ? b : m->cap;

	if (!rec_create_source(m))
		return -ENODATA;
	*sum = sum_range(m, a, split, extrapolated) + sum_range(m, split, b, extrapolated);
	return 0;
}
