/*
 * map32: the MAP_32BIT probe. Fills the MAP_32BIT window with stack-sized
 * mappings, then raises the process's VMA count up a geometric ladder and
 * times, at each rung, failing MAP_32BIT calls, the fallback mmap glibc
 * used to make after one, and plain mmaps. The log-log slope of the
 * failing call against the VMA count says whether this kernel's search is
 * flat (a tree), or linear as it was in 2008.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "analysis.h"
#include "clock.h"
#include "probe.h"
#include "stats.h"
#include "sysinfo.h"
#include "units.h"

#define MAP32_BUDGET_S 8.0
#define MAP32_QUICK_BUDGET_S 1.5
/* The ladder climbs to this fraction of vm.max_map_count. */
#define MAP32_FRACTION 0.5
#define MAP32_QUICK_FRACTION 0.25
#define MAP32_RATIO 1.5
#define MAP32_QUICK_RATIO 2.0
#define MAP32_MAX_RUNGS 48
/* Repetitions per rung: at least MIN; at most MAX (QUICK_MAX with --quick). */
#define MAP32_REPS_MIN 5
#define MAP32_REPS_MAX 2000
#define MAP32_QUICK_REPS_MAX 200
/* The window counts as full after this many MAP_32BIT failures in a row. */
#define MAP32_FULL_AFTER 16
/* A tenth of the budget is kept for tearing down. */
#define MAP32_RESERVE 0.1

#ifndef MAP_32BIT
#define MAP_32BIT 0
#endif

enum { CALL_FAIL, CALL_FALLBACK, CALL_PLAIN, N_CALLS };
static const char *const call_names[N_CALLS] = {"fail", "fallback", "plain"};

/* One measured rung of the ladder. */
struct rung {
	double vmas;
	double median[N_CALLS];
	double p99[N_CALLS];
	unsigned reps;
};

struct map32_ctx {
	size_t page;
	size_t stack_bytes;
	size_t len; /* stack plus guard */
	uint64_t max_map_count;
	uint64_t deadline; /* clock_ns() at which measuring stops */
	/* The filled window. */
	void **stacks;
	size_t n_stacks, cap_stacks;
	unsigned late_fills; /* window stacks found during the ladder */
	uintptr_t lo, hi;
	const char *window_stopped_by;
	/* The high reservation the ladder splits into VMAs. */
	char *reserve;
	size_t reserve_pages;
	size_t reserve_used; /* pages mapped into it, every other one */
	struct rung rungs[MAP32_MAX_RUNGS];
	size_t n_rungs;
	const char *ladder_stopped_by;
};

static void *map_stack(const struct map32_ctx *c, int flags)
{
	return mmap(NULL, c->len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | flags, -1,
	            0);
}

static uint64_t vmas_now(void)
{
	long v = sys_vma_count();

	return v > 0 ? (uint64_t)v : 0;
}

/* Names an ENOMEM of a MAP_32BIT call: is a plain mapping of the same size
 * still possible, and how close is the process to vm.max_map_count? */
static const char *map32_enomem(const struct map32_ctx *c)
{
	void *p = map_stack(c, 0);
	int plain_ok = p != MAP_FAILED;

	if (plain_ok)
		munmap(p, c->len);
	return analysis_enomem_name(
	    analysis_enomem_cause(vmas_now(), c->max_map_count, 2, 1, plain_ok));
}

/* Keeps a MAP_32BIT mapping as one more stack of the window: guards its
 * low page and widens the window's bounds. */
static int window_add(struct map32_ctx *c, void *p)
{
	if (mprotect(p, c->page, PROT_NONE) < 0) {
		int r = -errno;

		munmap(p, c->len);
		return r;
	}
	if (c->n_stacks == c->cap_stacks) {
		c->cap_stacks = c->cap_stacks ? c->cap_stacks * 2 : 256;
		c->stacks = realloc(c->stacks, c->cap_stacks * sizeof(*c->stacks));
		if (!c->stacks) {
			fputs("map32: out of memory\n", stderr);
			abort();
		}
	}
	c->stacks[c->n_stacks++] = p;
	if (!c->lo || (uintptr_t)p < c->lo)
		c->lo = (uintptr_t)p;
	if ((uintptr_t)p + c->len > c->hi)
		c->hi = (uintptr_t)p + c->len;
	return 0;
}

