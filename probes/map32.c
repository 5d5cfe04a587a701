/*
 * map32: the MAP_32BIT probe. Fills the MAP_32BIT window with stack-sized
 * mappings (each with its guard page), then climbs two ladders, as the
 * kernels before 3.8 paid twice for a stack that missed the window
 * (doc/recommendation.md):
 *  1. total VMAs: with the window full, more VMAs at high addresses; at
 *     each rung it times a failing MAP_32BIT mmap, the plain retry right
 *     after it (what glibc 2.7 did next) and a plain mmap on its own, the
 *     baseline. The retry's cost against all VMAs is `retry_ns`.
 *  2. in-window VMAs: the high VMAs gone, the stacks in the window split
 *     into page-sized mappings (a PROT_READ page between read-write runs,
 *     so that no hole opens); at each rung, the failing MAP_32BIT mmap
 *     against the VMAs inside the window is `fail_ns`.
 * Each ladder is fitted as a + b n (Theil-Sen) and classed flat, step,
 * sublinear, linear or quadratic on its own (analysis_growth_fit).
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
#include "map32bit.h"
#include "probe.h"
#include "stats.h"
#include "sysinfo.h"
#include "units.h"

#define MAP32_BUDGET_S 8.0
#define MAP32_QUICK_BUDGET_S 1.5
/* Each ladder climbs to this fraction of vm.max_map_count: the peak of VMAs
 * the probe holds (probes/PROTOCOL.md). */
#define MAP32_FRACTION 0.5
#define MAP32_QUICK_FRACTION 0.25
#define MAP32_RATIO 1.5
#define MAP32_QUICK_RATIO 2.0
#define MAP32_MAX_RUNGS 48
/* The MAP_32BIT window of x86-64 (find_start_end() in the kernel). */
#define MAP32_WINDOW_BEGIN ((unsigned long long)MAP32BIT_WINDOW_BEGIN)
#define MAP32_WINDOW_END ((unsigned long long)MAP32BIT_WINDOW_END)
/* Repetitions per rung: at least MIN; at most MAX (QUICK_MAX with --quick). */
#define MAP32_REPS_MIN 5
#define MAP32_REPS_MAX 2000
#define MAP32_QUICK_REPS_MAX 200
/* The window counts as full after this many MAP_32BIT failures in a row. */
#define MAP32_FULL_AFTER 16
/* The stacks may take at most this share of the VMA peak; mappings of 2^k
 * stacks fill the rest of the window, so that the ladders have room. */
#define MAP32_STACK_SHARE 8
/* A tenth of the budget is kept for tearing down. */
#define MAP32_RESERVE 0.1
/* Pages unmapped per munmap() when tearing down: the split mappings hold
 * up to one VMA per page, and one munmap() over 16,000 of them ran 8.4 ms
 * in the kernel here, a stretch in which, on a kernel without kernel
 * preemption (preempt=none), no other task gets that CPU. 256 pages keep
 * each call near 0.1 ms; the return to user space between calls is where
 * a waiting neighbour preempts the (SCHED_IDLE) probe. */
#define MAP32_UNMAP_PAGES 256

#ifndef MAP_32BIT
#define MAP_32BIT 0
#endif

enum { CALL_FAIL, CALL_RETRY, CALL_PLAIN, N_CALLS };
static const char *const call_names[N_CALLS] = {"fail", "retry", "plain"};

/* One measured rung of a ladder. */
struct rung {
	double vmas; /* in the window (fail ladder) or in the process (retry ladder) */
	double median[N_CALLS];
	double p99[N_CALLS];
	unsigned reps;
};

enum { LADDER_RETRY, LADDER_FAIL, N_LADDERS };

struct ladder {
	const char *name;  /* "retry" or "fail" */
	int call;          /* the call whose cost the ladder is about */
	uint64_t deadline; /* clock_ns() at which this ladder stops */
	struct rung rungs[MAP32_MAX_RUNGS];
	size_t n_rungs;
	const char *stopped_by;
};

