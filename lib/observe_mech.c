/*
 * observe_mech: the document's `mechanisms`, how each figure was obtained
 * on this host and what could not be seen, as data: the proc connector's
 * answer (or the BPF counter's) and tally against /proc/stat, the files the counts came from, the
 * stack measure, and the privileges the observer ran with.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "file_read.h"
#include "jnum.h"
#include "observep.h"

/* Capability bits (include/uapi/linux/capability.h). */
#define CAP_BIT_NET_ADMIN 12
#define CAP_BIT_SYS_PTRACE 19
#define CAP_BIT_PERFMON 38
#define CAP_BIT_BPF 39

static unsigned long long cap_eff(void)
{
	char *text = NULL, *p;
	unsigned long long caps = 0;

	if (file_read_all("/proc/self/status", 1 << 16, &text, NULL) < 0)
		return 0;
	p = strstr(text, "\nCapEff:");
	if (p)
		sscanf(p + 8, "%llx", &caps);
	free(text);
	return caps;
}

/* Where the exits came from: the BPF counter's, the connector's EXIT
 * events, or, where the kernel filters them out (Linux 6.6), each
 * process's threads. */
static json_t *exits_json(const struct obs_run *r, const struct obs_counter *k)
{
	int bpf = k->bpf_rc == 0;

	if (bpf && k->bpf.exits)
		return json_pack(
		    "{s:s s:b}", "source",
		    "sched_process_exit of each thread but the leader, counted under its "
		    "tgid in the kernel (--no-event-filter)",
		    "event_filter", 0);
	if (!bpf && !k->cn.filtered)
		return json_pack(
		    "{s:s s:b s:s}", "source",
		    "EXIT events of the proc connector whose pid differs from its tgid",
		    "event_filter", 0, "why_not_filtered", k->cn.filter_why);
	return json_pack(
	    "{s:s s:b s:I s:s}", "source",
	    bpf ? "derived for each process: the threads it held when first read, plus "
	          "those created, less those it holds at the end (the BPF counter has "
	          "no program in every ending thread, which halves its cost; "
	          "--no-event-filter counts them one by one)"
	        : "derived for each process: the threads it held when first read, plus "
	          "those created, less those it holds at the end (the connector sends "
	          "FORK and EXEC alone: half the messages under churn)",
	    "event_filter", 1, "thread_exits_derived", (json_int_t)r->thread_exits, "bound",
	    "a create between the counter's start and the process's first read, "
	    "whichever came first (for threadwatch-observer, the last window's end "
	    "does), or between the counter's end and its last read, is off by one "
	    "exit");
}

/* The counter that counted: BPF's figures, or the connector's. */
static json_t *counter_json(const struct obs_counter *k)
{
	if (k->bpf_rc == 0)
		return json_pack(
		    "{s:s s:s s:I s:I s:I s:I s:o}", "counter", "bpf", "how",
		    "BPF programs on the raw tracepoints task_newtask (a create with CLONE_THREAD, "
		    "in the creating thread, whose tgid is the new thread's), sched_process_exec "
		    "and, "
		    "with --no-event-filter, sched_process_exit add to a count per tgid in a "
		    "kernel map, drained each "
		    "second: no message per event. run_s is their own clock's (a random sixteenth "
		    "of runs timed), which misses the tracepoint's call into them: a lower bound",
		    "runs", (json_int_t)k->tally.runs, "timed_runs", (json_int_t)k->tally.timed,
		    "lost", (json_int_t)k->tally.lost, "ended_taken_out",
		    (json_int_t)k->bpf.taken_out, "run_s", jnum(obs_bpf_run_s(k)));
	return json_pack("{s:s s:s s:I s:I s:o}", "counter", "connector", "how",
	                 "the proc connector (cn_proc): a FORK event whose child pid differs from "
	                 "its tgid is a new thread of that tgid",
	                 "overruns", (json_int_t)k->cn.overruns, "malformed", (json_int_t)k->cn.bad,
	                 "bpf_why", obs_jstr(k->bpf_why));
}

