/*
 * observep: the private header of the workload observer (observe.h), whose
 * parts share it: the proc connector (observe_cn.c), a process's /proc
 * files (observe_proc.c), its cgroup and unit (observe_cgroup.c), its
 * thread stacks (observe_stacks.c), the window (observe.c), the prices
 * (observe_price.c) and the table (observe_text.c). The parsers here are
 * pure, for the unit tests and the fuzz harness.
 */
#ifndef TW_OBSERVEP_H
#define TW_OBSERVEP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* --- the proc connector (drivers/connector/cn_proc.c) ------------------ */

enum obs_ev_what { OBS_EV_OTHER, OBS_EV_FORK, OBS_EV_EXEC, OBS_EV_EXIT, OBS_EV_ACK };

/* One event. FORK: pid/tgid are the child's, ppid/ptgid the parent's (a
 * new thread has pid != tgid). EXEC and EXIT: pid/tgid are the task's.
 * ACK: the answer to our LISTEN, err its errno (0: listening). */
struct obs_ev {
	enum obs_ev_what what;
	pid_t pid, tgid, ppid, ptgid;
	uint32_t seq, ack, err;
};

/* Parses one datagram read from a connector socket into at most `max`
 * events. Each netlink message is checked for its length, its type
 * (NLMSG_DONE, as cn_netlink_send() sends), the connector id (CN_IDX_PROC,
 * CN_VAL_PROC) and a payload long enough for the fields its event type
 * reads; a message that fails is counted in *bad and skipped. Returns the
 * number of events. */
size_t obs_cn_parse(const void *buf, size_t len, struct obs_ev *evs, size_t max, size_t *bad);

struct obs_cn {
	int fd;
	uint32_t seq, ack;
	uint64_t overruns;   /* recv() answered ENOBUFS: events were dropped */
	uint64_t bad;        /* messages obs_cn_parse() refused */
	int rcvbuf;          /* the receive buffer the kernel granted, bytes */
	int filtered;        /* the kernel sends FORK and EXEC alone (Linux 6.6) */
	char filter_why[96]; /* why not, when not */
};

/* Opens a connector socket and asks cn_proc for its events (the LISTEN
 * op), then proves that it hears: a thread this process starts must come
 * back as a FORK event. filter_len non-zero first asks for FORK and EXEC
 * alone, as a struct proc_input of that many bytes (8; the test seam
 * sends another length, which every kernel ignores as one before 6.6
 * ignores 8), and falls back to every event when the canary does not
 * come. 0, or -errno with the reason in err: -EPROTONOSUPPORT no
 * connector here, -EPERM the kernel refused (CAP_NET_ADMIN before Linux
 * 6.6), -ETIMEDOUT no answer or no event (a PID or user namespace other
 * than the initial one, where cn_proc_mcast_ctl() ignores the request). */
int obs_cn_open(struct obs_cn *cn, size_t filter_len, char *err, size_t errlen);
/* Reads what is queued, without blocking, into evs: the count, 0 when
 * nothing is queued, or -errno. */
int obs_cn_read(struct obs_cn *cn, struct obs_ev *evs, size_t max);
/* Sends IGNORE (cn_proc counts its listeners) and closes. NULL-safe. */
void obs_cn_close(struct obs_cn *cn);

/* --- the in-kernel counter: BPF on raw tracepoints (observe_bpf.c) ----- */

/* One thread group's counts since it was last drained. */
struct obs_bpf_val {
	uint64_t creates; /* threads it created (task_newtask, CLONE_THREAD) */
	uint64_t exits;   /* its threads that ended, the leader apart */
	uint64_t execs;   /* programs it began */
	uint64_t ends;    /* its leader ended (the process, or pthread_exit()) */
};
/* The programs' tally, summed over CPUs: every task created (a process or
 * a thread), events lost to a full map, the programs' runs, and the run
 * time of a random sixteenth of them (timed). */
struct obs_bpf_stats {
	uint64_t forks, lost, runs, timed, run_ns;
	uint64_t creates, exits, execs, ends; /* as struct obs_bpf_val */
};
struct obs_bpf_seen {
	pid_t tgid;
	struct obs_bpf_val v; /* its count when last read */
};
struct obs_bpf {
	int tgids, stats; /* the maps */
	int prog[3], link[3];
	int ncpus;
	int exits;                 /* the exit program is attached: exits counted */
	struct obs_bpf_seen *seen; /* each entry's count at the last drain, by tgid */
	size_t nseen;
	uint64_t taken_out; /* entries of ended processes taken out of the map */
};
/* Marks every descriptor closed, for obs_bpf_close() on one never opened. */
void obs_bpf_init(struct obs_bpf *b);
/* Loads the programs (the exit program too with `exits`), attaches them
 * and proves them: a thread this process starts (and ends) must be
 * counted under its tgid. 0, or -errno with the reason in err (-EPERM: no
 * CAP_BPF and CAP_PERFMON; -ETIMEDOUT: another PID namespace). */
