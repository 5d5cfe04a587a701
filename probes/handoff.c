/*
 * handoff: what it costs to wake a thread on another CPU, against a switch
 * between two threads on one CPU. A pair of threads passes a turn back
 * and forth through a futex, each thread pinned: both on one CPU (the
 * `same` arm, a context switch per hand-off), or on two CPUs of each
 * placement the host has (SMT siblings, two cores of one last-level
 * cache, two caches, two NUMA nodes), where each hand-off wakes a sleeping
 * CPU: an IPI, and the wake-up of an idle vCPU or core, which is what the
 * cpuidle driver, haltpoll's guest_halt_poll_ns, idle=poll and the
 * hypervisor decide. Arms run in interleaved blocks in a fresh random
 * order, with an A/A control (the same-CPU arm again); each placement is
 * reported as ns per hand-off and as its paired ratio to the same-CPU
 * arm, each with a 95% CI. The threads sleep while they wait: two CPUs are
 * busy at most for the length of a hand-off.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "defaults.h"
#include "fingerprint.h"
#include "futexw.h"
#include "probe.h"
#include "stats.h"
#include "sysinfo.h"
#include "topology.h"

#define HANDOFF_BUDGET_S 3.0
#define HANDOFF_QUICK_BUDGET_S 0.3
/* A same-CPU sample lasts about this long; a cross-CPU one longer. */
#define HANDOFF_SAMPLE_S 0.002
#define HANDOFF_QUICK_SAMPLE_S 0.001
#define HANDOFF_MIN_BLOCKS 15
#define HANDOFF_MAX_BLOCKS 400
#define HANDOFF_BOOT_ITERS 2000
#define HANDOFF_SYSFS "/sys/devices/system"

/* The arms: each placement, then the A/A control on one CPU. */
enum { ARM_AA = TOPO_N_PLACES, N_ARMS };

struct arm {
	int on;
	int cpu[2];
	double *ns; /* per block, ns per hand-off */
};

struct pair {
	int cpu[2];
	uint64_t rounds;
	int turn, quit, ready, bad;
	uint64_t ns;
};

static void *follower(void *p)
{
	struct pair *x = p;

	if (sys_pin_cpu(x->cpu[1]) < 0)
		__atomic_store_n(&x->bad, 1, __ATOMIC_RELAXED);
	futexw_store_wake(&x->ready, 1);
	for (;;) {
		futexw_wait_equal(&x->turn, 1);
		if (__atomic_load_n(&x->quit, __ATOMIC_ACQUIRE))
			return NULL;
		futexw_store_wake(&x->turn, 0);
	}
}

static void *leader(void *p)
{
	struct pair *x = p;
	uint64_t t0;

	if (sys_pin_cpu(x->cpu[0]) < 0)
		__atomic_store_n(&x->bad, 1, __ATOMIC_RELAXED);
	futexw_wait_equal(&x->ready, 1);
	for (uint64_t i = 0; i < x->rounds / 8 + 2; i++) { /* warm up */
		futexw_store_wake(&x->turn, 1);
		futexw_wait_equal(&x->turn, 0);
	}
	t0 = clock_ns();
	for (uint64_t i = 0; i < x->rounds; i++) {
		futexw_store_wake(&x->turn, 1);
		futexw_wait_equal(&x->turn, 0);
	}
	x->ns = clock_ns() - t0;
	__atomic_store_n(&x->quit, 1, __ATOMIC_RELEASE);
	futexw_store_wake(&x->turn, 1);
	return NULL;
}

/* One sample of a pair on cpu[0] and cpu[1]: ns per hand-off (two per
 * round trip), or -errno. */
static int sample(const int cpu[2], uint64_t rounds, double *ns)
{
	struct pair x = {.cpu = {cpu[0], cpu[1]}, .rounds = rounds};
	pthread_t th[2];
	int r;

	r = pthread_create(&th[1], NULL, follower, &x);
	if (r)
		return -r;
	r = pthread_create(&th[0], NULL, leader, &x);
	if (r) {
		__atomic_store_n(&x.quit, 1, __ATOMIC_RELEASE);
		futexw_store_wake(&x.turn, 1);
		pthread_join(th[1], NULL);
		return -r;
	}
	pthread_join(th[0], NULL);
	pthread_join(th[1], NULL);
	if (x.bad)
		return -EINVAL;
	*ns = (double)x.ns / (2.0 * (double)rounds);
	return 0;
}

/* Rounds for a same-CPU sample of about sample_s. */
static uint64_t calibrate(const int cpu[2], double sample_s)
{
	uint64_t rounds = 64;
	double ns;

	for (int i = 0; i < 12; i++) {
		if (sample(cpu, rounds, &ns) < 0)
			return 0;
		if (2.0 * ns * (double)rounds >= sample_s * 1e9 / 2 || rounds > (1u << 24))
			break;
		rounds *= 4;
	}
	rounds = (uint64_t)(sample_s * 1e9 / (2.0 * ns));
	return rounds < 16 ? 16 : rounds;
}

