/*
 * sched_guard: the quiet-host guard's readings (PSI, /proc/stat, our own tree's
 * CPU time, loadavg) and the decision "busy or quiet" on the measure the
 * host can give. No state beyond struct guard; the scheduler does the
 * waiting.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "sched_guard.h"
#include "sysinfo.h"

/* The master copy of the modes' names: the config key's choices are these. */
const char *const guard_mode_names[] = {
    [GUARD_AUTO] = "auto",       [GUARD_PSI] = "psi", [GUARD_BUSY] = "busy",
    [GUARD_LOADAVG] = "loadavg", [GUARD_OFF] = "off", [GUARD_OFF + 1] = NULL,
};

const struct guard_paths guard_proc = {
    .psi = "/proc/pressure/cpu",
    .stat = "/proc/stat",
    .self = "/proc/self/stat",
    .loadavg = "/proc/loadavg",
};

/* What each mode measures, in words and unit (names: guard_mode_names). */
static const struct {
	const char *measure, *unit;
} modes[] = {
    [GUARD_AUTO] = {NULL, NULL},
    [GUARD_PSI] = {"CPU pressure (PSI some avg10)", "%"},
    [GUARD_BUSY] = {"Busy CPU time outside threadwatchd", "%"},
    [GUARD_LOADAVG] = {"Load average (1 min)", " per CPU"},
    [GUARD_OFF] = {NULL, NULL},
};

const char *guard_mode_name(enum guard_mode mode)
{
	return guard_mode_names[mode];
}

int guard_read_psi(const char *path, double *avg10)
{
	char line[256];
	FILE *f = fopen(path, "re");
	int r = -EINVAL;

	if (!f)
		return -errno;
	/* psi_show(): "some avg10=%lu.%02lu avg60=... total=%llu"; reading
	 * fails with EOPNOTSUPP when the kernel was booted with psi=0. */
	errno = 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "some avg10=%lf", avg10) == 1 && isfinite(*avg10) && *avg10 >= 0) {
			r = 0;
			break;
		}
	if (r < 0 && ferror(f) && errno)
		r = -errno;
	fclose(f);
	return r;
}

int guard_read_own(const char *path, unsigned long long *ticks)
{
	unsigned long long ut, st;
	long long cut, cst;
	char buf[1024], *p;
	FILE *f = fopen(path, "re");
	size_t n;

	if (!f)
		return -errno;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* the command name may hold spaces and parentheses: fields 14 to 17
	 * (utime stime cutime cstime) count from after its last ')' */
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %lld %lld",
	                 &ut, &st, &cut, &cst) != 4)
		return -EINVAL;
	*ticks = ut + st + (unsigned long long)(cut > 0 ? cut : 0) +
	         (unsigned long long)(cst > 0 ? cst : 0);
	return 0;
}

double guard_busy_pct(const struct sys_cpu_jiffies *before, const struct sys_cpu_jiffies *after,
                      unsigned long long own_ticks)
{
	double total, busy;

	if (after->total <= before->total || after->busy < before->busy)
		return 0;
	total = (double)(after->total - before->total);
	busy = (double)(after->busy - before->busy) - (double)own_ticks;
	return busy <= 0 ? 0 : fmin(100.0, 100.0 * busy / total);
}

/* Can the host give this measure now? */
static int usable(const struct guard_paths *p, enum guard_mode mode)
{
	struct sys_cpu_jiffies c;
	double x;

	switch (mode) {
	case GUARD_PSI:
		return guard_read_psi(p->psi, &x);
	case GUARD_BUSY:
		return sys_cpu_total(p->stat, &c);
	case GUARD_LOADAVG:
		return sys_loadavg1(p->loadavg, &x);
	default:
		return 0;
	}
}

int guard_begin(struct guard *g, enum guard_mode mode, const struct guard_paths *paths)
{
	int r = 0;

	*g = (struct guard){.paths = paths ? paths : &guard_proc, .mode = mode};
	if (mode == GUARD_AUTO) {
		g->mode = GUARD_OFF;
		for (int m = GUARD_PSI; m <= GUARD_LOADAVG; m++)
			if (usable(g->paths, (enum guard_mode)m) == 0) {
				g->mode = (enum guard_mode)m;
				break;
			}
	} else if ((r = usable(g->paths, mode)) < 0)
		g->mode = GUARD_OFF;
	return r;
}

/* Busy CPU time since the last reading (the first reading only starts). */
static int look_busy(struct guard *g, double *pct, int *known)
{
	struct sys_cpu_jiffies c;
	unsigned long long own = 0;
	int r = sys_cpu_total(g->paths->stat, &c);

	if (r < 0)
		return r;
	if (guard_read_own(g->paths->self, &own) < 0)
		own = g->own; /* cannot tell our tree apart: count it in */
	*known = g->have_cpu;
	if (g->have_cpu)
		*pct = guard_busy_pct(&g->cpu, &c, own >= g->own ? own - g->own : 0);
	g->cpu = c;
	g->own = own;
	g->have_cpu = 1;
	return 0;
}

int guard_look(struct guard *g, const struct guard_limits *lim, struct guard_look *out)
{
	long ncpus = sysconf(_SC_NPROCESSORS_ONLN);
	int r = 0;

	*out = (struct guard_look){
	    .known = 1, .measure = modes[g->mode].measure, .unit = modes[g->mode].unit};
	switch (g->mode) {
	case GUARD_PSI:
		r = guard_read_psi(g->paths->psi, &out->value);
		out->limit = lim->pressure_pct;
		break;
	case GUARD_BUSY:
		r = look_busy(g, &out->value, &out->known);
		out->limit = lim->busy_pct;
		break;
	case GUARD_LOADAVG:
		r = sys_loadavg1(g->paths->loadavg, &out->value);
		out->value /= (double)(ncpus < 1 ? 1 : ncpus);
		out->limit = lim->load_per_cpu;
		break;
	default:
		return 0;
	}
	out->busy = r == 0 && out->known && out->value > out->limit;
	return r;
}
