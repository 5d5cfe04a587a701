/*
 * observe: one window of the workload observer (observe.h). It counts
 * thread creates and exits with the BPF counter or the proc connector, reads every thread's
 * switch and migration counts at both ends of the window, and at the end
 * each process's thread stacks; observe_group.c then makes the workloads.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "errbuf.h"
#include "jnum.h"
#include "observe.h"
#include "observep.h"
#include "xmalloc.h"

/* Events read at once; the loop's longest sleep; and, when the socket
 * holds at least OBS_BATCH_RCVBUF bytes (SO_RCVBUFFORCE took), the pause
 * between drains that lets events gather (fewer wake-ups). */
#define LOOP_EVENTS 256
#define LOOP_POLL_MS 200
#define LOOP_BATCH_NS 50000000L
/* How often the BPF counter's map is drained: a process that starts,
 * creates threads and ends within it is not there to be looked up
 * (unattributed), and a PID the kernel hands out again within it would
 * mix two processes' counts, which needs pid_max tasks created in it. */
#define LOOP_BPF_S 1.0
#define OBS_BATCH_RCVBUF (4 << 20)

/* Identifies a process now and enters it as its tgid's latest entry:
 * the index, or -errno when it is gone. */
static long proc_enter(struct obs_run *r, pid_t tgid)
{
	struct obs_proc tmp;
	int pdir = obs_proc_open(r, tgid), rc;
	size_t i;

	if (pdir < 0)
		return pdir;
	memset(&tmp, 0, sizeof(tmp));
	tmp.tgid = tgid;
	rc = obs_proc_identify(pdir, &tmp);
	close(pdir);
	if (rc < 0) {
		free(tmp.exe);
		obs_cgroup_free(&tmp.cg);
		return rc;
	}
	i = obs_table_add(r, tgid);
	tmp.t_read0 = clock_mono_s(); /* a process seen now has no switch before now */
	tmp.born = 1;                 /* heard as it started: its leader */
	r->procs[i] = tmp;
	return (long)i;
}

/* Whether entry i is still the process its tgid names (the same start
 * time): one the start's sweep entered as it started is not entered again
 * when its FORK is read after the sweep. */
static int proc_still(struct obs_run *r, long i)
{
	struct obs_stat st;
	int pdir = obs_proc_open(r, r->procs[i].tgid), rc;

	if (pdir < 0)
		return 0;
	rc = obs_proc_stat(pdir, &st);
	close(pdir);
	return rc == 0 && st.starttime == r->procs[i].starttime;
}

/* A new program in process tgid: a new identity from here on, with the
 * same threads, which the entry it had hands on. */
static void on_exec(struct obs_run *r, pid_t tgid)
{
	long old = obs_table_find(r, tgid), now = proc_enter(r, tgid);

	if (old >= 0 && now >= 0) {
		r->procs[now].start = r->procs[old].start;
		r->procs[now].nstart = r->procs[old].nstart;
		r->procs[now].t_read0 = r->procs[old].t_read0; /* the start's time */
		r->procs[old].start = NULL;
		r->procs[old].nstart = 0;
		r->procs[old].gone = 1;
		/* its threads go on in the new entry (exec ends all but one) */
		r->procs[now].born = r->procs[old].born + r->procs[old].creates;
		r->procs[old].handed = 1;
	}
}

static void on_event(struct obs_run *r, const struct obs_ev *ev)
{
	long i;

	if (ev->what == OBS_EV_FORK) {
		r->forks_heard++;
		if (ev->pid == ev->tgid) {
			r->process_forks++;
			i = obs_table_find(r, ev->tgid);
			if (i < 0 || r->procs[i].gone || !proc_still(r, i))
				(void)proc_enter(r, ev->tgid); /* new, or a reused PID */
			return;
		}
		r->thread_creates++;
		i = obs_table_find(r, ev->tgid);
		if (i < 0)
			i = proc_enter(r, ev->tgid);
		if (i < 0)
			r->unattributed_creates++; /* ended before it could be looked up */
		else
			r->procs[i].creates++;
	} else if (ev->what == OBS_EV_EXIT && ev->pid != ev->tgid) {
		r->thread_exits++;
		i = obs_table_find(r, ev->tgid);
		if (i < 0)
			r->unattributed_exits++;
		else
			r->procs[i].exits++;
	} else if (ev->what == OBS_EV_EXIT) {
		i = obs_table_find(r, ev->tgid);
		if (i >= 0)
			r->procs[i].gone = 1;
	} else if (ev->what == OBS_EV_EXEC) {
		on_exec(r, ev->tgid);
	}
}

