/*
 * linear_map32: an LD_PRELOAD test double of the x86-64 kernels before
 * 3.8, whose free-area search walked the VMA list one VMA at a time. It
 * charges the walks of Linux v3.0's arch/x86/kernel/sys_x86_64.c, as that
 * source wrote them, and leaves placement to the real kernel.
 *
 * What v3.0 does with an mmap that is not MAP_FIXED (x86-64 uses the
 * top-down layout, so mmap gets arch_get_unmapped_area_topdown()):
 *  - arch_get_unmapped_area_topdown(): a MAP_32BIT request of a 64-bit
 *    task does `goto bottomup` before anything else. Under `bottomup:` it
 *    sets mm->cached_hole_size = ~0UL and mm->free_area_cache =
 *    TASK_UNMAPPED_BASE, calls arch_get_unmapped_area(), and on the way out,
 *    whatever that returned, sets mm->free_area_cache = mm->mmap_base and
 *    mm->cached_hole_size = ~0UL again.
 *  - arch_get_unmapped_area(): find_start_end() gives MAP_32BIT the window
 *    begin = 0x40000000 (moved up by randomize_range() by less than 32 MiB
 *    under PF_RANDOMIZE), end = 0x80000000. Since len <= cached_hole_size
 *    (~0UL), it sets cached_hole_size = 0 and free_area_cache = begin, so
 *    addr = begin every time. The `full_search:` loop runs
 *    `for (vma = find_vma(mm, addr); ; vma = vma->vm_next)`: it returns addr
 *    at the first hole of len bytes (`!vma || addr + len <= vma->vm_start`),
 *    setting free_area_cache = addr + len, and otherwise steps addr =
 *    vma->vm_end to the next VMA; once `end - len < addr` with start_addr ==
 *    begin it returns -ENOMEM. So a successful MAP_32BIT call visits every
 *    VMA of the window below the hole it takes (filling a window of C
 *    stacks costs about b * C^2 in all) and a failing one every VMA of the
 *    window.
 *  - The next top-down search, from a plain mmap: len <= cached_hole_size
 *    (~0UL, left by bottomup), so cached_hole_size = 0 and free_area_cache =
 *    mmap_base; it tries find_vma(mm, addr - len) just below mmap_base,
 *    then the do-while loop steps down, `vma = find_vma(mm, addr)` then
 *    `addr = vma->vm_start - len`, one find_vma() per VMA, until a hole of
 *    len fits, and sets free_area_cache there. In a process whose
 *    mappings are packed below mmap_base it visits nearly every VMA it
 *    has. Later plain mmaps start at free_area_cache and cost little. That
 *    plain mmap is the retry glibc makes after a failing MAP_32BIT stack
 *    (ARCH_RETRY_MMAP in glibc 2.7's nptl/sysdeps/x86_64/pthreaddef.h), or
 *    whatever plain mmap comes next after a successful one.
 *
 * The double, after the real call has placed the mapping:
 *  - every MAP_32BIT mmap without MAP_FIXED visits the VMAs from the
 *    window's begin (0x40000000: the randomised start is left out) to the
 *    address the kernel returned, or to the window's end when it failed,
 *    and marks the top-down cache as reset;
 *  - the next mmap without MAP_32BIT or MAP_FIXED, if the cache is marked
 *    reset and the call succeeded, visits the VMAs from the end of the new
 *    mapping upwards (those between the hole and mmap_base, plus the few
 *    above mmap_base, the main stack and the vDSO, which the kernel would
 *    not visit), and clears the mark. Today's kernel picks the highest
 *    hole below mmap_base that fits, the one the old walk stopped at, so
 *    the VMAs visited are the old walk's.
 * A visit is one PROCMAP_QUERY ioctl on /proc/self/maps (Linux 6.11+,
 * do_procmap_query() in fs/proc/task_mmu.c) asking for the VMA that covers
 * or follows the end of the last one: the kernel looks each VMA up under
 * the mmap lock, as find_vma() did under mmap_sem, so a walk costs in
 * proportion to the VMAs it visits. Without PROCMAP_QUERY (ENOTTY) it
 * reads /proc/self/maps to the end instead, which costs in proportion to
 * all VMAs whatever the range: the regress test needs 6.11 or later.
 *
 * Every other call is passed to the kernel untouched. No knobs: the cost
 * per VMA is whatever one lookup costs on the host.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Elsewhere than x86-64 there is no MAP_32BIT and the shim is inert. */
