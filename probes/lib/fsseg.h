/*
 * fsseg: the 32-bit segment path for FS on x86-64. A thread whose FS base
 * (its glibc TCB) lies below 4 GiB gets a 32-bit data descriptor with that
 * base, in its GDT TLS slots (set_thread_area through int $0x80) or in the
 * process's LDT (modify_ldt), and loads the descriptor's selector into
 * %fs. The kernel then switches its FS by loading the selector, the path
 * 2.6-era kernels took by themselves for low bases, instead of writing
 * the base with wrfsbase or wrmsr.
 *
 * A way counts as usable only once a child process has written the
 * descriptor, loaded its selector into %fs from a thread on a low stack
 * and read the thread's TCB back through it (%fs:0 is glibc's self
 * pointer): a host may accept the write and fault on the load (PVM-style
 * guests, a descriptor marked not present), and int $0x80 faults where the
 * kernel has no IA32 emulation.
 *
 * Test seam: the int $0x80 call goes through tw_ia32_syscall1() when a
 * preloaded object defines it (tests/shim/no_segments.c models a kernel
 * without IA32 emulation, tests/shim/seg_not_present.c one whose
 * descriptors do not load), so that the probe's handling of a missing path
 * can be tested on any kernel.
 */
#ifndef TW_FSSEG_H
#define TW_FSSEG_H

#include <stddef.h>
#include <stdint.h>

enum fsseg_kind { FSSEG_NONE, FSSEG_GDT, FSSEG_LDT };

struct fsseg {
	enum fsseg_kind kind;
	int gdt_entry;      /* the GDT TLS entry set_thread_area gave (FSSEG_GDT) */
	char path[96];      /* how the descriptor is installed */
	char why[400];      /* FSSEG_NONE: why neither way works */
	char path_why[240]; /* GDT or LDT: why this way and not the other */
	char gdt[192];      /* what the GDT way did: "loads ..." or why not */
	char ldt[192];      /* what the LDT way did */
	char int80[200];    /* what int $0x80 did: "works" or how it failed */
};

/* Finds out, each way in a child process of its own so that a fault
 * harms nothing, which way works here: set_thread_area first, then
 * modify_ldt; both are tried, and s->gdt, s->ldt and s->int80 say what
 * each did. Returns 0 (s->kind says which, FSSEG_NONE with s->why) or
 * -errno when no child could be run. */
int fsseg_probe(struct fsseg *s);

/* In the calling thread, whose FS base and stack must lie below 4 GiB:
 * installs a descriptor based at the FS base (LDT entry `slot` for
 * FSSEG_LDT) and loads its selector into %fs. Returns the selector (> 0)
 * or -errno. */
int fsseg_load(const struct fsseg *s, unsigned slot);

/* Whether the kernel lets user space use FSGSBASE (HWCAP2_FSGSBASE in
 * AT_HWCAP2, set by identify_cpu() when it enabled CR4.FSGSBASE); 0 on
 * other architectures. */
int fsseg_fsgsbase(void);

/* The selector in %fs now (0 on other architectures). */
unsigned fsseg_current(void);

/* The 32-bit i386 system call numbers fsseg uses. */
#define FSSEG_IA32_SET_THREAD_AREA 243

/* Whether FS has a segment path at all on this architecture. */
#if defined(__x86_64__)
#define FSSEG_APPLIES 1
#else
#define FSSEG_APPLIES 0
#endif

#endif