int obs_bpf_open(struct obs_bpf *b, int exits, char *err, size_t errlen);
/* Reads every entry of the map, calling fn with what each added since the
 * last drain (nothing at the first, which sets where counting starts); an
 * ended process's entry is then taken out. The count of entries, or
 * -errno. */
typedef void (*obs_bpf_fn)(void *arg, pid_t tgid, const struct obs_bpf_val *v);
int obs_bpf_drain(struct obs_bpf *b, obs_bpf_fn fn, void *arg);
/* The tally since the programs were loaded: 0 or -errno. */
int obs_bpf_stats(const struct obs_bpf *b, struct obs_bpf_stats *s);
/* Detaches the programs (nothing more is counted; the maps stay). */
void obs_bpf_detach(struct obs_bpf *b);
/* Detaches and closes. NULL-safe. */
void obs_bpf_close(struct obs_bpf *b);

/* --- taskstats: threads' switches as they exit, a group's sums (observe_ts.c) */

struct obs_ts {
	int fd;
	uint16_t family; /* the TASKSTATS generic netlink family */
	uint32_t seq;
	int registered;
	char cpus[256]; /* the cpumask registered ("0-1") */
	uint64_t overruns, bad;
};

/* One task's exit: its tid, its tgid (0 before struct taskstats v12),
 * and its switch counts at exit. */
struct obs_ts_exit {
	pid_t tid, tgid;
	uint64_t vol, invol;
};

/* Resolves the family, registers a listener for every possible CPU. 0, or
 * -errno with the reason in err (-EPERM: no CAP_NET_ADMIN). */
int obs_ts_open(struct obs_ts *ts, char *err, size_t errlen);

/* A thread group's sums over its live threads (fill_stats_for_tgid()):
 * voluntary and involuntary switches, and, where delayacct_add_tsk() is
 * built (CONFIG_TASK_DELAY_ACCT), the times put on a CPU
 * (sched_info.pcount) and the run time (se.sum_exec_runtime), else 0.
 * Equal sums at two moments over the same threads: none of them was
 * switched out between (and, with the run time, none ran). */
struct obs_tgsum {
	uint64_t vol, invol, ran, run_ns;
};
/* A socket for thread groups' queries, proven on this process, whose sums
 * go to *self. 0, or -errno with the reason in err (-EPERM: no
 * CAP_NET_ADMIN; -ENOENT: no taskstats family here). */
int obs_ts_query_open(struct obs_ts *ts, struct obs_tgsum *self, char *err, size_t errlen);
/* One group's sums: 0, or -errno (-ESRCH: no such process). The kernel
 * adds them up under the group's siglock with interrupts off, about 50 ns
 * a thread: callers bound the threads they ask for. */
int obs_ts_tgid(struct obs_ts *ts, pid_t tgid, struct obs_tgsum *out);
/* The answer to request `seq` for tgid in a datagram: 0 with *out, the
 * kernel's -errno, -ENOMSG when the datagram holds no answer to it, or
 * -EINVAL for a malformed one. */
int obs_ts_parse_sum(const void *buf, size_t len, uint16_t family, uint32_t seq, pid_t tgid,
                     struct obs_tgsum *out);
/* Reads one datagram's exits without blocking: the count, 0, or -errno. */
int obs_ts_read(struct obs_ts *ts, struct obs_ts_exit *out, size_t max);
/* Parses a datagram: each message of `family` whose AGGR_PID holds a PID
 * and a struct taskstats long enough for nvcsw and nivcsw is an exit; any
 * other attribute is passed over, a malformed one counted in *bad. */
size_t obs_ts_parse(const void *buf, size_t len, uint16_t family, struct obs_ts_exit *out,
                    size_t max, size_t *bad);
/* CTRL_ATTR_FAMILY_ID of a CTRL_CMD_NEWFAMILY payload (after the netlink
 * header), or 0. */
uint16_t obs_ts_family_id(const void *genl, size_t len);
/* Deregisters and closes. NULL-safe. */
void obs_ts_close(struct obs_ts *ts);

/* --- a process's /proc files ------------------------------------------- */

/* /proc/PID/stat: comm (up to 16 bytes, as the kernel keeps it, any byte
 * but NUL), the parent, whether it is a kernel thread (PF_KTHREAD in its
 * flags: no service's), the threads and the start time in clock ticks. */
