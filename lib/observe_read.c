/*
 * observe_read: what the observer reads of one process through its /proc
 * directory: who it is (stat, cgroup, exe), every thread's switch and
 * migration counts, and its thread stacks with what backs them.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sysinfo.h"
#include "observep.h"
#include "xmalloc.h"

/* The per-thread counts at the window's start, sorted by tid. */
static int tcount_cmp(const void *a, const void *b)
{
	pid_t x = ((const struct obs_tcount *)a)->tid, y = ((const struct obs_tcount *)b)->tid;

	return (x > y) - (x < y);
}

/* Reads a small file relative to dirfd into buf (NUL-terminated): its
 * length, or -errno. */
static ssize_t read_at(int dirfd, const char *name, char *buf, size_t len)
{
	int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	ssize_t n = 0, r;

	if (fd < 0)
		return -errno;
	while ((size_t)n < len - 1 && (r = read(fd, buf + n, len - 1 - (size_t)n)) != 0) {
		if (r < 0) {
			if (errno == EINTR)
				continue;
			n = -errno;
			break;
		}
		n += r;
	}
	close(fd);
	if (n >= 0)
		buf[n] = '\0';
	return n;
}

/* A whole /proc file of unknown size (maps, smaps), up to max bytes. */
static int read_all_at(int dirfd, const char *name, size_t max, char **out)
{
	int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	size_t n = 0, cap = 65536;
	char *buf;
	ssize_t r;

	if (fd < 0)
		return -errno;
	buf = xmalloc(cap);
	while ((r = read(fd, buf + n, cap - 1 - n)) != 0) {
		if (r < 0) {
			if (errno == EINTR)
				continue;
			r = -errno;
			close(fd);
			free(buf);
			return (int)r;
		}
		n += (size_t)r;
		if (n + 1 == cap) {
			if (cap > max) {
				close(fd);
				free(buf);
				return -EFBIG;
			}
			cap *= 2;
			buf = xrealloc(buf, cap);
		}
	}
	close(fd);
	buf[n] = '\0';
	*out = buf;
	return 0;
}

/* Loads who a process is (stat, cgroup, exe) through its /proc directory,
 * which pins the process: a PID reused after it was opened answers ESRCH. */
int obs_proc_stat(int pdir, struct obs_stat *st)
{
	char buf[4096];
	ssize_t n = read_at(pdir, "stat", buf, sizeof(buf));

	if (n < 0)
		return (int)n;
	if (obs_stat_parse(buf, st) < 0)
		return -EINVAL;
	return st->kthread ? -ECHILD : 0; /* a kernel thread: no workload's */
}

int obs_proc_identify(int pdir, struct obs_proc *p)
{
	char buf[4096], link[4096];
	struct obs_stat st;
	ssize_t n;
	int rc = obs_proc_stat(pdir, &st);

	if (rc < 0)
		return rc;
	memcpy(p->comm, st.comm, sizeof(p->comm));
	p->ppid = st.ppid;
	p->starttime = st.starttime;
	p->threads = st.threads;
	if (read_at(pdir, "cgroup", buf, sizeof(buf)) >= 0)
		(void)obs_cgroup_parse(buf, &p->cg);
	n = readlinkat(pdir, "exe", link, sizeof(link) - 1);
	if (n > 0) {
		link[n] = '\0';
		p->exe = xstrdup(link);
	} else {
		p->exe_errno = n < 0 ? errno : ENOENT;
	}
	return 0;
}

/* Reads a thread's counts through a descriptor kept from the window's
 * start (one pread() rather than an open, a read and a close: the sweep's
 * cost is mostly system calls); -errno once the thread is gone. */
static int counts_pread(int fd, struct obs_counts *c)
{
	char buf[4096];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);

	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return obs_sched_parse(buf, c);
}

/* A thread's counts, through the task directory; *keep (when not NULL)
 * gets the open descriptor for the window's end, or -1. */
