/*
 * contention: a run's recorded readings against the limits of
 * lib/contention.h, one table row per reading.
 */
#include <math.h>
#include <stddef.h>

#include "contention.h"

/* Each reading, how it is scaled (per CPU or not) and its limit. */
static const struct {
	size_t off;
	int per_cpu;
	double limit;
} readings[] = {
    {offsetof(struct contention_reading, steal_pct), 0, CONTENTION_STEAL_PCT},
    {offsetof(struct contention_reading, loadavg1), 1, CONTENTION_LOAD_PER_CPU},
};

int contention_of_run(const struct contention_reading *r, long ncpus)
{
	const double cpus = ncpus < 1 ? 1 : (double)ncpus;

	for (size_t i = 0; i < sizeof(readings) / sizeof(readings[0]); i++) {
		double v = *(const double *)(const void *)((const char *)r + readings[i].off);

		if (isfinite(v) && (readings[i].per_cpu ? v / cpus : v) >= readings[i].limit)
			return 1;
	}
	return 0;
}
