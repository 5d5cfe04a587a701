/*
 * ctxsw: the cost of one thread switch when the threads' stacks, and with
 * them the thread descriptors and FS bases, live below 4 GiB (low,
 * MAP_32BIT) or at ordinary high addresses (high, MAP_STACK).
 *
 * Per variant, two threads pinned to one CPU hand a turn to each other
 * through a futex; one round trip is two switches. The variants alternate
 * low, high, low, high...; each sample times the same number of round
 * trips, so "switches_per_pair" is the number of switches timed per variant
 * in each pair. The low/high ratio is the median of the per-pair ratios,
 * which cancels drift that affects both halves of a pair alike. Every
 * sample runs on a fresh pair of threads and stacks, so that where one
 * pair's kernel and user memory happened to land does not bias a run.
 *
 * Each thread reads back its stack (pthread_getattr_np) and FS base
 * (ARCH_GET_FS); a low variant whose FS base is not below 4 GiB, or a high
 * one whose FS base is, makes the run an error.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/futex.h>

#if defined(__x86_64__)
#include <asm/prctl.h>
#endif

#include "clock.h"
#include "probe.h"
#include "stats.h"
#include "sysinfo.h"

#define CTXSW_STACK_BYTES (256u << 10)
#define CTXSW_MIN_PAIRS 15
/* Reaching the minimum number of pairs may take this many budgets. */
#define CTXSW_GIVE_UP 4.0
#define CTXSW_MAX_PAIRS 400
#define CTXSW_BOOT_ITERS 2000
#define CTXSW_LOW_LIMIT (UINT64_C(1) << 32)
/* Where the low stacks are asked for when MAP_32BIT does not exist. */
#define CTXSW_LOW_HINT UINT64_C(0x40000000)

/* Run shapes: the measurement budget and the target length of one sample. */
struct ctxsw_shape {
	double budget_s;
	double sample_s;
	unsigned tsc_ms;
};
static const struct ctxsw_shape shape_default = {3.0, 0.010, 100};
static const struct ctxsw_shape shape_quick = {0.40, 0.005, 20};

/* What one thread of a variant reads back about itself. */
struct ctxsw_self {
	uintptr_t stack_lo, stack_hi; /* from pthread_getattr_np */
	uintptr_t fs_base;            /* ARCH_GET_FS (x86-64) or the thread pointer */
	uintptr_t tcb;                /* pthread_self() */
	uintptr_t sp;                 /* address of a local variable */
	int pin_err;                  /* sys_pin_cpu() result */
};

/* One sample: a fresh pair of threads on fresh stacks, so that where the
 * kernel and the allocator happen to place one pair's memory varies from
 * sample to sample instead of biasing a whole run. */
struct ctxsw_sample {
	int low;
	int cpu;
	uint64_t rounds, warm; /* in */
	void *map[2];
	size_t map_len;
	pthread_t th[2];
	int started[2];
	/* Futex words. */
	int turn; /* whose turn it is: 0 (leader) or 1 (follower) */
	int quit;
	/* Out. */
	struct ctxsw_self self[2];
	uint64_t ns, cycles;
	long nsw; /* times the leader left the CPU during the timed rounds */
};

struct ctxsw_variant {
	const char *name;
	int low;
	int cpu;
	int placed; /* self[] holds the first sample's read-back */
	struct ctxsw_self self[2];
	uint64_t ns, cycles; /* the last sample */
	long nsw;
};

static long futex(int *word, int op, int val)
{
	return syscall(SYS_futex, word, op, val, NULL, NULL, 0);
}

static void store_wake(int *w, int val)
{
	__atomic_store_n(w, val, __ATOMIC_RELEASE);
	futex(w, FUTEX_WAKE_PRIVATE, 1);
}

/* Sleeps until *w == val. */
static void wait_equal(int *w, int val)
{
	int now;

	while ((now = __atomic_load_n(w, __ATOMIC_ACQUIRE)) != val)
		futex(w, FUTEX_WAIT_PRIVATE, now);
}

static uintptr_t read_fs_base(void)
{
#if defined(__x86_64__)
	unsigned long fs = 0;

	if (syscall(SYS_arch_prctl, ARCH_GET_FS, &fs) == 0)
		return (uintptr_t)fs;
#endif
	return (uintptr_t)pthread_self();
}