static int thread_counts(struct obs_run *r, int taskdir, const char *tid, struct obs_counts *c,
                         int *keep)
{
	char name[300]; /* a d_name is at most 255 bytes */
	int fd = -1, rc;

	if (!r->no_sched) {
		snprintf(name, sizeof(name), "%s/sched", tid);
		fd = openat(taskdir, name, O_RDONLY | O_CLOEXEC | O_NOCTTY);
		if (fd < 0 && errno == ENOENT && faccessat(taskdir, tid, F_OK, 0) == 0)
			r->no_sched = 1; /* a kernel without CONFIG_SCHED_DEBUG's file */
	}
	if (r->no_sched) {
		snprintf(name, sizeof(name), "%s/status", tid);
		fd = openat(taskdir, name, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	}
	if (fd < 0)
		return -errno;
	rc = counts_pread(fd, c);
	if (keep && rc == 0 && r->fds_kept < r->fds_max) {
		*keep = fd;
		r->fds_kept++;
	} else {
		close(fd);
	}
	return rc;
}

struct obs_tcount *obs_tcount_find(struct obs_tcount *start, size_t n, pid_t tid)
{
	struct obs_tcount key = {.tid = tid};

	return start ? bsearch(&key, start, n, sizeof(key), tcount_cmp) : NULL;
}

/* A thread of the start that is still the same thread: not reported
 * ended by taskstats. */
static struct obs_tcount *start_of(struct obs_tcount *start, size_t n, pid_t tid)
{
	struct obs_tcount *s = obs_tcount_find(start, n, tid);

	return s && !s->gone ? s : NULL;
}

static int tid_cmp(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return (x > y) - (x < y);
}

long obs_tids_list(int pdir, int *taskdir, pid_t **out)
{
	int fd = openat(pdir, "task", O_RDONLY | O_DIRECTORY | O_CLOEXEC), dfd;
	pid_t *t = NULL;
	size_t n = 0, cap = 0;
	struct dirent *e;
	DIR *d;

	if (fd < 0)
		return -errno;
	dfd = dup(fd);
	if (dfd < 0 || !(d = fdopendir(dfd))) {
		long rc = -errno;

		if (dfd >= 0)
			close(dfd);
		close(fd);
		return rc;
	}
	while ((e = readdir(d))) {
		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 16;
			t = xreallocarray(t, cap, sizeof(*t));
		}
		t[n++] = (pid_t)atoi(e->d_name);
	}
	closedir(d);
	if (n)
		qsort(t, n, sizeof(*t), tid_cmp);
	*taskdir = fd;
	*out = t;
	return (long)n;
}

int obs_tids_same(const pid_t *tids, size_t n, const struct obs_tcount *start, size_t nstart)
{
	if (n != nstart)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (tids[i] != start[i].tid || start[i].gone)
			return 0;
	return 1;
}

long obs_threads_read(struct obs_run *r, int taskdir, const pid_t *tids, size_t ntids,
                      struct obs_tcount *start, size_t nstart, int keep, struct obs_tcount **out)
{
	struct obs_tcount *t = xcalloc(ntids ? ntids : 1, sizeof(*t));
	size_t n = 0;

	for (size_t i = 0; i < ntids; i++) {
		struct obs_tcount *s = start_of(start, nstart, tids[i]);
		struct obs_counts c;
		char name[16];
		int fd = -1;

		/* the descriptor of the start (handed on when kept), else the
		 * file anew (a new thread, or a reused tid whose old descriptor
		 * answers ESRCH) */
		if (s && s->fd >= 0 && counts_pread(s->fd, &c) == 0) {
			if (keep) {
				fd = s->fd;
				s->fd = -1;
			}
		} else {
			snprintf(name, sizeof(name), "%d", (int)tids[i]);
			if (thread_counts(r, taskdir, name, &c, keep || !start ? &fd : NULL) < 0)
				continue; /* the thread ended while we read */
		}
		t[n].tid = tids[i];
		t[n].c = c;
		t[n].fd = fd;
		t[n].gone = 0;
		n++;
	}
	r->threads_read += n;
	*out = t;
	return (long)n;
}

void obs_tcounts_close(struct obs_run *r, struct obs_tcount *t, size_t n)
{
	for (size_t i = 0; t && i < n; i++)
		if (t[i].fd >= 0) {
			close(t[i].fd);
			t[i].fd = -1;
			r->fds_kept--;
		}
}

/* The switches and migrations of the window: each thread's count at the
 * end less its count at the start; a thread the start did not see began
 * within the window, so all of its count is. */
