/*
 * pmu: core cycles of one thread from perf_event_open
 * (PERF_COUNT_HW_CPU_CYCLES, user and kernel), for probes that want core
 * cycles rather than TSC ticks. Where perf is not allowed (no PMU, a VM,
 * perf_event_paranoid above 1 without CAP_PERFMON) the caller falls back
 * to the TSC and says so.
 */
#ifndef TW_PMU_H
#define TW_PMU_H

#include <stdint.h>

/* Opens a counter of the calling thread's cycles in user and kernel mode.
 * Returns the fd or -errno. */
int cyc_open(void);

/* The count so far of a counter opened by any thread of the process. 0 or
 * -errno. */
int cyc_read(int fd, uint64_t *v);

#endif
