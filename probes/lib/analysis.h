/*
 * analysis: the pure arithmetic behind the threads and map32 probes.
 * Bucketing per-create timings by live-thread count, finding the knee,
 * classing a log-log slope, sizing repetitions to a time budget, the
 * geometric VMA ladder, clamping the thread count by the host's limits and
 * naming the cause of an ENOMEM. No I/O, no clocks: unit-testable.
 */
#ifndef TW_ANALYSIS_H
#define TW_ANALYSIS_H

#include <stddef.h>
#include <stdint.h>

#include "stats.h"
#include "sysinfo.h"

/* Largest bucket of live-thread counts. */
#define ANALYSIS_BUCKET_MAX 64
/* The knee: a step down in rate by at least this factor... */
#define ANALYSIS_KNEE_FACTOR 2.0
/* ...that holds for this many buckets in a row, and for the median of all
 * the buckets after it. */
#define ANALYSIS_KNEE_HOLD 3
/* Slope classes: flat below FLAT, sublinear up to LINEAR, linear up to
 * QUADRATIC, quadratic above (an exponent near 2 is not linear). */
#define ANALYSIS_SLOPE_FLAT 0.2
#define ANALYSIS_SLOPE_LINEAR 0.7
#define ANALYSIS_SLOPE_QUADRATIC 1.5

/* One timed create: how many threads were alive before it, and its cost. */
struct analysis_sample {
	uint32_t live;
	double ns;
};

/* One bucket of samples [x, x + width) by live-thread count. */
struct analysis_bucket {
	double x;         /* lowest live-thread count of the bucket */
	size_t n;         /* samples in it */
	double rate;      /* creates per second at the median cost: 1e9 / median_ns */
	double median_ns; /* median ns per create */
	double p99_ns;    /* 99th percentile ns per create */
};

/* Bucket width for counts up to max_live: about 32 buckets, 1..64 wide. */
size_t analysis_bucket_width(size_t max_live);

/* Sorts n samples into buckets of `width` live threads each. Writes at most
 * max_out buckets (empty ones are left out, so x is increasing) and returns
 * how many; 0 when n or width is 0. */
size_t analysis_bucketize(const struct analysis_sample *s, size_t n, size_t width,
                          struct analysis_bucket *out, size_t max_out);

/* Rates of a bucketed run: first bucket, last bucket and the lowest. */
struct analysis_rates {
	double first;
	double last;
	double min;
	/* The median rate of the buckets after the first, which is cold (the
	 * first creates of a ramp fault in what later ones find warm): the
	 * steady state. The first bucket's rate when it is the only one. */
	double steady;
};
/* Returns 0, or -EINVAL for an empty series. */
int analysis_rates(const struct analysis_bucket *b, size_t n, struct analysis_rates *out);

/* The knee: index of the first bucket i (i >= 1) where the rate steps
 * down and stays down. The reference is the median rate of the (up to
 * ANALYSIS_KNEE_HOLD) buckets before i; buckets i .. i + HOLD - 1 must each
 * be below reference / ANALYSIS_KNEE_FACTOR, and so must the median rate of
 * every bucket from i to the end. A step of 3x or of 700x is a knee; a
 * slow drift is not (each bucket is compared with its near past), nor is a
 * burst of host load that passes. -1 when there is none. */
long analysis_knee(const struct analysis_bucket *b, size_t n);

/* STEP: a rise confined to one place, flat on both sides of it (only
 * analysis_growth_fit() gives it). */
enum analysis_class {
	ANALYSIS_FLAT,
	ANALYSIS_SUBLINEAR,
	ANALYSIS_LINEAR,
	ANALYSIS_QUADRATIC,
	ANALYSIS_STEP
};
enum analysis_class analysis_slope_class(double slope);
/* "flat", "sublinear", "linear", "quadratic" or "step". */
const char *analysis_class_name(enum analysis_class c);

/* How a cost grows with a count n, fitted and classed (analysis_growth).
 * A fixed part a must not hide a linear part b, so the class does not
 * come from the log-log slope, which a large a flattens. The fit is
 * robust (Theil-Sen): the top rung, which has the fewest repetitions and
 * under least squares nearly all the leverage, is one point among n. */
struct analysis_growth {
	double a, b;     /* y = a + b n: b the Theil-Sen slope, a the median of y - b n */
	double b_ci[2];  /* b's 95% CI from Kendall's tau (Sen 1968) */
	double rise;     /* b (x_max - x_min) / (a + b x_min): the fitted rise */
	double exponent; /* k of the best y = a' + b' n^k, k in (0, 2] */
	double loglog;   /* the plain log-log slope, for reference */
	enum analysis_class cls;
};
/* A step must lift the upper rungs' median this fraction above the lower
 * rungs' median. */
