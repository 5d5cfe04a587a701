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
 * CONFIG_MODIFY_LDT_SYSCALL, as most distribution kernels do. With
 * NO_SEGMENTS_KEEP_INT80=1 int $0x80 is left to the kernel instead: IA32
 * emulation without CONFIG_MODIFY_LDT_SYSCALL (a hardened kernel), where
 * the GDT path works and modify_ldt answers -ENOSYS.
 * Every other system call made through syscall(3) goes to the kernel.
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "shim_syscall.h"

long syscall(long nr, ...);
long tw_ia32_syscall1(long nr, unsigned long arg);

__attribute__((no_sanitize_address)) long syscall(long nr, ...)
{
	const char *keep = getenv("NO_SEGMENTS_KEEP_LDT");
	va_list ap;
	long r;

	if ((nr == SYS_modify_ldt && !(keep && !strcmp(keep, "1")))
#ifdef SYS_set_thread_area
	    || nr == SYS_set_thread_area
#endif
	) {
		errno = ENOSYS;
		return -1;
	}
	va_start(ap, nr);
	r = shim_syscall_next(nr, ap);
	va_end(ap);
	return r;
}

long tw_ia32_syscall1(long nr, unsigned long arg)
{
	const char *keep = getenv("NO_SEGMENTS_KEEP_INT80");

	if (keep && !strcmp(keep, "1"))
		return shim_int80(nr, arg);
	signal(SIGSEGV, SIG_DFL);
	raise(SIGSEGV);
	return -ENOSYS; /* not reached */
}
