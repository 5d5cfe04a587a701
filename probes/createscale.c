/*
 * createscale: how thread creation scales when several threads create at
 * once. One creator, then two (up to four where the process may use that
 * many CPUs), each pinned to a CPU of its own, create and join trivial
 * threads for a fixed time; the rate per creator and the scaling
 * efficiency, rate(n) / (n x rate(1)), say what creators cost each other
 * (mmap_lock in mmap, mprotect, munmap and page faults; glibc's stack
 * cache lock). Each count is measured with glibc's stack cache and without
 * it (glibc.pthread.stack_cache_size=0, which glibc reads at start-up: a
 * copy of this program runs those in a process of its own), in rounds of a
 * fresh random order; the efficiency's 95% CI comes from the rounds.
 * Creators keep CPUs busy, so they run only on CPUs the host leaves idle:
 * procs_running is sampled first, and a host without two idle CPUs is
 * skipped with what it ran.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clock.h"
#include "futexw.h"
#include "probe.h"
#include "stats.h"
#include "sysinfo.h"

#define CS_MAX_CREATORS 4
/* Every CPU it may use is busy while creators run: a run stays near a
 * second (rounds x (counts + counts) arms of ARM_S, plus the copies). */
#define CS_ROUNDS 6
#define CS_QUICK_ROUNDS 4
#define CS_ARM_S 0.04
#define CS_QUICK_ARM_S 0.015
#define CS_BOOT_ITERS 2000
#define CS_NOCACHE_ENV "GLIBC_TUNABLES=glibc.pthread.stack_cache_size=0"
/* The quiet-host check: procs_running sampled this many times, this far
 * apart (0.1 s), before the creators start. */
#define CS_QUIET_SAMPLES 21
#define CS_QUIET_GAP_US 5000
/* The hidden option of the copy that runs without the stack cache. */
#define CS_CHILD_OPT "--nocache-child"

struct creator {
	int cpu;
	double seconds;
	int *go; /* futex word: 1 starts the creators, 2 sends them home */
	unsigned long creates;
	int err;
};

struct cs_opts {
	const char *proc_stat; /* /proc/stat unless a test points elsewhere */
};

static void *nothing(void *p)
{
	return p;
}

static void *create_loop(void *p)
{
	struct creator *c = p;
	uint64_t end;

	if (sys_pin_cpu(c->cpu) < 0)
		c->err = EINVAL;
	if (futexw_wait_while(c->go, 0) != 1)
		return NULL;
	end = clock_ns() + (uint64_t)(c->seconds * 1e9);
	while (!c->err && clock_ns() < end) {
		pthread_t t;
		int r = pthread_create(&t, NULL, nothing, NULL);

		if (r) {
			c->err = r;
			break;
		}
		pthread_join(t, NULL);
		c->creates++;
	}
	return NULL;
}

/* n creators on cpus[0..n-1] for `seconds`, started together: creates per
 * second per creator, or -errno. */
static int rate(int n, const int *cpus, double seconds, double *per_creator)
{
	struct creator c[CS_MAX_CREATORS];
	pthread_t th[CS_MAX_CREATORS];
	unsigned long total = 0;
	int r = 0, made = 0, go = 0;

	for (int i = 0; i < n && !r; i++) {
		c[i] = (struct creator){.cpu = cpus[i], .seconds = seconds, .go = &go};
		r = pthread_create(&th[i], NULL, create_loop, &c[i]);
		made += !r;
	}
	__atomic_store_n(&go, r ? 2 : 1, __ATOMIC_RELEASE);
	futexw_wake(&go, CS_MAX_CREATORS);
	for (int i = 0; i < made; i++) {
		pthread_join(th[i], NULL);
		total += c[i].creates;
		if (c[i].err && !r)
			r = c[i].err;
	}
	if (r)
		return -r;
	*per_creator = (double)total / (double)n / seconds;
	return 0;
}

/* The CPUs creators run on: the allowed ones, CPU 0 last; how many. */
static int pick_cpus(int *cpus)
{
	cpu_set_t set;
	int n = 0;

	if (sched_getaffinity(0, sizeof(set), &set) < 0)
		return -errno;
	for (int pass = 0; pass < 2; pass++)
		for (int c = pass ? 0 : 1; c < CPU_SETSIZE && n < CS_MAX_CREATORS; c++)
			if (CPU_ISSET(c, &set) && (pass == 1) == (c == 0))
				cpus[n++] = c;
	return n;
}

/* What else the host runs: the median of procs_running over the samples,
 * less this thread. 0, or -errno. */
