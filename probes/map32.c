/*
 * map32: the MAP_32BIT probe. Fills the MAP_32BIT window with stack-sized
 * mappings (each with its guard page), then climbs two ladders, as the
 * kernels before 3.8 paid twice for a stack that missed the window
 * (doc/recommendation.md):
 *  1. the retry: with the window full, stacks of the same size packed
 *     below mmap_base, as the stacks of threads that missed the window lay
 *     (two VMAs each, guard and rest). At each rung it times a failing
 *     MAP_32BIT mmap, the plain retry right after it (what glibc 2.7 did
 *     next) and a plain mmap on its own, the baseline. v3.0's top-down
 *     retry steps once per stack above its hole, so this ladder grows its
 *     steps one per stack. The retry's cost against the process's VMAs is
 *     `retry_ns`.
 *  2. in-window VMAs: the high VMAs gone, the stacks in the window split
 *     into page-sized mappings (a PROT_READ page between read-write runs,
 *     so that no hole opens); at each rung, the failing MAP_32BIT mmap
 *     against the VMAs inside the window is `fail_ns`; and `fill_ns`, a
 *     successful MAP_32BIT mmap into a hole at the window's top (its
 *     highest stack unmapped), against the window VMAs below that hole.
 * Each ladder visits its rungs in MAP32_ROUNDS rounds, each in a fresh
 * seeded random order (info.<ladder>_order), mapping or unmapping from the
 * last rung to the next, so that a drift of the host's load does not pass
 * for growth with n. Each is fitted as a + b n (Theil-Sen) and classed
 * flat, step, sublinear, linear or quadratic on its own
 * (analysis_growth_fit).
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
/* Each ladder visits its rungs this many rounds, each round in a fresh
 * seeded random order, with at least VISIT_MIN repetitions per visit: drift
 * of the host's load lands on every rung alike instead of growing with n. */
#define MAP32_ROUNDS 3
#define MAP32_VISIT_MIN 2
/* A ladder is classed from at least this many rungs: the budget never cuts
 * one shorter (only the room in the window or the map count can), so a
 * busy host makes a run slower, not a failed one. */
#define MAP32_RUNGS_MIN 3
/* Setting up the rungs of a round in random order costs about this many
 * sweeps from the bottom of the ladder to its top. */
#define MAP32_SWEEPS 3
#define MAP32_REPS_MAX 2000
#define MAP32_QUICK_REPS_MAX 200
/* The window counts as full after this many MAP_32BIT failures in a row. */
#define MAP32_FULL_AFTER 16
/* The stacks may take at most this share of the VMA peak; mappings of 2^k
 * stacks fill the rest of the window, so that the ladders have room. */
#define MAP32_STACK_SHARE 8
/* A tenth of the budget is kept for tearing down. */
#define MAP32_RESERVE 0.1
/* Nothing is measured before the window is full, so its fill may take at
 * least this long however small the budget (127 stacks take a few ms; a
 * 10 ms budget on a busy host or under a sanitizer must not fail a run). */
#define MAP32_FILL_MIN_S 2.0
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

enum { CALL_FAIL, CALL_RETRY, CALL_PLAIN, CALL_FILL, N_CALLS };
static const char *const call_names[N_CALLS] = {"fail", "retry", "plain", "fill"};

/* One measured rung of a ladder. */
struct rung {
	double vmas; /* in the window (fail ladder) or in the process (retry ladder) */
	double median[N_CALLS];
	double p99[N_CALLS];
	unsigned reps;
	double *v[N_CALLS]; /* the samples of every visit, until summarised */
	unsigned cap;
	double rep_cost; /* ns of one repetition at its last visit */
};

enum { LADDER_RETRY, LADDER_FAIL, N_LADDERS };

struct ladder {
	const char *name;  /* "retry" or "fail" */
	int call;          /* the call whose cost the ladder is about */
	uint64_t deadline; /* clock_ns() at which this ladder stops */
	struct rung rungs[MAP32_MAX_RUNGS];
	size_t n_rungs;
	const char *stopped_by;
	/* The rungs as visited, by index of the planned ladder (ascending):
	 * "2,0,1;1,2,0" for two rounds of three. */
	char order[MAP32_MAX_RUNGS * MAP32_ROUNDS * 3 + MAP32_ROUNDS];
	size_t order_len;
	uint64_t move_ns;  /* spent setting rungs up in the last round */
	double reserve_ns; /* kept back for the minimum of the rounds to come */
};

