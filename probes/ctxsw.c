/*
 * ctxsw: the cost of one thread switch, and why it is what it is. Four
 * arms of two threads pinned to one CPU, handing a turn to each other
 * through a futex (one round trip is two switches):
 *   low       stacks, and with them the TCBs and FS bases, below 4 GiB
 *             (MAP_32BIT);
 *   high      ordinary MAP_STACK stacks;
 *   aa        high again: the A/A control, whose ratio to high must hold
 *             1.0 unless the design is biased;
 *   selector  low stacks whose threads load FS from a 32-bit segment
 *             descriptor based at their own TCB (probes/lib/fsseg.c), so
 *             that the kernel switches FS by loading a selector: the path
 *             kernels before ~4.7 took by themselves for bases below 4 GiB.
 * Since ~4.7 ARCH_SET_FS stores any base and the switch writes it with
 * wrfsbase or wrmsr, so low and high take the same path by construction;
 * the selector arm measures what the old path costs on this CPU.
 *
 * Each block times one sample of every arm, in a random order per block
 * (seeded), on fresh threads and stacks. The ratios X/high are medians of
 * per-block ratios, which cancel drift common to a block, with
 * distribution-free (sign-test) CIs; equivalence within a margin is read from the 90% CI (a
 * TOST at alpha = 0.05) and backed by
 * a paired TOST, differences by a Wilcoxon signed-rank test.
 *
 * A ring series then passes one token around 2..64 threads on the CPU: ns
 * per hop (one pass of the token), and the context switches a hop took,
 * counted from each ring thread's schedstat (from 4 threads on a woken
 * thread may preempt its waker, which must run again to sleep: more than
 * one switch per hop), so that a rise with the ring's size is split into
 * extra switches and dearer ones (cache and TLB pressure). Cycles come from per-thread
 * core-cycle counters where perf allows, else from the TSC.
 *
 * Each thread reads back its stack, FS base and FS selector; a thread
 * whose placement differs from its arm's makes the run an error.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__x86_64__)
#include <asm/prctl.h>
#endif

#include "clock.h"
#include "pmu.h"
#include "fsseg.h"
#include "futexw.h"
#include "isolate.h"
#include "placement.h"
#include "probe.h"
#include "stats.h"
#include "sysinfo.h"

#include "ctxswp.h"

static const int rings_default[] = {2, 4, 8, 16, 32, 64};
static const int rings_quick[] = {2, 8, 64};
static const struct ctxsw_shape shape_default = {4.5, 0.008, 100, rings_default, 6, 0.015, 3};
static const struct ctxsw_shape shape_quick = {0.55, 0.003, 20, rings_quick, 3, 0.004, 1};

/* The arms, in the order of the per-arm arrays. The selector arm runs in
 * a child process, sample by sample; `child`, high stacks sampled the same
 * way, is its control: what a forked child costs against the parent lands
 * on both, and the selector is read against it too. */
enum ctxsw_arm { ARM_LOW, ARM_HIGH, ARM_AA, ARM_SEL, ARM_CHILD, N_ARMS };
static const struct {
	const char *name;
	int low, sel, child;
} arm_desc[N_ARMS] = {
    [ARM_LOW] = {"low", 1, 0, 0},      [ARM_HIGH] = {"high", 0, 0, 0},   [ARM_AA] = {"aa", 0, 0, 0},
    [ARM_SEL] = {"selector", 1, 1, 1}, [ARM_CHILD] = {"child", 0, 0, 1},
};

/* One sample: a fresh pair of threads on fresh stacks, so that where the
 * kernel and the allocator happen to place one pair's memory varies from
 * sample to sample instead of biasing a whole run. */
struct ctxsw_sample {
	const struct ctxsw_env *env;
	int low, sel;
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
	int low, sel, child;
	int placed; /* self[] holds the first sample's read-back */
	struct ctxsw_self self[2];
	uint64_t ns, cycles; /* the last sample */
	long nsw;
};

static uintptr_t read_fs_base(void)
{
#if defined(__x86_64__)
	unsigned long fs = 0;

	if (syscall(SYS_arch_prctl, ARCH_GET_FS, &fs) == 0)
		return (uintptr_t)fs;
#endif
	return (uintptr_t)pthread_self();
}

/* Pins the calling thread, loads its FS selector for a selector arm
 * (`slot` picks the LDT entry), opens its cycle counter, and reads back
 * where everything landed. */