static void drain(struct obs_run *r, struct obs_cn *cn)
{
	struct obs_ev evs[LOOP_EVENTS];
	int n;

	while ((n = obs_cn_read(cn, evs, LOOP_EVENTS)) > 0)
		for (int k = 0; k < n; k++)
			on_event(r, &evs[k]);
}

/* One thread group's counts from the BPF counter since its last drain:
 * a group it has not seen is looked up now, as on a FORK. */
static void on_counts(void *arg, pid_t tgid, const struct obs_bpf_val *v)
{
	struct obs_run *r = arg;
	long i = obs_table_find(r, tgid), entered = -1;

	r->thread_creates += v->creates;
	r->thread_exits += v->exits;
	/* a PID another process holds now (reused within the window): the
	 * counts are the new one's; one that ended keeps its last counts */
	if (i >= 0 && (v->creates || v->exits) && !r->procs[i].gone && !proc_still(r, i)) {
		long now = proc_enter(r, tgid);

		if (now >= 0)
			i = entered = now;
	}
	if (i < 0 && (v->creates || v->exits))
		i = entered = proc_enter(r, tgid);
	if (i < 0) {
		r->unattributed_creates += v->creates;
		r->unattributed_exits += v->exits;
	} else {
		r->procs[i].creates += v->creates;
		r->procs[i].exits += v->exits;
	}
	/* an exec since the last drain: one entered just now is already the
	 * new program; the counts went to the old one, whose threads go on */
	if (v->execs && i >= 0 && entered < 0)
		on_exec(r, tgid);
}

static void drain_bpf(struct obs_run *r, struct obs_bpf *bpf)
{
	if (bpf->tgids >= 0)
		(void)obs_bpf_drain(bpf, on_counts, r);
}

/* A task's exit as taskstats reports it: its switches since the window's
 * start (all of them for a thread the start did not see) go to its
 * process. */
static void on_exit_stats(struct obs_run *r, const struct obs_ts_exit *e)
{
	long i = e->tgid > 0 ? obs_table_find(r, e->tgid) : -1;
	struct obs_tcount *s;
	struct obs_proc *p;

	if (i < 0) {
		r->ts_unattributed++; /* before struct taskstats v12: no tgid */
		return;
	}
	p = &r->procs[i];
	s = obs_tcount_find(p->start, p->nstart, e->tid);
	if (s && !s->gone && s->c.vol <= e->vol && s->c.invol <= e->invol) {
		p->ts_vol += e->vol - s->c.vol;
		p->ts_invol += e->invol - s->c.invol;
		s->gone = 1;
	} else {
		p->ts_vol += e->vol;
		p->ts_invol += e->invol;
	}
	if (e->tid == e->tgid)
		p->ts_leader_exits++;
	else
		p->ts_thread_exits++;
}

static void drain_ts(struct obs_run *r, struct obs_ts *ts)
{
	struct obs_ts_exit ex[LOOP_EVENTS];
	int n;

	while ((n = obs_ts_read(ts, ex, LOOP_EVENTS)) > 0)
		for (int k = 0; k < n; k++)
			on_exit_stats(r, &ex[k]);
}

/* Calls fn for every process in /proc. */
static void for_each_pid(struct obs_run *r, void (*fn)(struct obs_run *, pid_t))
{
	int fd = dup(r->procfd);
	struct dirent *e;
	DIR *d;

	if (fd < 0 || !(d = fdopendir(fd))) {
		if (fd >= 0)
			close(fd);
		return;
	}
	rewinddir(d);
	while ((e = readdir(d)))
		if (e->d_name[0] > '0' && e->d_name[0] <= '9')
			fn(r, (pid_t)atoi(e->d_name));
	closedir(d);
}