static int others_running(const char *path, double *others)
{
	double v[CS_QUIET_SAMPLES];

	for (int i = 0; i < CS_QUIET_SAMPLES; i++) {
		long n;
		int r = sys_procs_running(path, &n);

		if (r < 0)
			return r;
		v[i] = (double)n;
		if (i + 1 < CS_QUIET_SAMPLES)
			usleep(CS_QUIET_GAP_US);
	}
	*others = fmax(stats_median(v, CS_QUIET_SAMPLES) - 1, 0);
	return 0;
}

/* How many of the `counts` creators the host has idle CPUs for; below 2
 * the run is skipped (the document says why). */
static int quiet_creators(struct probe_doc *doc, const char *path, int counts)
{
	long online = sysconf(_SC_NPROCESSORS_ONLN);
	double others;
	int r = others_running(path, &others), room;
	char msg[160];

	if (r < 0) {
		/* Unchecked, it takes no more than the least it needs. */
		snprintf(msg, sizeof(msg), "not made: %s: %s", path ? path : "/proc/stat",
		         strerror(-r));
		probe_info_str(doc, "quiet_check", msg);
		return counts < 2 ? counts : 2;
	}
	probe_info_num(doc, "others_running", others);
	room = online - (long)others;
	if (room < 2) {
		probe_status(doc, PROBE_SKIPPED,
		             "the host is busy: %g other tasks runnable on %ld CPUs (median of "
		             "procs_running over %d samples in %.1f s); creators at once would "
		             "take CPUs its work needs",
		             others, online, CS_QUIET_SAMPLES,
		             CS_QUIET_SAMPLES * CS_QUIET_GAP_US / 1e6);
		return 0;
	}
	if (room < counts) {
		snprintf(msg, sizeof(msg),
		         "%g other tasks runnable on %ld CPUs: %d creators at most, not %d", others,
		         online, room, counts);
		probe_info_str(doc, "quiet_check", msg);
		return room;
	}
	snprintf(msg, sizeof(msg), "%g other tasks runnable on %ld CPUs", others, online);
	probe_info_str(doc, "quiet_check", msg);
	return counts;
}

/* The copy of this program without the stack cache: one round of every
 * creator count, printed as "n rate" lines. */
static int child_main(int counts, const int *cpus, double seconds)
{
	const char *t = getenv("GLIBC_TUNABLES");

	/* what glibc read at this copy's start-up, for the parent to report */
	printf("tunables %s\n", t && *t ? t : "none");
	for (int n = 1; n <= counts; n++) {
		double r;

		if (rate(n, cpus, seconds, &r) < 0)
			return 1;
		printf("%d %.17g\n", n, r);
	}
	return 0;
}

/* One round without the stack cache, in a copy of this program: rates[n]
 * for n = 1 .. counts. 0, or -errno. */
static int nocache_round(int counts, double seconds, double *rates, char *tunables, size_t tlen)
{
	char arg_n[16], arg_s[32], line[128];
	int fd[2], st, got = 0;
	FILE *f;
	pid_t pid;

	if (pipe(fd) < 0)
		return -errno;
	snprintf(arg_n, sizeof(arg_n), "%d", counts);
	snprintf(arg_s, sizeof(arg_s), "%.17g", seconds);
	pid = fork();
	if (pid < 0) {
		close(fd[0]);
		close(fd[1]);
		return -errno;
	}
	if (pid == 0) {
		char a0[] = "createscale", a1[] = CS_CHILD_OPT, env[] = CS_NOCACHE_ENV;
		char *argv[] = {a0, a1, arg_n, arg_s, NULL};
		char *envp[] = {env, NULL};

		dup2(fd[1], 1);
		close(fd[0]);
		close(fd[1]);
		execve("/proc/self/exe", argv, envp);
		_exit(127);
	}
	close(fd[1]);
	f = fdopen(fd[0], "r");
	while (f && fgets(line, sizeof(line), f)) {
		int n;
		double r;

		if (!strncmp(line, "tunables ", 9)) {
			snprintf(tunables, tlen, "%.*s", (int)strcspn(line + 9, "\n"), line + 9);
			continue;
		}
		if (sscanf(line, "%d %lf", &n, &r) == 2 && n >= 1 && n <= counts) {
			rates[n] = r;
			got++;
		}
	}
	if (f)
		fclose(f);
	else
		close(fd[0]);
	if (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) || got != counts)
		return -ECHILD;
	return 0;
}

/* Per cache setting and creator count: rates per round; the efficiency
 * of n creators per round is r[n] / r[1]. */