void ctxsw_read_self(struct ctxsw_self *s, const struct ctxsw_env *env, int sel, unsigned slot)
{
	pthread_attr_t a;
	void *addr;
	size_t size;
	volatile int local = 0;

	s->pin_err = sys_pin_cpu(env->cpu);
	s->sel_err = sel ? fsseg_load(&env->seg, slot) : 0;
	if (pthread_getattr_np(pthread_self(), &a) == 0) {
		if (pthread_attr_getstack(&a, &addr, &size) == 0) {
			s->stack_lo = (uintptr_t)addr;
			s->stack_hi = (uintptr_t)addr + size;
		}
		pthread_attr_destroy(&a);
	}
	s->fs_base = read_fs_base();
	s->fs_sel = fsseg_current();
	s->tcb = (uintptr_t)pthread_self();
	s->sp = (uintptr_t)&local;
	s->cyc_fd = env->perf ? cyc_open() : -ENOENT;
}

/* Cycles so far: the sum of both threads' core-cycle counters, or the
 * TSC. */
static uint64_t sample_cycles(const struct ctxsw_sample *x)
{
	uint64_t sum = 0, v;

	if (!x->env->perf)
		return clock_cycles();
	for (int i = 0; i < 2; i++)
		if (x->self[i].cyc_fd >= 0 && cyc_read(x->self[i].cyc_fd, &v) == 0)
			sum += v;
	return sum;
}

static void round_trip(struct ctxsw_sample *x)
{
	futexw_store_wake(&x->turn, 1);
	futexw_wait_equal(&x->turn, 0);
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

	ctxsw_read_self(&x->self[0], x->env, x->sel, 0);
	/* The follower has read itself back once it answers the first turn. */
	for (uint64_t i = 0; i < x->warm; i++)
		round_trip(x);
	s0 = switches_out();
	c0 = sample_cycles(x);
	t0 = clock_ns();
	for (uint64_t i = 0; i < x->rounds; i++)
		round_trip(x);
	t1 = clock_ns();
	c1 = sample_cycles(x);
	x->nsw = switches_out() - s0;
	x->ns = t1 - t0;
	x->cycles = c1 - c0;
	__atomic_store_n(&x->quit, 1, __ATOMIC_RELEASE);
	futexw_store_wake(&x->turn, 1);
	return NULL;
}

static void *follower_main(void *p)
{
	struct ctxsw_sample *x = p;

	ctxsw_read_self(&x->self[1], x->env, x->sel, 1);
	for (;;) {
		futexw_wait_equal(&x->turn, 1);
		if (__atomic_load_n(&x->quit, __ATOMIC_ACQUIRE))
			return NULL;
		futexw_store_wake(&x->turn, 0);
	}
}

/* Maps one stack; the lowest page is a guard. Every stack is MAP_STACK,
 * low ones too, so that the arms differ in address only: since 6.8 (and
 * 6.7.5) MAP_STACK also sets VM_NOHUGEPAGE (calc_vm_flag_bits()), and a low stack without it could
 * be backed by a huge page under THP "always" and fault 2 MiB in on its first touch. */
static void *map_stack(int low, unsigned k, size_t len)
{
	int flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK;
	void *hint = NULL, *p;

	if (low) {
#if defined(__x86_64__)
		flags |= MAP_32BIT;
#else
		hint = (void *)(uintptr_t)(CTXSW_LOW_HINT + (uint64_t)k * len);
#endif
	}
	(void)k;
	p = mmap(hint, len, PROT_READ | PROT_WRITE, flags, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	mprotect(p, (size_t)sysconf(_SC_PAGESIZE), PROT_NONE);
	return p;
}

/* Starts a thread on a fresh stack of its own. 0 or -errno with the
 * reason in why; *map is set whenever the stack was mapped. */
int ctxsw_start_on_stack(pthread_t *th, void **map, size_t len, int low, unsigned k,
                         void *(*fn)(void *), void *arg, char *why, size_t whylen)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	pthread_attr_t attr;
	int r;

	*map = map_stack(low, k, len);
	if (!*map) {
		r = errno;
		snprintf(why, whylen, "mmap of a %s stack (%s) failed: %s", low ? "low" : "high",
		         low ? "MAP_32BIT" : "MAP_STACK", strerror(r));
		return -r;
	}
	pthread_attr_init(&attr);
	/* glibc puts the TCB, and so the FS base, at the top of this stack. */
	r = pthread_attr_setstack(&attr, (char *)*map + page, len - page);
	if (r == 0)
		r = pthread_create(th, &attr, fn, arg);
	pthread_attr_destroy(&attr);
	if (r)
		snprintf(why, whylen, "cannot start a thread: %s", strerror(r));
	return -r;
}

