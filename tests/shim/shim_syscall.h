/*
 * shim_syscall: what the LD_PRELOAD doubles share: the call through to
 * glibc's own syscall(3) for every system call a double leaves to the
 * kernel, and the real int $0x80 gate for the compat calls.
 */
#ifndef TW_SHIM_SYSCALL_H
#define TW_SHIM_SYSCALL_H

#include <dlfcn.h>
#include <stdarg.h>

typedef long shim_syscall_fn(long, ...);

/* glibc's syscall() is assembly that loads six argument words whatever the
 * call takes, and the kernel reads only those it needs; so does this. The
 * va_arg reads past what a caller of a shorter call pushed, which
 * AddressSanitizer would report, so the function is left uninstrumented,
 * as the assembly is. */
__attribute__((no_sanitize_address)) static inline long shim_syscall_next(long nr, va_list ap)
{
	static shim_syscall_fn *real;
	long a[6];

	if (!real)
		real = (shim_syscall_fn *)dlsym(RTLD_NEXT, "syscall");
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	return real(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
}

/* The i386 system call `nr` with one argument through the real int $0x80
 * gate: for the doubles that leave the compat call to the kernel. */
static inline long shim_int80(long nr, unsigned long arg)
{
	long r;

	__asm__ volatile("int $0x80"
	                 : "=a"(r)
	                 : "a"(nr), "b"(arg)
	                 : "memory", "rcx", "r8", "r9", "r10", "r11");
	return r;
}

#endif