static void read_self(struct ctxsw_self *s, int cpu)
{
	pthread_attr_t a;
	void *addr;
	size_t size;
	volatile int local = 0;

	s->pin_err = sys_pin_cpu(cpu);
	if (pthread_getattr_np(pthread_self(), &a) == 0) {
		if (pthread_attr_getstack(&a, &addr, &size) == 0) {
			s->stack_lo = (uintptr_t)addr;
			s->stack_hi = (uintptr_t)addr + size;
		}
		pthread_attr_destroy(&a);
	}
	s->fs_base = read_fs_base();
	s->tcb = (uintptr_t)pthread_self();
	s->sp = (uintptr_t)&local;
}

static void round_trip(struct ctxsw_sample *x)
{
	store_wake(&x->turn, 1);
	wait_equal(&x->turn, 0);
}

/* Times the calling thread was switched out, voluntarily or not. */
static long switches_out(void)
{
	struct rusage ru;

	return getrusage(RUSAGE_THREAD, &ru) == 0 ? ru.ru_nvcsw + ru.ru_nivcsw : 0;
}

static void *leader_main(void *p)
{
	struct ctxsw_sample *x = p;
	uint64_t t0, t1, c0, c1;
	long s0;

	read_self(&x->self[0], x->cpu);
	for (uint64_t i = 0; i < x->warm; i++)
		round_trip(x);
	s0 = switches_out();
	t0 = clock_ns();
	c0 = clock_cycles();
	for (uint64_t i = 0; i < x->rounds; i++)
		round_trip(x);
	c1 = clock_cycles();
	t1 = clock_ns();
	x->nsw = switches_out() - s0;
	x->ns = t1 - t0;
	x->cycles = c1 - c0;
	__atomic_store_n(&x->quit, 1, __ATOMIC_RELEASE);
	store_wake(&x->turn, 1);
	return NULL;
}

static void *follower_main(void *p)
{
	struct ctxsw_sample *x = p;

	read_self(&x->self[1], x->cpu);
	for (;;) {
		wait_equal(&x->turn, 1);
		if (__atomic_load_n(&x->quit, __ATOMIC_ACQUIRE))
			return NULL;
		store_wake(&x->turn, 0);
	}
}

/* Maps one stack; the lowest page is a guard. */
static void *map_stack(int low, unsigned k, size_t len)
{
	int flags = MAP_PRIVATE | MAP_ANONYMOUS;
	void *hint = NULL, *p;

	if (low) {
#if defined(__x86_64__)
		flags |= MAP_32BIT;
#else
		flags |= MAP_STACK;
		hint = (void *)(uintptr_t)(CTXSW_LOW_HINT + (uint64_t)k * len);
#endif
	} else {
		flags |= MAP_STACK;
	}
	(void)k;
	p = mmap(hint, len, PROT_READ | PROT_WRITE, flags, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	mprotect(p, (size_t)sysconf(_SC_PAGESIZE), PROT_NONE);
	return p;
}

/* Maps the stacks, starts the follower, then the leader, and waits for
 * both. Returns 0, or -errno with the reason in why. */
static int sample_run(struct ctxsw_sample *x, char *why, size_t whylen)
{
	void *(*const fn[2])(void *) = {leader_main, follower_main};
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	int r = 0;

	x->map_len = CTXSW_STACK_BYTES;
	for (int i = 1; i >= 0; i--) {
		pthread_attr_t attr;

		x->map[i] = map_stack(x->low, (unsigned)i, x->map_len);
		if (!x->map[i]) {
			r = -errno;
			snprintf(why, whylen, "mmap of a %s stack (%s) failed: %s",
			         x->low ? "low" : "high", x->low ? "MAP_32BIT" : "MAP_STACK",
			         strerror(-r));
			break;
		}
		pthread_attr_init(&attr);
		r = pthread_attr_setstack(&attr, (char *)x->map[i] + page, x->map_len - page);
		if (r == 0)
			r = pthread_create(&x->th[i], &attr, fn[i], x);
		pthread_attr_destroy(&attr);
		if (r) {
			snprintf(why, whylen, "cannot start a thread: %s", strerror(r));
			r = -r;
			break;
		}
		x->started[i] = 1;
	}
	if (r < 0 && x->started[1]) {
		/* The leader never ran: release the follower. */
		__atomic_store_n(&x->quit, 1, __ATOMIC_RELEASE);
		store_wake(&x->turn, 1);
	}
	for (int i = 0; i < 2; i++) {
		if (x->started[i])
			pthread_join(x->th[i], NULL);
		if (x->map[i])
			munmap(x->map[i], x->map_len);
	}
	return r;
}

/* Checks that a sample got the placement its variant asks for. */
static int check_placement(const struct ctxsw_sample *x, char *why, size_t whylen)
{
	for (int i = 0; i < 2; i++) {
		const struct ctxsw_self *s = &x->self[i];

		if (s->pin_err) {
			snprintf(why, whylen, "cannot pin the threads to CPU %d: %s", x->cpu,
			         strerror(-s->pin_err));
			return -EINVAL;
		}
		if (x->low && (uint64_t)s->fs_base >= CTXSW_LOW_LIMIT) {
			snprintf(why, whylen,
			         "the low variant did not get a low FS base: 0x%" PRIxPTR
			         " (stack 0x%" PRIxPTR ")",
			         s->fs_base, s->stack_lo);
			return -EINVAL;
		}
		if (!x->low && (uint64_t)s->fs_base < CTXSW_LOW_LIMIT) {
			snprintf(why, whylen, "the high variant got a low FS base: 0x%" PRIxPTR,
			         s->fs_base);
			return -EINVAL;
		}
	}
	return 0;
}

/* Times `rounds` round trips (after `warm` untimed ones) on a fresh pair of
 * threads of variant v. */
static int variant_sample(struct ctxsw_variant *v, uint64_t rounds, uint64_t warm, char *why,
                          size_t whylen)
{
	struct ctxsw_sample x = {.low = v->low, .cpu = v->cpu, .rounds = rounds, .warm = warm};
	int r = sample_run(&x, why, whylen);

	if (r < 0)
		return r;
	if (!v->placed) {
		memcpy(v->self, x.self, sizeof(v->self));
		v->placed = 1;
	}
	r = check_placement(&x, why, whylen);
	v->ns = x.ns;
	v->cycles = x.cycles;
	v->nsw = x.nsw;
	return r;
}

static void hex_info(struct probe_doc *doc, const char *name, uintptr_t v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "0x%" PRIxPTR, v);
	probe_info_str(doc, name, buf);
}