/* Maps the stacks, starts the follower, then the leader, and waits for
 * both. Returns 0, or -errno with the reason in why. */
static int sample_run(struct ctxsw_sample *x, char *why, size_t whylen)
{
	void *(*const fn[2])(void *) = {leader_main, follower_main};
	int r = 0;

	x->map_len = CTXSW_STACK_BYTES;
	for (int i = 1; i >= 0 && r == 0; i--) {
		r = ctxsw_start_on_stack(&x->th[i], &x->map[i], x->map_len, x->low, (unsigned)i,
		                         fn[i], x, why, whylen);
		x->started[i] = r == 0;
	}
	if (r < 0 && x->started[1]) {
		/* The leader never ran: release the follower. */
		__atomic_store_n(&x->quit, 1, __ATOMIC_RELEASE);
		futexw_store_wake(&x->turn, 1);
	}
	for (int i = 0; i < 2; i++) {
		if (x->started[i])
			pthread_join(x->th[i], NULL);
		if (x->self[i].cyc_fd >= 0)
			close(x->self[i].cyc_fd);
		if (x->map[i])
			munmap(x->map[i], x->map_len);
	}
	return r;
}

/* Checks that one thread got the placement its arm asks for. */
static int check_self(const struct ctxsw_self *s, int cpu, int low, int sel, char *why,
                      size_t whylen)
{
	if (s->pin_err) {
		snprintf(why, whylen, "cannot pin the threads to CPU %d: %s", cpu,
		         strerror(-s->pin_err));
		return -EINVAL;
	}
	if (sel && s->sel_err < 0) {
		snprintf(why, whylen, "cannot load an FS selector in a selector thread: %s",
		         strerror(-s->sel_err));
		return -EINVAL;
	}
	if (sel ? s->fs_sel != (unsigned)s->sel_err || s->fs_base != s->tcb : s->fs_sel != 0) {
		snprintf(why, whylen,
		         "a %s thread has FS selector 0x%x and FS base 0x%" PRIxPTR
		         " (TCB 0x%" PRIxPTR ")",
		         sel ? "selector" : "plain", s->fs_sel, s->fs_base, s->tcb);
		return -EINVAL;
	}
	if (low && (uint64_t)s->fs_base >= CTXSW_LOW_LIMIT) {
		snprintf(why, whylen,
		         "the low variant did not get a low FS base: 0x%" PRIxPTR
		         " (stack 0x%" PRIxPTR ")",
		         s->fs_base, s->stack_lo);
		return -EINVAL;
	}
	if (!low && (uint64_t)s->fs_base < CTXSW_LOW_LIMIT) {
		snprintf(why, whylen, "the high variant got a low FS base: 0x%" PRIxPTR,
		         s->fs_base);
		return -EINVAL;
	}
	return 0;
}

/* Times `rounds` round trips (after `warm` untimed ones) on a fresh pair of
 * threads of variant v. */
static int variant_sample(const struct ctxsw_env *env, struct ctxsw_variant *v, uint64_t rounds,
                          uint64_t warm, char *why, size_t whylen)
{
	struct ctxsw_sample x = {
	    .env = env, .low = v->low, .sel = v->sel, .rounds = rounds, .warm = warm};
	int r = sample_run(&x, why, whylen);

	if (r < 0)
		return r;
	if (!v->placed) {
		memcpy(v->self, x.self, sizeof(v->self));
		v->placed = 1;
	}
	for (int i = 0; i < 2 && r == 0; i++)
		r = check_self(&x.self[i], env->cpu, v->low, v->sel, why, whylen);
	v->ns = x.ns;
	v->cycles = x.cycles;
	v->nsw = x.nsw;
	return r;
}

/* The selector arm runs in a child process of its own, sample by sample:
 * a host may fault on a selector long after the probe proved it loads (a
 * migration, a hypervisor that drops the LDT), and that must cost the arm,
 * not the run. */
struct sel_job {
	const struct ctxsw_env *env;
	struct ctxsw_variant v;
	uint64_t rounds, warm;
};

struct sel_result {
	int r;
	struct ctxsw_variant v;
	char why[400];
};

static int sel_child(int fd, void *arg)
{
	struct sel_job *j = arg;
	struct sel_result res = {.v = j->v};

	res.r = variant_sample(j->env, &res.v, j->rounds, j->warm, res.why, sizeof(res.why));
	return isolate_send(fd, &res, sizeof(res)) < 0 ? 2 : 0;
}

/* Says how an isolated child of the selector arm ended, unless it ended
 * cleanly with a whole answer; then returns 0. */
