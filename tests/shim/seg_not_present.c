/*
 * seg_not_present: an LD_PRELOAD test double for an x86-64 host that
 * accepts a segment descriptor and then faults when the selector is
 * loaded: PVM-style guests, where modify_ldt() returns 0 but the
 * hypervisor never lets the descriptor be used. It is built on what every
 * kernel does with a descriptor whose present bit is clear:
 *   - modify_ldt(1, desc): arch/x86/kernel/ldt.c write_ldt() accepts a
 *     user_desc with seg_not_present = 1 (it is not LDT_empty() while a
 *     limit or a 32-bit flag is set) and fill_ldt()
 *     (arch/x86/include/asm/desc.h) stores it with p = 0; the call
 *     returns 0;
 *   - set_thread_area through int $0x80: do_set_thread_area()
 *     (arch/x86/kernel/tls.c) takes the same flag through fill_ldt();
 *   - loading the selector into %fs (mov to a segment register) checks
 *     the present bit after the write: a clear one raises #NP, which
 *     exc_segment_not_present() (arch/x86/kernel/traps.c) turns into
 *     SIGBUS, ending the process.
 * The double sets seg_not_present = 1 on every descriptor written through
 * syscall(SYS_modify_ldt, 1, ...) and through the probe's int $0x80 seam
 * (tw_ia32_syscall1, probes/lib/fsseg.h), then lets the real kernel write
 * it: the write succeeds and the load faults, on any kernel. Where the
 * kernel has no IA32 emulation, int $0x80 itself faults, as it would
 * without the double. Every other call goes to the kernel unchanged.
 *
 * SEG_NOT_PRESENT_AFTER=N with SEG_NOT_PRESENT_COUNT=FILE leaves the first
 * N descriptors of all processes present (each write appends a byte to
 * FILE, whose size is the count), for a host whose selectors stop loading
 * after the probe proved them: a migration to another hypervisor.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <asm/ldt.h>

#include "shim_syscall.h"

long syscall(long nr, ...);
long tw_ia32_syscall1(long nr, unsigned long arg);

/* Whether this write is one of the first SEG_NOT_PRESENT_AFTER, counted
 * across processes in SEG_NOT_PRESENT_COUNT. */
static int still_present(void)
{
	const char *after = getenv("SEG_NOT_PRESENT_AFTER"),
	           *file = getenv("SEG_NOT_PRESENT_COUNT");
	off_t n;
	int fd;

	if (!after || !file)
		return 0;
	fd = open(file, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return 0;
	n = lseek(fd, 0, SEEK_END);
	if (write(fd, "w", 1) != 1)
		n = -1;
	close(fd);
	return n >= 0 && n < atol(after);
}

__attribute__((no_sanitize_address)) long syscall(long nr, ...)
{
	va_list ap;
	long r;

	va_start(ap, nr);
	if (nr == SYS_modify_ldt) {
		va_list cp;
		long func;
		struct user_desc *d;

		va_copy(cp, ap);
		func = va_arg(cp, long);
		d = va_arg(cp, struct user_desc *);
		va_end(cp);
		/* func 1 and 0x11 write one entry (write_ldt()). */
		if ((func == 1 || func == 0x11) && d && !still_present())
			d->seg_not_present = 1;
	}
	r = shim_syscall_next(nr, ap);
	va_end(ap);
	return r;
}

/* The i386 system call, through the real gate. */
long tw_ia32_syscall1(long nr, unsigned long arg)
{
	struct user_desc *d = (struct user_desc *)arg;
	long r;

	if (d && !still_present())
		d->seg_not_present = 1;
	__asm__ volatile("int $0x80"
	                 : "=a"(r)
	                 : "a"(nr), "b"(arg)
	                 : "memory", "rcx", "r8", "r9", "r10", "r11");
	return r;
}