/* What the idle settings imply for a wake-up on another CPU, for people;
 * the settings themselves are info fields of their own. */
static const char *mechanism(const char *driver, const char *poll_ns, const char *idle)
{
	if (idle && !strncmp(idle, "idle=poll", 9))
		return "idle=poll: idle CPUs spin instead of halting, so a wake-up finds its CPU "
		       "running, at the price of CPUs that never rest";
	if (driver && !strcmp(driver, "haltpoll") && poll_ns && !strcmp(poll_ns, "0"))
		return "cpuidle haltpoll with guest_halt_poll_ns 0: an idle vCPU halts at once, so "
		       "each hand-off wakes a halted vCPU through the hypervisor";
	if (driver && !strcmp(driver, "haltpoll"))
		return "cpuidle haltpoll: an idle vCPU polls for up to guest_halt_poll_ns before "
		       "it "
		       "halts, so a hand-off within that window finds it awake";
	if (driver && (!strcmp(driver, "intel_idle") || !strcmp(driver, "acpi_idle")))
		return "C-states: an idle core enters a sleep state whose exit latency adds to "
		       "each "
		       "wake-up (the governor picks the depth)";
	if (driver && strcmp(driver, "none"))
		return "the cpuidle driver decides how deep an idle CPU sleeps";
	return NULL;
}

/* What decides the cost of waking a CPU, as the host says it; 1 when
 * idle vCPUs halt at once (haltpoll, guest_halt_poll_ns 0). */
static int report_mechanism(struct probe_doc *doc)
{
	static const struct {
		const char *info, *path;
	} files[] = {
	    {"cpuidle_driver", "/sys/devices/system/cpu/cpuidle/current_driver"},
	    {"cpuidle_governor", "/sys/devices/system/cpu/cpuidle/current_governor_ro"},
	    {"haltpoll_guest_halt_poll_ns", "/sys/module/haltpoll/parameters/guest_halt_poll_ns"},
	    {"haltpoll_grow", "/sys/module/haltpoll/parameters/guest_halt_poll_grow"},
	    {"haltpoll_shrink", "/sys/module/haltpoll/parameters/guest_halt_poll_shrink"},
	    {"haltpoll_grow_start", "/sys/module/haltpoll/parameters/guest_halt_poll_grow_start"},
	    {"haltpoll_allow_shrink",
	     "/sys/module/haltpoll/parameters/guest_halt_poll_allow_shrink"},
	    {"hypervisor_type", "/sys/hypervisor/type"},
	};
	char buf[4096], got[2][64] = {"", ""}, idle[64] = "";

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		int ok = sys_read_line(files[i].path, buf, sizeof(buf)) == 0;

		probe_info_str(doc, files[i].info, ok ? buf : NULL);
		if (ok && i < 3 && i != 1)
			snprintf(got[i ? 1 : 0], sizeof(got[0]), "%.63s", buf);
	}
	if (sys_read_line("/proc/cmdline", buf, sizeof(buf)) == 0) {
		char *p = strstr(buf, "idle=");

		snprintf(idle, sizeof(idle), "%.*s", p ? (int)strcspn(p, " ") : 4, p ? p : "none");
		probe_info_str(doc, "idle_param", idle);
	}
	/* a KVM guest has no /sys/hypervisor/type: CPUID names it */
	probe_info_str(doc, "hypervisor",
	               fingerprint_cpuid_hypervisor(buf, sizeof(buf)) > 0 ? buf : "none");
	probe_info_str(doc, "mechanism",
	               mechanism(got[0][0] ? got[0] : NULL, got[1][0] ? got[1] : NULL, idle));
	return !strcmp(got[0], "haltpoll") && !strcmp(got[1], "0");
}

/* The placements this host allows: a pair for each, or why not. */
static int plan(struct probe_doc *doc, const char *root, struct arm *arms, char *why, size_t whylen)
{
	struct topology t;
	cpu_set_t allowed;
	char key[64], cpus[32];
	int r = topo_read(root, &t), n = 0;

	if (r < 0) {
		snprintf(why, whylen, "no CPU topology under %s", root);
		return r;
	}
	if (sched_getaffinity(0, sizeof(allowed), &allowed) < 0) {
		r = -errno;
		snprintf(why, whylen, "sched_getaffinity: %s", strerror(-r));
		return r;
	}
	probe_info_num(doc, "llc_level", t.llc_level);
	for (int p = 0; p < TOPO_N_PLACES; p++) {
		struct arm *a = &arms[p];

		snprintf(key, sizeof(key), "%s_cpus", topo_place_names[p]);
		a->on = topo_pair(&t, &allowed, (enum topo_place)p, &a->cpu[0], &a->cpu[1]) == 0;
		snprintf(cpus, sizeof(cpus), "%d,%d", a->cpu[0], a->cpu[1]);
		probe_info_str(doc, key, a->on ? cpus : NULL);
		n += a->on && p != TOPO_SAME_CPU;
	}
	arms[ARM_AA] = arms[TOPO_SAME_CPU];
	if (!arms[TOPO_SAME_CPU].on || !n) {
		snprintf(
		    why, whylen,
		    "a hand-off across CPUs needs two allowed CPUs; this process may run on %d",
		    CPU_COUNT(&allowed));
		return -ENOENT;
	}
	return 0;
}

