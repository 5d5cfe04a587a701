/*
 * topology: CPU placement from sysfs (see topology.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sysinfo.h"
#include "topology.h"

const char *const topo_place_names[TOPO_N_PLACES] = {"same_cpu", "smt", "llc", "cross_llc",
                                                     "cross_node"};

int topo_parse_list(const char *list, cpu_set_t *set)
{
	const char *p = list;

	CPU_ZERO(set);
	while (*p && *p != '\n') {
		char *end;
		long lo = strtol(p, &end, 10), hi = lo;

		if (end == p || lo < 0 || lo >= CPU_SETSIZE)
			return -EINVAL;
		p = end;
		if (*p == '-') {
			hi = strtol(p + 1, &end, 10);
			if (end == p + 1 || hi < lo || hi >= CPU_SETSIZE)
				return -EINVAL;
			p = end;
		}
		for (long c = lo; c <= hi; c++)
			CPU_SET((int)c, set);
		if (*p == ',')
			p++;
		else if (*p && *p != '\n')
			return -EINVAL;
	}
	return 0;
}

/* The lowest CPU of the list in file root/rel, or -1. */
static int list_first(const char *root, const char *rel)
{
	char path[512], buf[4096];
	cpu_set_t set;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	if (sys_read_line(path, buf, sizeof(buf)) < 0 || topo_parse_list(buf, &set) < 0)
		return -1;
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &set))
			return c;
	return -1;
}

/* The highest cache level of cpuN that is unified or data, and the lowest
 * CPU sharing it (-1: none). */
static int cpu_llc(const char *root, int cpu, int *level)
{
	int best = -1;

	*level = 0;
	for (int i = 0; i < 16; i++) {
		char rel[128], path[512], buf[32];
		int lv, first;

		snprintf(path, sizeof(path), "%s/cpu/cpu%d/cache/index%d/level", root, cpu, i);
		if (sys_read_line(path, buf, sizeof(buf)) < 0)
			break;
		lv = atoi(buf);
		snprintf(path, sizeof(path), "%s/cpu/cpu%d/cache/index%d/type", root, cpu, i);
		if (sys_read_line(path, buf, sizeof(buf)) == 0 && !strncmp(buf, "Instruction", 11))
			continue;
		snprintf(rel, sizeof(rel), "cpu/cpu%d/cache/index%d/shared_cpu_list", cpu, i);
		first = list_first(root, rel);
		if (lv > *level && first >= 0) {
			*level = lv;
			best = first;
		}
	}
	return best;
}

int topo_read(const char *root, struct topology *t)
{
	char rel[128];

	memset(t, 0, sizeof(*t));
	for (int c = 0; c < TOPO_MAX_CPUS; c++) {
		int level;

		snprintf(rel, sizeof(rel), "cpu/cpu%d/topology/thread_siblings_list", c);
		t->core[c] = list_first(root, rel);
		if (t->core[c] < 0)
			break;
		t->n_cpus = c + 1;
		t->llc[c] = cpu_llc(root, c, &level);
		if (level > t->llc_level)
			t->llc_level = level;
		t->node[c] = -1;
	}
	if (!t->n_cpus)
		return -ENOENT;
	for (int k = 0; k < TOPO_MAX_CPUS; k++) {
		char path[512], buf[4096];
		cpu_set_t set;

		snprintf(path, sizeof(path), "%s/node/node%d/cpulist", root, k);
		if (sys_read_line(path, buf, sizeof(buf)) < 0) {
			if (k > 64)
				break;
			continue;
		}
		if (topo_parse_list(buf, &set) < 0)
			continue;
		for (int c = 0; c < t->n_cpus; c++)
			if (CPU_ISSET(c, &set))
				t->node[c] = k;
	}
	return 0;
}

enum topo_place topo_place_of(const struct topology *t, int a, int b)
{
	if (a == b)
		return TOPO_SAME_CPU;
	if (t->core[a] >= 0 && t->core[a] == t->core[b])
		return TOPO_SMT;
	if (t->node[a] != t->node[b] && t->node[a] >= 0 && t->node[b] >= 0)
		return TOPO_CROSS_NODE;
	if (t->llc[a] >= 0 && t->llc[a] == t->llc[b])
		return TOPO_LLC;
	return TOPO_CROSS_LLC;
}

int topo_pair(const struct topology *t, const cpu_set_t *allowed, enum topo_place p, int *a, int *b)
{
	/* two passes: without CPU 0 first (it takes most interrupts) */
	for (int pass = 0; pass < 2; pass++)
		for (int i = pass ? 0 : 1; i < t->n_cpus; i++) {
			if (!CPU_ISSET(i, allowed))
				continue;
			for (int j = p == TOPO_SAME_CPU ? i : i + 1; j < t->n_cpus; j++) {
				if ((pass == 0 && j == 0) || !CPU_ISSET(j, allowed) ||
				    topo_place_of(t, i, j) != p)
					continue;
				*a = i;
				*b = j;
				return 0;
			}
		}
	return -ENOENT;
}
