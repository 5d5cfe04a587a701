/*
 * placement: the quietest allowed CPU and its SMT siblings (see
 * placement.h). /proc/interrupts has one column per online CPU; summary
 * lines with a single total (ERR, MIS) are skipped.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "placement.h"
#include "sysinfo.h"

#define PLACE_MAX_CPUS 1024

/* Sums each CPU column of /proc/interrupts into sums[] (indexed by the
 * number in the "CPUn" header). Returns the number of columns or -errno. */
static int irq_sums(long long *sums, int max)
{
	FILE *f = fopen("/proc/interrupts", "re");
	int col_cpu[PLACE_MAX_CPUS], ncol = 0;
	char *line = NULL, *p, *end;
	size_t cap = 0;

	if (!f)
		return -errno;
	if (getline(&line, &cap, f) > 0)
		for (p = line; (p = strstr(p, "CPU")) && ncol < PLACE_MAX_CPUS; p += 3)
			col_cpu[ncol++] = atoi(p + 3);
	for (int i = 0; i < max; i++)
		sums[i] = 0;
	while (getline(&line, &cap, f) > 0) {
		long long v[PLACE_MAX_CPUS];
		int k = 0;

		p = strchr(line, ':');
		if (!p)
			continue;
		for (p++; k < ncol; k++) {
			v[k] = strtoll(p, &end, 10);
			if (end == p)
				break;
			p = end;
		}
		if (k < ncol) /* a total, not one count per CPU */
			continue;
		for (k = 0; k < ncol; k++)
			if (col_cpu[k] >= 0 && col_cpu[k] < max)
				sums[col_cpu[k]] += v[k];
	}
	free(line);
	fclose(f);
	return ncol > 0 ? ncol : -ENODATA;
}

long long place_cpu_irqs(int cpu)
{
	static long long sums[PLACE_MAX_CPUS];
	int r;

	if (cpu < 0 || cpu >= PLACE_MAX_CPUS)
		return -EINVAL;
	r = irq_sums(sums, PLACE_MAX_CPUS);
	return r < 0 ? r : sums[cpu];
}

int place_quiet_cpu(struct place_cpu *out)
{
	static long long sums[PLACE_MAX_CPUS];
	int have = irq_sums(sums, PLACE_MAX_CPUS) > 0, allowed = 0, best = -1;
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set) < 0)
		return -errno;
	for (int i = 0; i < CPU_SETSIZE && i < PLACE_MAX_CPUS; i++)
		allowed += CPU_ISSET(i, &set) != 0;
	for (int i = 0; i < CPU_SETSIZE && i < PLACE_MAX_CPUS; i++) {
		if (!CPU_ISSET(i, &set) || (i == 0 && allowed > 1))
			continue;
		if (best < 0 || (have && sums[i] < sums[best]))
			best = i;
	}
	if (best < 0)
		return -ENODEV;
	out->cpu = best;
	out->irqs = have ? sums[best] : -1;
	out->how = allowed == 1 ? "the only allowed CPU"
	           : have       ? "fewest interrupts (CPU 0 left out)"
	                        : "first allowed but CPU 0 (/proc/interrupts unreadable)";
	return 0;
}

int place_smt_siblings(int cpu, char *buf, size_t len)
{
	char path[96], list[256], *p = list, *end;
	size_t o = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/topology/thread_siblings_list",
	         cpu);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	if (!fgets(list, sizeof(list), f))
		list[0] = '\0';
	fclose(f);
	buf[0] = '\0';
	/* "0,4" or "0-1": expands ranges, leaves `cpu` out. */
	while (*p && *p != '\n') {
		long a = strtol(p, &end, 10), b = a;

		if (end == p)
			return -EINVAL;
		p = end;
		if (*p == '-')
			b = strtol(p + 1, &p, 10);
		for (long c = a; c <= b && o + 12 < len; c++)
			if (c != cpu)
				o += (size_t)snprintf(buf + o, len - o, "%s%ld", o ? "," : "", c);
		if (*p == ',')
			p++;
	}
	if (!o)
		snprintf(buf, len, "none");
	return 0;
}

int place_allowed_list(char *buf, size_t len)
{
	cpu_set_t set;
	size_t o = 0;

	if (sched_getaffinity(0, sizeof(set), &set) < 0)
		return -errno;
	buf[0] = '\0';
	for (int i = 0; i < CPU_SETSIZE && o + 24 < len; i++) {
		int j = i;

		if (!CPU_ISSET(i, &set))
			continue;
		while (j + 1 < CPU_SETSIZE && CPU_ISSET(j + 1, &set))
			j++;
		if (j == i)
			o += (size_t)snprintf(buf + o, len - o, "%s%d", o ? "," : "", i);
		else
			o += (size_t)snprintf(buf + o, len - o, "%s%d-%d", o ? "," : "", i, j);
		i = j;
	}
	return o ? 0 : -ENODEV;
}

int place_cpu_allowed(int cpu)
{
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set) < 0)
		return -errno;
	return cpu >= 0 && cpu < CPU_SETSIZE && CPU_ISSET(cpu, &set) ? 0 : -EINVAL;
}

/* Whether CPU i is in a comma-separated list such as "2,3". */
static int in_cpu_list(const char *list, int i)
{
	for (const char *p = list; *p;) {
		char *end;
		long v = strtol(p, &end, 10);

		if (end == p)
			return 0;
		if (v == i)
			return 1;
		p = *end == ',' ? end + 1 : end;
	}
	return 0;
}

/* Runs the main thread on another allowed CPU when there is one (not an
 * SMT sibling when it can), so that starting a sample does not share the
 * measured CPU. */
int place_main_elsewhere(int cpu, const char *siblings)
{
	cpu_set_t set;
	int other = -1;

	if (sched_getaffinity(0, sizeof(set), &set) < 0)
		return -errno;
	for (int i = 0; i < CPU_SETSIZE; i++) {
		if (i == cpu || !CPU_ISSET(i, &set))
			continue;
		if (other < 0)
			other = i;
		if (!in_cpu_list(siblings, i)) {
			other = i;
			break;
		}
	}
	if (other < 0)
		return -ENODEV;
	return sys_pin_cpu(other) == 0 ? other : -EINVAL;
}