int ctxsw_child_failed(int r, const struct isolate_end *end, size_t want, char *why, size_t whylen)
{
	char how[96];

	if (r < 0) {
		snprintf(why, whylen, "cannot start the selector arm's process: %s", strerror(-r));
		return r;
	}
	if (end->got == want && isolate_clean(end))
		return 0;
	snprintf(why, whylen, "the selector arm's process %s",
	         isolate_describe(end, how, sizeof(how)));
	return -ECHILD;
}

/* variant_sample, in a child process for the selector arm and its
 * control. */
static int arm_sample(const struct ctxsw_env *env, struct ctxsw_variant *v, uint64_t rounds,
                      uint64_t warm, char *why, size_t whylen)
{
	struct sel_job j = {env, *v, rounds, warm};
	struct sel_result res;
	struct isolate_end end;
	int r;

	if (!v->child)
		return variant_sample(env, v, rounds, warm, why, whylen);
	r = isolate_run(sel_child, &j, &res, sizeof(res), env->timeout_ms, &end);
	r = ctxsw_child_failed(r, &end, sizeof(res), why, whylen);
	if (r < 0)
		return r;
	*v = res.v;
	if (res.r < 0)
		snprintf(why, whylen, "%s", res.why);
	return res.r;
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
		snprintf(name, sizeof(name), "%s_fs_selector%s", v->name, suffix[i]);
		hex_info(doc, name, s->fs_sel);
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

/* Per-switch samples of every arm, block by block. */
struct ctxsw_samples {
	size_t n, cap;
	double *ns[N_ARMS], *cyc[N_ARMS];
	long nsw[N_ARMS];
};

static void samples_alloc(struct ctxsw_samples *s, size_t cap)
{
	memset(s, 0, sizeof(*s));
	s->cap = cap;
	for (int a = 0; a < N_ARMS; a++) {
		s->ns[a] = calloc(cap, sizeof(double));
		s->cyc[a] = calloc(cap, sizeof(double));
		if (!s->ns[a] || !s->cyc[a]) {
			fputs("ctxsw: out of memory\n", stderr);
			abort();
		}
	}
}

static void samples_free(struct ctxsw_samples *s)
{
	for (int a = 0; a < N_ARMS; a++) {
		free(s->ns[a]);
		free(s->cyc[a]);
	}
}

/* Finds how many round trips fill one sample: doubles the count until a
 * sample of each variant lasts at least 2 ms (this is also the warm-up).
 * Returns the count, or 0 with the reason in why. */
static uint64_t calibrate_rounds(const struct ctxsw_env *env, struct ctxsw_variant *low,
                                 struct ctxsw_variant *high, double sample_s, char *why,
                                 size_t whylen)
{
	uint64_t rounds = 64, r;
	double per_rt;

	for (;;) {
		if (variant_sample(env, low, rounds, 16, why, whylen) < 0 ||
		    variant_sample(env, high, rounds, 16, why, whylen) < 0)
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

/* A random order of the arms in use (on[a]) for one block; returns how
 * many. */
static int block_order(struct stats_rng *rng, const int *on, int *order)
{
	size_t perm[N_ARMS];
	int use[N_ARMS], n = 0;

	for (int a = 0; a < N_ARMS; a++)
		if (on[a])
			use[n++] = a;
	stats_rng_permutation(rng, perm, (size_t)n);
	for (int i = 0; i < n; i++)
		order[i] = use[perm[i]];
	return n;
}

/* Runs blocks of one sample per arm, in a random order per block, until
 * the budget is spent (at least CTXSW_MIN_PAIRS blocks). A failed
 * selector sample drops that arm (on[ARM_SEL] becomes 0, its reason in
 * lost); any other failure ends the run. Returns 0 or -errno with the
 * reason in why. */
static int measure(const struct ctxsw_env *env, struct ctxsw_variant *v, int *on,
                   const struct ctxsw_shape *sh, struct ctxsw_samples *s, uint64_t rounds,
                   uint64_t seed, char *lost, char *why, size_t whylen)
{
	uint64_t warm = rounds / 16 + 16, t0 = clock_ns();
	double sw = 2.0 * (double)rounds;
	struct stats_rng rng;
	int order[N_ARMS];
	int r;

	stats_rng_seed(&rng, seed ^ UINT64_C(0x6f72646572));
	for (size_t i = 0; i < s->cap; i++) {
		double spent = (double)(clock_ns() - t0) / 1e9;

		/* Stops once the next block would overrun the budget; a busy
		 * host that stretches samples ends with the minimum, and one
		 * too busy to reach it gives up rather than be killed. */
		if (i >= CTXSW_MIN_PAIRS && spent * (double)(i + 1) / (double)i > sh->budget_s)
			break;
		if (spent > CTXSW_GIVE_UP * sh->budget_s) {
			snprintf(why, whylen,
			         "only %zu of the %d blocks needed in %.3g s (budget %.3g s): the "
			         "host is too busy or the budget too short",
			         i, CTXSW_MIN_PAIRS, spent, sh->budget_s);
			return -EBUSY;
		}
		for (int k = 0, n = block_order(&rng, on, order); k < n; k++) {
			int a = order[k];

			r = arm_sample(env, &v[a], rounds, warm, why, whylen);
			if (r < 0 && a == ARM_SEL) {
				snprintf(lost, whylen, "%s", why); /* lost holds whylen */
				on[ARM_SEL] = on[ARM_CHILD] = 0;
				continue;
			}
			if (r < 0)
				return r;
			s->ns[a][i] = (double)v[a].ns / sw;
			s->cyc[a][i] = (double)v[a].cycles / sw;
			s->nsw[a] += v[a].nsw;
		}
		s->n = i + 1;
	}
	return 0;
}

/* --- the document -------------------------------------------------------- */

/* The median, MAD and bootstrap CI of one arm. */
static void report_variant(struct probe_doc *doc, const char *name, const double *ns,
                           const double *cyc, size_t n, int have_cycles, uint64_t seed)
{
	char key[64];
	double ci[2];

	snprintf(key, sizeof(key), "%s_ns", name);
	probe_scalar(doc, key, stats_median(ns, n), "ns");
	if (have_cycles) {
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

/* Equivalence within the margin, read from the 90% CI of the ratio: its
 * inclusion in [1 - m, 1 + m] is a TOST at alpha = 0.05 (two one-sided
 * tests at 5% each). The low arm's 90% bounds are scalars too, for the
 * recommendation. */
static void report_equivalence(struct probe_doc *doc, const double *r, size_t n, const char *prefix,
                               double margin)
{
	double ci90[2];
	char key[64];

	if (stats_median_ci_order_level(r, n, 0.90, ci90) < 0)
		return;
	if (!*prefix) {
		probe_scalar(doc, "ratio_ci90_lo", ci90[0], "ratio");
		probe_scalar(doc, "ratio_ci90_hi", ci90[1], "ratio");
	}
	snprintf(key, sizeof(key), "%sequivalent", prefix);
	probe_scalar(doc, key, stats_ci_equivalent(ci90[0], ci90[1], margin), "bool");
}

/* One arm against another (base): the median of the per-block ratios with
 * its distribution-free 95% CI, per-block series, the signed-rank and TOST
 * p-values, and equivalence read from the 90% CI. `prefix` is "" for low
 * against high (the historical names ratio, pair_ratio). */
static void report_ratio(struct probe_doc *doc, const struct ctxsw_samples *s, int arm, int base,
                         const char *prefix, double margin, double ci[2])
{
	const double *a = s->ns[arm], *b = s->ns[base];
	double p, *r = calloc(s->n ? s->n : 1, sizeof(double)),
	          *d = calloc(s->n ? s->n : 1, sizeof(double));
	struct probe_series *ser;
	char key[64];

	if (!r || !d)
		abort();
	snprintf(key, sizeof(key), "%spair_ratio", prefix);
	ser = probe_series_new(doc, key, "count", "ratio");
	for (size_t i = 0; i < s->n; i++) {
		r[i] = a[i] / b[i];
		d[i] = log(r[i]);
		probe_series_add(ser, (double)i, r[i]);
	}
	ci[0] = ci[1] = NAN;
	if (stats_median_ci_order(r, s->n, ci) == 0) {
		snprintf(key, sizeof(key), "%sratio", prefix);
		probe_scalar(doc, key, stats_median(r, s->n), "ratio");
		snprintf(key, sizeof(key), "%sratio_ci_lo", prefix);
		probe_scalar(doc, key, ci[0], "ratio");
		snprintf(key, sizeof(key), "%sratio_ci_hi", prefix);
		probe_scalar(doc, key, ci[1], "ratio");
	}
	report_equivalence(doc, r, s->n, prefix, margin);
	snprintf(key, sizeof(key), "%ssigned_rank_p", prefix);
	probe_info_num(doc, key, stats_signed_rank_p(d, s->n, STATS_TWO_SIDED));
	snprintf(key, sizeof(key), "%stost_p", prefix);
	probe_info_num(doc, key, stats_tost_ratio(a, b, s->n, margin, &p) == 0 ? p : NAN);
	free(r);
	free(d);
}

/* The A/A control compares an arm with itself: a 95% CI without 1.0
 * happens in one unbiased run in 20, so it flags a possible bias of that
 * size, not a proven one. */
static void report_aa(struct probe_doc *doc, const struct ctxsw_samples *s, double margin)
{
	double aa_ci[2];
	int biased;

	report_ratio(doc, s, ARM_AA, ARM_HIGH, "aa_", margin, aa_ci);
	biased = !(aa_ci[0] <= 1.0 && 1.0 <= aa_ci[1]);
	probe_info_bool(doc, "aa_biased", biased);
	probe_info_str(doc, "aa_verdict",
	               biased ? "the A/A CI excludes 1.0: a bias of this size is possible, or a "
	                        "1-in-20 chance"
	                      : "no bias shown: the A/A ratio's 95% CI holds 1.0");
}

/* The selector arm's control: high stacks in a child process against the
 * parent's (child_ratio: the bias a forked child adds), and the selector
 * against that control (selector_child_ratio: the segment path with the
 * child's bias cancelled). */
static void report_child(struct probe_doc *doc, const struct ctxsw_samples *s, double margin)
{
	double ci[2];

	report_ratio(doc, s, ARM_CHILD, ARM_HIGH, "child_", margin, ci);
	probe_info_bool(doc, "child_biased", !(ci[0] <= 1.0 && 1.0 <= ci[1]));
	report_ratio(doc, s, ARM_SEL, ARM_CHILD, "selector_child_", margin, ci);
}

static void report(struct probe_doc *doc, const struct ctxsw_samples *s, const int *on,
                   uint64_t rounds, double margin, int have_cycles, uint64_t seed)
{
	double ci[2];

	for (int a = 0; a < N_ARMS; a++)
		if (on[a])
			report_variant(doc, arm_desc[a].name, s->ns[a], s->cyc[a], s->n,
			               have_cycles, seed + (uint64_t)a);
	probe_scalar(doc, "equivalence_margin", margin, "ratio");
	report_ratio(doc, s, ARM_LOW, ARM_HIGH, "", margin, ci);
	probe_info_num(doc, "ratio_ci_half_width", (ci[1] - ci[0]) / 2);
	if (on[ARM_AA])
		report_aa(doc, s, margin);
	if (on[ARM_SEL])
		report_ratio(doc, s, ARM_SEL, ARM_HIGH, "selector_", margin, ci);
	if (on[ARM_SEL] && on[ARM_CHILD])
		report_child(doc, s, margin);
	probe_scalar(doc, "pairs", (double)s->n, "count");
	probe_scalar(doc, "switches_per_pair", 2.0 * (double)rounds, "count");
	probe_info_num(doc, "mann_whitney_p",
	               stats_mann_whitney_p(s->ns[ARM_LOW], s->n, s->ns[ARM_HIGH], s->n));
	/* The leader leaves the CPU once per round trip (blocking, or
	 * preempted by the follower it woke); about 1.0 here shows that every
	 * hand-over really was a switch. */
	for (int a = 0; a < N_ARMS; a++) {
		char key[64];

		if (!on[a])
			continue;
		snprintf(key, sizeof(key), "%s_leader_switches_per_round", arm_desc[a].name);
		probe_info_num(doc, key, (double)s->nsw[a] / ((double)rounds * (double)s->n));
	}
}

/* The CPU, its siblings and interrupts, and the main thread's CPU. */
static int place(struct probe_doc *doc, const struct probe_opts *o, int *cpu)
{
	struct place_cpu pc = {.cpu = o->cpu, .irqs = -1, .how = "--cpu"};
	char sib[128] = "unknown";
	int r, main_cpu;

	if (o->cpu < 0 && (r = place_quiet_cpu(&pc)) < 0) {
		probe_status(doc, PROBE_ERROR, "cannot read the CPU affinity: %s", strerror(-r));
		return r;
	}
	if (o->cpu >= 0)
		pc.irqs = place_cpu_irqs(o->cpu);
	*cpu = pc.cpu;
	place_smt_siblings(pc.cpu, sib, sizeof(sib));
	probe_param_int(doc, "cpu", pc.cpu);
	probe_info_num(doc, "cpu", pc.cpu);
	probe_info_str(doc, "cpu_choice", pc.how);
	probe_info_num(doc, "cpu_interrupts", pc.irqs >= 0 ? (double)pc.irqs : NAN);
	probe_info_str(doc, "smt_siblings", sib);
	main_cpu = place_main_elsewhere(pc.cpu, sib);
	probe_info_num(doc, "main_cpu", main_cpu >= 0 ? main_cpu : NAN);
	return 0;
}

/* Finds the segment path and says what the kernel does on a switch;
 * returns 1 when the selector arm can run. */
static int setup_selector(struct probe_doc *doc, struct ctxsw_env *env)
{
	char buf[480];
	int r = fsseg_probe(&env->seg);

	if (r < 0) {
		env->seg.kind = FSSEG_NONE;
		snprintf(env->seg.why, sizeof(env->seg.why), "cannot test the segment path: %s",
		         strerror(-r));
	} else {
		/* What each way did, proved in a child: the host's segment
		 * capabilities, whichever way the arm then uses. */
		probe_info_str(doc, "selector_gdt", env->seg.gdt);
		probe_info_str(doc, "selector_ldt", env->seg.ldt);
		probe_info_str(doc, "ia32_int80", env->seg.int80);
	}
	if (env->seg.kind == FSSEG_NONE) {
		snprintf(buf, sizeof(buf), "%s: %s",
		         FSSEG_APPLIES ? "unavailable" : "not applicable", env->seg.why);
		probe_info_str(doc, "selector", buf);
		probe_info_bool(doc, "selector_arm", 0);
		return 0;
	}
	/* Both threads of a GDT pair use the same TLS entry; the LDT gives
	 * the leader entry 0 and the follower entry 1. */
	snprintf(buf, sizeof(buf), "0x%x",
	         env->seg.kind == FSSEG_GDT ? (unsigned)env->seg.gdt_entry << 3 | 3 : 0x7u);
	probe_info_str(doc, "selector", buf);
	probe_info_bool(doc, "selector_arm", 1);
	probe_info_str(doc, "selector_path", env->seg.path);
	probe_info_str(doc, "selector_path_why", env->seg.path_why);
	probe_info_str(
	    doc, "selector_switch",
	    fsseg_fsgsbase()
	        ? "FSGSBASE: the kernel loads the selector and then writes the base "
	          "with wrfsbase; plain threads get wrfsbase alone"
	        : "no FSGSBASE: the kernel loads the selector and writes no MSR; "
	          "plain threads get a wrmsr for every nonzero base (load_seg_legacy())");
	return 1;
}

/* The selector arm failed after the proof: the run goes on without it,
 * and says why. */
static void selector_lost(struct probe_doc *doc, const char *why)
{
	char buf[520];

	snprintf(buf, sizeof(buf), "failed while measured: %s", why);
	probe_info_str(doc, "selector", buf);
	probe_info_bool(doc, "selector_arm", 0);
}

/* Per-thread core-cycle counters where perf allows, else the TSC. */
static void setup_cycles(struct probe_doc *doc, struct ctxsw_env *env)
{
	int fd = cyc_open();
	char why[160];

	env->perf = fd >= 0;
	if (fd >= 0) {
		close(fd);
		probe_info_str(doc, "cycles_source", "perf");
		probe_info_str(doc, "cycles_what",
		               "core cycles (PERF_COUNT_HW_CPU_CYCLES, user and kernel) of both "
		               "threads");
		return;
	}
	probe_info_str(doc, "cycles_source", clock_have_tsc() ? "tsc" : "none");
	if (clock_have_tsc())
		probe_info_str(
		    doc, "cycles_what",
		    "TSC ticks at tsc_hz over the timed rounds: reference cycles, not core "
		    "cycles");
	snprintf(why, sizeof(why), "perf_event_open(PERF_COUNT_HW_CPU_CYCLES): %s", strerror(-fd));
	probe_info_str(doc, "cycles_why", why);
}

static void run(struct probe_doc *doc, const struct probe_opts *o, const struct ctxsw_shape *sh,
                double margin)
{
	struct ctxsw_env env = {0};
	struct ctxsw_variant v[N_ARMS];
	struct ctxsw_samples s;
	char why[400], lost[480] = "";
	uint64_t rounds;
	int on[N_ARMS] = {[ARM_LOW] = 1, [ARM_HIGH] = 1};

	if (place(doc, o, &env.cpu) < 0)
		return;
	/* A selector child may take a whole budget of samples on a busy host;
	 * one that takes far longer is hung. */
	env.timeout_ms = 10000 + (int)(sh->budget_s * 2000);
	on[ARM_AA] = !probe_skips_arm(o, "aa");
	on[ARM_SEL] = !probe_skips_arm(o, "selector") && setup_selector(doc, &env);
	on[ARM_CHILD] = on[ARM_SEL];
	if (!on[ARM_AA])
		probe_info_str(doc, "aa", "disabled (--skip-arm aa)");
	if (probe_skips_arm(o, "selector")) {
		probe_info_str(doc, "selector", "disabled (--skip-arm selector)");
		probe_info_bool(doc, "selector_arm", 0);
	}
	setup_cycles(doc, &env);
	for (int a = 0; a < N_ARMS; a++)
		v[a] = (struct ctxsw_variant){.name = arm_desc[a].name,
		                              .low = arm_desc[a].low,
		                              .sel = arm_desc[a].sel,
		                              .child = arm_desc[a].child};
	probe_info_str(doc, "order", "random");
	samples_alloc(&s, CTXSW_MAX_PAIRS);
	rounds = calibrate_rounds(&env, &v[ARM_LOW], &v[ARM_HIGH], sh->sample_s, why, sizeof(why));
	if (rounds == 0 ||
	    measure(&env, v, on, sh, &s, rounds, o->seed, lost, why, sizeof(why)) < 0) {
		probe_status(doc, PROBE_ERROR, "%s", why);
	} else {
		double sw = stats_median(s.ns[ARM_HIGH], s.n);

		report(doc, &s, on, rounds, margin, env.perf || clock_have_tsc(), o->seed);
		if (ctxsw_ring_series(doc, &env, 0, sh, sw, why, sizeof(why)) < 0)
			probe_status(doc, PROBE_ERROR, "ring: %s", why);
		else if (on[ARM_SEL] &&
		         ctxsw_ring_series(doc, &env, 1, sh, sw, why, sizeof(why)) < 0)
			snprintf(lost, sizeof(lost), "ring: %s", why);
	}
	if (*lost)
		selector_lost(doc, lost);
	for (int a = 0; a < N_ARMS; a++)
		if (on[a] && v[a].placed)
			report_placement(doc, &v[a]);
	samples_free(&s);
}

static int set_margin(const char *arg, void *ctx)
{
	char *end;
	double m = strtod(arg, &end);

	if (end == arg || *end || !(m > 0 && m < 0.5))
		return -EINVAL;
	*(double *)ctx = m;
	return 0;
}

int main(int argc, char **argv)
{
	double margin = CTXSW_MARGIN;
	const struct probe_opt_ext ext[] = {
	    {"margin", "equivalence margin, a fraction in (0, 0.5) (default 0.02)", 1, set_margin,
	     &margin},
	};
	struct probe_opts o;
	struct ctxsw_shape sh;
	struct probe_doc *doc;
	int rc;

	if (probe_parse_args(argc, argv,
	                     "Times a futex hand-over between two threads pinned to one CPU, with "
	                     "low (MAP_32BIT), high (MAP_STACK), high again (A/A) and low stacks "
	                     "whose FS comes from a segment selector; then a ring of 2 to 64 "
	                     "threads.",
	                     &o, ext, sizeof(ext) / sizeof(ext[0])) < 0)
		return 2;
	sh = o.quick ? shape_quick : shape_default;
	if (o.budget_s > 0)
		sh.budget_s = o.budget_s;
	doc = probe_doc_new("ctxsw");
	probe_param_bool(doc, "quick", o.quick);
	probe_param_int(doc, "seed", (int64_t)o.seed);
	probe_param_int(doc, "cpu", probe_cpu_param(&o));
	probe_param_double(doc, "budget_s", sh.budget_s);
	probe_param_double(doc, "sample_s", sh.sample_s);
	probe_param_double(doc, "margin", margin);
	probe_param_int(doc, "stack_bytes", CTXSW_STACK_BYTES);
	probe_param_int(doc, "bootstrap_iters", CTXSW_BOOT_ITERS);
	probe_scalar(doc, "fsgsbase", fsseg_fsgsbase(), "bool");
	probe_scalar(doc, "tsc_hz", clock_tsc_hz(sh.tsc_ms), "hz");
#if defined(__x86_64__)
	probe_info_str(doc, "low_mapping", "MAP_32BIT");
	probe_info_str(doc, "fs_base_read", "arch_prctl(ARCH_GET_FS)");
#else
	probe_info_str(doc, "low_mapping", "address hint 0x40000000");
	probe_info_str(doc, "fs_base_read", "pthread_self()");
#endif
	run(doc, &o, &sh, margin);
	rc = probe_emit(doc);
	probe_doc_free(doc);
	return rc;
}