/* The sums of a process's threads, when taskstats answers and they are
 * few enough to ask for: 1, else 0. A failure other than the process's
 * end stops the queries for the rest of the window, so that a socket that
 * no longer answers costs one wait, not one per process. */
static int sums_take(struct obs_run *r, pid_t tgid, long threads, struct obs_tgsum *s)
{
	int rc;

	if (!r->tsq || threads < OBS_SUM_MIN || threads > OBS_SUM_MAX)
		return 0;
	r->sums_asked++;
	rc = obs_ts_tgid(r->tsq, tgid, s);
	if (rc < 0 && rc != -ESRCH) {
		snprintf(r->tsq_stopped, sizeof(r->tsq_stopped), "taskstats stopped answering (%s)",
		         strerror(-rc));
		r->tsq = NULL;
	}
	return rc == 0;
}

static int sums_equal(const struct obs_tgsum *a, const struct obs_tgsum *b)
{
	return a->vol == b->vol && a->invol == b->invol && a->ran == b->ran &&
	       a->run_ns == b->run_ns;
}

/* Lists p's threads into *tids (sorted; the count, or -errno, with
 * *taskdir open) and, when taskstats answers for them, their sums into *s:
 * the list is taken again after the sums, and *have is set only when both
 * lists agree, so that the sums are those of exactly these threads. */
static long tids_sums(struct obs_run *r, int pdir, pid_t tgid, int *taskdir, pid_t **tids,
                      struct obs_tgsum *s, int *have)
{
	pid_t *again = NULL;
	long n = obs_tids_list(pdir, taskdir, tids), m;
	int dir2;

	*have = 0;
	if (n < 0 || !sums_take(r, tgid, n, s))
		return n;
	m = obs_tids_list(pdir, &dir2, &again);
	if (m >= 0)
		close(dir2);
	*have = m == n && (n == 0 || memcmp(*tids, again, (size_t)n * sizeof(**tids)) == 0);
	free(again);
	return n;
}

static void sweep_start_one(struct obs_run *r, pid_t pid)
{
	long i = proc_enter(r, pid), n, listed;
	struct obs_proc *p;
	pid_t *tids = NULL;
	int pdir, taskdir;

	if (i < 0 || obs_carry_take(r, r->carry, &r->procs[i]))
		return; /* gone, or read at the last window's end */
	if ((pdir = obs_proc_open(r, pid)) < 0)
		return;
	p = &r->procs[i];
	/* the sums before the reads: a switch between the two shows at the end */
	n = listed = tids_sums(r, pdir, pid, &taskdir, &tids, &p->sum0, &p->have_sum0);
	if (n >= 0) {
		n = obs_threads_read(r, taskdir, tids, (size_t)n, NULL, 0, 0, &p->start);
		close(taskdir);
	}
	if (n != listed)
		p->have_sum0 = 0; /* a thread ended meanwhile: not the sums of these */
	free(tids);
	p->nstart = n > 0 ? (size_t)n : 0;
	p->born = n >= 0 ? (uint64_t)n : (uint64_t)p->threads;
	p->t_read0 = clock_mono_s();
	close(pdir);
}

/* Whether p was quiet over the window: the same threads as at the start,
 * none created (as the counter heard), and their sums unchanged. */
static int quiet(const struct obs_proc *p, const pid_t *tids, long n)
{
	return p->have_sum0 && p->have_sum1 && sums_equal(&p->sum0, &p->sum1) && !p->creates &&
	       !p->exits && p->start && p->nstart > 0 && n >= 0 &&
	       obs_tids_same(tids, (size_t)n, p->start, p->nstart);
}

/* The threads of p at the end, read, or those of the start when p was
 * quiet; their count, or -errno. */
