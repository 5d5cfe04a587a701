/*
 * sysinfo: CPU pinning and the limits that bound thread creation, read
 * from /proc, /sys (cgroup v2) and getrlimit.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "sysinfo.h"

int sys_pin_cpu(int cpu)
{
	cpu_set_t set;
	int r;

	if (cpu < 0 || cpu >= CPU_SETSIZE)
		return -EINVAL;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	r = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	return r ? -r : 0;
}

int sys_first_allowed_cpu(void)
{
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set) < 0)
		return -errno;
	for (int i = 0; i < CPU_SETSIZE; i++)
		if (CPU_ISSET(i, &set))
			return i;
	return -ENODEV;
}

int sys_read_line(const char *path, char *buf, size_t len)
{
	FILE *f;
	int r = 0;

	if (len == 0)
		return -EINVAL;
	f = fopen(path, "re");
	if (!f)
		return -errno;
	if (!fgets(buf, (int)(len > INT_MAX ? INT_MAX : len), f)) {
		r = ferror(f) ? -EIO : -ENODATA;
		buf[0] = '\0';
	} else {
		buf[strcspn(buf, "\n")] = '\0';
	}
	fclose(f);
	return r;
}

int sys_procs_running(const char *path, long *n)
{
	char line[256];
	FILE *f = fopen(path ? path : "/proc/stat", "re");
	int r = -ENODATA;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char *end;
		long v;

		if (strncmp(line, "procs_running ", 14))
			continue;
		errno = 0;
		v = strtol(line + 14, &end, 10);
		r = errno || end == line + 14 || v < 0 || (*end != '\n' && *end) ? -EINVAL : 0;
		if (!r)
			*n = v;
		break;
	}
	fclose(f);
	return r;
}

int sys_cpu_total(const char *path, struct sys_cpu_jiffies *j)
{
	char line[512];
	FILE *f = fopen(path, "re");
	int cpu, r;

	if (!f)
		return -errno;
	r = fgets(line, sizeof(line), f) ? sys_cpu_line(line, &cpu, j) : 0;
	fclose(f);
	return r <= 0 || cpu != -1 ? -EINVAL : 0;
}

int sys_loadavg1(const char *path, double *load1)
{
	FILE *f = fopen(path, "re");
	int r = 0;

	if (!f)
		return -errno;
	if (fscanf(f, "%lf", load1) != 1 || !isfinite(*load1))
		r = -EINVAL;
	fclose(f);
	return r;
}

int sys_cpu_line(const char *line, int *cpu, struct sys_cpu_jiffies *j)
{
	unsigned long long v[8] = {0};
	const char *p = line + 3;

	/* "cpu[N] user nice system idle iowait irq softirq steal ..." (guest
	 * time is already in user and nice) */
	if (strncmp(line, "cpu", 3) || (*p != ' ' && (*p < '0' || *p > '9')))
		return 0;
	*cpu = -1;
	if (*p != ' ' && (sscanf(p, "%d", cpu) != 1 || *cpu < 0))
		return -EINVAL;
	p += strcspn(p, " ");
	if (sscanf(p, "%llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4],
	           &v[5], &v[6], &v[7]) < 4)
		return -EINVAL;
	*j = (struct sys_cpu_jiffies){.steal = v[7]};
	for (int k = 0; k < 8; k++)
		j->total += v[k];
	j->busy = j->total - v[3] - v[4];
	return 1;
}

int sys_cpu_jiffies(const char *path, struct sys_cpu_jiffies *j, int n)
{
	char line[512];
	FILE *f = fopen(path ? path : "/proc/stat", "re");
	int r = -ENODATA;

	if (!f)
		return -errno;
	memset(j, 0, sizeof(*j) * (size_t)(n > 0 ? n : 0));
	while (r != -EINVAL && fgets(line, sizeof(line), f)) {
		struct sys_cpu_jiffies one;
		int cpu, got = sys_cpu_line(line, &cpu, &one);

		if (got < 0)
			r = got;
		else if (got && cpu >= 0) {
			r = 0;
			if (cpu < n)
				j[cpu] = one;
		}
	}
	fclose(f);
	return r;
}