#define OBS_PF_KTHREAD 0x00200000ULL /* include/linux/sched.h */
struct obs_stat {
	char comm[17];
	pid_t ppid;
	int kthread;
	long threads;
	unsigned long long starttime;
};
/* 0, or -EINVAL when the text is not a stat line. comm is read between the
 * first '(' and the last ')', since a name may hold ") " itself. */
int obs_stat_parse(const char *text, struct obs_stat *st);

/* A thread's counts from /proc/PID/task/TID/sched (nr_voluntary_switches,
 * nr_involuntary_switches, se.nr_migrations: proc_sched_show_task()) or,
 * without it, status (voluntary_ctxt_switches, nonvoluntary_ctxt_switches:
 * task_context_switch_counts()), which has no migrations. */
struct obs_counts {
	uint64_t vol, invol, migr;
	int have_migr;
};
/* 0, or -EINVAL when the text holds neither switch count. */
int obs_sched_parse(const char *text, struct obs_counts *c);

/* --- cgroups and units --------------------------------------------------- */

/* Where a process belongs, from /proc/PID/cgroup (proc_cgroup_show():
 * "ID:CONTROLLERS:PATH" lines). The path is that of the hierarchy systemd
 * tracks processes in: cgroup v2's ("0::"), or v1's name=systemd where the
 * host is hybrid or legacy. unit is the systemd unit the path names
 * (services, scopes and the like; slices are containers, not units), and
 * for a user manager's unit, manager names it ("user@1000.service"). */
struct obs_cgroup {
	char *path;            /* NULL: no such hierarchy */
	char *unit;            /* NULL: none */
	char *manager;         /* NULL: the system's */
	const char *hierarchy; /* "v2", "v1 name=systemd" or NULL */
};
/* 0 (fields may be NULL), or -EINVAL for text that is not a cgroup file. */
int obs_cgroup_parse(const char *text, struct obs_cgroup *cg);
void obs_cgroup_free(struct obs_cgroup *cg);
/* 1 when s is a unit name systemd would accept for a unit a process can
 * run in (unit_name_is_valid(): a prefix of [A-Za-z0-9:_.\-] and \x
 * escapes, an optional @instance, and one of the suffixes). */
int obs_unit_name_valid(const char *s, size_t n);

/* --- thread stacks --------------------------------------------------------- */

struct obs_vma {
	uint64_t start, end;
};
/* The thread stacks in a /proc/PID/maps text: a private anonymous
 * read-write mapping directly above a private anonymous PROT_NONE one of
 * at most OBS_GUARD_MAX bytes (glibc's guard page, allocate_stack(); the
 * JVM's red, yellow and reserved zones), and neither the main thread's
 * [stack] nor a named mapping. *out is malloc'd (NULL when none); returns
 * the count. */
#define OBS_GUARD_MAX (1024 * 1024)
size_t obs_stacks_find(const char *maps, struct obs_vma **out);

struct obs_stack_use {
	uint64_t resident, huge; /* bytes present, and of them on huge pages */
	int thp;                 /* any part on a huge page */
};
/* PAGEMAP_SCAN (Linux 6.7) over each stack: present pages and huge ones.
 * 0, or -errno (-ENOTTY: a kernel without it, -EACCES: no ptrace read). */
int obs_pagemap_scan(int pagemap_fd, const struct obs_vma *v, size_t n, struct obs_stack_use *use);
/* The fallback before 6.7: the Rss and AnonHugePages of each stack VMA in
 * a /proc/PID/smaps text. 0, or -EINVAL. */
int obs_smaps_stacks(const char *smaps, const struct obs_vma *v, size_t n,
                     struct obs_stack_use *use);

/* --- one window ---------------------------------------------------------- */

/* The processes whose sums taskstats is asked for: at least OBS_SUM_MIN
 * threads (one thread is one read either way) and at most OBS_SUM_MAX
 * (the kernel sums them with interrupts off: about 50 us at 1,000). */
#define OBS_SUM_MIN 2
#define OBS_SUM_MAX 1000

/* Bounds of what one process's files may hold: maps of 100,000 threads is
 * about 15 MB; smaps is read (before 6.7) only for a process of at most
 * OBS_SMAPS_VMAS mappings. */
#define OBS_MAPS_MAX (64 << 20)
#define OBS_SMAPS_VMAS 2000

struct obs_tcount {
	pid_t tid;
	struct obs_counts c;
	int fd;   /* its sched (or status) file, kept open from the start; -1 */
	int gone; /* taskstats reported its exit: a tid seen again is new */
};