static long threads_end(struct obs_run *r, int pdir, struct obs_proc *p, struct obs_tcount **t)
{
	pid_t *tids = NULL;
	int taskdir = -1;
	long n = tids_sums(r, pdir, p->tgid, &taskdir, &tids, &p->sum1, &p->have_sum1), listed = n;

	if (quiet(p, tids, n)) {
		/* each count is what it was at the start: the start's entries,
		 * with their descriptors, are the end's */
		*t = p->start;
		p->start = NULL;
		p->nstart = 0;
		p->quiet = 1;
		r->quiet_procs++;
		r->quiet_threads += (size_t)n;
	} else if (n >= 0) {
		n = obs_threads_read(r, taskdir, tids, (size_t)n, p->start, p->nstart, r->keep_end,
		                     t);
		if (n != listed)
			p->have_sum1 = 0; /* the next window's start: not these threads' sums */
	}
	if (taskdir >= 0)
		close(taskdir);
	free(tids);
	return n;
}

static void sweep_end_one(struct obs_run *r, pid_t pid)
{
	long i = obs_table_find(r, pid);
	struct obs_tcount *t = NULL;
	struct obs_proc tmp;
	struct obs_stat st;
	struct obs_proc *p;
	int pdir = obs_proc_open(r, pid);
	long n;

	if (pdir < 0)
		return;
	/* a process it knows needs its stat alone (is it the same one?) */
	if (obs_proc_stat(pdir, &st) < 0) {
		close(pdir);
		return;
	}
	if (i >= 0 && r->procs[i].starttime == st.starttime) {
		r->procs[i].threads = st.threads;
	} else {
		memset(&tmp, 0, sizeof(tmp));
		if (obs_proc_identify(pdir, &tmp) < 0) {
			close(pdir);
			return;
		}
		i = (long)obs_table_add(r, pid); /* started unheard, or a reused PID */
		tmp.tgid = pid;
		tmp.born = 1;
		r->procs[i] = tmp;
	}
	p = &r->procs[i];
	if (!p->t_read0)
		p->t_read0 = r->t_window0; /* started unheard within the window */
	n = threads_end(r, pdir, p, &t);
	p->t_read1 = clock_mono_s();
	p->seen_end = 1;
	p->nend = n >= 0 ? n : st.threads;
	if (n < 0) {
		p->counts_errno = (int)-n;
	} else if (p->quiet) {
		p->counted = 1; /* no thread ran: no switch, no migration */
		p->have_migr = n > 0 && t[0].c.have_migr;
	} else {
		obs_counts_delta(p, t, (size_t)n);
	}
	if (r->keep_end && n >= 0 && !p->end) {
		p->end = t; /* the next window's start (obs_carry_make()) */
	} else {
		obs_tcounts_close(r, t, n > 0 ? (size_t)n : 0); /* a new process's, kept */
		free(t);
	}
	obs_tcounts_close(r, p->start, p->nstart);
	if (p->threads > 1)
		obs_stacks_read(r, pdir, p);
	if (!p->vmas)
		obs_vmas_count(pdir, p);
	close(pdir);
}

uint64_t obs_exits_derived(const struct obs_proc *p)
{
	uint64_t in = p->born + p->creates, out = p->seen_end ? (uint64_t)p->nend : 1;

	if (p->handed)
		return 0; /* an exec carried its threads to the later entry */
	return in > out ? in - out : 0;
}

/* After the end's sweep: a process it did not find has ended; with a
 * filtered connector, each process's exits are derived. */
static void window_close(struct obs_run *r, int derive)
{
	if (derive)
		r->thread_exits = 0;
	for (size_t i = 0; i < r->nprocs; i++) {
		struct obs_proc *p = &r->procs[i];

		if (!p->seen_end)
			p->gone = 1;
		if (derive) {
			p->exits = obs_exits_derived(p);
			r->thread_exits += p->exits;
		}
	}
}

/* Sleeps until the window ends, reading the connector and taskstats, and
 * draining the BPF counter each LOOP_BPF_S. */
static void window_loop(struct obs_run *r, struct obs_cn *cn, struct obs_ts *ts,
                        struct obs_bpf *bpf, double until, volatile int *stop)
{
	int batch = cn->fd >= 0 && cn->rcvbuf >= OBS_BATCH_RCVBUF;
	double next_bpf = clock_mono_s() + LOOP_BPF_S;