/* Parses a decimal unsigned integer with optional surrounding blanks;
 * "max" is UINT64_MAX. */
static int parse_u64(const char *s, uint64_t *out)
{
	unsigned long long v;
	char *end;

	s += strspn(s, " \t");
	if (!strncmp(s, "max", 3) && s[3 + strspn(s + 3, " \t")] == '\0') {
		*out = UINT64_MAX;
		return 0;
	}
	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -errno;
	if (end[strspn(end, " \t")] != '\0')
		return -EINVAL;
	*out = v;
	return 0;
}

/* Reads one unsigned integer from a file such as /proc/sys/kernel/threads-max.
 * "max" (cgroup files) reads as UINT64_MAX. */
static int sys_read_u64(const char *path, uint64_t *out)
{
	char buf[128];
	int r = sys_read_line(path, buf, sizeof(buf));

	return r < 0 ? r : parse_u64(buf, out);
}

static uint64_t rlimit_u64(int resource)
{
	struct rlimit rl;

	if (getrlimit(resource, &rl) < 0 || rl.rlim_cur == RLIM_INFINITY)
		return UINT64_MAX;
	return (uint64_t)rl.rlim_cur;
}

/* Does the comma-separated controller list name `want`? */
static int has_controller(const char *list, const char *want)
{
	size_t n = strlen(want);

	for (const char *p = list; *p;) {
		size_t len = strcspn(p, ",");

		if (len == n && !strncmp(p, want, n))
			return 1;
		p += len + (p[len] == ',');
	}
	return 0;
}

/* Walks from cgroup `cg` up to the root of the hierarchy mounted at `mnt`
 * and keeps the pids limit with the least headroom. Returns 1 when the
 * hierarchy has pids files at all, 0 otherwise. */
static int walk_pids(const char *mnt, const char *path, struct sys_limits *l)
{
	char cg[2048], file[2300];
	uint64_t best_room = UINT64_MAX, max, cur;
	int found = 0;

	if (snprintf(cg, sizeof(cg), "%s", path) >= (int)sizeof(cg))
		return 0;
	for (;;) {
		const char *sep = strcmp(cg, "/") ? "/" : "";
		char *slash;
		int have_cur;

		snprintf(file, sizeof(file), "%s%s%spids.current", mnt, cg, sep);
		have_cur = sys_read_u64(file, &cur) == 0;
		if (have_cur && !found)
			l->pids_current = cur;
		found |= have_cur;
		snprintf(file, sizeof(file), "%s%s%spids.max", mnt, cg, sep);
		if (sys_read_u64(file, &max) == 0) {
			found = 1;
			if (max != UINT64_MAX) {
				uint64_t room = have_cur && max > cur ? max - cur
				                : have_cur            ? 0
				                                      : max;

				if (room < best_room) {
					best_room = room;
					l->pids_max = max;
					l->pids_current = have_cur ? cur : 0;
				}
			}
		}
		slash = strrchr(cg, '/');
		if (!slash || !strcmp(cg, "/"))
			break;
		if (slash == cg)
			slash[1] = '\0';
		else
			*slash = '\0';
	}
	return found;
}

/* The binding pids limit is the one with the least headroom on the way from
 * this process's cgroup up to the root: the cgroup v2 hierarchy ("0::/path"
 * in /proc/self/cgroup, mounted at /sys/fs/cgroup or, on hybrid hosts,
 * /sys/fs/cgroup/unified), else the v1 pids controller. */
static void read_pids(struct sys_limits *l)
{
	char line[4096];
	FILE *f = fopen("/proc/self/cgroup", "re");

	l->pids_max = UINT64_MAX;
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *ctl, *path;

		line[strcspn(line, "\n")] = '\0';
		ctl = strchr(line, ':');
		path = ctl ? strchr(ctl + 1, ':') : NULL;
		if (!path)
			continue;
		*ctl++ = '\0';
		*path++ = '\0';
		if (!strcmp(line, "0") && !*ctl) {
			if (walk_pids("/sys/fs/cgroup", path, l) ||
			    walk_pids("/sys/fs/cgroup/unified", path, l))
				break;
		} else if (has_controller(ctl, "pids")) {
			if (walk_pids("/sys/fs/cgroup/pids", path, l))
				break;
		}
	}
	fclose(f);
}