/* Rounds per sample such that a block of one sample per arm (the cross-CPU
 * ones are the long ones) takes at most a share of the budget that leaves
 * room for twice the minimum of blocks: a busy host stretches a run, it
 * does not fail it. */
static uint64_t size_rounds(struct arm *arms, uint64_t rounds, double budget_s)
{
	double block_ns = 0, ns, want = budget_s * 1e9 / (2.0 * HANDOFF_MIN_BLOCKS);

	for (int a = 0; a < N_ARMS; a++)
		if (arms[a].on && a != ARM_AA) {
			if (sample(arms[a].cpu, rounds, &ns) < 0)
				return 0;
			block_ns += 2.0 * ns * (double)rounds;
		}
	if (block_ns > want)
		rounds = (uint64_t)((double)rounds * want / block_ns);
	return rounds < 16 ? 16 : rounds;
}

/* Blocks of one sample per arm, in a fresh random order each, until the
 * budget is spent (at least HANDOFF_MIN_BLOCKS). Returns the blocks, or
 * -errno. */
static int measure(struct arm *arms, uint64_t rounds, double budget_s, uint64_t seed)
{
	struct stats_rng rng;
	uint64_t t0 = clock_ns();
	size_t perm[N_ARMS], n = 0;
	int use[N_ARMS], blocks = 0;

	for (int a = 0; a < N_ARMS; a++)
		if (arms[a].on)
			use[n++] = a;
	stats_rng_seed(&rng, seed ^ UINT64_C(0x68616e646f6666));
	while (blocks < HANDOFF_MAX_BLOCKS) {
		double spent = (double)(clock_ns() - t0) / 1e9;

		if (blocks >= HANDOFF_MIN_BLOCKS && spent * (blocks + 1) / blocks > budget_s)
			break;
		if (spent > 4 * budget_s)
			return blocks >= HANDOFF_MIN_BLOCKS ? blocks : -EBUSY;
		stats_rng_permutation(&rng, perm, n);
		for (size_t k = 0; k < n; k++) {
			struct arm *a = &arms[use[perm[k]]];
			int r = sample(a->cpu, rounds, &a->ns[blocks]);

			if (r < 0)
				return r;
		}
		blocks++;
	}
	return blocks;
}

/* One arm: its median with a bootstrap CI; against the same-CPU arm, the
 * median of the per-block ratios with a distribution-free CI. */
static void report_arm(struct probe_doc *doc, const char *name, const double *ns,
                       const double *same, int blocks, uint64_t seed, double *ratio,
                       double ratio_ci[2])
{
	double *ci = ratio_ci, *r = calloc((size_t)blocks, sizeof(double));
	char key[64];

	if (!r)
		abort();
	snprintf(key, sizeof(key), "%s_ns", name);
	probe_scalar(doc, key, stats_median(ns, (size_t)blocks), "ns");
	if (stats_bootstrap_median_ci(ns, (size_t)blocks, HANDOFF_BOOT_ITERS, seed, ci) == 0) {
		snprintf(key, sizeof(key), "%s_ci_lo", name);
		probe_scalar(doc, key, ci[0], "ns");
		snprintf(key, sizeof(key), "%s_ci_hi", name);
		probe_scalar(doc, key, ci[1], "ns");
	}
	*ratio = ci[0] = ci[1] = NAN;
	if (same) {
		for (int i = 0; i < blocks; i++)
			r[i] = ns[i] / same[i];
		*ratio = stats_median(r, (size_t)blocks);
		snprintf(key, sizeof(key), "%s_ratio", name);
		probe_scalar(doc, key, *ratio, "ratio");
		if (stats_median_ci_order(r, (size_t)blocks, ci) == 0) {
			snprintf(key, sizeof(key), "%s_ratio_ci_lo", name);
			probe_scalar(doc, key, ci[0], "ratio");
			snprintf(key, sizeof(key), "%s_ratio_ci_hi", name);
			probe_scalar(doc, key, ci[1], "ratio");
		}
	}
	free(r);
}

