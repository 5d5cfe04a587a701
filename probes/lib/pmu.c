/*
 * pmu: per-thread core-cycle counters (see pmu.h).
 */
#include <errno.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/perf_event.h>

#include "pmu.h"

int cyc_open(void)
{
	struct perf_event_attr a;
	long fd;

	memset(&a, 0, sizeof(a));
	a.type = PERF_TYPE_HARDWARE;
	a.size = sizeof(a);
	a.config = PERF_COUNT_HW_CPU_CYCLES;
	/* The switch happens in the kernel: counting user mode alone would
	 * miss it, so a counter that may not see the kernel is no counter. */
	a.exclude_hv = 1;
	fd = syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	return fd < 0 ? -errno : (int)fd;
}

int cyc_read(int fd, uint64_t *v)
{
	ssize_t n = read(fd, v, sizeof(*v));

	if (n == (ssize_t)sizeof(*v))
		return 0;
	return n < 0 ? -errno : -EIO;
}