/* Phase 1: stack-sized MAP_32BIT mappings, each with a guard page at its
 * low end, until MAP_32BIT fails MAP32_FULL_AFTER times in a row (the
 * kernel may randomise where its search starts, so one failure can leave a
 * hole below) or the VMA count would pass vma_cap. Returns 0 or -errno
 * (not ENOMEM). */
static int fill_window(struct map32_ctx *c, uint64_t vma_cap)
{
	uint64_t vmas = vmas_now();
	unsigned failed = 0;

	c->window_stopped_by = "target";
	while (vmas + 2 <= vma_cap) {
		void *p;
		int r;

		if (clock_ns() > c->deadline) {
			c->window_stopped_by = "budget";
			return 0;
		}
		p = map_stack(c, MAP_32BIT);
		if (p == MAP_FAILED) {
			if (errno != ENOMEM)
				return -errno;
			c->window_stopped_by = map32_enomem(c);
			if (strcmp(c->window_stopped_by, "window_full") ||
			    ++failed == MAP32_FULL_AFTER)
				return 0;
			continue;
		}
		failed = 0;
		r = window_add(c, p);
		if (r < 0)
			return r;
		vmas += 2;
	}
	return 0;
}

/* Reserves room at a high address (where the kernel puts plain mappings)
 * for the ladder: one PROT_NONE VMA that climb() splits. */
static int reserve_high(struct map32_ctx *c, uint64_t extra_vmas)
{
	void *p;

	c->reserve_pages = (size_t)extra_vmas + 4;
	p = mmap(NULL, c->reserve_pages * c->page, PROT_NONE,
	         MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED) {
		c->reserve_pages = 0;
		return -errno;
	}
	c->reserve = p;
	return 0;
}

/* Raises the VMA count to at least `target`: every other page of the
 * reservation becomes a PROT_READ mapping, so no two neighbours can merge
 * and each page adds two VMAs. *vmas is the running count. */
