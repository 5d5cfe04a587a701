/*
 * no_fsgsbase: an LD_PRELOAD test double for a kernel that does not let
 * user space use FSGSBASE: a CPU without it, a kernel older than 5.9, or
 * one booted with `nofsgsbase`. identify_cpu() (arch/x86/kernel/cpu/
 * common.c) sets CR4.FSGSBASE and `elf_hwcap2 |= HWCAP2_FSGSBASE` only
 * when the CPU feature is present and not cleared, and the ELF loader
 * hands elf_hwcap2 to every process as AT_HWCAP2 (ARCH_DLINFO's
 * ELF_HWCAP2); so the double clears HWCAP2_FSGSBASE (bit 1) from
 * getauxval(AT_HWCAP2) and leaves every other entry alone.
 *
 * What it cannot model: the CPU and the kernel underneath keep FSGSBASE,
 * so a context switch still writes FS with wrfsbase and the figures are
 * this host's; only what the probe reports and how the recommendation
 * words the selector arm follow the double.
 */
#include <dlfcn.h>
#include <sys/auxv.h>

typedef unsigned long getauxval_fn(unsigned long);

unsigned long getauxval(unsigned long type)
{
	static getauxval_fn *real;
	unsigned long v;

	if (!real)
		real = (getauxval_fn *)dlsym(RTLD_NEXT, "getauxval");
	v = real(type);
	return type == AT_HWCAP2 ? v & ~(1ul << 1) : v;
}
