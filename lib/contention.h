/*
 * contention: whether a run was taken while something else competed for
 * the host, from the readings the store keeps with every run (CPU steal
 * during the run from /proc/stat, the 1-minute load average at its start).
 * Regression detection leaves such runs out (doc/regression.md).
 */
#ifndef TW_CONTENTION_H
#define TW_CONTENTION_H

/* A run is contended when the hypervisor stole at least this share of the
 * CPU time while it ran (a quiet VM steals well under 1%)... */
#define CONTENTION_STEAL_PCT 2.0
/* ...or when the load average at its start was at least this per CPU
 * (more runnable tasks than CPUs: the quiet-host guard waits below it). */
#define CONTENTION_LOAD_PER_CPU 1.0

/* What the store recorded with a run; NAN where it recorded nothing. */
struct contention_reading {
	double steal_pct; /* CPU steal during the run, percent */
	double loadavg1;  /* 1-minute load average at the start */
};

/* 1 when the run was taken under contention on a host of ncpus CPUs (< 1:
 * unknown, counted as 1), 0 when not or when nothing was recorded. */
int contention_of_run(const struct contention_reading *r, long ncpus);

#endif