int sys_mem_available(const char *path, uint64_t *bytes)
{
	char line[256];
	FILE *f = fopen(path ? path : "/proc/meminfo", "re");
	unsigned long long kb;
	int r = -ENODATA;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1) {
			*bytes = (uint64_t)kb * 1024;
			r = 0;
			break;
		}
	fclose(f);
	return r;
}

static void read_threads_now(struct sys_limits *l)
{
	char line[256];
	unsigned long long running, total;

	/* /proc/loadavg: "0.00 0.01 0.05 1/123 4567"; 123 is the number of
	 * kernel scheduling entities, i.e. threads, on the host. */
	if (sys_read_line("/proc/loadavg", line, sizeof(line)) < 0)
		return;
	if (sscanf(line, "%*s %*s %*s %llu/%llu", &running, &total) == 2)
		l->threads_now = total;
}

int sys_limits_read(struct sys_limits *l)
{
	uint64_t v;

	memset(l, 0, sizeof(*l));
	l->overcommit_memory = -1;
	sys_read_u64("/proc/sys/kernel/threads-max", &l->threads_max);
	sys_read_u64("/proc/sys/kernel/pid_max", &l->pid_max);
	sys_read_u64("/proc/sys/vm/max_map_count", &l->max_map_count);
	if (sys_read_u64("/proc/sys/vm/overcommit_memory", &v) == 0 && v <= 2)
		l->overcommit_memory = (int)v;
	l->nproc_soft = rlimit_u64(RLIMIT_NPROC);
	l->stack_soft = rlimit_u64(RLIMIT_STACK);
	read_pids(l);
	sys_mem_available(NULL, &l->mem_available);
	read_threads_now(l);
	return 0;
}

long sys_count_lines_at(int dirfd, const char *name)
{
	char buf[65536];
	long lines = 0;
	ssize_t n;
	int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOCTTY);

	if (fd < 0)
		return -errno;
	while ((n = read(fd, buf, sizeof(buf))) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			lines = -errno;
			break;
		}
		for (const char *p = buf; (p = memchr(p, '\n', (size_t)(buf + n - p))); p++)
			lines++;
	}
	close(fd);
	return lines;
}

long sys_vma_count(void)
{
	return sys_count_lines_at(AT_FDCWD, "/proc/self/maps");
}

int sys_task_switched_in(int tid, unsigned long long *count)
{
	unsigned long long run, wait;
	char path[64], buf[128];
	ssize_t got;
	int fd;

	snprintf(path, sizeof(path), "/proc/self/task/%d/schedstat", tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	got = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (got <= 0)
		return got < 0 ? -errno : -ENODATA;
	buf[got] = 0;
	return sscanf(buf, "%llu %llu %llu", &run, &wait, count) == 3 ? 0 : -EINVAL;
}

size_t sys_default_stack_size(void)
{
	long page = sysconf(_SC_PAGESIZE);
	size_t sz = 2u << 20, pg = page > 0 ? (size_t)page : 4096;
	pthread_attr_t attr;
	struct rlimit rl;

	/* glibc's own default for this process, fixed at start-up. */
	if (pthread_getattr_default_np(&attr) == 0) {
		int r = pthread_attr_getstacksize(&attr, &sz);

		pthread_attr_destroy(&attr);
		if (r == 0 && sz > 0)
			return sz;
	}
	if (getrlimit(RLIMIT_STACK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
		sz = rl.rlim_cur < (rlim_t)PTHREAD_STACK_MIN ? (size_t)PTHREAD_STACK_MIN
		                                             : (size_t)rl.rlim_cur;
	return (sz + pg - 1) / pg * pg;
}
