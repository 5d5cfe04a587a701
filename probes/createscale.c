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
 * first, for 0.1 s, procs_running is sampled and the time of each CPU the
 * process may use is read from /proc/stat; creators go to the CPUs that
 * were idle (busy under half the time), and without two such CPUs the run
 * is skipped with what the host ran. The CPUs' own time makes the check
 * right for a process confined to a few CPUs of a many-core host (a
 * cpuset), whose neighbours on other CPUs do not matter and whose own
 * CPUs may be busy on a quiet host; where that time cannot be read, the
 * host-wide count decides.
 */
#include <errno.h>
#include <limits.h>
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
#include "xmalloc.h"

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
#define CS_QUIET_S (CS_QUIET_SAMPLES * CS_QUIET_GAP_US / 1e6)
/* A CPU busier than this over the window is not idle. */
#define CS_CPU_BUSY_MAX 0.5
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
	/* /proc/stat unless a test points elsewhere; a test's file for the
	 * window's first reading, and one for the later ones */
	const char *proc_stat, *proc_stat_later;
	char first[PATH_MAX]; /* FIRST of FIRST,LATER */
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

/* The CPUs creators may run on: the allowed ones, CPU 0 last, at most
 * max; how many, or -errno. */
static int allowed_cpus(int *cpus, int max)
{
	cpu_set_t set;
	int n = 0;

	if (sched_getaffinity(0, sizeof(set), &set) < 0)
		return -errno;
	for (int pass = 0; pass < 2; pass++)
		for (int c = pass ? 0 : 1; c < CPU_SETSIZE && n < max; c++)
			if (CPU_ISSET(c, &set) && (pass == 1) == (c == 0))
				cpus[n++] = c;
	return n;
}

/* The quiet check's window: what else the host runs (the median of
 * procs_running over the samples, less this thread) and each CPU's time at
 * the window's start and end (times 0: not read). */
struct quiet {
	double others;
	struct sys_cpu_jiffies t0[CPU_SETSIZE], t1[CPU_SETSIZE];
};

/* 0, or -errno when procs_running cannot be read. */
static int quiet_sample(const struct cs_opts *co, struct quiet *q)
{
	const char *path = co->proc_stat_later;
	double v[CS_QUIET_SAMPLES];

	if (sys_cpu_jiffies(co->proc_stat, q->t0, CPU_SETSIZE) < 0)
		memset(q->t0, 0, sizeof(q->t0));
	for (int i = 0; i < CS_QUIET_SAMPLES; i++) {
		long n;
		int r = sys_procs_running(path, &n);

		if (r < 0)
			return r;
		v[i] = (double)n;
		if (i + 1 < CS_QUIET_SAMPLES)
			usleep(CS_QUIET_GAP_US);
	}
	if (sys_cpu_jiffies(path, q->t1, CPU_SETSIZE) < 0)
		memset(q->t1, 0, sizeof(q->t1));
	q->others = fmax(stats_median(v, CS_QUIET_SAMPLES) - 1, 0);
	return 0;
}

/* How busy CPU c was over the window (0..1), or -1 when its time did not
 * move (not read, or a file of a test that does not change). */
static double cpu_busy(const struct quiet *q, int c)
{
	unsigned long long dt = q->t1[c].total - q->t0[c].total, db = q->t1[c].busy - q->t0[c].busy;

	if (q->t1[c].total <= q->t0[c].total || q->t1[c].busy < q->t0[c].busy)
		return -1;
	return fmin((double)db / (double)dt, 1);
}

/* The host-wide check, where the CPUs' own time is unknown: creators on
 * the first of the allowed CPUs, as many as the CPUs that other runnable
 * tasks leave. */
static int quiet_host_wide(struct probe_doc *doc, const struct quiet *q, int counts)
{
	long online = sysconf(_SC_NPROCESSORS_ONLN);
	int room = (int)(online - (long)q->others);
	char msg[200];

	if (room < 2) {
		probe_status(doc, PROBE_SKIPPED,
		             "the host is busy: %g other tasks runnable on %ld CPUs (median of "
		             "procs_running over %d samples in %.1f s); creators at once would "
		             "take CPUs its work needs",
		             q->others, online, CS_QUIET_SAMPLES, CS_QUIET_S);
		return 0;
	}
	snprintf(msg, sizeof(msg), "%g other tasks runnable on %ld CPUs", q->others, online);
	if (room < counts)
		snprintf(msg + strlen(msg), sizeof(msg) - strlen(msg),
		         ": %d creators at most, not %d", room, counts);
	probe_info_str(doc, "quiet_check", msg);
	return room < counts ? room : counts;
}

/* How many creators the host has idle CPUs for, on which CPUs (cpus[],
 * from the n allowed ones); below 2 the run is skipped (the document says
 * why). */
