/*
 * no_pagemap_scan: an LD_PRELOAD test double for a kernel before 6.7,
 * whose /proc/PID/pagemap has no ioctl. pagemap_operations (fs/proc/
 * task_mmu.c) then held only llseek, read, open and release, so for any
 * command vfs_ioctl() (fs/ioctl.c) found no ->unlocked_ioctl and returned
 * -ENOTTY. The double answers PAGEMAP_SCAN ('f', 16) so, whatever the
 * file; every other ioctl goes to the kernel.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <sys/ioctl.h>

/* _IOC_TYPE 'f', _IOC_NR 16: PAGEMAP_SCAN, whatever its size field */
#define SHIM_IS_PAGEMAP_SCAN(req) (_IOC_TYPE(req) == 'f' && _IOC_NR(req) == 16)

typedef int ioctl_fn(int, unsigned long, ...);

int ioctl(int fd, unsigned long req, ...);

int ioctl(int fd, unsigned long req, ...)
{
	static ioctl_fn *real;
	va_list ap;
	void *arg;

	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (SHIM_IS_PAGEMAP_SCAN(req)) {
		errno = ENOTTY;
		return -1;
	}
	if (!real)
		real = (ioctl_fn *)dlsym(RTLD_NEXT, "ioctl");
	return real(fd, req, arg);
}