static void report_placement(struct probe_doc *doc, const struct ctxsw_variant *v)
{
	const char *suffix[2] = {"", "_b"};
	char name[64];

	for (int i = 0; i < 2; i++) {
		const struct ctxsw_self *s = &v->self[i];

		snprintf(name, sizeof(name), "%s_stack%s", v->name, suffix[i]);
		hex_info(doc, name, s->stack_lo);
		if (i == 0)
			probe_scalar(doc, name, (double)s->stack_lo, "address");
		snprintf(name, sizeof(name), "%s_fs_base%s", v->name, suffix[i]);
		hex_info(doc, name, s->fs_base);
		if (i == 0)
			probe_scalar(doc, name, (double)s->fs_base, "address");
		snprintf(name, sizeof(name), "%s_stack_end%s", v->name, suffix[i]);
		hex_info(doc, name, s->stack_hi);
		snprintf(name, sizeof(name), "%s_fs_in_stack%s", v->name, suffix[i]);
		probe_info_bool(doc, name, s->fs_base >= s->stack_lo && s->fs_base < s->stack_hi);
		snprintf(name, sizeof(name), "%s_sp_in_stack%s", v->name, suffix[i]);
		probe_info_bool(doc, name, s->sp >= s->stack_lo && s->sp < s->stack_hi);
		/* glibc's thread descriptor is what the FS base points at. */
		snprintf(name, sizeof(name), "%s_fs_is_self%s", v->name, suffix[i]);
		probe_info_bool(doc, name, s->fs_base == s->tcb);
	}
}

/* Per-switch samples of both variants, pair by pair. */
struct ctxsw_samples {
	size_t n, cap;
	double *low_ns, *high_ns, *low_cyc, *high_cyc;
	long low_nsw, high_nsw;
};

static void samples_alloc(struct ctxsw_samples *s, size_t cap)
{
	s->cap = cap;
	s->n = 0;
	s->low_ns = calloc(cap, sizeof(double));
	s->high_ns = calloc(cap, sizeof(double));
	s->low_cyc = calloc(cap, sizeof(double));
	s->high_cyc = calloc(cap, sizeof(double));
	if (!s->low_ns || !s->high_ns || !s->low_cyc || !s->high_cyc) {
		fputs("ctxsw: out of memory\n", stderr);
		abort();
	}
}

static void samples_free(struct ctxsw_samples *s)
{
	free(s->low_ns);
	free(s->high_ns);
	free(s->low_cyc);
	free(s->high_cyc);
}

/* Finds how many round trips fill one sample: doubles the count until a
 * sample of each variant lasts at least 2 ms (this is also the warm-up).
 * Returns the count, or 0 with the reason in why. */