	while (!(stop && *stop)) {
		double now = clock_mono_s(), left = until - now;
		int ms = left * 1000 < LOOP_POLL_MS ? (int)(left * 1000) + 1 : LOOP_POLL_MS;
		struct pollfd pfd[2] = {{.fd = cn->fd, .events = POLLIN},
		                        {.fd = ts->fd, .events = POLLIN}};

		if (left <= 0)
			break;
		if (bpf->tgids >= 0 && now >= next_bpf) {
			drain_bpf(r, bpf);
			next_bpf = now + LOOP_BPF_S;
		}
		if (poll(pfd, 2, ms) <= 0)
			continue;
		if (pfd[0].revents)
			drain(r, cn);
		if (pfd[1].revents)
			drain_ts(r, ts);
		if (batch)
			nanosleep(&(struct timespec){0, LOOP_BATCH_NS}, NULL);
	}
}

static double ru_s(const struct rusage *a, const struct rusage *b)
{
	return (double)(b->ru_utime.tv_sec - a->ru_utime.tv_sec) +
	       (double)(b->ru_stime.tv_sec - a->ru_stime.tv_sec) +
	       ((double)(b->ru_utime.tv_usec - a->ru_utime.tv_usec) +
	        (double)(b->ru_stime.tv_usec - a->ru_stime.tv_usec)) /
	           1e6;
}

/* What the observer cost itself, measured: its process's CPU time
 * (getrusage) and the BPF counter's run time in the kernel, which the
 * threads it counts pay as they start and end. */
static json_t *observer_cost(const struct rusage *ru0, const struct rusage *ru1, double wall,
                             double in_kernel, double sweep_s, const struct obs_run *r)
{
	double cpu = ru_s(ru0, ru1);

	return json_pack("{s:o s:o s:o s:o s:o s:I s:I s:I}", "cpu_s", jnum(cpu), "in_kernel_s",
	                 jnum(in_kernel), "wall_s", jnum(wall), "share_of_cpu",
	                 jnum(wall > 0 ? (cpu + in_kernel) / wall : 0), "sweep_s", jnum(sweep_s),
	                 "threads_read", (json_int_t)r->threads_read, "threads_carried",
	                 (json_int_t)r->threads_carried, "max_rss_kb", (json_int_t)ru1->ru_maxrss);
}

/* Lets the window keep a descriptor per thread from its start to its end:
 * the soft limit on open files up to the hard one, OBS_FD_SPARE left for
 * everything else, and at most OBS_FDS_KEEP kept. Each kept file holds a
 * page of kernel memory, its seq_file buffer, from its first read to its
 * close (seq_read_iter() allocates m->buf, seq_release() frees it):
 * 4.3 KiB a thread measured in Slab, so the bound holds that to about
 * 70 MiB; a thread beyond it is read by an open, a read and a close. *old
 * keeps the limit to put back. */
#define OBS_FD_SPARE 256
#define OBS_FDS_KEEP 16384
static size_t fds_allow(struct rlimit *old)
{
	struct rlimit up;

	if (getrlimit(RLIMIT_NOFILE, old) < 0)
		return 0;
	up = *old;
	up.rlim_cur = up.rlim_max;
	if (setrlimit(RLIMIT_NOFILE, &up) < 0)
		up.rlim_cur = old->rlim_cur;
	if (up.rlim_cur <= 2 * OBS_FD_SPARE)
		return 0;
	return up.rlim_cur - OBS_FD_SPARE < OBS_FDS_KEEP ? (size_t)(up.rlim_cur - OBS_FD_SPARE)
	                                                 : OBS_FDS_KEEP;
}

/* Whether the proc mount is this PID namespace's: taskstats looks PIDs up
 * in the caller's (find_task_by_vpid()). */
static int proc_is_ours(int procfd)
{
	char b[32];
	ssize_t n = readlinkat(procfd, "self", b, sizeof(b) - 1);

	if (n <= 0)
		return 0;
	b[n] = '\0';
	return atol(b) == (long)getpid();
}