static int climb(struct map32_ctx *c, double target, uint64_t *vmas)
{
	while ((double)*vmas < target) {
		size_t at = 2 * c->reserve_used + 1;
		void *p;

		if (at + 1 >= c->reserve_pages)
			return -ENOSPC;
		p = mmap(c->reserve + at * c->page, c->page, PROT_READ,
		         MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
		if (p == MAP_FAILED)
			return -errno;
		c->reserve_used++;
		*vmas += 2;
	}
	return 0;
}

/* One repetition: a failing MAP_32BIT call, the fallback right after it
 * (what glibc did next), then, after unmapping that, a plain mmap of the
 * same size and flags. Each mapping is unmapped again, untimed. */
static int time_rep(struct map32_ctx *c, double ns[N_CALLS])
{
	uint64_t t0, t1, t2, t3, t4;
	void *p;

	t0 = clock_ns();
	p = map_stack(c, MAP_32BIT);
	t1 = clock_ns();
	if (p != MAP_FAILED) {
		/* A hole the fill did not reach: it joins the window and the
		 * repetition is made again. */
		c->late_fills++;
		return window_add(c, p) < 0 ? -ENOMEM : -EAGAIN;
	}
	if (errno != ENOMEM)
		return -errno;
	p = map_stack(c, 0);
	t2 = clock_ns();
	if (p == MAP_FAILED)
		return -errno;
	munmap(p, c->len);
	t3 = clock_ns();
	p = map_stack(c, 0);
	t4 = clock_ns();
	if (p == MAP_FAILED)
		return -errno;
	munmap(p, c->len);
	ns[CALL_FAIL] = (double)(t1 - t0);
	ns[CALL_FALLBACK] = (double)(t2 - t1);
	ns[CALL_PLAIN] = (double)(t4 - t3);
	return 0;
}

/* time_rep, made again while MAP_32BIT keeps finding holes (each one
 * found is filled, so this ends). */
static int time_rep_full(struct map32_ctx *c, double ns[N_CALLS])
{
	int rc;

	while ((rc = time_rep(c, ns)) == -EAGAIN)
		;
	return rc;
}

/* Times one rung: a trial repetition sizes the rest to this rung's share of
 * what is left of the budget. Returns 0, -ETIME when the budget ran out
 * before the minimum, or -errno. */
static int measure_rung(struct map32_ctx *c, struct rung *r, size_t rungs_left, unsigned reps_max,
                        double *rep_cost)
{
	double trial[N_CALLS], *v[N_CALLS];
	uint64_t t0 = clock_ns(), now;
	unsigned reps, got = 0;
	int rc;

	rc = time_rep_full(c, trial);
	if (rc < 0)
		return rc;
	now = clock_ns();
	*rep_cost = (double)(now - t0);
	reps =
	    analysis_reps(c->deadline > now ? (double)(c->deadline - now) / (double)rungs_left : 0,
	                  *rep_cost, MAP32_REPS_MIN, reps_max);
	for (int k = 0; k < N_CALLS; k++) {
		v[k] = malloc(reps * sizeof(double));
		if (!v[k]) {
			fputs("map32: out of memory\n", stderr);
			abort();
		}
		v[k][0] = trial[k];
	}
	for (got = 1; got < reps && rc == 0; got++) {
		double ns[N_CALLS];

		if (clock_ns() > c->deadline && got >= MAP32_REPS_MIN)
			break;
		rc = time_rep_full(c, ns);
		for (int k = 0; k < N_CALLS && rc == 0; k++)
			v[k][got] = ns[k];
	}
	if (rc < 0)
		got--;
	r->reps = got;
	for (int k = 0; k < N_CALLS; k++) {
		r->median[k] = stats_median(v[k], got);
		r->p99[k] = stats_percentile(v[k], got, 99);
		free(v[k]);
	}
	return rc;
}

/* Phase 2: the ladder from the current VMA count to `target`. */
static int run_ladder(struct map32_ctx *c, uint64_t target, double ratio, unsigned reps_max)
{
	double steps[MAP32_MAX_RUNGS], rep_cost = 0;
	uint64_t vmas = vmas_now();
	size_t n;
	int rc;

	if (target < vmas)
		target = vmas;
	n = analysis_ladder((double)vmas, (double)target, ratio, steps, MAP32_MAX_RUNGS);
	rc = reserve_high(c, target - vmas);
	if (rc < 0)
		return rc;
	c->ladder_stopped_by = "target";
	for (size_t i = 0; i < n; i++) {
		struct rung *r = &c->rungs[c->n_rungs];
		uint64_t now = clock_ns();

		/* The next rung costs at least the minimum repetitions at the
		 * last cost, grown in proportion to the VMA count. */
		if (i && (now > c->deadline ||
		          (double)(c->deadline - now) <
		              MAP32_REPS_MIN * rep_cost * steps[i] / steps[i - 1])) {
			c->ladder_stopped_by = "budget";
			return 0;
		}
		rc = climb(c, steps[i], &vmas);
		if (rc == -ENOMEM) {
			c->ladder_stopped_by = analysis_enomem_name(
			    analysis_enomem_cause(vmas_now(), c->max_map_count, 2, 0, 0));
			return 0;
		}
		if (rc < 0)
			return rc;
		vmas = vmas_now();
		r->vmas = (double)vmas;
		rc = measure_rung(c, r, n - i, reps_max, &rep_cost);
		if (r->reps)
			c->n_rungs++;
		if (rc == -ENOMEM) {
			c->ladder_stopped_by = analysis_enomem_name(
			    analysis_enomem_cause(vmas_now(), c->max_map_count, 2, 0, 0));
			return 0;
		}
		if (rc < 0)
			return rc;
	}
	return 0;
}

static void release_all(struct map32_ctx *c)
{
	if (c->reserve)
		munmap(c->reserve, c->reserve_pages * c->page);
	for (size_t i = 0; i < c->n_stacks; i++)
		munmap(c->stacks[i], c->len);
	free(c->stacks);
}

static void emit_window(struct probe_doc *doc, const struct map32_ctx *c)
{
	char hex[24];

	probe_scalar(doc, "stack_bytes", (double)c->stack_bytes, "bytes");
	probe_scalar(doc, "capacity_stacks", (double)c->n_stacks, "count");
	probe_info_num(doc, "guard_bytes", (double)c->page);
	probe_info_num(doc, "max_map_count", (double)c->max_map_count);
	probe_info_str(doc, "window_stopped_by", c->window_stopped_by);
	probe_info_num(doc, "late_fills", c->late_fills);
	if (!c->n_stacks)
		return;
	probe_scalar(doc, "window_lo", (double)c->lo, "address");
	probe_scalar(doc, "window_hi", (double)c->hi, "address");
	probe_scalar(doc, "window_bytes", (double)(c->hi - c->lo), "bytes");
	snprintf(hex, sizeof(hex), "0x%lx", (unsigned long)c->lo);
	probe_info_str(doc, "window_lo", hex);
	snprintf(hex, sizeof(hex), "0x%lx", (unsigned long)c->hi);
	probe_info_str(doc, "window_hi", hex);
}

/* The six series, the rep counts and the slope of the failing call. */
static void emit_ladder(struct probe_doc *doc, const struct map32_ctx *c)
{
	double x[MAP32_MAX_RUNGS], y[MAP32_MAX_RUNGS];
	char name[64], reps[MAP32_MAX_RUNGS * 12] = "";
	struct stats_fit fit;
	enum analysis_class cls;
	size_t len = 0;

	for (int k = 0; k < N_CALLS; k++) {
		struct probe_series *med, *p99;

		snprintf(name, sizeof(name), "%s_median_ns", call_names[k]);
		med = probe_series_new(doc, name, "vmas", "ns");
		snprintf(name, sizeof(name), "%s_p99_ns", call_names[k]);
		p99 = probe_series_new(doc, name, "vmas", "ns");
		for (size_t i = 0; i < c->n_rungs; i++) {
			probe_series_add(med, c->rungs[i].vmas, c->rungs[i].median[k]);
			probe_series_add(p99, c->rungs[i].vmas, c->rungs[i].p99[k]);
		}
	}
	for (size_t i = 0; i < c->n_rungs; i++) {
		x[i] = c->rungs[i].vmas;
		y[i] = c->rungs[i].median[CALL_FAIL];
		len += (size_t)snprintf(reps + len, sizeof(reps) - len, "%s%u", i ? "," : "",
		                        c->rungs[i].reps);
	}
	probe_info_str(doc, "reps", reps);
	probe_info_str(doc, "ladder_stopped_by", c->ladder_stopped_by);
	probe_info_num(doc, "rungs", (double)c->n_rungs);
	if (c->n_rungs) {
		probe_scalar(doc, "start_vmas", x[0], "vmas");
		probe_scalar(doc, "max_vmas", x[c->n_rungs - 1], "vmas");
		probe_scalar(doc, "fail_ns_at_max", y[c->n_rungs - 1], "ns");
	}
	if (analysis_fit_class(x, y, c->n_rungs, &fit, &cls) < 0) {
		probe_info_str(doc, "class", NULL);
		return;
	}
	probe_scalar(doc, "slope", fit.slope, "slope");
	probe_scalar(doc, "slope_ci_lo", fit.slope_ci[0], "slope");
	probe_scalar(doc, "slope_ci_hi", fit.slope_ci[1], "slope");
	probe_info_num(doc, "slope_r2", fit.r2);
	probe_info_str(doc, "class", analysis_class_name(cls));
}

/* Probe-specific options. */
struct map32_opts {
	uint64_t stack_bytes; /* 0: glibc's default */
};

static int set_stack_size(const char *arg, void *ctx)
{
	uint64_t v;

	if (units_parse_size(arg, &v) < 0 || v < 65536 || v > (1ull << 28))
		return -EINVAL;
	((struct map32_opts *)ctx)->stack_bytes = v;
	return 0;
}

/* Why the run cannot give a slope, or NULL when it can. */
static const char *map32_failure(const struct map32_ctx *c)
{
	if (strcmp(c->window_stopped_by, "window_full"))
		return "the MAP_32BIT window did not fill";
	if (c->n_rungs < 2)
		return "fewer than two rungs of the ladder were measured";
	return NULL;
}

static void run(struct probe_doc *doc, const struct probe_opts *po, const struct map32_opts *mo)
{
	struct map32_ctx *c;
	struct sys_limits l;
	double budget = po->budget_s > 0 ? po->budget_s
	                : po->quick      ? MAP32_QUICK_BUDGET_S
	                                 : MAP32_BUDGET_S;
	double fraction = po->quick ? MAP32_QUICK_FRACTION : MAP32_FRACTION;
	uint64_t t0 = clock_ns(), target;
	const char *why;
	int rc;

	c = calloc(1, sizeof(*c));
	if (!c) {
		fputs("map32: out of memory\n", stderr);
		abort();
	}
	sys_limits_read(&l);
	c->page = (size_t)sysconf(_SC_PAGESIZE);
	c->stack_bytes = mo->stack_bytes ? mo->stack_bytes : sys_default_stack_size();
	c->stack_bytes = (c->stack_bytes + c->page - 1) / c->page * c->page;
	c->len = c->stack_bytes + c->page;
	c->max_map_count = l.max_map_count ? l.max_map_count : 65530;
	c->deadline = t0 + (uint64_t)(budget * (1 - MAP32_RESERVE) * 1e9);
	c->ladder_stopped_by = "target";
	target = (uint64_t)((double)c->max_map_count * fraction);
	probe_param_int(doc, "stack_size", (int64_t)c->stack_bytes);
	probe_param_double(doc, "budget_s", budget);
	probe_param_double(doc, "vma_fraction", fraction);
	probe_info_num(doc, "target_vmas", (double)target);

	rc = fill_window(c, target);
	if (rc == 0 && !strcmp(c->window_stopped_by, "window_full"))
		rc = run_ladder(c, target, po->quick ? MAP32_QUICK_RATIO : MAP32_RATIO,
		                po->quick ? MAP32_QUICK_REPS_MAX : MAP32_REPS_MAX);
	release_all(c);
	emit_window(doc, c);
	emit_ladder(doc, c);
	why = map32_failure(c);
	if (rc < 0)
		probe_status(doc, PROBE_ERROR, "mmap: %s", strerror(-rc));
	else if (why)
		probe_status(doc, PROBE_ERROR, "%s (window stopped by %s, ladder by %s)", why,
		             c->window_stopped_by, c->ladder_stopped_by);
	free(c);
}

int main(int argc, char **argv)
{
	struct map32_opts mo = {0};
	const struct probe_opt_ext ext[] = {
	    {"stack-size",
	     "bytes per mapping, such as 8M (64K to 256M; default: glibc's stack size)", 1,
	     set_stack_size, &mo},
	};
	struct probe_opts po;
	struct probe_doc *doc;
	int rc;

	if (probe_parse_args(argc, argv,
	                     "Times failing MAP_32BIT mmaps against the VMA count once the "
	                     "MAP_32BIT window is full.",
	                     &po, ext, sizeof(ext) / sizeof(ext[0])) < 0)
		return 2;
	doc = probe_doc_new("map32");
	probe_param_bool(doc, "quick", po.quick);
#if defined(__x86_64__)
	run(doc, &po, &mo);
#else
	(void)run;
	probe_status(doc, PROBE_SKIPPED, "MAP_32BIT exists only on x86-64");
#endif
	rc = probe_emit(doc);
	probe_doc_free(doc);
	return rc;
}
