/*
 * seg_not_present: an LD_PRELOAD test double for an x86-64 host whose
 * segment descriptors are marked not present: PVM-style guests, where
 * modify_ldt() returns 0 but the descriptor never loads. Every descriptor
 * the probe writes gets seg_not_present = 1, and the real kernel then does
 * what it does with such a descriptor on each path:
 *   - modify_ldt(1, desc): write_ldt() (arch/x86/kernel/ldt.c) accepts it
 *     (it is not LDT_empty() while a limit or the 32-bit flag is set),
 *     fill_ldt() (arch/x86/include/asm/desc.h) stores it with p = 0 and
 *     the call returns 0; loading its selector into %fs checks the present
 *     bit and raises #NP, which exc_segment_not_present()
 *     (arch/x86/kernel/traps.c) turns into SIGBUS, ending the process.
 *   - set_thread_area through int $0x80: do_set_thread_area()
 *     (arch/x86/kernel/tls.c) calls tls_desc_okay() first, which returns
 *     false for info->seg_not_present ("Non-present segments with DPL 3
 *     present an interesting attack surface ... prevent such segments
 *     from being created"), so the call answers -EINVAL and no GDT slot
 *     is written: only the LDT path ever stores a not-present descriptor.
 *     Where the kernel has no IA32 emulation, int $0x80 itself faults
 *     first, as it would without the double.
 * The double only sets the flag; the kernel gives each answer.
 *
 * SEG_NOT_PRESENT_AFTER=N with SEG_NOT_PRESENT_COUNT=FILE leaves the first
 * N descriptors of all processes present (shim_after.h): a host whose
 * selectors stop working after the probe proved them. On a host whose
 * probe took the GDT path that later write is refused with EINVAL; on one
 * that took the LDT path its load faults with SIGBUS.
 */
#include <stdarg.h>
#include <sys/syscall.h>

#include <asm/ldt.h>

#include "shim_after.h"
#include "shim_syscall.h"

long syscall(long nr, ...);
long tw_ia32_syscall1(long nr, unsigned long arg);

static void mark(struct user_desc *d)
{
	if (d && !shim_still_before("SEG_NOT_PRESENT_AFTER", "SEG_NOT_PRESENT_COUNT"))
		d->seg_not_present = 1;
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
		if (func == 1 || func == 0x11)
			mark(d);
	}
	r = shim_syscall_next(nr, ap);
	va_end(ap);
	return r;
}

/* The i386 system call, through the real gate. */
long tw_ia32_syscall1(long nr, unsigned long arg)
{
	mark((struct user_desc *)arg);
	return shim_int80(nr, arg);
}
