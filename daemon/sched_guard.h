/*
 * sched_guard (prefix guard_): the scheduler's quiet-host guard. Before a scheduled cycle it
 * asks whether the host is busy now: CPU pressure (PSI, /proc/pressure/cpu
 * "some avg10") where the kernel has it, else the busy share of all CPU
 * time from /proc/stat over a few seconds with threadwatchd's own process
 * tree left out, and the 1-minute load average only as a last resort (it
 * decays over minutes, so a spike seconds ago still reads as a busy host).
 */
#ifndef TW_SCHED_GUARD_H
#define TW_SCHED_GUARD_H

#include "sysinfo.h"

/* The measures, in the order "auto" tries them. */
enum guard_mode { GUARD_AUTO, GUARD_PSI, GUARD_BUSY, GUARD_LOADAVG, GUARD_OFF };

/* Each mode's name, indexed by enum guard_mode and NULL-terminated: the
 * guard key's choices (daemon/config.c) and the log's words. */
extern const char *const guard_mode_names[];

/* Where the readings come from (the tests point them at files). */
struct guard_paths {
	const char *psi;     /* /proc/pressure/cpu */
	const char *stat;    /* /proc/stat */
	const char *self;    /* /proc/self/stat */
	const char *loadavg; /* /proc/loadavg */
};
extern const struct guard_paths guard_proc;

/* The limits: the host is busy while the measure is above its limit. */
struct guard_limits {
	double pressure_pct; /* PSI some avg10, percent */
	double busy_pct;     /* busy CPU time outside our tree, percent */
	double load_per_cpu; /* 1-minute load average per CPU */
};

/* One guard: the measure picked and the last CPU reading. */
struct guard {
	const struct guard_paths *paths;
	enum guard_mode mode;       /* never GUARD_AUTO once begun */
	struct sys_cpu_jiffies cpu; /* /proc/stat's sum of all CPUs */
	unsigned long long own;     /* our tree's CPU ticks at that reading */
	int have_cpu;
};

/* What one look found. */
struct guard_look {
	int known;           /* 0: the first busy reading; look again after a while */
	int busy;            /* the measure is above its limit */
	double value, limit; /* in the measure's unit */
	const char *measure; /* "CPU pressure (PSI some avg10)", ... */
	const char *unit;    /* "%" or " per CPU" */
};

/* Picks the measure: the one asked for, or under GUARD_AUTO the first the
 * host can give. 0, or -errno when the measure asked for is unavailable
 * (the guard is then off). */
int guard_begin(struct guard *g, enum guard_mode mode, const struct guard_paths *paths);
/* Looks at the host now. 0 or -errno (the reading failed: treat as quiet). */
int guard_look(struct guard *g, const struct guard_limits *lim, struct guard_look *out);
/* The mode's name as in the configuration ("psi", ...). */
const char *guard_mode_name(enum guard_mode mode);

/* --- readers, for the unit tests ------------------------------------------ */

/* "some avg10" from a /proc/pressure/cpu-style file, in percent. */
int guard_read_psi(const char *path, double *avg10);
/* utime + stime + cutime + cstime from a /proc/PID/stat-style file: the
 * process's own CPU time and that of the children it has reaped. */
int guard_read_own(const char *path, unsigned long long *ticks);
/* Busy CPU time between two readings in percent of all CPU time, with
 * own_ticks (our tree's share) left out; 0 when no time passed. */
double guard_busy_pct(const struct sys_cpu_jiffies *before, const struct sys_cpu_jiffies *after,
                      unsigned long long own_ticks);

#endif
