/*
 * runner: runs one probe executable in its own process group under a
 * wall-clock limit, collects its stdout (bounded) and turns the outcome into
 * a validated document or an error with a reason. Shared by the CLI and the
 * daemon; it never runs probe code in the caller's process.
 */
#ifndef TW_RUNNER_H
#define TW_RUNNER_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "failure.h"

/* RUNNER_NOT_APPLICABLE: the probe measures something this architecture
 * does not have (map32 on arm64); a status of its own, not an error. */
enum runner_status { RUNNER_OK, RUNNER_SKIPPED, RUNNER_ERROR, RUNNER_NOT_APPLICABLE };

/* How gently probes run unless told otherwise, in the daemon (nice,
 * probe_sched) and in `threadwatch run` (--nice, --sched) alike. */
#define RUNNER_NICE_DEFAULT 10
#define RUNNER_STR_(x) #x
#define RUNNER_STR(x) RUNNER_STR_(x)
#define RUNNER_NICE_DEFAULT_STR RUNNER_STR(RUNNER_NICE_DEFAULT)

/* The probes' CPU scheduling policy, named by runner_sched_names (in this
 * order, NULL-terminated): the daemon's probe_sched and run's --sched.
 * PRICED picks per probe (runner_sched_for()): SCHED_IDLE, but SCHED_OTHER
 * at RUNNER_NICE_PRICED for a probe whose absolute times price the
 * services (catalog_probe.priced), since a switch between SCHED_IDLE
 * threads costs about a fifth more than between normal ones and the
 * services run at normal policy (bench/RESULTS.md, section 10). */
enum runner_sched { RUNNER_SCHED_NORMAL, RUNNER_SCHED_IDLE, RUNNER_SCHED_PRICED };
extern const char *const runner_sched_names[];
#define RUNNER_NICE_PRICED 19
/* The policy and niceness one probe runs at under the asked policy. */
void runner_sched_for(enum runner_sched asked, int nice, int priced, enum runner_sched *sched,
                      int *nice_out);

/* Which CPUs a probe may run on, named by runner_cpus_names (in this
 * order, NULL-terminated) or a CPU number: the daemon's probe_cpu and
 * run's --cpu. QUIET pins the whole probe to the one allowed CPU that has
 * taken the fewest interrupts (lib/placement.c), so that its munmap() and
 * mprotect() calls send no TLB shootdowns to the other CPUs and a
 * neighbour always has the rest of the host to itself; ALL leaves the
 * caller's set. */
enum runner_cpus { RUNNER_CPUS_ALL, RUNNER_CPUS_QUIET, RUNNER_CPUS_ONE };
extern const char *const runner_cpus_names[];

struct runner_cpu {
	enum runner_cpus how;
	int cpu; /* ONE: the CPU */
};

/* "all", "quiet" or a CPU number up to RUNNER_CPU_MAX. 0 or -EINVAL. */
#define RUNNER_CPU_MAX 8191
int runner_cpu_parse(const char *text, struct runner_cpu *out);
void runner_cpu_format(const struct runner_cpu *c, char *buf, size_t len);
/* Where a probe runs under the configured choice: a probe that pins its own
 * threads to several CPUs (own_cpus) keeps all of the caller's CPUs where
 * the choice is the quiet CPU; an explicit CPU or "all" stands. */
struct runner_cpu runner_cpu_for(const struct runner_cpu *configured, int own_cpus);

struct runner_opts {
	double timeout_s;            /* wall-clock limit; the group is killed after it */
	size_t max_output;           /* stdout bytes kept; more is an error (default 4 MiB) */
	int nice;                    /* added niceness for the probe (0: unchanged) */
	int idle_io;                 /* non-zero: ioprio class idle */
	enum runner_sched sched;     /* IDLE: SCHED_IDLE, preempted by any other task */
	struct runner_cpu cpus;      /* where it may run (zero: the caller's CPUs) */
	volatile sig_atomic_t *stop; /* when it becomes non-zero the probe is killed */
};

struct runner_result {
	enum runner_status status;
	char *reason; /* why it is an error (or the probe's skip reason); NULL for ok */
	json_t *doc;  /* the validated document (ok/skipped), or NULL */
	char *output; /* raw stdout as received (NUL-terminated, possibly truncated) */
	size_t output_len;
	char *err_tail;          /* the last (up to 4 KiB) bytes of stderr, NUL-terminated */
	int64_t started_unix_ms; /* wall clock at start */
	double wall_s;           /* measured by the runner */
	double cpu_s;            /* user + system of the probe's children */
	int exit_code;           /* -1 when killed by a signal */
	int term_signal;         /* 0 unless killed by a signal */
	struct failure failure;  /* for RUNNER_ERROR: a crash, the time limit or another error */
	int cpu;                 /* the CPU it was pinned to, -1: not pinned */
};

/* Runs `path` with `argv` (argv[0] is the probe's name). Always fills `res`
 * (an error run is still a result); returns 0, or -errno only for failures
 * of the runner itself (pipe, fork). */
int runner_run(const char *path, char *const argv[], const struct runner_opts *opts,
               struct runner_result *res);

void runner_result_clear(struct runner_result *res);

/* Finds a probe by name: an executable `name` in one of the directories
 * (colon-separated). Returns a malloc'd path or NULL. */
char *runner_find_probe(const char *dirs, const char *name);

/* probes/ beside the running executable (/proc/self/exe) when it holds one
 * of the n probes named: a build tree, where build/threadwatchd sits next
 * to build/probes/. A malloc'd path, or NULL (an installed program). */
char *runner_probes_beside_exe(const char *const *names, size_t n);

#endif
