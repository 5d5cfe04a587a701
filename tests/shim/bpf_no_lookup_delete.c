/*
 * bpf_no_lookup_delete: an LD_PRELOAD test double for a kernel before 5.14,
 * whose BPF_MAP_LOOKUP_AND_DELETE_ELEM served only queue and stack maps.
 * map_lookup_and_delete_elem() (kernel/bpf/syscall.c, 4.20 to 5.13) took
 * the map and copied the key, then called map_pop_elem() for
 * BPF_MAP_TYPE_QUEUE and BPF_MAP_TYPE_STACK and set err = -ENOTSUPP (the
 * kernel's internal 524, which reaches user space as it is) for every
 * other type, a hash map among them. The double answers that command so
 * for every map (the observer's are hash maps); every other bpf(2)
 * command, and every other call, goes to the kernel.
 */
#include <errno.h>
#include <stdarg.h>
#include <sys/syscall.h>

#include <linux/bpf.h>

#include "shim_syscall.h"

/* include/linux/errno.h: not in the user-space headers */
#define SHIM_ENOTSUPP 524

long syscall(long nr, ...);

__attribute__((no_sanitize_address)) long syscall(long nr, ...)
{
	va_list ap;
	long r;

	va_start(ap, nr);
	if (nr == SYS_bpf) {
		va_list cp;
		long cmd;

		va_copy(cp, ap);
		cmd = va_arg(cp, long);
		va_end(cp);
		if (cmd == BPF_MAP_LOOKUP_AND_DELETE_ELEM) {
			va_end(ap);
			errno = SHIM_ENOTSUPP;
			return -1;
		}
	}
	r = shim_syscall_next(nr, ap);
	va_end(ap);
	return r;
}