void obs_counts_delta(struct obs_proc *p, const struct obs_tcount *end, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const struct obs_tcount *s = start_of(p->start, p->nstart, end[i].tid);
		struct obs_counts d = end[i].c;

		/* a lower count is a new thread under a reused tid */
		if (s && s->c.vol <= d.vol && s->c.invol <= d.invol && s->c.migr <= d.migr) {
			d.vol -= s->c.vol;
			d.invol -= s->c.invol;
			d.migr -= s->c.migr;
		}
		p->vol += d.vol;
		p->invol += d.invol;
		p->migr += d.migr;
		p->have_migr = d.have_migr;
	}
	p->counted = 1;
}

/* The smaps fallback, bounded: only a process of at most OBS_SMAPS_VMAS
 * mappings, since smaps walks every page table of the process under its
 * mmap_lock. */
static int stacks_fallback(struct obs_run *r, int pdir, const struct obs_vma *v, size_t n,
                           struct obs_stack_use *use)
{
	long vmas = sys_count_lines_at(pdir, "maps");
	char *smaps = NULL;
	int rc;

	if (vmas < 0)
		return (int)vmas;
	if (vmas > OBS_SMAPS_VMAS) {
		r->smaps_skipped++;
		return -E2BIG;
	}
	rc = read_all_at(pdir, "smaps", OBS_MAPS_MAX * 4, &smaps);
	if (rc < 0)
		return rc;
	rc = obs_smaps_stacks(smaps, v, n, use);
	free(smaps);
	r->smaps_read++;
	return rc;
}

/* The stacks of a process and what backs them, at the window's end. */
void obs_stacks_read(struct obs_run *r, int pdir, struct obs_proc *p)
{
	struct obs_stack_use *use;
	struct obs_vma *v = NULL;
	char *maps = NULL;
	size_t n;
	int rc, fd;

	rc = read_all_at(pdir, "maps", OBS_MAPS_MAX, &maps);
	if (rc < 0) {
		p->stacks_errno = -rc;
		p->vmas = rc;
		return;
	}
	p->vmas = 0;
	for (const char *c = maps; (c = strchr(c, '\n')); c++)
		p->vmas++;
	n = obs_stacks_find(maps, &v);
	free(maps);
	use = xcalloc(n ? n : 1, sizeof(*use));
	rc = -ENOTTY;
	if (n && !r->no_pagemap_scan && (fd = openat(pdir, "pagemap", O_RDONLY | O_CLOEXEC)) >= 0) {
		rc = obs_pagemap_scan(fd, v, n, use);
		close(fd);
		if (rc == -ENOTTY || rc == -EINVAL)
			r->no_pagemap_scan = 1; /* before 6.7: no such ioctl */
	} else if (n && !r->no_pagemap_scan) {
		rc = -errno;
	}
	if (n && rc < 0 && r->no_pagemap_scan) {
		rc = stacks_fallback(r, pdir, v, n, use);
	}
	if (!n)
		rc = 0;
	if (rc < 0) {
		p->stacks_errno = -rc;
	} else {
		p->stacks_measured = 1;
		p->nstacks = n;
		for (size_t i = 0; i < n; i++) {
			p->stack_res += use[i].resident;
			p->stack_huge += use[i].huge;
			p->stack_thp += use[i].thp != 0;
		}
	}
	free(use);
	free(v);
}

void obs_vmas_count(int pdir, struct obs_proc *p)
{
	long n = sys_count_lines_at(pdir, "maps");

	p->vmas = n;
}

int obs_proc_open(struct obs_run *r, pid_t pid)
{
	char name[32];
	int fd;

	snprintf(name, sizeof(name), "%d", (int)pid);
	fd = openat(r->procfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

int obs_host_forks(struct obs_run *r, uint64_t *n)
{
	char *text = NULL, *p;
	int rc = read_all_at(r->procfd, "stat", 1 << 20, &text);

	if (rc < 0)
		return rc;
	/* "processes N": every task the kernel created since boot (copy_process()
	 * counts total_forks for threads as for processes) */
	p = strstr(text, "\nprocesses ");
	rc = p && sscanf(p + 11, "%" SCNu64, n) == 1 ? 0 : -ENODATA;
	free(text);
	return rc;
}