static int quiet_creators(struct probe_doc *doc, const struct cs_opts *co, const int *allowed,
                          int n, int *cpus)
{
	const char *path = co->proc_stat_later;
	struct quiet *q = xcalloc(1, sizeof(*q));
	int counts = n < CS_MAX_CREATORS ? n : CS_MAX_CREATORS, r = quiet_sample(co, q);
	int known = 0, idle = 0, k = 0;
	char msg[200];

	memcpy(cpus, allowed, sizeof(*cpus) * (size_t)counts);
	if (r < 0) {
		/* Unchecked, it takes no more than the least it needs. */
		snprintf(msg, sizeof(msg), "not made: %s: %s", path ? path : "/proc/stat",
		         strerror(-r));
		probe_info_str(doc, "quiet_check", msg);
		free(q);
		return counts < 2 ? counts : 2;
	}
	probe_info_num(doc, "others_running", q->others);
	for (int i = 0; i < n; i++) {
		double b = cpu_busy(q, allowed[i]);

		known |= b >= 0;
		if (b < 0 || b > CS_CPU_BUSY_MAX)
			continue;
		idle++;
		if (k < CS_MAX_CREATORS)
			cpus[k++] = allowed[i];
	}
	if (!known) {
		probe_info_str(doc, "cpu_check",
		               "not made: the CPUs' time in /proc/stat did not move");
		r = quiet_host_wide(doc, q, counts);
		free(q);
		return r;
	}
	probe_info_num(doc, "idle_cpus", idle);
	if (idle < 2) {
		probe_status(
		    doc, PROBE_SKIPPED,
		    "the host is busy: %d of the %d CPUs this process may use idle over "
		    "%.1f s (busy under half of it, by their time in /proc/stat); creators "
		    "at once would take CPUs its work needs",
		    idle, n, CS_QUIET_S);
		free(q);
		return 0;
	}
	snprintf(msg, sizeof(msg),
	         "%d of the %d CPUs this process may use idle over %.1f s; %g other tasks runnable "
	         "on the host",
	         idle, n, CS_QUIET_S, q->others);
	probe_info_str(doc, "quiet_check", msg);
	free(q);
	return k;
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
static int nocache_round(int counts, const int *cpus, double seconds, double *rates, char *tunables,
                         size_t tlen)
{
	char arg_n[16], arg_s[32], arg_c[64] = "", line[128];
	int fd[2], st, got = 0;
	FILE *f;
	pid_t pid;

	if (pipe(fd) < 0)
		return -errno;
	snprintf(arg_n, sizeof(arg_n), "%d", counts);
	snprintf(arg_s, sizeof(arg_s), "%.17g", seconds);
	for (int i = 0; i < counts; i++)
		snprintf(arg_c + strlen(arg_c), sizeof(arg_c) - strlen(arg_c), "%s%d", i ? "," : "",
		         cpus[i]);
	pid = fork();
	if (pid < 0) {
		close(fd[0]);
		close(fd[1]);
		return -errno;
	}
	if (pid == 0) {
		char a0[] = "createscale", a1[] = CS_CHILD_OPT, env[] = CS_NOCACHE_ENV;
		char *argv[] = {a0, a1, arg_n, arg_s, arg_c, NULL};
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
	static int allowed[CPU_SETSIZE];
	int cpus[CS_MAX_CREATORS], n_allowed = allowed_cpus(allowed, CPU_SETSIZE), counts;
	int rounds = po->quick ? CS_QUICK_ROUNDS : CS_ROUNDS, r = 0, nocache_ok = 1;
	double arm_s = po->quick ? CS_QUICK_ARM_S : CS_ARM_S;
	struct stats_rng rng;
	char list[64] = "", tunables[128] = "";

	if (n_allowed < 2) {
		probe_status(
		    doc, PROBE_SKIPPED,
		    "concurrent creators need two allowed CPUs; this process may run on %d",
		    n_allowed < 0 ? 0 : n_allowed);
		return;
	}
	counts = quiet_creators(doc, co, allowed, n_allowed, cpus);
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
				nocache_ok = nocache_round(counts, cpus, arm_s, nocache[i],
				                           tunables, sizeof(tunables)) == 0;
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

/* FILE, or FIRST,LATER: two readings of the kernel's file 0.1 s apart. */
static int set_proc_stat(const char *arg, void *ctx)
{
	struct cs_opts *co = ctx;
	const char *comma = strchr(arg, ',');

	if (!*arg || comma == arg || (comma && !comma[1]) ||
	    (comma && (size_t)(comma - arg) >= sizeof(co->first)))
		return -EINVAL;
	if (comma)
		snprintf(co->first, sizeof(co->first), "%.*s", (int)(comma - arg), arg);
	co->proc_stat = comma ? co->first : arg;
	co->proc_stat_later = comma ? comma + 1 : arg;
	return 0;
}

int main(int argc, char **argv)
{
	struct cs_opts co = {0};
	const struct probe_opt_ext ext[] = {
	    {"proc-stat",
	     "FILE or FIRST,LATER: /proc/stat's format to read procs_running and each CPU's "
	     "time from; with two, the check's first reading comes from FIRST (tests)",
	     1, set_proc_stat, &co},
	};
	struct probe_opts po;
	struct probe_doc *doc;
	int rc;

	if (argc == 5 && !strcmp(argv[1], CS_CHILD_OPT)) {
		/* the parent's creator count, arm time and creator CPUs */
		int cpus[CS_MAX_CREATORS], n = 0, want = atoi(argv[2]);
		char *end;

		for (const char *p = argv[4]; n < CS_MAX_CREATORS; p = end + 1) {
			long c = strtol(p, &end, 10);

			if (end == p || c < 0 || c >= CPU_SETSIZE)
				return 1;
			cpus[n++] = (int)c;
			if (*end != ',')
				break;
		}
		return want < 1 || n < want ? 1 : child_main(want, cpus, strtod(argv[3], NULL));
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