/* A process as the window saw it; a PID that is reused is a new entry. */
struct obs_proc {
	pid_t tgid, ppid;
	unsigned long long starttime;
	char comm[17];
	char *exe; /* NULL: unreadable (exe_errno) */
	int exe_errno;
	struct obs_cgroup cg;
	long threads; /* at the end (or when last seen) */
	int gone;     /* ended within the window */
	int counted;  /* its threads were read at the end */
	int have_migr;
	int counts_errno; /* why its threads could not be read */
	/* when its threads were read at the start (or it was first seen) and
	 * at the end: its switches are over that time, which a long sweep
	 * makes differ from one process to the next */
	double t_read0, t_read1;
	uint64_t creates, exits, vol, invol, migr;
	/* for exits without EXIT events (obs_exits_derived()): the threads it
	 * held when first seen, whether its end was read and the threads then,
	 * and whether an exec handed it on to a later entry */
	uint64_t born;
	int seen_end, handed;
	long nend;
	/* taskstats: exits accounted (threads other than the leader, and the
	 * leader), and their switches within the window */
	uint64_t ts_thread_exits, ts_leader_exits, ts_vol, ts_invol;
	struct obs_tcount *start; /* its threads at the start */
	size_t nstart;
	struct obs_tcount *end; /* at the end, kept for the next window (nend) */
	/* its threads' sums (taskstats) just before the start's and the end's
	 * reads; a window in which they stayed equal over the same threads is
	 * quiet: its threads are not read again */
	struct obs_tgsum sum0, sum1;
	int have_sum0, have_sum1, quiet;
	int stacks_measured, stacks_errno;
	long vmas; /* lines of its maps at the end; < 0: -errno, 0: not read */
	size_t nstacks, stack_thp;
	uint64_t stack_res, stack_huge;
};

/* A process's thread exits over the window when the connector sent no
 * EXIT (a filtered listener): the threads it held when first seen, plus
 * those created, less those it holds at the end; a process that ended
 * leaves its leader, whose end is no thread's exit. Exact but for the
 * creates that fall between the connector's start and the process's
 * first read, whichever came first (counted twice when the connector
 * came first; unheard when the read did, as threadwatch-observer's last
 * window's end does), or between the connector's end and its last read
 * (unheard): each is off by one exit. */
uint64_t obs_exits_derived(const struct obs_proc *p);

struct obs_run {
	int procfd;
	int no_sched, no_pagemap_scan;
	size_t fds_kept, fds_max; /* descriptors kept from the start, and the bound */
	size_t threads_read, smaps_read, smaps_skipped;
	size_t threads_carried; /* threads whose start was the last window's end */
	struct obs_proc *procs;
	size_t nprocs, cap;
	long *slots; /* open addressing: tgid -> index of its latest entry, -1 empty */
	size_t nslots;
	/* what the connector told */
	uint64_t forks_heard, process_forks, thread_creates, thread_exits;
	uint64_t unattributed_creates, unattributed_exits;
	int exact;                /* taskstats listened */
	uint64_t ts_unattributed; /* exits whose process could not be told */
	double t_window0;         /* clock_mono_s() at the end of the start's sweep */
	struct obs_carry *carry;  /* the last window's end, taken as this start */
	/* taskstats's queries of thread groups (quiet processes are not read
	 * at the end): tsq NULL when not asked for or refused (tsq_why) */
	struct obs_ts *tsq;
	int tsq_runs; /* its sums carry run times, not switches alone */
	char tsq_why[256];
	char tsq_stopped[256]; /* why it stopped answering mid-sweep ("": it did not) */
	size_t quiet_procs, quiet_threads, sums_asked;
	int keep_end; /* the end is kept for the next window */
};

/* The table of processes (observe_table.c): the latest entry of a tgid, or
 * -1; a new entry for tgid, which becomes its latest; everything freed. */
long obs_table_find(const struct obs_run *r, pid_t tgid);
size_t obs_table_add(struct obs_run *r, pid_t tgid);
void obs_table_free(struct obs_run *r);

/* The reads of one process (observe_read.c), through its /proc directory
 * (obs_proc_open(): a descriptor, or -errno once it is gone). */
int obs_proc_open(struct obs_run *r, pid_t pid);
int obs_proc_identify(int pdir, struct obs_proc *p);
/* Its stat alone: 0, -ECHILD for a kernel thread, or -errno. */
int obs_proc_stat(int pdir, struct obs_stat *st);
/* The tids of a process's threads, sorted: the count, or -errno; *taskdir
 * gets its task directory, open, and *out a malloc'd array. */
