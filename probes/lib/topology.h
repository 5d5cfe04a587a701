/*
 * topology: where CPUs sit relative to each other (SMT siblings, a shared
 * last-level cache, a NUMA node), read from sysfs under a root the tests
 * may point at a tree of their own, and the pairs of allowed CPUs that
 * stand for each placement a hand-off can cross.
 */
#ifndef TW_TOPOLOGY_H
#define TW_TOPOLOGY_H

#include <sched.h>
#include <stddef.h>

#define TOPO_MAX_CPUS 1024

/* A placement of two threads, nearest first. */
enum topo_place {
	TOPO_SAME_CPU,   /* one CPU: a switch, not a hand-off across CPUs */
	TOPO_SMT,        /* two hardware threads of one core */
	TOPO_LLC,        /* two cores that share the last-level cache */
	TOPO_CROSS_LLC,  /* two last-level caches of one NUMA node */
	TOPO_CROSS_NODE, /* two NUMA nodes */
	TOPO_N_PLACES
};
/* "same_cpu", "smt", "llc", "cross_llc", "cross_node". */
extern const char *const topo_place_names[TOPO_N_PLACES];

struct topology {
	int n_cpus; /* CPUs 0 .. n_cpus - 1 that sysfs describes */
	/* per CPU: the lowest CPU of its core, of its last-level cache and
	 * the node it is on (-1: not known) */
	int core[TOPO_MAX_CPUS], llc[TOPO_MAX_CPUS], node[TOPO_MAX_CPUS];
	int llc_level; /* the cache level taken as last (0: none known) */
};

/* Reads the topology under root ("/sys/devices/system" on a real host):
 * cpu/cpuN/topology/thread_siblings_list, cpu/cpuN/cache/indexM/{level,
 * shared_cpu_list} and node/nodeK/cpulist. 0, or -errno when no CPU is
 * described. */
int topo_read(const char *root, struct topology *t);

/* The placement of CPUs a and b. */
enum topo_place topo_place_of(const struct topology *t, int a, int b);

/* A pair of CPUs in `allowed` with placement p (a == b for TOPO_SAME_CPU),
 * preferring CPUs other than 0. 0, or -ENOENT when the host has none. */
int topo_pair(const struct topology *t, const cpu_set_t *allowed, enum topo_place p, int *a,
              int *b);

/* Parses a sysfs CPU list ("0-3,8,10-11") into set; 0 or -EINVAL. */
int topo_parse_list(const char *list, cpu_set_t *set);

#endif
