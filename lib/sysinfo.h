/*
 * sysinfo: CPU pinning and the system limits that bound thread creation,
 * read from /proc, /sys and getrlimit. Each reader returns 0 or -errno.
 */
#ifndef TW_SYSINFO_H
#define TW_SYSINFO_H

#include <stdint.h>
#include <sys/types.h>

/* Pins the calling thread to `cpu`. 0 or -errno. */
int sys_pin_cpu(int cpu);
/* The CPU the calling thread may run on with the lowest number, from its
 * affinity mask; -errno on failure. */
int sys_first_allowed_cpu(void);

/* Reads the first line of a file, without the newline. */
int sys_read_line(const char *path, char *buf, size_t len);

struct sys_limits {
	uint64_t threads_max;   /* /proc/sys/kernel/threads-max */
	uint64_t pid_max;       /* /proc/sys/kernel/pid_max */
	uint64_t nproc_soft;    /* RLIMIT_NPROC (UINT64_MAX: unlimited) */
	uint64_t stack_soft;    /* RLIMIT_STACK in bytes (UINT64_MAX: unlimited) */
	uint64_t pids_max;      /* cgroup pids.max (UINT64_MAX: max or none) */
	uint64_t pids_current;  /* cgroup pids.current (0 when unknown) */
	uint64_t max_map_count; /* /proc/sys/vm/max_map_count */
	int overcommit_memory;  /* /proc/sys/vm/overcommit_memory (-1: unknown) */
	uint64_t mem_available; /* MemAvailable from /proc/meminfo, bytes */
	uint64_t threads_now;   /* threads on the host (/proc/loadavg: running/TOTAL) */
};
/* Fills every field it can; fields it cannot read are left at 0 (or
 * UINT64_MAX or -1 where noted). pids_max is the limit with the least
 * headroom between this process's cgroup and the root, pids_current the
 * count of that same cgroup. Returns 0. */
int sys_limits_read(struct sys_limits *l);

/* MemAvailable of a /proc/meminfo-format file (path NULL: /proc/meminfo),
 * bytes. 0, or -errno (-ENODATA when the file has no such line, as before
 * Linux 3.14); *bytes is left alone on failure. */
int sys_mem_available(const char *path, uint64_t *bytes);

/* Number of VMAs of the calling process (lines of /proc/self/maps). */
long sys_vma_count(void);
/* The times thread `tid` of this process was switched in on a CPU: the
 * third field of /proc/self/task/TID/schedstat (sched_info.pcount, a
 * kernel with CONFIG_SCHED_INFO). 0, or -errno. */
int sys_task_switched_in(int tid, unsigned long long *count);
/* Lines of the file `name` relative to dirfd (AT_FDCWD for a path), or
 * -errno. Reads /proc files such as maps in one pass without parsing. */
long sys_count_lines_at(int dirfd, const char *name);

/* The tasks runnable on the host right now: procs_running of a
 * /proc/stat-format file (path NULL: /proc/stat). 0, or -errno (-ENODATA
 * when the file has no such line). */
int sys_procs_running(const char *path, long *n);

/* CPU time in jiffies from a "cpu" or "cpuN" line of /proc/stat: busy
 * (all but idle and iowait), steal, and in all. */
struct sys_cpu_jiffies {
	unsigned long long busy, steal, total;
};
/* Parses one line of /proc/stat: 1 for a "cpu" line (*cpu -1, the sum of
 * all CPUs) or a "cpuN" line (*cpu N), 0 for another line, -EINVAL for a
 * cpu line that does not hold at least user, nice, system and idle. */
int sys_cpu_line(const char *line, int *cpu, struct sys_cpu_jiffies *j);
/* Fills j[0..n-1] from the cpu0..cpu(n-1) lines of a /proc/stat-format
 * file (path NULL: /proc/stat); a CPU without a line stays 0. 0, or
 * -errno (-ENODATA when the file has no cpuN line, -EINVAL for a line that
 * is not numbers). */
int sys_cpu_jiffies(const char *path, struct sys_cpu_jiffies *j, int n);
/* The sum of all CPUs, from the first line of a /proc/stat-format file:
 * the one reading the quiet-host guard and a run's steal share take. 0, or
 * -errno (-EINVAL when that line is not the "cpu" line). */
int sys_cpu_total(const char *path, struct sys_cpu_jiffies *j);
/* The 1-minute load average from a /proc/loadavg-format file. 0 or -errno. */
int sys_loadavg1(const char *path, double *load1);

/* Default pthread stack size as glibc picks it: RLIMIT_STACK, or 2 MiB
 * when unlimited, rounded to pages. */
size_t sys_default_stack_size(void);

#endif
