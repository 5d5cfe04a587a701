/*
 * threads: the thread-creation probe. Times every pthread_create while the
 * number of live (parked) threads grows to N, under three stack policies:
 * glibc's own choice, glibc 2.7's MAP_32BIT-then-retry path (`low`) and
 * MAP_STACK (`high`), one ramp of each per round in a random order per
 * round, so that drift of the host does not land on one policy. Reports creates per second, median
 * and p99 per bucket of live threads, the knee where the rate steps down and stays down, the
 * capacity of the MAP_32BIT window it predicts, and where glibc put its own stacks. A good citizen:
 * at most THREADS_RUNNABLE threads of it are runnable at once, while creating and while tearing
 * down.
 */
#include <errno.h>
#include <gnu/libc-version.h>
#include <limits.h>
#include <math.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "analysis.h"
#include "clock.h"
#include "map32bit.h"
#include "probe.h"
#include "stats.h"
#include "sysinfo.h"
#include "units.h"

#define THREADS_DEFAULT_N 4096
#define THREADS_QUICK_N 1024
#define THREADS_BUDGET_S 12.0
#define THREADS_QUICK_BUDGET_S 1.5
#define THREADS_MAX_REPS 5
#define THREADS_QUICK_MAX_REPS 2
/* Untimed creates before each policy's first ramp. */
#define THREADS_WARMUP 16
/* Threads of the probe that may be runnable at once besides the main
 * thread: new ones not yet parked, or parked ones woken to exit. */
#define THREADS_RUNNABLE 2
/* The MAP_32BIT window, 0x40000000-0x80000000 (find_start_end() in the
 * kernels' arch/x86/kernel/sys_x86_64.c). */
#define THREADS_WINDOW_BYTES (MAP32BIT_WINDOW_END - MAP32BIT_WINDOW_BEGIN)
/* Stacks at or above this address are not "low". */
#define THREADS_LOW_LIMIT 0x100000000ull

#ifndef MAP_32BIT
#define MAP_32BIT 0
#endif

/* A stack policy: how the stack of each new thread is found. */
struct policy {
	const char *name;
	int own_stack;   /* 0: glibc allocates; 1: we mmap and pass it */
	int first_flags; /* extra mmap flags of the first attempt */
	int fallback;    /* on failure, retry as glibc 2.7 did */
};

/* `low` is glibc 2.7 on x86-64 (nptl/allocatestack.c with
 * nptl/sysdeps/x86_64/pthreaddef.h): the first mmap asks for PROT_READ |
 * PROT_WRITE with MAP_PRIVATE | MAP_ANONYMOUS | ARCH_MAP_FLAGS (MAP_32BIT);
 * on failure ARCH_RETRY_MMAP asks again for PROT_READ | PROT_WRITE |
 * PROT_EXEC with MAP_PRIVATE | MAP_ANONYMOUS; then the guard page at the
 * low end becomes PROT_NONE. */
static const struct policy policies[] = {
    {"default", 0, 0, 0},
    {"high", 1, 0, 0},
    {"low", 1, MAP_32BIT, 1},
};
#define RETRY_PROT (PROT_READ | PROT_WRITE | PROT_EXEC)

/* The retry's protection: glibc 2.7's RETRY_PROT, until a W^X policy
 * refuses a writable and executable mapping (EPERM from systemd's
 * MemoryDenyWriteExecute= seccomp filter, EACCES from the kernel's own
 * PR_SET_MDWE); then PROT_READ | PROT_WRITE, which
 * costs the same walk: get_unmapped_area() looks for free space the same
 * way whatever the protection. */
static int retry_prot = RETRY_PROT;
#define MAX_POLICIES (sizeof(policies) / sizeof(policies[0]))
/* The policies measured: all, or all but `low` (the last) where MAP_32BIT
 * is not applicable (arm64). */
static size_t n_policies = MAX_POLICIES;
#define N_POLICIES n_policies