/* Opens the socket for thread groups' sums, unless told not to or the
 * proc mount is another PID namespace's; r->tsq_why says why not. */
static void tsq_open(struct obs_run *r, const struct obs_options *o, struct obs_ts *tsq)
{
	struct obs_tgsum self;

	if (o->read_all_threads)
		snprintf(r->tsq_why, sizeof(r->tsq_why), "not asked for (--read-all-threads)");
	else if (!proc_is_ours(r->procfd))
		snprintf(r->tsq_why, sizeof(r->tsq_why),
		         "the proc mount is another PID namespace's, and taskstats looks up this "
		         "one's PIDs");
	else if (obs_ts_query_open(tsq, &self, r->tsq_why, sizeof(r->tsq_why)) == 0) {
		r->tsq = tsq;
		r->tsq_runs = self.ran || self.run_ns;
	}
}

/* Opens what counts creates and exits: the BPF counter, else the proc
 * connector, and reads away what either heard before the window. */
static void counter_open(const struct obs_options *o, struct obs_counter *k)
{
	k->bpf_rc = k->cn_rc = -ENOTCONN;
	obs_bpf_init(&k->bpf);
	k->cn.fd = -1;
	if (o->no_connector) {
		snprintf(k->bpf_why, sizeof(k->bpf_why), "not asked for (--no-connector)");
		snprintf(k->cn_why, sizeof(k->cn_why), "not asked for (--no-connector)");
		return;
	}
	if (o->no_bpf)
		snprintf(k->bpf_why, sizeof(k->bpf_why), "not asked for (--no-bpf)");
	else
		k->bpf_rc =
		    obs_bpf_open(&k->bpf, o->cn_filter_len == 0, k->bpf_why, sizeof(k->bpf_why));
	if (k->bpf_rc == 0) {
		snprintf(k->cn_why, sizeof(k->cn_why), "not needed: the BPF counter counts");
		(void)obs_bpf_stats(&k->bpf, &k->tally0);
		(void)obs_bpf_drain(&k->bpf, NULL, NULL); /* where the window's counts start */
		return;
	}
	k->cn_rc = obs_cn_open(&k->cn, o->cn_filter_len, k->cn_why, sizeof(k->cn_why));
	if (k->cn_rc == 0) {
		struct obs_ev evs[LOOP_EVENTS];

		while (obs_cn_read(&k->cn, evs, LOOP_EVENTS) > 0)
			; /* what came before the window */
	}
}

/* The last of what the counter heard, its tally, and its end. */
static void counter_close(struct obs_run *r, struct obs_counter *k)
{
	if (k->cn.fd >= 0)
		drain(r, &k->cn);
	if (k->bpf.tgids >= 0) {
		struct obs_bpf_stats t1;
		uint64_t *d = (uint64_t *)&k->tally;
		const uint64_t *a = (const uint64_t *)&k->tally0, *b = (const uint64_t *)&t1;

		/* detached first: nothing counted after the last drain is lost */
		obs_bpf_detach(&k->bpf);
		drain_bpf(r, &k->bpf);
		if (obs_bpf_stats(&k->bpf, &t1) == 0)
			for (size_t i = 0; i < sizeof(t1) / sizeof(uint64_t); i++)
				d[i] = b[i] - a[i];
		r->forks_heard = k->tally.forks;
		/* each CPU's fields are read one by one: a run between two reads
		 * can show a create before its fork */
		r->process_forks =
		    k->tally.forks > k->tally.creates ? k->tally.forks - k->tally.creates : 0;
	}
	obs_bpf_close(&k->bpf);
	obs_cn_close(&k->cn);
}

double obs_bpf_run_s(const struct obs_counter *k)
{
	if (k->bpf_rc != 0 || !k->tally.timed)
		return 0;
	return (double)k->tally.run_ns / (double)k->tally.timed * (double)k->tally.runs / 1e9;
}

