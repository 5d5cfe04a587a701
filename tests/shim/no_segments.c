/*
 * no_segments: an LD_PRELOAD test double for an x86-64 kernel that offers
 * no way to give a thread an FS segment descriptor: built without IA32
 * emulation (or booted with ia32_emulation=0) and without
 * CONFIG_MODIFY_LDT_SYSCALL. It imitates what such a kernel does:
 *   - modify_ldt: kernel/sys_ni.c routes a syscall that is configured out
 *     to sys_ni_syscall, which returns -ENOSYS;
 *   - set_thread_area, the x86-64 system call: -ENOSYS, as x86-64 kernels
 *     answer it (arch/x86/entry/syscalls/syscall_64.tbl has no 64-bit
 *     entry point for it), with or without this shim;
 *   - int $0x80 (the probe's tw_ia32_syscall1 seam, probes/lib/fsseg.h):
 *     without IA32 emulation vector 0x80 has no gate in the IDT
 *     (arch/x86/kernel/idt.c installs it only when ia32_enabled()), so the
 *     instruction raises #GP and exc_general_protection() kills the thread
 *     group with a forced SIGSEGV; this shim raises SIGSEGV with the
 *     default action, which ends the process the same way.
 * With NO_SEGMENTS_KEEP_LDT=1 in the environment modify_ldt is left to the
 * kernel: a kernel booted with ia32_emulation=0 that still has
 * CONFIG_MODIFY_LDT_SYSCALL, as most distribution kernels do.
 * Every other system call made through syscall(3) goes to the kernel.
 */
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

typedef long syscall_fn(long, ...);

long syscall(long nr, ...);
long tw_ia32_syscall1(long nr, unsigned long arg);

/* glibc's syscall() is assembly that loads six argument words whatever
 * the call takes; reading them with va_arg reaches past what a caller of
 * a shorter call pushed, which AddressSanitizer would report, so this one
 * function is left uninstrumented, as the assembly is. */
__attribute__((no_sanitize_address)) long syscall(long nr, ...)
{
	static syscall_fn *real;
	long a[6];
	va_list ap;

	const char *keep = getenv("NO_SEGMENTS_KEEP_LDT");

	if ((nr == SYS_modify_ldt && !(keep && !strcmp(keep, "1")))
#ifdef SYS_set_thread_area
	    || nr == SYS_set_thread_area
#endif
	) {
		errno = ENOSYS;
		return -1;
	}
	if (!real)
		real = (syscall_fn *)dlsym(RTLD_NEXT, "syscall");
	/* Like glibc's syscall(), pass six argument words whatever the call
	 * takes; the kernel reads only those it needs. */
	va_start(ap, nr);
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	return real(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
}

long tw_ia32_syscall1(long nr, unsigned long arg)
{
	(void)nr;
	(void)arg;
	signal(SIGSEGV, SIG_DFL);
	raise(SIGSEGV);
	return -ENOSYS; /* not reached */
}