/* One live thread, the stack we gave it (NULL for glibc's own) and the
 * word it sleeps on until it is told to exit. */
struct slot {
	pthread_t tid;
	void *map;
	atomic_int park;
};

/* Everything measured for one policy, across its repetitions. */
struct policy_run {
	const struct policy *pol;
	struct analysis_sample *samples;
	size_t n_samples;
	size_t cap;
	unsigned reps;
	uint64_t map32_failures;                    /* in the first ramp */
	uint64_t window_stacks;                     /* stacks MAP_32BIT placed, in the first ramp */
	uint64_t ramp_failures, ramp_window_stacks; /* of the ramp under way */
	uint64_t cost;                              /* ns the first ramp took, release included */
	int done;               /* no more ramps: a limit, an error or the budget */
	size_t live_max;        /* threads alive at the end of the first ramp */
	const char *stopped_by; /* why the first ramp ended */
	uintptr_t stack_lo, stack_hi;
};

struct threads_ctx {
	uint64_t n;         /* threads per ramp, after clamping */
	size_t stack_bytes; /* for our own stacks */
	size_t page;        /* guard size */
	struct slot *slots;
};

/* New threads not yet parked: the main thread waits while there are
 * THREADS_RUNNABLE of them. */
static atomic_int starting;

static void futex_wait(atomic_int *w, int v)
{
	syscall(SYS_futex, w, FUTEX_WAIT_PRIVATE, v, NULL, NULL, 0);
}