static void report(struct probe_doc *doc, const char *cache, int counts,
                   double rates[][CS_MAX_CREATORS + 1], int rounds, uint64_t seed)
{
	double v[CS_ROUNDS], ci[2];
	char key[64];

	for (int n = 1; n <= counts; n++) {
		for (int i = 0; i < rounds; i++)
			v[i] = rates[i][n];
		snprintf(key, sizeof(key), "%s_%d_rate", cache, n);
		probe_scalar(doc, key, stats_median(v, (size_t)rounds), "per_s");
		if (n == 1)
			continue;
		for (int i = 0; i < rounds; i++)
			v[i] = rates[i][n] / rates[i][1];
		snprintf(key, sizeof(key), "%s_%d_efficiency", cache, n);
		probe_scalar(doc, key, stats_median(v, (size_t)rounds), "ratio");
		if (stats_bootstrap_median_ci(v, (size_t)rounds, CS_BOOT_ITERS, seed + (uint64_t)n,
		                              ci) == 0) {
			snprintf(key, sizeof(key), "%s_%d_efficiency_ci_lo", cache, n);
			probe_scalar(doc, key, ci[0], "ratio");
			snprintf(key, sizeof(key), "%s_%d_efficiency_ci_hi", cache, n);
			probe_scalar(doc, key, ci[1], "ratio");
		}
	}
}

static void run(struct probe_doc *doc, const struct probe_opts *po, const struct cs_opts *co)
{
	double cached[CS_ROUNDS][CS_MAX_CREATORS + 1], nocache[CS_ROUNDS][CS_MAX_CREATORS + 1];
	int cpus[CS_MAX_CREATORS], counts = pick_cpus(cpus);
	int rounds = po->quick ? CS_QUICK_ROUNDS : CS_ROUNDS, r = 0, nocache_ok = 1;
	double arm_s = po->quick ? CS_QUICK_ARM_S : CS_ARM_S;
	struct stats_rng rng;
	char list[64] = "", tunables[128] = "";

	if (counts < 2) {
		probe_status(
		    doc, PROBE_SKIPPED,
		    "concurrent creators need two allowed CPUs; this process may run on %d",
		    counts < 0 ? 0 : counts);
		return;
	}
	counts = quiet_creators(doc, co->proc_stat, counts);
	if (counts < 2)
		return;
	for (int i = 0; i < counts; i++)
		snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%d", i ? "," : "",
		         cpus[i]);
	probe_info_str(doc, "creator_cpus", list);
	probe_param_int(doc, "max_creators", counts);
	probe_param_double(doc, "arm_s", arm_s);
	stats_rng_seed(&rng, po->seed ^ UINT64_C(0x6372656174657363));
	for (int i = 0; i < rounds && r == 0; i++) {
		/* the two settings in a fresh random order each round */
		int first = (int)stats_rng_below(&rng, 2);

		for (int k = 0; k < 2 && r == 0; k++) {
			if ((k == 0) == (first == 0)) {
				for (int n = 1; n <= counts && r == 0; n++)
					r = rate(n, cpus, arm_s, &cached[i][n]);
			} else if (nocache_ok) {
				/* a copy that cannot run (an emulator, a sandbox that
				 * refuses exec) costs only the arm without the cache */
				nocache_ok = nocache_round(counts, arm_s, nocache[i], tunables,
				                           sizeof(tunables)) == 0;
			}
		}
	}
	if (r < 0) {
		probe_status(doc, PROBE_ERROR, "%s", strerror(-r));
		return;
	}
	probe_scalar(doc, "rounds", rounds, "count");
	report(doc, "cached", counts, cached, rounds, po->seed);
	if (nocache_ok) {
		probe_info_str(doc, "nocache_tunables", tunables);
		report(doc, "nocache", counts, nocache, rounds, po->seed + 17);
	} else {
		probe_info_str(
		    doc, "nocache_why",
		    "a copy of this program with glibc.pthread.stack_cache_size=0 could not "
		    "run (execve of /proc/self/exe)");
	}
}

static int set_proc_stat(const char *arg, void *ctx)
{
	((struct cs_opts *)ctx)->proc_stat = arg;
	return 0;
}

int main(int argc, char **argv)
{
	struct cs_opts co = {0};
	const struct probe_opt_ext ext[] = {
	    {"proc-stat", "a file in /proc/stat's format to read procs_running from (tests)", 1,
	     set_proc_stat, &co},
	};
	struct probe_opts po;
	struct probe_doc *doc;
	int rc;

	if (argc == 4 && !strcmp(argv[1], CS_CHILD_OPT)) {
		int cpus[CS_MAX_CREATORS], n = pick_cpus(cpus), want = atoi(argv[2]);

		return n < want ? 1 : child_main(want, cpus, strtod(argv[3], NULL));
	}
	if (probe_parse_args(argc, argv,
	                     "Times thread creation by 1, 2 (up to 4) creators at once, each on a "
	                     "CPU of its own, with glibc's stack cache and without it.",
	                     &po, ext, sizeof(ext) / sizeof(ext[0])) < 0)
		return 2;
	doc = probe_doc_new("createscale");
	probe_param_bool(doc, "quick", po.quick);
	run(doc, &po, &co);
	rc = probe_emit(doc);
	probe_doc_free(doc);
	return rc;
}