static uint64_t calibrate_rounds(struct ctxsw_variant *low, struct ctxsw_variant *high,
                                 double sample_s, char *why, size_t whylen)
{
	uint64_t rounds = 64, r;
	double per_rt;

	for (;;) {
		if (variant_sample(low, rounds, 16, why, whylen) < 0 ||
		    variant_sample(high, rounds, 16, why, whylen) < 0)
			return 0;
		if (low->ns >= 2000000 && high->ns >= 2000000)
			break;
		if (rounds >= (UINT64_C(1) << 24))
			break;
		rounds *= 2;
	}
	per_rt = (double)(low->ns > high->ns ? low->ns : high->ns) / (double)rounds;
	r = (uint64_t)(sample_s * 1e9 / per_rt);
	if (r < 100)
		r = 100;
	if (r > 10000000)
		r = 10000000;
	return r;
}

/* Alternates low and high samples until the budget is spent (at least
 * CTXSW_MIN_PAIRS pairs). Returns 0 or -errno with the reason in why. */
static int measure(struct ctxsw_variant *low, struct ctxsw_variant *high,
                   const struct ctxsw_shape *sh, struct ctxsw_samples *s, uint64_t rounds,
                   char *why, size_t whylen)
{
	uint64_t warm = rounds / 16 + 16, t0 = clock_ns();
	double sw = 2.0 * (double)rounds;
	int r;

	for (size_t i = 0; i < s->cap; i++) {
		double spent = (double)(clock_ns() - t0) / 1e9;

		/* Stops once the next pair would overrun the budget; a busy
		 * host that stretches samples ends with the minimum, and one
		 * too busy to reach it gives up rather than be killed. */
		if (i >= CTXSW_MIN_PAIRS && spent * (double)(i + 1) / (double)i > sh->budget_s)
			break;
		if (spent > CTXSW_GIVE_UP * sh->budget_s) {
			snprintf(why, whylen,
			         "only %zu of the %d pairs needed in %.3g s (budget %.3g s): the "
			         "host is too busy or the budget too short",
			         i, CTXSW_MIN_PAIRS, spent, sh->budget_s);
			return -EBUSY;
		}
		r = variant_sample(low, rounds, warm, why, whylen);
		if (r == 0)
			r = variant_sample(high, rounds, warm, why, whylen);
		if (r < 0)
			return r;
		s->low_ns[i] = (double)low->ns / sw;
		s->high_ns[i] = (double)high->ns / sw;
		s->low_cyc[i] = (double)low->cycles / sw;
		s->high_cyc[i] = (double)high->cycles / sw;
		s->low_nsw += low->nsw;
		s->high_nsw += high->nsw;
		s->n = i + 1;
	}
	return 0;
}

/* The median, MAD and bootstrap CI of one variant. */
static void report_variant(struct probe_doc *doc, const char *name, const double *ns,
                           const double *cyc, size_t n, uint64_t seed)
{
	char key[64];
	double ci[2];

	snprintf(key, sizeof(key), "%s_ns", name);
	probe_scalar(doc, key, stats_median(ns, n), "ns");
	if (clock_have_tsc()) {
		snprintf(key, sizeof(key), "%s_cycles", name);
		probe_scalar(doc, key, stats_median(cyc, n), "cycles");
		snprintf(key, sizeof(key), "%s_mad_cycles", name);
		probe_scalar(doc, key, stats_mad(cyc, n), "cycles");
	}
	snprintf(key, sizeof(key), "%s_mad_ns", name);
	probe_scalar(doc, key, stats_mad(ns, n), "ns");
	if (stats_bootstrap_median_ci(ns, n, CTXSW_BOOT_ITERS, seed, ci) == 0) {
		snprintf(key, sizeof(key), "%s_ci_lo", name);
		probe_scalar(doc, key, ci[0], "ns");
		snprintf(key, sizeof(key), "%s_ci_hi", name);
		probe_scalar(doc, key, ci[1], "ns");
	}
}

static void report(struct probe_doc *doc, const struct ctxsw_samples *s, uint64_t rounds,
                   uint64_t seed)
{
	struct probe_series *ser;
	double ratio, ci[2];

	report_variant(doc, "low", s->low_ns, s->low_cyc, s->n, seed);
	report_variant(doc, "high", s->high_ns, s->high_cyc, s->n, seed + 1);
	if (stats_paired_ratio(s->low_ns, s->high_ns, s->n, CTXSW_BOOT_ITERS, seed + 2, &ratio,
	                       ci) == 0) {
		probe_scalar(doc, "ratio", ratio, "ratio");
		probe_scalar(doc, "ratio_ci_lo", ci[0], "ratio");
		probe_scalar(doc, "ratio_ci_hi", ci[1], "ratio");
	}
	probe_scalar(doc, "pairs", (double)s->n, "count");
	probe_scalar(doc, "switches_per_pair", 2.0 * (double)rounds, "count");
	ser = probe_series_new(doc, "pair_ratio", "count", "ratio");
	for (size_t i = 0; i < s->n; i++)
		probe_series_add(ser, (double)i, s->low_ns[i] / s->high_ns[i]);
	probe_info_num(doc, "mann_whitney_p",
	               stats_mann_whitney_p(s->low_ns, s->n, s->high_ns, s->n));
	/* The leader leaves the CPU once per round trip (blocking, or
	 * preempted by the follower it woke); about 1.0 here shows that every
	 * hand-over really was a switch. */
	probe_info_num(doc, "low_leader_switches_per_round",
	               (double)s->low_nsw / ((double)rounds * (double)s->n));
	probe_info_num(doc, "high_leader_switches_per_round",
	               (double)s->high_nsw / ((double)rounds * (double)s->n));
}