static void report(struct probe_doc *doc, struct arm *arms, int blocks, uint64_t rounds,
                   uint64_t seed, int halts)
{
	const double *same = arms[TOPO_SAME_CPU].ns;
	double ratio, ci[2], nearest = NAN, nearest_ci[2] = {NAN, NAN};
	const char *nearest_name = NULL;

	probe_scalar(doc, "blocks", blocks, "count");
	probe_scalar(doc, "handoffs_per_sample", 2.0 * (double)rounds, "count");
	report_arm(doc, "same_cpu", same, NULL, blocks, seed, &ratio, ci);
	for (int p = TOPO_SMT; p < TOPO_N_PLACES; p++) {
		if (!arms[p].on)
			continue;
		report_arm(doc, topo_place_names[p], arms[p].ns, same, blocks, seed + (uint64_t)p,
		           &ratio, ci);
		if (!nearest_name) {
			nearest = ratio;
			nearest_ci[0] = ci[0];
			nearest_ci[1] = ci[1];
			nearest_name = topo_place_names[p];
		}
	}
	report_arm(doc, "aa", arms[ARM_AA].ns, same, blocks, seed + ARM_AA, &ratio, ci);
	probe_info_bool(doc, "aa_biased", !(ci[0] <= 1.0 && 1.0 <= ci[1]));
	/* The key figure: the nearest placement across CPUs the host has. */
	probe_scalar(doc, "cross_ratio", nearest, "ratio");
	probe_scalar(doc, "cross_ratio_ci_lo", nearest_ci[0], "ratio");
	probe_scalar(doc, "cross_ratio_ci_hi", nearest_ci[1], "ratio");
	probe_info_str(doc, "cross_placement", nearest_name);
	if (halts && nearest > TW_HANDOFF_PROBLEM_RATIO)
		probe_info_str(
		    doc, "fix",
		    "let an idle vCPU poll before it halts: haltpoll.guest_halt_poll_ns=200000 "
		    "on the guest kernel's command line (or written to "
		    "/sys/module/haltpoll/parameters/guest_halt_poll_ns) keeps a vCPU awake "
		    "200 µs after it idles, which the host counts as busy time");
}

static void run(struct probe_doc *doc, const struct probe_opts *po, const char *root)
{
	struct arm arms[N_ARMS] = {0};
	double budget = po->budget_s > 0 ? po->budget_s
	                : po->quick      ? HANDOFF_QUICK_BUDGET_S
	                                 : HANDOFF_BUDGET_S;
	char why[256];
	uint64_t rounds;
	int blocks, halts;

	probe_param_double(doc, "budget_s", budget);
	halts = report_mechanism(doc);
	if (plan(doc, root, arms, why, sizeof(why)) < 0) {
		probe_status(doc, PROBE_SKIPPED, "%s", why);
		return;
	}
	for (int a = 0; a < N_ARMS; a++)
		if (arms[a].on && !(arms[a].ns = calloc(HANDOFF_MAX_BLOCKS, sizeof(double))))
			abort();
	rounds = calibrate(arms[TOPO_SAME_CPU].cpu,
	                   po->quick ? HANDOFF_QUICK_SAMPLE_S : HANDOFF_SAMPLE_S);
	if (rounds)
		rounds = size_rounds(arms, rounds, budget);
	blocks = rounds ? measure(arms, rounds, budget, po->seed) : -EINVAL;
	if (blocks == -EBUSY)
		probe_status(doc, PROBE_ERROR,
		             "fewer than %d blocks in %.3g s: the host is too busy or the budget "
		             "too short",
		             HANDOFF_MIN_BLOCKS, 4 * budget);
	else if (blocks < 0)
		probe_status(doc, PROBE_ERROR,
		             "a pair of threads could not be started or pinned: %s",
		             strerror(-blocks));
	else
		report(doc, arms, blocks, rounds, po->seed, halts);
	for (int a = 0; a < N_ARMS; a++)
		free(arms[a].ns);
}

static int set_root(const char *arg, void *ctx)
{
	*(const char **)ctx = arg;
	return arg && *arg ? 0 : -EINVAL;
}

int main(int argc, char **argv)
{
	const char *root = HANDOFF_SYSFS;
	const struct probe_opt_ext ext[] = {
	    {"sysfs-root", "where the CPU topology is read (default " HANDOFF_SYSFS ")", 1,
	     set_root, &root},
	};
	struct probe_opts po;
	struct probe_doc *doc;
	int rc;

	if (probe_parse_args(argc, argv,
	                     "Times a hand-off between two threads on two CPUs of each placement "
	                     "the host has, against a switch between two threads on one CPU.",
	                     &po, ext, sizeof(ext) / sizeof(ext[0])) < 0)
		return 2;
	doc = probe_doc_new("handoff");
	probe_param_bool(doc, "quick", po.quick);
	run(doc, &po, root);
	rc = probe_emit(doc);
	probe_doc_free(doc);
	return rc;
}