static void futex_wake(atomic_int *w)
{
	syscall(SYS_futex, w, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

/* A thread sleeps on its slot's word until that becomes non-zero. */
static void *parked(void *arg)
{
	struct slot *s = arg;

	atomic_fetch_sub(&starting, 1);
	futex_wake(&starting);
	while (!atomic_load_explicit(&s->park, memory_order_acquire))
		futex_wait(&s->park, 0);
	return NULL;
}

/* Waits, untimed, until fewer than THREADS_RUNNABLE new threads are on
 * their way to park. */
static void bound_starting(void)
{
	int v;

	while ((v = atomic_load(&starting)) >= THREADS_RUNNABLE)
		futex_wait(&starting, v);
}

/* Maps a stack with its guard page at the low end, as glibc's
 * allocatestack does: through libc's mmap, the first attempt with the
 * policy's flags, then (for `low`) once more without MAP_32BIT. Every own
 * stack is MAP_STACK, the low one and its retry too (glibc 2.7 did not ask
 * for it), so that the policies differ in address only: since 6.8 (and
 * 6.7.5) MAP_STACK sets VM_NOHUGEPAGE (calc_vm_flag_bits()), and a low stack without it could take
 * a huge page under THP "always" and fault 2 MiB in inside the timed create. */
static int stack_map(const struct threads_ctx *c, const struct policy *p, void **out,
                     struct policy_run *pr)
{
	size_t len = c->stack_bytes + c->page;
	int base = MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK;
	void *m;

	m = mmap(NULL, len, PROT_READ | PROT_WRITE, base | p->first_flags, -1, 0);
	if (m != MAP_FAILED && (p->first_flags & MAP_32BIT))
		pr->ramp_window_stacks++;
	if (m == MAP_FAILED && p->fallback) {
		if (p->first_flags & MAP_32BIT)
			pr->ramp_failures++;
		m = mmap(NULL, len, retry_prot, base, -1, 0);
		if (m == MAP_FAILED && (errno == EPERM || errno == EACCES) &&
		    (retry_prot & PROT_EXEC)) {
			retry_prot = PROT_READ | PROT_WRITE;
			m = mmap(NULL, len, retry_prot, base, -1, 0);
		}
	}
	if (m == MAP_FAILED)
		return -errno;
	if (mprotect(m, c->page, PROT_NONE) < 0) {
		int r = -errno;

		munmap(m, len);
		return r;
	}
	*out = m;
	return 0;
}

/* Creates one parked thread under policy p; the whole cost (stack and
 * clone) is what gets timed. */
static int create_one(const struct threads_ctx *c, struct policy_run *pr, struct slot *s)
{
	const struct policy *p = pr->pol;
	pthread_attr_t attr;
	int r;

	s->map = NULL;
	atomic_store(&s->park, 0);
	if (p->own_stack) {
		r = stack_map(c, p, &s->map, pr);
		if (r < 0)
			return r;
	}
	pthread_attr_init(&attr);
	if (s->map)
		pthread_attr_setstack(&attr, (char *)s->map + c->page, c->stack_bytes);
	atomic_fetch_add(&starting, 1);
	r = -pthread_create(&s->tid, &attr, parked, s);
	pthread_attr_destroy(&attr);
	if (r < 0) {
		atomic_fetch_sub(&starting, 1);
		if (s->map)
			munmap(s->map, c->stack_bytes + c->page);
		s->map = NULL;
	}
	return r;
}

/* Wakes the parked threads THREADS_RUNNABLE at a time, joins each batch
 * and unmaps its stacks, so that the run queue never holds more than a
 * batch of them. */
static void release_all(const struct threads_ctx *c, size_t live)
{
	for (size_t i = 0; i < live; i += THREADS_RUNNABLE) {
		size_t end = i + THREADS_RUNNABLE < live ? i + THREADS_RUNNABLE : live;

		for (size_t k = i; k < end; k++) {
			atomic_store_explicit(&c->slots[k].park, 1, memory_order_release);
			futex_wake(&c->slots[k].park);
		}
		for (size_t k = i; k < end; k++) {
			pthread_join(c->slots[k].tid, NULL);
			if (c->slots[k].map)
				munmap(c->slots[k].map, c->stack_bytes + c->page);
		}
	}
}

static void sample_add(struct policy_run *pr, size_t live, uint64_t ns)
{
	if (pr->n_samples == pr->cap) {
		pr->cap = pr->cap ? pr->cap * 2 : 1024;
		pr->samples = realloc(pr->samples, pr->cap * sizeof(*pr->samples));
		if (!pr->samples) {
			fputs("threads: out of memory\n", stderr);
			abort();
		}
	}
	pr->samples[pr->n_samples].live = (uint32_t)live;
	pr->samples[pr->n_samples].ns = (double)ns;
	pr->n_samples++;
}

/* Where glibc put a default-policy thread's stack. */
static void note_stack(struct policy_run *pr, pthread_t tid)
{
	pthread_attr_t attr;
	void *addr;
	size_t size;

	if (pthread_getattr_np(tid, &attr) != 0)
		return;
	if (pthread_attr_getstack(&attr, &addr, &size) == 0) {
		uintptr_t lo = (uintptr_t)addr, hi = lo + size;

		if (!pr->stack_lo || lo < pr->stack_lo)
			pr->stack_lo = lo;
		if (hi > pr->stack_hi)
			pr->stack_hi = hi;
	}
	pthread_attr_destroy(&attr);
}

static const char *create_error_name(int r)
{
	return r == -EAGAIN ? "eagain" : r == -ENOMEM ? "enomem" : "error";
}

/* One ramp: create threads up to c->n (or until `deadline`), then release
 * them all. Returns how many were alive at the end; *stopped_by says why. */
static size_t ramp(const struct threads_ctx *c, struct policy_run *pr, uint64_t deadline,
                   const char **stopped_by, int *err)
{
	size_t live = 0;

	*stopped_by = "target";
	*err = 0;
	pr->ramp_failures = pr->ramp_window_stacks = 0;
	while (live < c->n) {
		uint64_t t0, t1;
		int r;

		bound_starting();
		t0 = clock_ns();
		r = create_one(c, pr, &c->slots[live]);
		t1 = clock_ns();
		if (r < 0) {
			*stopped_by = create_error_name(r);
			*err = r;
			break;
		}
		sample_add(pr, live, t1 - t0);
		if (!pr->pol->own_stack)
			note_stack(pr, c->slots[live].tid);
		live++;
		if (t1 > deadline && live < c->n) {
			*stopped_by = "budget";
			break;
		}
	}
	release_all(c, live);
	return live;
}

/* A few untimed creates, so that the first bucket measures an empty
 * process rather than a cold one. */
static void warm_up(const struct threads_ctx *c, struct policy_run *pr, int *err)
{
	struct threads_ctx warm = *c;
	size_t saved = pr->n_samples;
	const char *why;

	warm.n = c->n < THREADS_WARMUP ? c->n : THREADS_WARMUP;
	ramp(&warm, pr, UINT64_MAX, &why, err);
	pr->n_samples = saved;
	if (*err) {
		pr->stopped_by = why;
		pr->done = 1;
	}
}

/* One more ramp of a policy, to end by `end`. The first one is always made
 * and keeps its counts; a later one only when the first one's cost fits. */
static void ramp_again(const struct threads_ctx *c, struct policy_run *pr, uint64_t end, int *err)
{
	uint64_t now = clock_ns();
	const char *why;

	if (pr->done)
		return;
	if (!pr->reps) {
		uint64_t share = end > now ? end - now : 0;

		/* A fifth of the share is kept for releasing the threads. */
		pr->live_max = ramp(c, pr, now + share - share / 5, &pr->stopped_by, err);
		pr->map32_failures = pr->ramp_failures;
		pr->window_stacks = pr->ramp_window_stacks;
		pr->cost = clock_ns() - now;
		pr->reps = 1;
		pr->done = strcmp(pr->stopped_by, "target") != 0;
		return;
	}
	if (now + pr->cost > end) {
		pr->done = 1;
		return;
	}
	ramp(c, pr, end - pr->cost / 4, &why, err);
	pr->reps++;
	pr->done = strcmp(why, "target") != 0;
}

/* The policies one ramp each, round after round, while the budget allows,
 * in a fresh random order every round (seeded): drift of the host lands on
 * all of them alike, and no policy always runs first or last. The orders
 * are kept in `orders` ("low,high,default;..."). */
static void run_rounds(const struct threads_ctx *c, struct policy_run *runs, uint64_t end,
                       unsigned max_reps, uint64_t seed, char *orders, size_t olen, int *err)
{
	struct stats_rng rng;
	size_t order[N_POLICIES], used = 0;

	stats_rng_seed(&rng, seed ^ UINT64_C(0x726f756e6473));
	for (size_t i = 0; i < N_POLICIES && !*err; i++) {
		runs[i].pol = &policies[i];
		warm_up(c, &runs[i], err);
		if (*err == -EAGAIN || *err == -ENOMEM)
			*err = 0; /* a limit of the host: reported as stopped_by */
	}
	for (unsigned round = 0; round < max_reps && !*err; round++) {
		uint64_t need = 0;

		/* A later round is made whole or not at all. */
		for (size_t i = 0; i < N_POLICIES && round; i++)
			need += runs[i].done ? 0 : runs[i].cost;
		if (round && clock_ns() + need > end)
			break;
		stats_rng_permutation(&rng, order, N_POLICIES);
		for (size_t k = 0; k < N_POLICIES && !*err; k++) {
			uint64_t now = clock_ns(), left = end > now ? end - now : 0;
			/* The first round shares out what is left among the
			 * policies still to come; later ones end by `end`. */
			uint64_t by = round ? end : now + left / (N_POLICIES - k);

			used +=
			    (size_t)snprintf(orders + used, used < olen ? olen - used : 0, "%s%s",
			                     k       ? ","
			                     : round ? ";"
			                             : "",
			                     policies[order[k]].name);
			ramp_again(c, &runs[order[k]], by, err);
			if (*err == -EAGAIN || *err == -ENOMEM)
				*err = 0;
		}
	}
}

/* "<policy>_<what>" */
static const char *pname(char *buf, size_t len, const struct policy_run *pr, const char *what)
{
	snprintf(buf, len, "%s_%s", pr->pol->name, what);
	return buf;
}

/* The series, scalars and info of one policy. */
static void emit_policy(struct probe_doc *doc, const struct policy_run *pr, size_t width)
{
	struct probe_series *rate, *med, *p99;
	struct analysis_bucket *b;
	struct analysis_rates rates;
	char n[64];
	size_t nb;
	long knee;

	b = calloc(pr->n_samples ? pr->n_samples : 1, sizeof(*b));
	if (!b) {
		fputs("threads: out of memory\n", stderr);
		abort();
	}
	nb = analysis_bucketize(pr->samples, pr->n_samples, width, b, pr->n_samples);
	rate = probe_series_new(doc, pname(n, sizeof(n), pr, "rate"), "threads", "per_s");
	med = probe_series_new(doc, pname(n, sizeof(n), pr, "median_ns"), "threads", "ns");
	p99 = probe_series_new(doc, pname(n, sizeof(n), pr, "p99_ns"), "threads", "ns");
	for (size_t i = 0; i < nb; i++) {
		probe_series_add(rate, b[i].x, b[i].rate);
		probe_series_add(med, b[i].x, b[i].median_ns);
		probe_series_add(p99, b[i].x, b[i].p99_ns);
	}
	if (analysis_rates(b, nb, &rates) == 0) {
		probe_scalar(doc, pname(n, sizeof(n), pr, "first_rate"), rates.first, "per_s");
		probe_scalar(doc, pname(n, sizeof(n), pr, "last_rate"), rates.last, "per_s");
		probe_scalar(doc, pname(n, sizeof(n), pr, "min_rate"), rates.min, "per_s");
		probe_scalar(doc, pname(n, sizeof(n), pr, "steady_rate"), rates.steady, "per_s");
	}
	knee = analysis_knee(b, nb);
	if (knee >= 0) {
		probe_scalar(doc, pname(n, sizeof(n), pr, "knee"), b[knee].x, "threads");
		probe_info_num(doc, n, b[knee].x);
	} else {
		probe_info_str(doc, pname(n, sizeof(n), pr, "knee"), NULL);
	}
	probe_scalar(doc, pname(n, sizeof(n), pr, "map32_failures"), (double)pr->map32_failures,
	             "count");
	if (pr->pol->first_flags & MAP_32BIT)
		probe_scalar(doc, pname(n, sizeof(n), pr, "window_stacks"),
		             (double)pr->window_stacks, "threads");
	probe_info_num(doc, pname(n, sizeof(n), pr, "reps"), pr->reps);
	probe_info_num(doc, pname(n, sizeof(n), pr, "live_max"), (double)pr->live_max);
	probe_info_str(doc, pname(n, sizeof(n), pr, "stopped_by"), pr->stopped_by);
	free(b);
}

/* Where the default policy's stacks landed, and whether that is low. */
static void emit_default_stacks(struct probe_doc *doc, const struct policy_run *pr)
{
	char range[64], lo[24], hi[24];

	if (!pr->stack_hi) {
		probe_info_str(doc, "default_stack_range", NULL);
		return;
	}
	snprintf(lo, sizeof(lo), "0x%lx", (unsigned long)pr->stack_lo);
	snprintf(hi, sizeof(hi), "0x%lx", (unsigned long)pr->stack_hi);
	snprintf(range, sizeof(range), "%s-%s", lo, hi);
	probe_scalar(doc, "default_stack_lo", (double)pr->stack_lo, "address");
	probe_scalar(doc, "default_stack_hi", (double)pr->stack_hi, "address");
	probe_info_str(doc, "default_stack_lo", lo);
	probe_info_str(doc, "default_stack_hi", hi);
	probe_info_str(doc, "default_stack_range", range);
	probe_info_bool(doc, "default_stacks_low", pr->stack_hi <= THREADS_LOW_LIMIT);
	probe_info_str(doc, "glibc", gnu_get_libc_version());
	probe_info_str(doc, "low_retry_prot",
	               retry_prot & PROT_EXEC ? "rwx (glibc 2.7's ARCH_RETRY_MMAP)"
	                                      : "rw: a W^X policy refused rwx; the walk is "
	                                        "the same");
}

/* Clamps the requested thread count by the host's limits and reports the
 * limits, the room each leaves, the clamp and its reason. */
static uint64_t clamp_threads(struct probe_doc *doc, uint64_t requested, size_t stack_bytes,
                              size_t page)
{
	struct sys_limits l;
	struct analysis_room room;
	enum analysis_clamp why;
	long vmas = sys_vma_count();
	uint64_t n;

	sys_limits_read(&l);
	n = analysis_clamp_threads(&l, vmas > 0 ? (uint64_t)vmas : 0, stack_bytes, page, requested,
	                           &room, &why);
	probe_scalar(doc, "max_threads", (double)n, "threads");
	probe_info_num(doc, "requested_threads", (double)requested);
	probe_info_str(doc, "clamp_reason", analysis_clamp_name(why));
	probe_info_num(doc, "room_threads_max",
	               room.threads_max == UINT64_MAX ? NAN : (double)room.threads_max);
	probe_info_num(doc, "room_nproc", room.nproc == UINT64_MAX ? NAN : (double)room.nproc);
	probe_info_num(doc, "room_pids", room.pids == UINT64_MAX ? NAN : (double)room.pids);
	probe_info_num(doc, "room_map_count",
	               room.map_count == UINT64_MAX ? NAN : (double)room.map_count);
	probe_info_num(doc, "room_memory", room.memory == UINT64_MAX ? NAN : (double)room.memory);
	return n;
}

/* Probe-specific options. */
struct threads_opts {
	uint64_t max_threads; /* 0: the default for the run length */
	uint64_t stack_bytes; /* 0: glibc's default */
};

static int parse_u64_range(const char *arg, uint64_t lo, uint64_t hi, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!arg || *arg == '-')
		return -EINVAL;
	errno = 0;
	v = strtoull(arg, &end, 10);
	if (errno || end == arg || *end || v < lo || v > hi)
		return -EINVAL;
	*out = v;
	return 0;
}

static int set_max_threads(const char *arg, void *ctx)
{
	return parse_u64_range(arg, 1, 1000000, &((struct threads_opts *)ctx)->max_threads);
}

static int set_stack_size(const char *arg, void *ctx)
{
	uint64_t v;

	if (units_parse_size(arg, &v) < 0 || v < 65536 || v > (1ull << 30))
		return -EINVAL;
	((struct threads_opts *)ctx)->stack_bytes = v;
	return 0;
}

static void run(struct probe_doc *doc, const struct probe_opts *po, const struct threads_opts *to)
{
	struct threads_ctx c = {0};
	struct policy_run runs[MAX_POLICIES] = {{0}};
	uint64_t requested = to->max_threads, end;
	double budget = po->budget_s > 0 ? po->budget_s
	                : po->quick      ? THREADS_QUICK_BUDGET_S
	                                 : THREADS_BUDGET_S;
	unsigned max_reps = po->quick ? THREADS_QUICK_MAX_REPS : THREADS_MAX_REPS;
	char orders[256] = "";
	int err = 0;

	end = clock_ns() + (uint64_t)(budget * 1e9);
	if (!requested)
		requested = po->quick ? THREADS_QUICK_N : THREADS_DEFAULT_N;
	c.page = (size_t)sysconf(_SC_PAGESIZE);
	c.stack_bytes = to->stack_bytes ? to->stack_bytes : sys_default_stack_size();
	c.stack_bytes = (c.stack_bytes + c.page - 1) / c.page * c.page;
	probe_param_int(doc, "max_threads", (int64_t)requested);
	probe_param_int(doc, "stack_size", (int64_t)c.stack_bytes);
	probe_param_double(doc, "budget_s", budget);
	probe_param_int(doc, "cpu", probe_cpu_param(po));
	probe_scalar(doc, "stack_bytes", (double)c.stack_bytes, "bytes");
	c.n = clamp_threads(doc, requested, c.stack_bytes, c.page);
	if (c.n == 0) {
		probe_status(doc, PROBE_ERROR, "no room for any thread on this host");
		return;
	}
	c.slots = calloc(c.n, sizeof(*c.slots));
	if (!c.slots) {
		fputs("threads: out of memory\n", stderr);
		abort();
	}
	run_rounds(&c, runs, end, max_reps, po->seed, orders, sizeof(orders), &err);
	probe_info_str(doc, "policy_order", orders);
	/* The knee the 2008 kernels predict: where the window is full. */
	probe_scalar(doc, "capacity_predicted",
	             floor((double)THREADS_WINDOW_BYTES / (double)(c.stack_bytes + c.page)),
	             "threads");
	probe_scalar(doc, "bucket_width", (double)analysis_bucket_width(c.n), "threads");
	probe_info_num(doc, "runnable_max", THREADS_RUNNABLE);
	for (size_t i = 0; i < N_POLICIES; i++) {
		if (runs[i].pol)
			emit_policy(doc, &runs[i], analysis_bucket_width(c.n));
		if (runs[i].pol && !runs[i].pol->own_stack)
			emit_default_stacks(doc, &runs[i]);
		free(runs[i].samples);
	}
	free(c.slots);
	if (err) {
		probe_status(doc, PROBE_ERROR, "creating a thread: %s", strerror(-err));
		return;
	}
	for (size_t i = 0; i < N_POLICIES; i++)
		if (!runs[i].reps || !runs[i].live_max) {
			probe_status(
			    doc, PROBE_ERROR, "the %s policy created no thread (stopped by %s)",
			    policies[i].name, runs[i].stopped_by ? runs[i].stopped_by : "error");
			break;
		}
}

int main(int argc, char **argv)
{
	struct threads_opts to = {0};
	const struct probe_opt_ext ext[] = {
	    {"max-threads", "threads to create per policy (default 4096, quick 1024)", 1,
	     set_max_threads, &to},
	    {"stack-size",
	     "stack bytes for the low and high policies, such as 256K (64K to 1G; default: "
	     "glibc's)",
	     1, set_stack_size, &to},
	};
	struct probe_opts po;
	struct probe_doc *doc;
	char what[200];
	int rc;

	if (probe_parse_args(argc, argv,
	                     "Times pthread_create as live threads accumulate, under three stack "
	                     "policies (default, low = MAP_32BIT, high = MAP_STACK).",
	                     &po, ext, sizeof(ext) / sizeof(ext[0])) < 0)
		return 2;
	doc = probe_doc_new("threads");
	probe_param_bool(doc, "quick", po.quick);
	if (po.cpu >= 0 && sys_pin_cpu(po.cpu) < 0) {
		probe_status(doc, PROBE_ERROR, "cannot pin to CPU %d", po.cpu);
	} else if (!map32bit_applicable(what, sizeof(what))) {
		/* default and high run; low, the last policy, does not exist */
		n_policies = MAX_POLICIES - 1;
		probe_info_str(doc, "low_policy", "not applicable");
		probe_info_str(doc, "low_policy_reason", what);
		run(doc, &po, &to);
	} else if (!map32bit_check(what, sizeof(what))) {
		probe_status(doc, PROBE_SKIPPED, "the low policy needs MAP_32BIT, %s", what);
	} else {
		probe_info_str(doc, "map32bit", what);
		run(doc, &po, &to);
	}
	rc = probe_emit(doc);
	probe_doc_free(doc);
	return rc;
}