#define ANALYSIS_RISE_FLAT 0.5
/* A slope under this many ns per unit of n (per VMA) is flat whatever its
 * CI: a list walk costs at least a cache miss per VMA, some ns; a tree's
 * log n growth over thousands of VMAs is a fraction of this. */
#define ANALYSIS_FLOOR_NS_PER_UNIT 0.1
/* Fits y = a + b n (x holds n, increasing, > 0; y > 0) and classes it: a
 * step when some split leaves at least 3 rungs on each side, the upper
 * side's median at least ANALYSIS_RISE_FLAT above the lower's, and each
 * side level beside that jump (its Theil-Sen slope's CI reaching 0, or
 * that slope adding under a quarter of the jump across the side);
 * flat when b's CI reaches 0 or below or b is under the floor (not by
 * the rise, which a budget-cut ladder keeps small); else
 * by the exponent, as analysis_slope_class() classes a slope (a log n
 * growth has an exponent near 0, so a tree stays flat). Needs n >= 3.
 * Returns 0 or -EINVAL. */
int analysis_growth_fit(const double *x, const double *y, size_t n, struct analysis_growth *g);

/* Fits log(y) against log(x) (stats_loglog_fit) and classes the slope.
 * Returns 0 or -EINVAL (fewer than 2 usable points, non-positive values). */
int analysis_fit_class(const double *x, const double *y, size_t n, struct stats_fit *fit,
                       enum analysis_class *cls);

/* Repetitions that fit a budget when one costs cost_ns: floor(budget /
 * cost) clamped to [min, max]. A cost <= 0 (not measured) gives max. */
unsigned analysis_reps(double budget_ns, double cost_ns, unsigned min, unsigned max);

/* A geometric ladder from `start` to `stop` (inclusive, both > 0) with
 * steps of `ratio` (> 1), rounded to integers, strictly increasing; the
 * last rung is `stop`. Returns the number of rungs written (at most max). */
size_t analysis_ladder(double start, double stop, double ratio, double *out, size_t max);

/* Why a thread count was clamped. */
enum analysis_clamp {
	ANALYSIS_CLAMP_NONE,
	ANALYSIS_CLAMP_THREADS_MAX,
	ANALYSIS_CLAMP_NPROC,
	ANALYSIS_CLAMP_PIDS,
	ANALYSIS_CLAMP_MAP_COUNT,
	ANALYSIS_CLAMP_MEMORY,
};
/* "none", "threads_max", "rlimit_nproc", "cgroup_pids", "max_map_count",
 * "memory". */
const char *analysis_clamp_name(enum analysis_clamp c);

/* What the host allows beyond what exists: each field the number of extra
 * threads that limit leaves room for (UINT64_MAX: no limit). */
struct analysis_room {
	uint64_t threads_max;
	uint64_t nproc;
	uint64_t pids;
	uint64_t map_count;
	uint64_t memory;
};

/* The room each limit leaves for `requested` more threads, each with a
 * stack of stack_bytes plus a guard page, in a process that has vmas_now
 * VMAs. Host-wide pools (threads-max, RLIMIT_NPROC, pids.max) are shared
 * with everyone else, so only half of what is free is taken; a stack is
 * two VMAs; memory assumes 64 KiB touched per thread, or the whole stack
 * under strict overcommit (vm.overcommit_memory = 2), against half of
 * MemAvailable. Returns the clamped count and sets *why to the tightest
 * limit (ANALYSIS_CLAMP_NONE when requested fits). */
uint64_t analysis_clamp_threads(const struct sys_limits *l, uint64_t vmas_now, uint64_t stack_bytes,
                                uint64_t page, uint64_t requested, struct analysis_room *room,
                                enum analysis_clamp *why);

/* The causes of an ENOMEM from mmap, kept apart. */
enum analysis_enomem {
	ANALYSIS_ENOMEM_WINDOW_FULL,   /* MAP_32BIT found no hole; a plain mmap works */
	ANALYSIS_ENOMEM_MAX_MAP_COUNT, /* the process is at vm.max_map_count */
	ANALYSIS_ENOMEM_OTHER,         /* neither: memory or commit limit */
};
/* Classes an ENOMEM: the VMA count against vm.max_map_count first (a
 * mapping needs up to `need` new VMAs), then whether a plain mmap of the
 * same size succeeded right after. Only a MAP_32BIT call can be
 * WINDOW_FULL. */
enum analysis_enomem analysis_enomem_cause(uint64_t vmas, uint64_t max_map_count, unsigned need,
                                           int was_map32, int plain_ok);
/* "window_full", "max_map_count", "enomem". */
const char *analysis_enomem_name(enum analysis_enomem e);

#endif