struct map32_ctx {
	size_t page;
	size_t stack_bytes;
	size_t len; /* stack plus guard */
	uint64_t max_map_count;
	uint64_t deadline;      /* of the ladders */
	uint64_t fill_deadline; /* of the window fill */
	/* The filled window. */
	void **stacks;
	size_t n_stacks, cap_stacks;
	unsigned late_fills; /* window stacks found during a ladder */
	uintptr_t lo, hi;
	const char *window_stopped_by;
	uint64_t window_vmas; /* VMAs inside the window once it was full */
	/* The retry ladder's stacks below mmap_base, highest first. */
	void **high;
	size_t n_high, cap_high;
	/* Pages of the window's stacks the fail ladder has split off, over
	 * the first split_stacks stacks (fixed at the first split, so that a
	 * late fill does not move the pages already split). */
	size_t split_used, split_stacks;
	/* During the fail ladder, the window's highest stack, which each
	 * repetition unmaps and maps again with MAP_32BIT (the fill call). */
	int fill_on;
	size_t fill_idx;
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

		if (clock_ns() > c->fill_deadline) {
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

/* munmap() in steps of MAP32_UNMAP_PAGES, so that no one call walks more
 * than that many VMAs (see there). */
static void unmap_gently(const struct map32_ctx *c, void *p, size_t len)
{
	size_t step = MAP32_UNMAP_PAGES * c->page;

	for (size_t off = 0; off < len; off += step)
		munmap((char *)p + off, len - off < step ? len - off : step);
}

/* The retry ladder's mappings: stack-sized, each a guard page (PROT_NONE)
 * below a PROT_READ rest, two VMAs that never merge with a neighbour, as
 * glibc lays out a stack. Plain mmaps place them top-down, each right
 * below the last, so they pack below mmap_base as the stacks of threads
 * that missed the window did. A v3.0 retry from mmap_base steps once per
 * stack (it lands `len` below the guard it meets), so the ladder grows the
 * steps of that search one per stack; page-sized VMAs would mostly be
 * jumped. PROT_READ and MAP_NORESERVE: no memory is committed or touched. */
static int push_high(struct map32_ctx *c)
{
	void *p;

	if (c->n_high == c->cap_high) {
		size_t cap = c->cap_high ? 2 * c->cap_high : 256;
		void **h = realloc(c->high, cap * sizeof(*h));

		if (!h)
			return -ENOMEM;
		c->high = h;
		c->cap_high = cap;
	}
	p = mmap(NULL, c->len, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return -errno;
	if (mprotect(p, c->page, PROT_NONE) < 0) {
		int r = -errno;

		munmap(p, c->len);
		return r;
	}
	c->high[c->n_high++] = p;
	return 0;
}

/* The lowest stack of the ladder goes: two VMAs fewer, and the rest stay
 * packed. */
static void pop_high(struct map32_ctx *c)
{
	munmap(c->high[--c->n_high], c->len);
}

static void release_high(struct map32_ctx *c)
{
	while (c->n_high)
		pop_high(c);
	free(c->high);
	c->high = NULL;
	c->cap_high = 0;
}

/* Sets the process's VMA count to the least count not below `target`,
 * two VMAs per stack of the ladder. *vmas is the running count. */
static int set_high(struct map32_ctx *c, double target, uint64_t *vmas)
{
	while (c->n_high && (double)*vmas >= target + 2) {
		pop_high(c);
		*vmas -= 2;
	}
	while ((double)*vmas < target) {
		int rc = push_high(c);

		if (rc < 0)
			return rc;
		*vmas += 2;
	}
	return 0;
}

/* The page that the i-th split of the window turns PROT_READ. */
static void *split_page(const struct map32_ctx *c, size_t i)
{
	return (char *)c->stacks[i % c->split_stacks] + (2 * (i / c->split_stacks) + 2) * c->page;
}

/* Lowers the VMAs inside the window towards `target`: the last split page
 * goes back to read-write and merges, two VMAs fewer. */
static int lower_window(struct map32_ctx *c, double target, uint64_t *vmas)
{
	while (c->split_used && (double)*vmas >= target + 2) {
		if (mprotect(split_page(c, c->split_used - 1), c->page, PROT_READ | PROT_WRITE) < 0)
			return -errno;
		c->split_used--;
		*vmas -= 2;
	}
	return 0;
}

/* Sets the VMAs inside the window to the least count not below `target`
 * without opening a hole: every other page above each stack's guard turns
 * PROT_READ, so each splits a read-write run in two (two VMAs more). The
 * window holds the same bytes, in mappings as small as a page. *vmas is
 * the running count. */
static int set_window(struct map32_ctx *c, double target, uint64_t *vmas)
{
	size_t per_stack = (c->len / c->page - 2) / 2; /* odd pages 3, 5, ... below the top */

	if ((double)*vmas >= target + 2)
		return lower_window(c, target, vmas);
	if (!c->split_used)
		c->split_stacks = c->fill_on ? c->fill_idx : c->n_stacks;
	while ((double)*vmas < target) {
		if (!per_stack || c->split_used >= per_stack * c->split_stacks)
			return -ENOSPC;
		if (mprotect(split_page(c, c->split_used), c->page, PROT_READ) < 0)
			return -errno;
		c->split_used++;
		*vmas += 2;
	}
	return 0;
}

/* The fill call: the window's highest stack unmapped, a MAP_32BIT mmap of
 * a stack finds that hole past every window VMA below it (a successful
 * low allocation in a nearly full window); the new stack takes the old
 * one's place with its guard page. Returns 0 or -errno. */
static int time_fill(struct map32_ctx *c, double *ns)
{
	uint64_t t0, t1;
	void *p;

	if (munmap(c->stacks[c->fill_idx], c->len) < 0)
		return -errno;
	t0 = clock_ns();
	p = map_stack(c, MAP_32BIT);
	t1 = clock_ns();
	if (p == MAP_FAILED) {
		c->fill_on = 0;
		return -errno;
	}
	c->stacks[c->fill_idx] = p;
	if (mprotect(p, c->page, PROT_NONE) < 0)
		return -errno;
	*ns = (double)(t1 - t0);
	return 0;
}

/* Makes the window's highest stack the fill call's, out of the stacks the
 * fail ladder splits. */
static void fill_choose(struct map32_ctx *c)
{
	size_t top = 0;
	void *t;

	for (size_t i = 1; i < c->n_stacks; i++)
		if ((uintptr_t)c->stacks[i] > (uintptr_t)c->stacks[top])
			top = i;
	t = c->stacks[top];
	c->stacks[top] = c->stacks[c->n_stacks - 1];
	c->stacks[c->n_stacks - 1] = t;
	c->fill_idx = c->n_stacks - 1;
	c->fill_on = c->n_stacks > 1;
}

/* One repetition: a failing MAP_32BIT call, the plain retry right after it
 * (what glibc 2.7's allocate_stack did next), then, after unmapping that,
 * a plain mmap of the same size and flags; during the fail ladder, the
 * fill call last. */
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
	ns[CALL_FILL] = 0;
	return c->fill_on ? time_fill(c, &ns[CALL_FILL]) : 0;
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

/* Keeps one repetition's times with the rung's other samples. */
static void rung_add(struct rung *r, const double ns[N_CALLS])
{
	if (r->reps == r->cap) {
		r->cap = r->cap ? 2 * r->cap : 64;
		for (int k = 0; k < N_CALLS; k++) {
			r->v[k] = realloc(r->v[k], r->cap * sizeof(double));
			if (!r->v[k]) {
				fputs("map32: out of memory\n", stderr);
				abort();
			}
		}
	}
	for (int k = 0; k < N_CALLS; k++)
		r->v[k][r->reps] = ns[k];
	r->reps++;
}

/* Times one visit of a rung: a trial repetition sizes the rest to a share
 * of what is left of the ladder's budget (`visits_left` visits to come).
 * Returns 0 or -errno. */
static int measure_visit(struct map32_ctx *c, const struct ladder *l, struct rung *r,
                         size_t visits_left, unsigned reps_max)
{
	double ns[N_CALLS];
	uint64_t t0 = clock_ns(), now;
	unsigned reps;
	int rc;

	rc = time_rep_full(c, ns);
	if (rc < 0)
		return rc;
	now = clock_ns();
	r->rep_cost = (double)(now - t0);
	rung_add(r, ns);
	reps =
	    analysis_reps((double)l->deadline > (double)now + l->reserve_ns
	                      ? ((double)(l->deadline - now) - l->reserve_ns) / (double)visits_left
	                      : 0,
	                  r->rep_cost, MAP32_VISIT_MIN, reps_max);
	for (unsigned got = 1; got < reps; got++) {
		if (clock_ns() > l->deadline && got >= MAP32_VISIT_MIN)
			break;
		rc = time_rep_full(c, ns);
		if (rc < 0)
			return rc;
		rung_add(r, ns);
	}
	return 0;
}

/* Summarises each rung's samples and keeps the rungs measured, in
 * ascending order of VMAs. */
static void ladder_finish(struct ladder *l, size_t planned)
{
	size_t kept = 0;

	for (size_t i = 0; i < planned; i++) {
		struct rung *r = &l->rungs[i];

		for (int k = 0; k < N_CALLS; k++) {
			if (r->reps) {
				r->median[k] = stats_median(r->v[k], r->reps);
				r->p99[k] = stats_percentile(r->v[k], r->reps, 99);
			}
			free(r->v[k]);
			r->v[k] = NULL;
		}
		if (r->reps && (!kept || r->vmas > l->rungs[kept - 1].vmas))
			l->rungs[kept++] = *r;
	}
	l->n_rungs = kept;
}

typedef int (*level_fn)(struct map32_ctx *c, double target, uint64_t *vmas);

/* Appends a rung index to the ladder's order ("," within a round, ";"
 * between rounds). */
static void order_add(struct ladder *l, size_t rung, unsigned round, int first)
{
	size_t room = sizeof(l->order) - l->order_len;
	int w = snprintf(l->order + l->order_len, room, "%s%zu", first ? (round ? ";" : "") : ",",
	                 rung);

	if (w > 0 && (size_t)w < room)
		l->order_len += (size_t)w;
}

/* What a round costs at the least: each rung's minimum repetitions at its
 * last cost, plus the moves between rungs that the last round took. */
static double round_min_ns(const struct ladder *l, size_t n)
{
	double need = (double)l->move_ns;

	for (size_t i = 0; i < n; i++)
		need += MAP32_VISIT_MIN * l->rungs[i].rep_cost;
	return need;
}

/* Can a later round be made whole? */
static int round_affordable(const struct ladder *l, size_t n)
{
	uint64_t now = clock_ns();

	return now < l->deadline && (double)(l->deadline - now) >= round_min_ns(l, n);
}

/* What a ladder needs to set up and count its rungs. */
struct ladder_ops {
	level_fn set;
	uint64_t (*count)(void);
};

/* Sets up rung i (`steps[i]` VMAs) and times one visit of it. *limit
 * drops to i when the rung cannot be reached. Returns 0, 1 (the ladder
 * stops: l->stopped_by says why) or -errno. */
static int visit_rung(struct map32_ctx *c, struct ladder *l, const struct ladder_ops *ops,
                      const double *steps, size_t i, size_t *limit, size_t visits_left,
                      unsigned reps_max)
{
	struct rung *r = &l->rungs[i];
	uint64_t vmas = ops->count(), t0 = clock_ns();
	int rc = ops->set(c, steps[i], &vmas);

	if (rc == -ENOMEM || rc == -ENOSPC) {
		l->stopped_by = rc == -ENOSPC ? "room"
		                              : analysis_enomem_name(analysis_enomem_cause(
		                                    vmas_now(), c->max_map_count, 2, 0, 0));
		*limit = i;
		return 0;
	}
	if (rc < 0)
		return rc;
	vmas = ops->count();
	l->move_ns += clock_ns() - t0;
	if (!r->reps)
		r->vmas = (double)vmas;
	rc = measure_visit(c, l, r, visits_left, reps_max);
	if (rc == -ENOMEM) {
		l->stopped_by = analysis_enomem_name(
		    analysis_enomem_cause(vmas_now(), c->max_map_count, 2, 0, 0));
		return 1;
	}
	return rc;
}

/* One round: every rung below *limit once, in a random order. Returns 0,
 * 1 (the ladder stops) or -errno. */
static int run_round(struct map32_ctx *c, struct ladder *l, const struct ladder_ops *ops,
                     const double *steps, size_t n, size_t *limit, unsigned round,
                     struct stats_rng *rng, unsigned reps_max)
{
	size_t order[MAP32_MAX_RUNGS], visited = 0;
	int first = 1;

	l->move_ns = 0;
	stats_rng_permutation(rng, order, n);
	for (size_t k = 0; k < n; k++) {
		size_t left = (MAP32_ROUNDS - round) * n - k;
		int rc;

		if (order[k] >= *limit)
			continue;
		if (clock_ns() > l->deadline && (round || visited >= MAP32_RUNGS_MIN)) {
			l->stopped_by = "budget";
			return 1;
		}
		visited++;
		order_add(l, order[k], round, first);
		first = 0;
		rc = visit_rung(c, l, ops, steps, order[k], limit, left, reps_max);
		if (rc)
			return rc;
	}
	return 0;
}

/* Sizes the ladder to its budget: climbs the rungs once, timing one
 * repetition at each (kept out of the figures), and returns how many
 * rungs the rounds can afford, each rung's minimum repetitions in every
 * round (and one round more, for the load's ups and downs) at the cost
 * found plus MAP32_SWEEPS sweeps of set-up per round. The
 * walks of an old kernel grow with n, so the next rung is guessed at the
 * last one's cost times the growth in VMAs. */
static size_t ladder_pilot(struct map32_ctx *c, struct ladder *l, const struct ladder_ops *ops,
                           const double *steps, size_t n)
{
	double sum = 0, grow;
	uint64_t moves = 0;

	for (size_t i = 0; i < n; i++) {
		double ns[N_CALLS], need;
		uint64_t vmas = ops->count(), t0 = clock_ns(), t1;
		int rc;

		grow = i ? steps[i] / steps[i - 1] : 1;
		need = (MAP32_ROUNDS + 1) *
		       (MAP32_VISIT_MIN * (sum + (i ? l->rungs[i - 1].rep_cost : 0) * grow) +
		        MAP32_SWEEPS * (double)moves * grow);
		if (i >= MAP32_RUNGS_MIN &&
		    (double)(l->deadline > t0 ? l->deadline - t0 : 0) < need) {
			l->stopped_by = "budget";
			return i;
		}
		rc = ops->set(c, steps[i], &vmas);
		t1 = clock_ns();
		if (rc == 0)
			rc = time_rep_full(c, ns);
		if (rc < 0) {
			l->stopped_by = rc == -ENOSPC ? "room"
			                              : analysis_enomem_name(analysis_enomem_cause(
			                                    vmas_now(), c->max_map_count, 2, 0, 0));
			return i;
		}
		moves += t1 - t0;
		l->rungs[i].rep_cost = (double)(clock_ns() - t1);
		sum += l->rungs[i].rep_cost;
		l->move_ns = MAP32_SWEEPS * moves;
	}
	return n;
}

/* Measures a ladder from `from` to `target` VMAs: MAP32_ROUNDS rounds, each
 * visiting the rungs in a fresh random order (seeded), setting each up by
 * mapping or unmapping from where the last one left it. */
static int run_ladder(struct map32_ctx *c, struct ladder *l, uint64_t from, uint64_t target,
                      double ratio, unsigned reps_max, const struct ladder_ops *ops, uint64_t seed)
{
	double steps[MAP32_MAX_RUNGS];
	struct stats_rng rng;
	size_t n, limit;
	int rc = 0;

	if (target < from)
		target = from;
	n = analysis_ladder((double)from, (double)target, ratio, steps, MAP32_MAX_RUNGS);
	l->stopped_by = "target";
	limit = ladder_pilot(c, l, ops, steps, n);
	stats_rng_seed(&rng, seed ^ (uint64_t)(l->call + 1) * UINT64_C(0x9e3779b97f4a7c15));
	for (unsigned round = 0; round < MAP32_ROUNDS && rc == 0; round++) {
		if (round && !round_affordable(l, limit)) {
			l->stopped_by = "budget";
			break;
		}
		l->reserve_ns = (MAP32_ROUNDS - round - 1) * round_min_ns(l, limit);
		rc = run_round(c, l, ops, steps, n, &limit, round, &rng,
		               reps_max / MAP32_ROUNDS > MAP32_VISIT_MIN ? reps_max / MAP32_ROUNDS
		                                                         : MAP32_VISIT_MIN);
	}
	ladder_finish(l, n);
	return rc < 0 ? rc : 0;
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
static const char *lname(char *buf, size_t len, const char *ladder, const char *what)
{
	snprintf(buf, len, "%s_%s", ladder, what);
	return buf;
}

/* A ladder's series (the call `call`, plus the baseline on the retry
 * ladder), rep counts, fit and class, named `name` (the fill ladder is
 * the fail ladder's rungs with the fill call). */
static void emit_ladder(struct probe_doc *doc, const struct ladder *l, const char *name, int call)
{
	double x[MAP32_MAX_RUNGS], y[MAP32_MAX_RUNGS];
	char n[64], reps[MAP32_MAX_RUNGS * 12] = "";
	struct analysis_growth g;
	size_t len = 0;

	for (int k = 0; k < N_CALLS; k++) {
		struct probe_series *med, *p99;

		if (k != call && !(k == CALL_PLAIN && call == CALL_RETRY))
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
		y[i] = l->rungs[i].median[call];
		len += (size_t)snprintf(reps + len, sizeof(reps) - len, "%s%u", i ? "," : "",
		                        l->rungs[i].reps);
	}
	probe_info_str(doc, lname(n, sizeof(n), name, "reps"), reps);
	probe_info_str(doc, lname(n, sizeof(n), name, "stopped_by"), l->stopped_by);
	probe_info_str(doc, lname(n, sizeof(n), name, "order"), l->order);
	probe_info_num(doc, lname(n, sizeof(n), name, "rungs"), (double)l->n_rungs);
	if (l->n_rungs) {
		probe_scalar(doc, lname(n, sizeof(n), name, "start_vmas"), x[0], "vmas");
		probe_scalar(doc, lname(n, sizeof(n), name, "max_vmas"), x[l->n_rungs - 1], "vmas");
		probe_scalar(doc, lname(n, sizeof(n), name, "ns_at_max"), y[l->n_rungs - 1], "ns");
		if (call == CALL_RETRY)
			probe_scalar(doc, "plain_ns_at_max",
			             l->rungs[l->n_rungs - 1].median[CALL_PLAIN], "ns");
	}
	if (analysis_growth_fit(x, y, l->n_rungs, &g) < 0) {
		probe_info_str(doc, lname(n, sizeof(n), name, "class"), NULL);
		return;
	}
	probe_scalar(doc, lname(n, sizeof(n), name, "ns_per_vma"), g.b, "ns_per_vma");
	probe_scalar(doc, lname(n, sizeof(n), name, "ns_per_vma_ci_lo"), g.b_ci[0], "ns_per_vma");
	probe_scalar(doc, lname(n, sizeof(n), name, "ns_per_vma_ci_hi"), g.b_ci[1], "ns_per_vma");
	probe_scalar(doc, lname(n, sizeof(n), name, "fixed_ns"), g.a, "ns");
	probe_scalar(doc, lname(n, sizeof(n), name, "rise"), g.rise, "ratio");
	probe_scalar(doc, lname(n, sizeof(n), name, "exponent"), g.exponent, "slope");
	probe_scalar(doc, lname(n, sizeof(n), name, "loglog_slope"), g.loglog, "slope");
	probe_info_str(doc, lname(n, sizeof(n), name, "class"), analysis_class_name(g.cls));
}

/* The names kept from before the map32 document had its ladders: the
 * failing call's log-log slope with its CI, and the retry ladder's VMA
 * range. */
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
			return "fewer than three rungs of a ladder were measured"; /* MAP32_RUNGS_MIN
			                                                            */
	return NULL;
}

/* Both ladders, each with its share of the time left: the retry ladder
 * first (the window as filled), then, its high VMAs gone, the fail ladder. */
static int run_ladders(struct map32_ctx *c, uint64_t target, double ratio, unsigned reps_max,
                       uint64_t seed)
{
	static const struct ladder_ops high = {set_high, vmas_now},
	                               window = {set_window, vmas_in_window};
	struct ladder *r = &c->ladders[LADDER_RETRY], *f = &c->ladders[LADDER_FAIL];
	uint64_t now = clock_ns(), vmas = vmas_now(), others;
	int rc;

	r->deadline = now + (c->deadline > now ? (c->deadline - now) / 2 : 0);
	f->deadline = c->deadline;
	rc = run_ladder(c, r, vmas_now(), target, ratio, reps_max, &high, seed);
	release_high(c);
	if (rc < 0)
		return rc;
	/* The fail ladder's peak is the same: what lies outside the window
	 * plus the VMAs inside it come to `target`. */
	vmas = vmas_now();
	c->window_vmas = vmas_in_window();
	others = vmas - c->window_vmas;
	fill_choose(c);
	return run_ladder(c, f, c->window_vmas, target > others ? target - others : 0, ratio,
	                  reps_max, &window, seed);
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
	c->fill_deadline =
	    t0 + (uint64_t)(fmax(budget * (1 - MAP32_RESERVE), MAP32_FILL_MIN_S) * 1e9);
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
		                 po->quick ? MAP32_QUICK_REPS_MAX : MAP32_REPS_MAX, po->seed);
	release_all(c);
	emit_window(doc, c);
	for (int i = 0; i < N_LADDERS; i++)
		emit_ladder(doc, &c->ladders[i], c->ladders[i].name, c->ladders[i].call);
	emit_ladder(doc, &c->ladders[LADDER_FAIL], "fill", CALL_FILL);
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
