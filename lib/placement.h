/*
 * placement: where a probe runs. The allowed CPU that has taken the fewest
 * interrupts (/proc/interrupts), not CPU 0 when another is allowed, which
 * the runner pins a probe to and a timing probe pins its threads to; that
 * CPU's SMT siblings (sysfs topology); the allowed CPUs as a list.
 */
#ifndef TW_PLACEMENT_H
#define TW_PLACEMENT_H

#include <stddef.h>

struct place_cpu {
	int cpu;
	long long irqs;  /* interrupts it has taken since boot; -1: unknown */
	const char *how; /* "fewest interrupts", "first allowed but CPU 0", ... */
};

/* Chooses the quietest allowed CPU. 0 or -errno (no allowed CPU). */
int place_quiet_cpu(struct place_cpu *out);

/* Interrupts taken by `cpu` (sum of its /proc/interrupts column), or
 * -errno. */
long long place_cpu_irqs(int cpu);

/* The SMT siblings of `cpu` other than itself as a CPU list ("4", "2,3"),
 * "none" when it has none. 0 or -errno (topology not readable). */
int place_smt_siblings(int cpu, char *buf, size_t len);

/* The CPUs the calling thread may run on, as a list ("0-3,6"). 0 or
 * -errno. */
int place_allowed_list(char *buf, size_t len);

/* 0 when the calling thread may run on `cpu`, -EINVAL when it may not,
 * or -errno. */
int place_cpu_allowed(int cpu);

/* Runs the calling thread on another allowed CPU than `cpu` when there is
 * one, not one of `siblings` (a list such as "2,3") when it can: so that
 * starting a sample does not share the measured CPU. The CPU taken, or
 * -errno (-ENODEV: no other). */
int place_main_elsewhere(int cpu, const char *siblings);

#endif