#ifndef MAP_32BIT
#define MAP_32BIT 0
#endif

/* The MAP_32BIT window of find_start_end(). */
#define WINDOW_BEGIN 0x40000000ull
#define WINDOW_END 0x80000000ull

/* include/uapi/linux/fs.h of Linux 6.11+ (older headers lack it). */
struct shim_procmap_query {
	uint64_t size;
	uint64_t query_flags;
	uint64_t query_addr;
	uint64_t vma_start;
	uint64_t vma_end;
	uint64_t vma_flags;
	uint64_t vma_page_size;
	uint64_t vma_offset;
	uint64_t inode;
	uint32_t dev_major;
	uint32_t dev_minor;
	uint32_t vma_name_size;
	uint32_t build_id_size;
	uint64_t vma_name_addr;
	uint64_t build_id_addr;
};
#define SHIM_PROCMAP_QUERY _IOWR('f', 17, struct shim_procmap_query)
#define SHIM_COVERING_OR_NEXT_VMA 0x10

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off);
void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off);

/* Set by every MAP_32BIT call (bottomup's free_area_cache = mmap_base and
 * cached_hole_size = ~0UL): the next top-down search starts at mmap_base. */
static atomic_int cache_reset;
/* /proc/self/maps, opened once (-1: not yet, -2: cannot). */
static atomic_int maps_fd = -1;
static volatile unsigned long shim_vmas_seen;

static int maps_open(void)
{
	int fd = atomic_load(&maps_fd), expected = -1;

	if (fd != -1)
		return fd;
	fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		fd = -2;
	if (!atomic_compare_exchange_strong(&maps_fd, &expected, fd) && fd >= 0) {
		close(fd);
		fd = expected;
	}
	return fd;
}

/* The fallback before 6.11: the whole list, as text. */
static unsigned long walk_text(int fd)
{
	char buf[16384];
	unsigned long lines = 0;
	ssize_t got;
	off_t at = 0;

	while ((got = pread(fd, buf, sizeof(buf), at)) > 0) {
		for (ssize_t i = 0; i < got; i++)
			lines += buf[i] == '\n';
		at += got;
	}
	return lines;
}

/* Visits every VMA that starts in [lo, hi), one lookup each; returns how
 * many it visited. */
static unsigned long walk(uint64_t lo, uint64_t hi)
{
	struct shim_procmap_query q;
	unsigned long seen = 0;
	uint64_t at = lo;
	int fd = maps_open();

	if (fd < 0)
		return 0;
	for (;;) {
		q = (struct shim_procmap_query){
		    .size = sizeof(q), .query_flags = SHIM_COVERING_OR_NEXT_VMA, .query_addr = at};
		if (ioctl(fd, SHIM_PROCMAP_QUERY, &q) < 0)
			return errno == ENOTTY ? walk_text(fd) : seen;
		if (q.vma_start >= hi)
			return seen;
		seen++;
		at = q.vma_end;
	}
}

/* What the old search would have visited for a call the kernel answered
 * with r (-1: failed). */
static void charge(size_t len, int flags, long r)
{
	if (flags & MAP_FIXED)
		return;
	if (flags & MAP_32BIT) {
		/* bottomup: arch_get_unmapped_area() from begin to its hole */
		shim_vmas_seen = walk(WINDOW_BEGIN, r == -1 ? WINDOW_END : (uint64_t)r);
		atomic_store(&cache_reset, 1);
	} else if (r != -1 && atomic_exchange(&cache_reset, 0)) {
		/* the top-down loop from mmap_base down to the hole it took */
		shim_vmas_seen = walk((uint64_t)r + len, UINT64_MAX);
	}
}

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	long r;
	int err;

	/* The kernel directly: no dlsym, so no allocation can recurse here. */
	r = syscall(SYS_mmap, addr, len, prot, flags, fd, off);
	err = errno;
	if (MAP_32BIT)
		charge(len, flags, r);
	errno = err;
	return r == -1 ? MAP_FAILED : (void *)(uintptr_t)r;
}

void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	return mmap(addr, len, prot, flags, fd, off);
}