long obs_tids_list(int pdir, int *taskdir, pid_t **out);
/* 1 when tids (sorted) are the threads of start, none reported ended. */
int obs_tids_same(const pid_t *tids, size_t n, const struct obs_tcount *start, size_t nstart);
/* The counts of the threads tids (sorted), in the same order, leaving out
 * those that ended meanwhile: at the start (start NULL) each file's
 * descriptor is kept while r->fds_max allows; at the end, a thread of start
 * is read through its descriptor, which `keep` hands on to the end's entry
 * (a new thread's is then kept too: the end is the next window's start).
 * The count. */
long obs_threads_read(struct obs_run *r, int taskdir, const pid_t *tids, size_t ntids,
                      struct obs_tcount *start, size_t nstart, int keep, struct obs_tcount **out);
void obs_tcounts_close(struct obs_run *r, struct obs_tcount *t, size_t n);
void obs_counts_delta(struct obs_proc *p, const struct obs_tcount *end, size_t n);
/* A thread of start (sorted by tid), or NULL. */
struct obs_tcount *obs_tcount_find(struct obs_tcount *start, size_t n, pid_t tid);
void obs_stacks_read(struct obs_run *r, int pdir, struct obs_proc *p);
/* Its mappings (lines of maps) into p->vmas, for a process whose stacks
 * were not read (-errno when maps is unreadable). */
void obs_vmas_count(int pdir, struct obs_proc *p);
/* /proc/stat's processes: every task created since boot. */
int obs_host_forks(struct obs_run *r, uint64_t *n);

/* --- one window's end as the next one's start (observe_carry.c) -------- */

struct obs_carry_proc {
	pid_t tgid;
	unsigned long long starttime;
	struct obs_tcount *t; /* its threads at the end, descriptors open */
	size_t n;
	struct obs_tgsum sum; /* its sums just before (have_sum) */
	int have_sum;
	double t_read; /* when they were read */
};
struct obs_carry {
	struct obs_carry_proc *procs; /* sorted by tgid */
	size_t n;
	size_t fds; /* descriptors it holds */
};
/* Gives p (identified: tgid and start time) the threads the last window
 * ended with as its start: 1, or 0 when it has none (a new process, or a
 * reused PID). */
int obs_carry_take(struct obs_run *r, struct obs_carry *c, struct obs_proc *p);
/* Closes what no process took, and counts it off r->fds_kept. */
void obs_carry_drop_rest(struct obs_run *r, struct obs_carry *c);
/* The end of window r as the next one's start: each process read at the
 * end hands over its threads and their descriptors. */
struct obs_carry *obs_carry_make(struct obs_run *r);

/* What counted the window's creates and exits: the BPF counter, else the
 * proc connector, else neither; each one's answer, and what the host's
 * own count (/proc/stat's processes) says was created meanwhile. */
struct obs_counter {
	struct obs_bpf bpf;
	struct obs_cn cn;
	int bpf_rc, cn_rc; /* 0: it counted */
	char bpf_why[256], cn_why[256];
	struct obs_bpf_stats tally0, tally; /* the BPF counter's: at the start, over the window */
	int have_forks;
	uint64_t host_forks;
};

/* The workloads of a window (observe_group.c) as the document's list:
 * each process's switches and migrations over its own reading times,
 * creates and exits (and the switches of processes that ended) over
 * events_s (0: the connector did not listen: creates and exits null). */
struct json_t;
struct json_t *obs_group(struct obs_run *r, int by_process, double events_s);
/* A JSON string of text another user wrote: as it is when it is UTF-8,
 * escaped (escape_text()) when not. */
struct json_t *obs_jstr(const char *s);
/* The process with the most mappings, the figure vm.max_map_count bounds
 * (observe_group.c): {pid, comm, vmas, processes_scanned,
 * processes_unreadable}, vmas null when none could be read. */
struct json_t *obs_largest_vmas(const struct obs_run *r);
/* How each figure was obtained here and what could not be seen
 * (observe_mech.c): cn_rc and cn_why are obs_cn_open()'s answer. */
struct json_t *obs_mechanisms(const struct obs_run *r, const struct obs_counter *k);
/* The BPF counter's own run time over the window, seconds: the timed runs'
 * time scaled to every run (0 without it). */
double obs_bpf_run_s(const struct obs_counter *k);
/* mechanisms.switches.exited_threads: taskstats's answer (ts_rc, ts_why)
 * and tally, or that it was not asked for (asked 0). */
struct json_t *obs_mech_exits(const struct obs_run *r, const struct obs_ts *ts, int asked,
                              int ts_rc, const char *ts_why);

#endif