static int fsgsbase_enabled(void)
{
#if defined(__x86_64__)
	return (getauxval(AT_HWCAP2) & (1ul << 1)) != 0; /* HWCAP2_FSGSBASE */
#else
	return 0;
#endif
}

/* Runs the main thread on another allowed CPU when there is one, so that
 * starting a sample does not share the measured CPU. */
static int pin_main_elsewhere(int cpu)
{
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set) < 0)
		return -errno;
	for (int i = 0; i < CPU_SETSIZE; i++)
		if (i != cpu && CPU_ISSET(i, &set))
			return sys_pin_cpu(i) == 0 ? i : -EINVAL;
	return -ENODEV;
}

static void run(struct probe_doc *doc, const struct probe_opts *o, const struct ctxsw_shape *sh)
{
	struct ctxsw_variant low = {.name = "low", .low = 1}, high = {.name = "high"};
	struct ctxsw_samples s = {0};
	char why[256];
	uint64_t rounds;
	int main_cpu, cpu = o->cpu >= 0 ? o->cpu : sys_first_allowed_cpu();

	if (cpu < 0) {
		probe_status(doc, PROBE_ERROR, "cannot read the CPU affinity: %s", strerror(-cpu));
		return;
	}
	low.cpu = high.cpu = cpu;
	probe_param_int(doc, "cpu", cpu);
	main_cpu = pin_main_elsewhere(cpu);
	probe_info_num(doc, "main_cpu", main_cpu >= 0 ? main_cpu : NAN);
	samples_alloc(&s, CTXSW_MAX_PAIRS);
	rounds = calibrate_rounds(&low, &high, sh->sample_s, why, sizeof(why));
	if (rounds == 0 || measure(&low, &high, sh, &s, rounds, why, sizeof(why)) < 0)
		probe_status(doc, PROBE_ERROR, "%s", why);
	else
		report(doc, &s, rounds, o->seed);
	if (low.placed)
		report_placement(doc, &low);
	if (high.placed)
		report_placement(doc, &high);
	samples_free(&s);
}

int main(int argc, char **argv)
{
	struct probe_opts o;
	struct ctxsw_shape sh;
	struct probe_doc *doc;
	int rc;

	if (probe_parse_args(argc, argv,
	                     "Times a futex hand-over between two threads pinned to one CPU, with "
	                     "low (MAP_32BIT) and high (MAP_STACK) thread stacks.",
	                     &o, NULL, 0) < 0)
		return 2;
	sh = o.quick ? shape_quick : shape_default;
	if (o.budget_s > 0)
		sh.budget_s = o.budget_s;
	doc = probe_doc_new("ctxsw");
	probe_param_bool(doc, "quick", o.quick);
	probe_param_int(doc, "seed", (int64_t)o.seed);
	probe_param_int(doc, "cpu", o.cpu);
	probe_param_double(doc, "budget_s", sh.budget_s);
	probe_param_double(doc, "sample_s", sh.sample_s);
	probe_param_int(doc, "stack_bytes", CTXSW_STACK_BYTES);
	probe_param_int(doc, "bootstrap_iters", CTXSW_BOOT_ITERS);
	probe_scalar(doc, "fsgsbase", fsgsbase_enabled(), "bool");
	probe_scalar(doc, "tsc_hz", clock_tsc_hz(sh.tsc_ms), "hz");
#if defined(__x86_64__)
	probe_info_str(doc, "low_mapping", "MAP_32BIT");
	probe_info_str(doc, "fs_base_read", "arch_prctl(ARCH_GET_FS)");
#else
	probe_info_str(doc, "low_mapping", "address hint 0x40000000");
	probe_info_str(doc, "fs_base_read", "pthread_self()");
#endif
	run(doc, &o, &sh);
	rc = probe_emit(doc);
	probe_doc_free(doc);
	return rc;
}