static json_t *creates_json(const struct obs_run *r, const struct obs_counter *k)
{
	int on = k->bpf_rc == 0 || k->cn_rc == 0;
	json_t *c = json_pack("{s:s s:b}", "source",
	                      k->bpf_rc == 0 ? "the BPF counter: a count per tgid of the threads "
	                                       "it creates and ends, kept in the kernel"
	                                     : "the proc connector (cn_proc): a FORK event whose "
	                                       "child pid differs from its tgid is a new thread "
	                                       "of that tgid",
	                      "available", on);

	if (!on) {
		char why[600];

		snprintf(why, sizeof(why), "%s; and %s", k->bpf_why, k->cn_why);
		json_object_set_new(c, "why", obs_jstr(why));
		return c;
	}
	json_object_set_new(c, "mechanism", counter_json(k));
	json_object_set_new(c, "forks_heard", json_integer((json_int_t)r->forks_heard));
	json_object_set_new(c, "thread_creates_heard", json_integer((json_int_t)r->thread_creates));
	json_object_set_new(c, "thread_exits_heard",
	                    (k->cn_rc == 0 && k->cn.filtered) || (k->bpf_rc == 0 && !k->bpf.exits)
	                        ? json_null()
	                        : json_integer((json_int_t)r->thread_exits));
	json_object_set_new(c, "exits", exits_json(r, k));
	json_object_set_new(c, "host_tasks_created",
	                    k->have_forks ? json_integer((json_int_t)k->host_forks) : json_null());
	/* what /proc/stat counted and the counter did not */
	json_object_set_new(
	    c, "missed",
	    k->have_forks ? json_integer((json_int_t)k->host_forks - (json_int_t)r->forks_heard)
	                  : json_null());
	json_object_set_new(c, "overruns", json_integer((json_int_t)k->cn.overruns));
	json_object_set_new(c, "malformed", json_integer((json_int_t)k->cn.bad));
	json_object_set_new(c, "unattributed_creates",
	                    json_integer((json_int_t)r->unattributed_creates));
	json_object_set_new(c, "unattributed_exits",
	                    json_integer((json_int_t)r->unattributed_exits));
	json_object_set_new(
	    c, "unattributed_why",
	    json_string(k->bpf_rc == 0
	                    ? "the process ended before its /proc directory could be read (it "
	                      "began and ended between two drains of the count), or is outside "
	                      "this PID namespace"
	                    : "the process ended before its /proc directory could be read, or is "
	                      "outside this PID namespace"));
	return c;
}

/* mechanisms.switches.quiet: the processes whose threads were not read at
 * the end because taskstats's sums showed none of them ran. */
static json_t *quiet_json(const struct obs_run *r)
{
	json_t *q = json_pack(
	    "{s:s s:s s:b}", "source",
	    "taskstats's sums over a thread group's live threads (TASKSTATS_CMD_ATTR_TGID, "
	    "fill_stats_for_tgid(): nvcsw and nivcsw, and with CONFIG_TASK_DELAY_ACCT "
	    "sched_info.pcount and se.sum_exec_runtime), asked just before the reads at each end "
	    "of the window, between two listings of its threads that agree, for a process of 2 to "
	    "1,000 threads",
	    "rule",
	    "equal sums over the same threads (the same tids, no create counted): none of them was "
	    "switched out, so each switch count at the end is the one read at the start, and, with "
	    "the run times, none ran, so no migration either; without them (runs_compared false) "
	    "a thread moved to another CPU that has not yet been switched out is counted in a "
	    "later window, or not at all in a one-off window",
	    "available", r->tsq_why[0] == '\0');

	if (r->tsq_why[0]) {
		json_object_set_new(q, "why", obs_jstr(r->tsq_why));
		return q;
	}
	json_object_set_new(q, "tally",
	                    json_pack("{s:I s:I s:I s:b}", "asked", (json_int_t)r->sums_asked,
	                              "quiet_processes", (json_int_t)r->quiet_procs,
	                              "threads_not_read", (json_int_t)r->quiet_threads,
	                              "runs_compared", r->tsq_runs));
	if (r->tsq_stopped[0])
		json_object_set_new(q, "stopped", obs_jstr(r->tsq_stopped));
	return q;
}