struct map32_ctx {
	size_t page;
	size_t stack_bytes;
	size_t len; /* stack plus guard */
	uint64_t max_map_count;
	uint64_t deadline; /* of the window fill */
	/* The filled window. */
	void **stacks;
	size_t n_stacks, cap_stacks;
	unsigned late_fills; /* window stacks found during a ladder */
	uintptr_t lo, hi;
	const char *window_stopped_by;
	uint64_t window_vmas; /* VMAs inside the window once it was full */
	/* The high reservation the retry ladder splits into VMAs. */
	char *reserve;
	size_t reserve_pages;
	size_t reserve_used; /* pages mapped into it, every other one */
	/* Pages of the window's stacks the fail ladder has split off. */
	size_t split_used;
	/* Larger PROT_NONE mappings that fill what the stacks left, when the
	 * stacks alone would take too many VMAs. */
	void **plugs;
	size_t *plug_len;
	size_t n_plugs;
	struct ladder ladders[N_LADDERS];
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

/* VMAs of this process that overlap the MAP_32BIT window. */
static uint64_t vmas_in_window(void)
{
	FILE *f = fopen("/proc/self/maps", "re");
	unsigned long long lo, hi;
	uint64_t n = 0;
	char line[512];

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx-%llx", &lo, &hi) == 2 && lo < MAP32_WINDOW_END &&
		    hi > MAP32_WINDOW_BEGIN)
			n++;
	fclose(f);
	return n;
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

/* Stack-sized MAP_32BIT mappings, each with a guard page at its low end,
 * until MAP_32BIT fails MAP32_FULL_AFTER times in a row (the kernel may
 * randomise where its search starts, so one failure can leave a hole
 * below) or the VMA count would pass vma_cap. Returns 0 or -errno (not
 * ENOMEM). */
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

/* Fills what the stacks left of the window with PROT_NONE mappings of
 * 2^k stack lengths, largest first, so that no hole of a stack's length is
 * left. Each is one VMA. Returns 0 or -errno (not ENOMEM). */
static int plug_window(struct map32_ctx *c)
{
	int k = 0;

	while (((size_t)c->len << (k + 1)) <= (size_t)(MAP32_WINDOW_END - MAP32_WINDOW_BEGIN))
		k++;
	for (; k >= 0; k--) {
		size_t size = (size_t)c->len << k;
		unsigned failed = 0;

		/* The kernel may start its search anywhere in the window's
		 * first 32 MiB: the last size is tried until it fails often. */
		while (failed < (k ? 2u : MAP32_FULL_AFTER)) {
			void *p =
			    mmap(NULL, size, PROT_NONE,
			         MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_32BIT, -1, 0);

			if (p == MAP_FAILED) {
				if (errno != ENOMEM)
					return -errno;
				failed++;
				continue;
			}
			failed = 0;
			c->plugs = realloc(c->plugs, (c->n_plugs + 1) * sizeof(*c->plugs));
			c->plug_len = realloc(c->plug_len, (c->n_plugs + 1) * sizeof(*c->plug_len));
			if (!c->plugs || !c->plug_len) {
				fputs("map32: out of memory\n", stderr);
				abort();
			}
			c->plugs[c->n_plugs] = p;
			c->plug_len[c->n_plugs++] = size;
			if ((uintptr_t)p < c->lo)
				c->lo = (uintptr_t)p;
			if ((uintptr_t)p + size > c->hi)
				c->hi = (uintptr_t)p + size;
		}
	}
	c->window_stopped_by = map32_enomem(c);
	return 0;
}

/* Reserves room at a high address (where the kernel puts plain mappings)
 * for the retry ladder: one PROT_NONE VMA that climb_high() splits. */
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

/* munmap() in steps of MAP32_UNMAP_PAGES, so that no one call walks more
 * than that many VMAs (see there). */
static void unmap_gently(const struct map32_ctx *c, void *p, size_t len)
{
	size_t step = MAP32_UNMAP_PAGES * c->page;

	for (size_t off = 0; off < len; off += step)
		munmap((char *)p + off, len - off < step ? len - off : step);
}

static void release_high(struct map32_ctx *c)
{
	if (c->reserve)
		unmap_gently(c, c->reserve, c->reserve_pages * c->page);
	c->reserve = NULL;
	c->reserve_pages = c->reserve_used = 0;
}

/* Raises the process's VMA count to at least `target`: every other page of
 * the reservation becomes a PROT_READ mapping, so no two neighbours can
 * merge and each page adds two VMAs. *vmas is the running count. */
static int climb_high(struct map32_ctx *c, double target, uint64_t *vmas)
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

/* Raises the VMAs inside the window to at least `target` without opening a
 * hole: every other page above each stack's guard turns PROT_READ, so each
 * splits a read-write run in two (two VMAs more). The window holds the
 * same bytes, in mappings as small as a page. *vmas is the running count. */
static int climb_window(struct map32_ctx *c, double target, uint64_t *vmas)
{
	size_t per_stack = (c->len / c->page - 2) / 2; /* odd pages 3, 5, ... below the top */

	while ((double)*vmas < target) {
		size_t s, k;

		if (!per_stack || c->split_used >= per_stack * c->n_stacks)
			return -ENOSPC;
		s = c->split_used % c->n_stacks;
		k = c->split_used / c->n_stacks;
		if (mprotect((char *)c->stacks[s] + (2 * k + 2) * c->page, c->page, PROT_READ) < 0)
			return -errno;
		c->split_used++;
		*vmas += 2;
	}
	return 0;
}

/* One repetition: a failing MAP_32BIT call, the plain retry right after it
 * (what glibc 2.7's allocate_stack did next), then, after unmapping that,
 * a plain mmap of the same size and flags. */
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
	ns[CALL_RETRY] = (double)(t2 - t1);
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
 * what is left of the ladder's budget. Returns 0 or -errno. */
static int measure_rung(struct map32_ctx *c, const struct ladder *l, struct rung *r,
                        size_t rungs_left, unsigned reps_max, double *rep_cost)
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
	    analysis_reps(l->deadline > now ? (double)(l->deadline - now) / (double)rungs_left : 0,
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

		if (clock_ns() > l->deadline && got >= MAP32_REPS_MIN)
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

typedef int (*climb_fn)(struct map32_ctx *c, double target, uint64_t *vmas);

/* Climbs one ladder from `from` to `target` VMAs (counted by `count`)
 * with `climb`, measuring each rung. */
static int run_ladder(struct map32_ctx *c, struct ladder *l, uint64_t from, uint64_t target,
                      double ratio, unsigned reps_max, climb_fn climb, uint64_t (*count)(void))
{
	double steps[MAP32_MAX_RUNGS], rep_cost = 0;
	uint64_t vmas = from;
	size_t n;
	int rc;

	if (target < from)
		target = from;
	n = analysis_ladder((double)from, (double)target, ratio, steps, MAP32_MAX_RUNGS);
	l->stopped_by = "target";
	for (size_t i = 0; i < n; i++) {
		struct rung *r = &l->rungs[l->n_rungs];
		uint64_t now = clock_ns();

		/* The next rung costs at least the minimum repetitions at the
		 * last cost, grown in proportion to the VMA count. */
		if (i && (now > l->deadline ||
		          (double)(l->deadline - now) <
		              MAP32_REPS_MIN * rep_cost * steps[i] / steps[i - 1])) {
			l->stopped_by = "budget";
			return 0;
		}
		rc = climb(c, steps[i], &vmas);
		if (rc == -ENOMEM || rc == -ENOSPC) {
			l->stopped_by = rc == -ENOSPC ? "room"
			                              : analysis_enomem_name(analysis_enomem_cause(
			                                    vmas_now(), c->max_map_count, 2, 0, 0));
			return 0;
		}
		if (rc < 0)
			return rc;
		vmas = count();
		r->vmas = (double)vmas;
		rc = measure_rung(c, l, r, n - i, reps_max, &rep_cost);
		if (r->reps && (!l->n_rungs || r->vmas > l->rungs[l->n_rungs - 1].vmas))
			l->n_rungs++;
		if (rc == -ENOMEM) {
			l->stopped_by = analysis_enomem_name(
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
	release_high(c);
	for (size_t i = 0; i < c->n_stacks; i++)
		unmap_gently(c, c->stacks[i], c->len);
	for (size_t i = 0; i < c->n_plugs; i++)
		munmap(c->plugs[i], c->plug_len[i]);
	free(c->stacks);
	free(c->plugs);
	free(c->plug_len);
}

static void emit_window(struct probe_doc *doc, const struct map32_ctx *c)
{
	char hex[24];

	probe_scalar(doc, "stack_bytes", (double)c->stack_bytes, "bytes");
	probe_scalar(doc, "capacity_stacks", (double)c->n_stacks, "count");
	probe_scalar(doc, "window_vmas", (double)c->window_vmas, "vmas");
	/* What a window filled with stacks alone would hold: two VMAs each. */
	probe_scalar(doc, "window_vmas_at_stack_size",
	             2.0 * floor((double)(MAP32_WINDOW_END - MAP32_WINDOW_BEGIN) / (double)c->len),
	             "vmas");
	probe_info_num(doc, "plugs", (double)c->n_plugs);
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

/* "<ladder>_<what>" */
static const char *lname(char *buf, size_t len, const struct ladder *l, const char *what)
{
	snprintf(buf, len, "%s_%s", l->name, what);
	return buf;
}

/* A ladder's series (its own call, plus the baseline on the retry
 * ladder), rep counts, fit and class. */
static void emit_ladder(struct probe_doc *doc, const struct ladder *l)
{
	double x[MAP32_MAX_RUNGS], y[MAP32_MAX_RUNGS];
	char n[64], reps[MAP32_MAX_RUNGS * 12] = "";
	struct analysis_growth g;
	size_t len = 0;

	for (int k = 0; k < N_CALLS; k++) {
		struct probe_series *med, *p99;

		if (k != l->call && !(k == CALL_PLAIN && l->call == CALL_RETRY))
			continue;
		snprintf(n, sizeof(n), "%s_median_ns", call_names[k]);
		med = probe_series_new(doc, n, "vmas", "ns");
		snprintf(n, sizeof(n), "%s_p99_ns", call_names[k]);
		p99 = probe_series_new(doc, n, "vmas", "ns");
		for (size_t i = 0; i < l->n_rungs; i++) {
			probe_series_add(med, l->rungs[i].vmas, l->rungs[i].median[k]);
			probe_series_add(p99, l->rungs[i].vmas, l->rungs[i].p99[k]);
		}
	}
	for (size_t i = 0; i < l->n_rungs; i++) {
		x[i] = l->rungs[i].vmas;
		y[i] = l->rungs[i].median[l->call];
		len += (size_t)snprintf(reps + len, sizeof(reps) - len, "%s%u", i ? "," : "",
		                        l->rungs[i].reps);
	}
	probe_info_str(doc, lname(n, sizeof(n), l, "reps"), reps);
	probe_info_str(doc, lname(n, sizeof(n), l, "stopped_by"), l->stopped_by);
	probe_info_num(doc, lname(n, sizeof(n), l, "rungs"), (double)l->n_rungs);
	if (l->n_rungs) {
		probe_scalar(doc, lname(n, sizeof(n), l, "start_vmas"), x[0], "vmas");
		probe_scalar(doc, lname(n, sizeof(n), l, "max_vmas"), x[l->n_rungs - 1], "vmas");
		probe_scalar(doc, lname(n, sizeof(n), l, "ns_at_max"), y[l->n_rungs - 1], "ns");
		if (l->call == CALL_RETRY)
			probe_scalar(doc, "plain_ns_at_max",
			             l->rungs[l->n_rungs - 1].median[CALL_PLAIN], "ns");
	}
	if (analysis_growth_fit(x, y, l->n_rungs, &g) < 0) {
		probe_info_str(doc, lname(n, sizeof(n), l, "class"), NULL);
		return;
	}
	probe_scalar(doc, lname(n, sizeof(n), l, "ns_per_vma"), g.b, "ns_per_vma");
	probe_scalar(doc, lname(n, sizeof(n), l, "ns_per_vma_ci_lo"), g.b_ci[0], "ns_per_vma");
	probe_scalar(doc, lname(n, sizeof(n), l, "ns_per_vma_ci_hi"), g.b_ci[1], "ns_per_vma");
	probe_scalar(doc, lname(n, sizeof(n), l, "fixed_ns"), g.a, "ns");
	probe_scalar(doc, lname(n, sizeof(n), l, "rise"), g.rise, "ratio");
	probe_scalar(doc, lname(n, sizeof(n), l, "exponent"), g.exponent, "slope");
	probe_scalar(doc, lname(n, sizeof(n), l, "loglog_slope"), g.loglog, "slope");
	probe_info_str(doc, lname(n, sizeof(n), l, "class"), analysis_class_name(g.cls));
}

/* The names kept from before issue 13: the failing call's log-log slope
 * with its CI, and the retry ladder's VMA range. */
static void emit_compat(struct probe_doc *doc, const struct map32_ctx *c)
{
	const struct ladder *f = &c->ladders[LADDER_FAIL], *r = &c->ladders[LADDER_RETRY];
	double x[MAP32_MAX_RUNGS], y[MAP32_MAX_RUNGS];
	struct stats_fit fit;

	if (r->n_rungs) {
		probe_scalar(doc, "start_vmas", r->rungs[0].vmas, "vmas");
		probe_scalar(doc, "max_vmas", r->rungs[r->n_rungs - 1].vmas, "vmas");
	}
	for (size_t i = 0; i < f->n_rungs; i++) {
		x[i] = f->rungs[i].vmas;
		y[i] = f->rungs[i].median[CALL_FAIL];
	}
	if (f->n_rungs < 2 || stats_loglog_fit(x, y, f->n_rungs, &fit) < 0)
		return;
	probe_scalar(doc, "slope", fit.slope, "slope");
	probe_scalar(doc, "slope_ci_lo", fit.slope_ci[0], "slope");
	probe_scalar(doc, "slope_ci_hi", fit.slope_ci[1], "slope");
	probe_info_num(doc, "slope_r2", fit.r2);
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

/* Why the run cannot class both ladders, or NULL when it can. */
static const char *map32_failure(const struct map32_ctx *c)
{
	if (strcmp(c->window_stopped_by, "window_full"))
		return "the MAP_32BIT window did not fill";
	for (int i = 0; i < N_LADDERS; i++)
		if (c->ladders[i].n_rungs < 3)
			return "fewer than three rungs of a ladder were measured";
	return NULL;
}

/* Both ladders, each with its share of the time left: the retry ladder
 * first (the window as filled), then, its high VMAs gone, the fail ladder. */
static int run_ladders(struct map32_ctx *c, uint64_t target, double ratio, unsigned reps_max)
{
	struct ladder *r = &c->ladders[LADDER_RETRY], *f = &c->ladders[LADDER_FAIL];
	uint64_t now = clock_ns(), vmas = vmas_now(), others;
	int rc;

	r->deadline = now + (c->deadline > now ? (c->deadline - now) / 2 : 0);
	f->deadline = c->deadline;
	rc = reserve_high(c, target > vmas ? target - vmas : 0);
	if (rc < 0)
		return rc;
	rc = run_ladder(c, r, vmas_now(), target, ratio, reps_max, climb_high, vmas_now);
	release_high(c);
	if (rc < 0)
		return rc;
	/* The fail ladder's peak is the same: what lies outside the window
	 * plus the VMAs inside it come to `target`. */
	vmas = vmas_now();
	c->window_vmas = vmas_in_window();
	others = vmas - c->window_vmas;
	return run_ladder(c, f, c->window_vmas, target > others ? target - others : 0, ratio,
	                  reps_max, climb_window, vmas_in_window);
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
	c->ladders[LADDER_RETRY] =
	    (struct ladder){.name = "retry", .call = CALL_RETRY, .stopped_by = "target"};
	c->ladders[LADDER_FAIL] =
	    (struct ladder){.name = "fail", .call = CALL_FAIL, .stopped_by = "target"};
	target = (uint64_t)((double)c->max_map_count * fraction);
	probe_param_int(doc, "stack_size", (int64_t)c->stack_bytes);
	probe_param_double(doc, "budget_s", budget);
	probe_param_double(doc, "vma_fraction", fraction);
	probe_info_num(doc, "target_vmas", (double)target);

	rc = fill_window(c, vmas_now() + target / MAP32_STACK_SHARE);
	if (rc == 0 && c->n_stacks && !strcmp(c->window_stopped_by, "target"))
		rc = plug_window(c);
	c->window_vmas = vmas_in_window();
	if (rc == 0 && !strcmp(c->window_stopped_by, "window_full"))
		rc = run_ladders(c, target, po->quick ? MAP32_QUICK_RATIO : MAP32_RATIO,
		                 po->quick ? MAP32_QUICK_REPS_MAX : MAP32_REPS_MAX);
	release_all(c);
	emit_window(doc, c);
	for (int i = 0; i < N_LADDERS; i++)
		emit_ladder(doc, &c->ladders[i]);
	emit_compat(doc, c);
	why = map32_failure(c);
	if (rc < 0)
		probe_status(doc, PROBE_ERROR, "mmap: %s", strerror(-rc));
	else if (why)
		probe_status(doc, PROBE_ERROR, "%s (window stopped by %s, ladders by %s and %s)",
		             why, c->window_stopped_by, c->ladders[LADDER_RETRY].stopped_by,
		             c->ladders[LADDER_FAIL].stopped_by);
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
	char what[200];
	int rc;

	if (probe_parse_args(argc, argv,
	                     "Fills the MAP_32BIT window, then times the plain retry after a "
	                     "failing MAP_32BIT mmap against all VMAs, and the failing call "
	                     "against the VMAs inside the window.",
	                     &po, ext, sizeof(ext) / sizeof(ext[0])) < 0)
		return 2;
	doc = probe_doc_new("map32");
	probe_param_bool(doc, "quick", po.quick);
	if (!map32bit_applicable(what, sizeof(what))) {
		probe_status(doc, PROBE_NOT_APPLICABLE, "%s", what);
	} else if (map32bit_check(what, sizeof(what))) {
		probe_info_str(doc, "map32bit", what);
		run(doc, &po, &mo);
	} else {
		probe_status(doc, PROBE_SKIPPED, "%s", what);
	}
	rc = probe_emit(doc);
	probe_doc_free(doc);
	return rc;
}
