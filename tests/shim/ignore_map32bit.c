/*
 * ignore_map32bit: an LD_PRELOAD test double for a kernel that does not
 * honour MAP_32BIT. Only x86-64 gives the flag (0x40) a meaning, in
 * arch_get_unmapped_area() and its top-down twin
 * (arch/x86/kernel/sys_x86_64.c), which search the window
 * 0x40000000-0x80000000 for it; do_mmap() (mm/mmap.c) passes flag bits it
 * does not know on without complaint (only MAP_SHARED_VALIDATE checks
 * them), so a kernel for which the bit means nothing, or an emulator that
 * drops it, places the mapping wherever it places any other. The double
 * clears the flag in every mmap(2) call and lets the kernel place the
 * mapping.
 */
#include <dlfcn.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/types.h>

typedef void *mmap_fn(void *, size_t, int, int, int, off_t);

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	static mmap_fn *real;

	if (!real)
		real = (mmap_fn *)dlsym(RTLD_NEXT, "mmap");
	return real(addr, len, prot, flags & ~MAP_32BIT, fd, off);
}

void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off);
void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	return mmap(addr, len, prot, flags, fd, off);
}