json_t *obs_mechanisms(const struct obs_run *r, const struct obs_counter *k)
{
	unsigned long long caps = cap_eff();
	const char *hier = NULL;
	json_t *m;

	for (size_t i = 0; i < r->nprocs && !hier; i++)
		hier = r->procs[i].cg.hierarchy;
	m = json_pack(
	    "{s:s s:s? s:o s:{s:s s:s} s:{s:s? s:b s:s} s:{s:s s:s s:I s:I} s:{s:i s:b s:b s:b "
	    "s:b}}",
	    "workload_key",
	    "the systemd unit; else a cgroup of its own (not the root, one process tree); "
	    "else the executable and comm",
	    "cgroup_hierarchy", hier, "creates", creates_json(r, k), "switches", "source",
	    r->no_sched
	        ? "/proc/PID/task/TID/status (voluntary_ctxt_switches, "
	          "nonvoluntary_ctxt_switches) of every thread"
	        : "/proc/PID/task/TID/sched (nr_voluntary_switches, "
	          "nr_involuntary_switches) of every thread, at both ends of the window (but a "
	          "quiet process's at the end: quiet)",
	    "exact_when",
	    "every thread and process of the workload that ended within the window was reported "
	    "by taskstats (exited_threads); without it, one that ends takes its switches since the "
	    "window's start with it (the kernel adds them to its process's signal struct, which "
	    "only getrusage(2) in that process reads), and the figure is a lower bound",
	    "migrations", "source",
	    r->no_sched ? NULL : "se.nr_migrations of /proc/PID/task/TID/sched", "available",
	    !r->no_sched, "what",
	    "moves of a thread to another CPU; a wake-up on another CPU is not counted by any "
	    "/proc file",
	    "stacks", "source",
	    r->no_pagemap_scan ? "smaps' Rss and AnonHugePages of each stack mapping, for a "
	                         "process of at most 2,000 mappings (no PAGEMAP_SCAN: before "
	                         "Linux 6.7)"
	                       : "PAGEMAP_SCAN (Linux 6.7) over each stack mapping of "
	                         "/proc/PID/maps: present pages, and those on huge pages",
	    "layout",
	    "a private anonymous read-write mapping directly above a PROT_NONE one of at most "
	    "1 MiB: glibc's guard page, the JVM's guard zones",
	    "smaps_read", (json_int_t)r->smaps_read, "smaps_skipped", (json_int_t)r->smaps_skipped,
	    "privileges", "euid", (int)geteuid(), "cap_net_admin",
	    (int)((caps >> CAP_BIT_NET_ADMIN) & 1), "cap_sys_ptrace",
	    (int)((caps >> CAP_BIT_SYS_PTRACE) & 1), "cap_bpf", (int)((caps >> CAP_BIT_BPF) & 1),
	    "cap_perfmon", (int)((caps >> CAP_BIT_PERFMON) & 1));
	if (m)
		json_object_set_new(json_object_get(m, "switches"), "quiet", quiet_json(r));
	return m;
}

json_t *obs_mech_exits(const struct obs_run *r, const struct obs_ts *ts, int asked, int ts_rc,
                       const char *ts_why)
{
	json_t *e = json_pack("{s:s s:b}", "source",
	                      "taskstats (kernel/taskstats.c): each task's nvcsw and nivcsw as it "
	                      "exits, to a listener of every CPU; the last switch away from an "
	                      "ending thread comes after it and is not counted",
	                      "available", asked && ts_rc == 0);

	if (!asked)
		json_object_set_new(e, "why",
		                    json_string("not asked for (--exact-switches): a message "
		                                "per exit, and CAP_NET_ADMIN"));
	else if (ts_rc != 0)
		json_object_set_new(e, "why", obs_jstr(ts_why));
	else
		json_object_set_new(e, "tally",
		                    json_pack("{s:I s:I s:I}", "unattributed",
		                              (json_int_t)r->ts_unattributed, "overruns",
		                              (json_int_t)ts->overruns, "malformed",
		                              (json_int_t)ts->bad));
	return e;
}
