/*
 * observe: the workload observer. Over a window it sees, for each workload
 * on the host (a systemd unit, a cgroup of its own, or a process by its
 * executable and comm), its live threads, the threads it creates and ends,
 * its context switches and migrations summed over every thread, and its
 * thread stacks (resident bytes, and those backed by huge pages), from the
 * kernel's own interfaces: the proc connector, /proc and PAGEMAP_SCAN. It
 * reads, never writes, and costs what its document says it cost.
 */
#ifndef TW_OBSERVE_H
#define TW_OBSERVE_H

#include <stddef.h>

#include <jansson.h>

/* The help of the options threadwatch workloads and threadwatch-observer
 * share, written once. */
#define OBS_HELP_EXACT_SWITCHES                                                                    \
	"count the switches of threads that end within a window too (taskstats: CAP_NET_ADMIN, a " \
	"message per exit)"
#define OBS_HELP_NO_EVENT_FILTER                                                                   \
	"count every thread's exit one by one (the BPF counter's exit program, or every "          \
	"connector event, EXIT too) rather than derive each process's exits from its threads"

#define OBS_HELP_READ_ALL_THREADS                                                                  \
	"read every thread's counts at a window's end, a quiet process's too (one none of whose "  \
	"threads ran, as taskstats's sums of its threads show)"

#define OBS_HELP_NO_BPF                                                                            \
	"count creates and exits with the proc connector (a netlink message per create) rather "   \
	"than the BPF counter (CAP_BPF and CAP_PERFMON, counts kept in the kernel)"

/* The size of the kernel's struct proc_input (include/uapi/linux/cn_proc.h). */
#define OBS_CN_FILTER_LEN 8

struct obs_options {
	double window_s;  /* the window, seconds (> 0) */
	int by_process;   /* split every workload by process */
	const char *proc; /* the proc mount ("/proc" when NULL) */
	int no_connector; /* count creates and exits with neither counter */
	int no_bpf;       /* the proc connector, not the BPF counter */
	/* 0: every connector event; else FORK and EXEC alone where the kernel
	 * filters (Linux 6.6), asked as a struct proc_input of this many bytes
	 * (OBS_CN_FILTER_LEN; another length is a test's seam) */
	size_t cn_filter_len;
	int read_all_threads; /* read a quiet process's threads at the end too */
	int exact_switches;   /* count the switches of threads that end, from
	                       * taskstats (CAP_NET_ADMIN; a message per exit) */
	volatile int *stop;   /* ends the window early when it becomes non-zero; may be NULL */
	/* NULL: the window reads every thread at both ends. Else *carry (NULL
	 * at first) is the last window's end, taken as this one's start, and
	 * gets this one's end: one read of each thread a window, its
	 * descriptor kept open between windows (the observer service). */
	struct obs_carry **carry;
};

/* The cn_filter_len to ask with: OBS_CN_FILTER_LEN, or the test seam's
 * THREADWATCH_TEST_CN_FILTER_LEN (9 to 16: a length every kernel ignores,
 * which takes the path of a kernel before 6.6). */
size_t obs_cn_filter_len(void);

/* Closes the descriptors a carry holds and frees it. NULL-safe. */
struct obs_carry;
void obs_carry_free(struct obs_carry *c);

/* Observes for o->window_s and returns the document
 *   {window_s, processes, threads, workloads: [..], mechanisms: {..},
 *    observer: {cpu_s, share_of_cpu, ...}}
 * with every workload's figures, unpriced (obs_price() adds the costs).
 * NULL with the reason in err when nothing could be observed (no /proc). */
json_t *obs_observe(const struct obs_options *o, char *err, size_t errlen);

/* Prices each workload of `doc` at the host's measured costs: `inputs` is
 * a recommendation-inputs object (threadwatch run --json's
 * recommendation.inputs), whose ctxsw, handoff, createscale and stackmem
 * sections give the cost of a switch, a hand-off across CPUs, a create and
 * an idle glibc stack; any may be missing, and a figure it would price is
 * then null with the reason. Adds `costs`, `findings` and `recommendation`
 * to each workload, `prices` to the document, and sorts the workloads by
 * cost, dearest first. inputs NULL: no prices, sorted by activity. */
void obs_price(json_t *doc, const json_t *inputs);

/* The document as a top-like table (malloc'd); every name another user
 * wrote is escaped, so the text holds no control byte. */
char *obs_text(const json_t *doc, size_t top);

#endif
