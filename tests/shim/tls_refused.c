/*
 * tls_refused: an LD_PRELOAD test double for an x86-64 kernel whose
 * set_thread_area (the i386 call, through int $0x80) refuses the probe's
 * GDT TLS descriptor, while modify_ldt is left alone: the probe must fall
 * back to the LDT and say why. do_set_thread_area() (arch/x86/kernel/tls.c)
 * has two refusals before it writes anything:
 *   - TLS_REFUSED=esrch: no free TLS slot. With entry_number -1 it calls
 *     get_free_idx(), which scans the thread's GDT_ENTRY_TLS_ENTRIES (3)
 *     slots for desc_empty() and returns -ESRCH when none is: a thread
 *     whose runtime (Wine, an i386 TLS user, a sandbox) took all three.
 *     The double takes them for real first, each with a present 32-bit
 *     data descriptor through set_thread_area(-1), then passes the
 *     probe's call on, and the kernel's scan finds no slot.
 *   - TLS_REFUSED=einval: a descriptor tls_desc_okay() refuses. It
 *     returns false for a 16-bit segment (!info->seg_32bit: "espfix is
 *     required for 16-bit data segments, but espfix only works for LDT
 *     segments"), for code segments (contents > 1) and for
 *     seg_not_present; the double clears seg_32bit, and the kernel answers
 *     -EINVAL.
 * Both run through the real gate, so the kernel gives each answer. Where
 * the host has no int $0x80 gate at all (no IA32 emulation: the call
 * would fault before the kernel looked at the descriptor), set
 * TLS_REFUSED_GATE=model: the double then returns the errno each check
 * returns, without the gate, so that the probe's fallback still runs there.
 *
 * TLS_REFUSED_AFTER=N with TLS_REFUSED_COUNT=FILE lets the first N calls
 * of all processes through (shim_after.h): a kernel that starts refusing
 * after the probe proved the GDT path.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <asm/ldt.h>

#include "shim_after.h"
#include "shim_syscall.h"

long tw_ia32_syscall1(long nr, unsigned long arg);

/* Takes every free TLS slot of the calling thread, as get_free_idx()
 * hands them out. `like` is on the caller's low stack, and so is `d`:
 * the compat call reads a 32-bit pointer. */
static void take_all_slots(long nr, const struct user_desc *like)
{
	struct user_desc d;

	for (int i = 0; i < 8; i++) {
		d = *like;
		d.entry_number = (unsigned)-1;
		d.seg_not_present = 0;
		d.seg_32bit = 1;
		if (shim_int80(nr, (unsigned long)&d) < 0)
			return; /* -ESRCH: all taken */
	}
}

long tw_ia32_syscall1(long nr, unsigned long arg)
{
	const char *mode = getenv("TLS_REFUSED"), *g = getenv("TLS_REFUSED_GATE");
	struct user_desc *d = (struct user_desc *)arg;
	int model = g && !strcmp(g, "model");
	int esrch = mode && !strcmp(mode, "esrch");

	if (!d || !mode || shim_still_before("TLS_REFUSED_AFTER", "TLS_REFUSED_COUNT"))
		return shim_int80(nr, arg);
	if (model)
		return esrch ? -ESRCH : -EINVAL;
	if (esrch)
		take_all_slots(nr, d);
	else
		d->seg_32bit = 0;
	return shim_int80(nr, arg);
}