json_t *obs_observe(const struct obs_options *o, char *err, size_t errlen)
{
	struct rlimit nofile;
	struct obs_run r = {.procfd = -1};
	struct obs_counter *k;
	struct obs_ts ts = {.fd = -1}, tsq = {.fd = -1};
	struct rusage ru0, ru1;
	char ts_why[256] = "";
	int ts_rc = -ENOTCONN, counting;
	uint64_t f0 = 0, f1 = 0;
	double w0, t0a, t0b, t1a, t1b, e0, e1;
	json_t *doc;

	r.procfd = open(o->proc ? o->proc : "/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (r.procfd < 0)
		return errbuf_set(err, errlen, -errno, "cannot open %s: %s",
		                  o->proc ? o->proc : "/proc", strerror(errno)),
		       NULL;
	k = xcalloc(1, sizeof(*k));
	getrusage(RUSAGE_SELF, &ru0);
	w0 = clock_mono_s();
	r.fds_max = fds_allow(&nofile);
	if (o->carry) {
		r.carry = *o->carry;
		*o->carry = NULL;
		r.keep_end = 1;
		r.fds_kept = r.carry ? r.carry->fds : 0;
	}
	counter_open(o, k);
	counting = k->bpf_rc == 0 || k->cn_rc == 0;
	tsq_open(&r, o, &tsq);
	if (o->exact_switches) {
		ts_rc = obs_ts_open(&ts, ts_why, sizeof(ts_why));
		r.exact = ts_rc == 0;
	}
	if (ts_rc == 0) {
		struct obs_ts_exit ex[LOOP_EVENTS];

		while (obs_ts_read(&ts, ex, LOOP_EVENTS) > 0)
			; /* what came before the window */
	}
	k->have_forks = obs_host_forks(&r, &f0) == 0;
	e0 = t0a = clock_mono_s();
	for_each_pid(&r, sweep_start_one);
	obs_carry_drop_rest(&r, r.carry); /* processes that ended between windows */
	obs_carry_free(r.carry);
	r.carry = NULL;
	t0b = r.t_window0 = clock_mono_s();
	window_loop(&r, &k->cn, &ts, &k->bpf, t0b + o->window_s, o->stop);
	if (ts.fd >= 0)
		drain_ts(&r, &ts);
	obs_ts_close(&ts); /* before the end's sweep: a thread it reads is not also an exit */
	k->have_forks = k->have_forks && obs_host_forks(&r, &f1) == 0;
	k->host_forks = f1 - f0;
	e1 = t1a = clock_mono_s();
	counter_close(&r, k);
	for_each_pid(&r, sweep_end_one);
	t1b = clock_mono_s();
	obs_ts_close(&tsq);
	r.tsq = NULL;
	window_close(&r, (k->cn_rc == 0 && k->cn.filtered) || (k->bpf_rc == 0 && !k->bpf.exits));
	getrusage(RUSAGE_SELF, &ru1);

	doc = json_object();
	json_object_set_new(doc, "window_s", jnum((t1a + t1b) / 2 - (t0a + t0b) / 2));
	json_object_set_new(doc, "workloads", obs_group(&r, o->by_process, counting ? e1 - e0 : 0));
	json_object_set_new(doc, "events_window_s", jnum(e1 - e0));
	json_object_set_new(doc, "largest_vmas", obs_largest_vmas(&r));
	json_object_set_new(doc, "mechanisms", obs_mechanisms(&r, k));
	json_object_set_new(json_object_get(json_object_get(doc, "mechanisms"), "switches"),
	                    "exited_threads",
	                    obs_mech_exits(&r, &ts, o->exact_switches, ts_rc, ts_why));
	json_object_set_new(doc, "observer",
	                    observer_cost(&ru0, &ru1, clock_mono_s() - w0, obs_bpf_run_s(k),
	                                  (t0b - t0a) + (t1b - t1a), &r));
	if (o->carry)
		*o->carry = obs_carry_make(&r); /* its descriptors stay open: no limit put back */
	else
		(void)setrlimit(RLIMIT_NOFILE, &nofile);
	obs_table_free(&r);
	close(r.procfd);
	free(k);
	return doc;
}
