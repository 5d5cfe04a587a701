/*
 * no_pmu: an LD_PRELOAD test double for a kernel without a core PMU: a
 * guest whose hypervisor offers no virtual PMU, or bare metal whose PMU
 * driver is not loaded. perf_event_open() of a hardware event then fails
 * in perf_init_event() (kernel/events/core.c): no registered PMU accepts
 * the event, every perf_try_init_event() answers -ENOENT, and the loop
 * ends with pmu = ERR_PTR(-ENOENT), so the call returns -ENOENT. The
 * double answers PERF_TYPE_HARDWARE and PERF_TYPE_HW_CACHE events so;
 * software events (cpu-clock, task-clock), which need no PMU, and every
 * other call go to the kernel.
 */
#include <errno.h>
#include <stdarg.h>
#include <sys/syscall.h>

#include <linux/perf_event.h>

#include "shim_syscall.h"

long syscall(long nr, ...);

__attribute__((no_sanitize_address)) long syscall(long nr, ...)
{
	va_list ap;
	long r;

	va_start(ap, nr);
	if (nr == SYS_perf_event_open) {
		va_list cp;
		const struct perf_event_attr *a;

		va_copy(cp, ap);
		a = va_arg(cp, const struct perf_event_attr *);
		va_end(cp);
		if (a && (a->type == PERF_TYPE_HARDWARE || a->type == PERF_TYPE_HW_CACHE)) {
			va_end(ap);
			errno = ENOENT;
			return -1;
		}
	}
	r = shim_syscall_next(nr, ap);
	va_end(ap);
	return r;
}
