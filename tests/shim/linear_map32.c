/*
 * linear_map32: an LD_PRELOAD test double of the x86-64 kernels before
 * 3.8, whose free-area search walked the VMA list one VMA at a time. It
 * charges the two walks that made the 2008 cliff and leaves placement to
 * the real kernel.
 *
 * What it imitates, in arch/x86/kernel/sys_x86_64.c (v2.6.26 to v3.7):
 *  - arch_get_unmapped_area_topdown() sends a MAP_32BIT request to the
 *    bottom-up arch_get_unmapped_area() (its `bottomup:` label), where
 *    find_start_end() limits it to the window begin = 0x40000000
 *    (randomised up to 32 MiB higher) to end = 0x80000000. The search
 *    follows vma->vm_next from find_vma(begin) until a hole fits; when the
 *    window is full it visits every VMA inside the window and returns
 *    -ENOMEM. Its cost grows with the VMAs in the window.
 *  - On the way out, the bottomup path sets mm->free_area_cache =
 *    mm->mmap_base and mm->cached_hole_size = ~0UL, so the next top-down
 *    search, the plain mmap that glibc retries with (ARCH_RETRY_MMAP in
 *    glibc 2.7's nptl/sysdeps/x86_64/pthreaddef.h), starts again at
 *    mmap_base and walks down the VMAs below it: in a process whose
 *    mappings are packed there, nearly every VMA it has. Its cost grows
 *    with every thread of the process.
 *
 * The double:
 *  - a MAP_32BIT mmap that the kernel refuses with ENOMEM first visits
 *    every VMA in [0x40000000, 0x80000000), one at a time;
 *  - the next mmap of the process without MAP_32BIT or MAP_FIXED first
 *    visits every VMA of the process, one at a time (an upper bound of the
 *    top-down walk, which stops at the first hole below mmap_base).
 * A visit is one PROCMAP_QUERY ioctl on /proc/self/maps (Linux 6.11+,
 * do_procmap_query() in fs/proc/task_mmu.c) asking for the VMA that covers
 * or follows the end of the last one: the kernel looks each VMA up under
 * the mmap lock, as the old walk did under mmap_sem, so a walk costs in
 * proportion to the VMAs it visits. Without PROCMAP_QUERY (ENOTTY) it
 * reads /proc/self/maps to the end instead, which costs in proportion to
 * all VMAs whatever the range: the regress test needs 6.11 or later.
 *
 * Left out on purpose: a successful MAP_32BIT call also walked, from the
 * bottom of the window to the first hole, so filling the window was
 * quadratic; charging it would spend the probes' budget on filling. Every
 * other call is passed to the kernel untouched. No knobs: the cost per VMA
 * is whatever one lookup costs on the host.
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

/* Set by a failed MAP_32BIT call: the next top-down search starts over. */
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

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	long r;
	int err;

	if (!(flags & (MAP_32BIT | MAP_FIXED)) && atomic_exchange(&cache_reset, 0))
		shim_vmas_seen = walk(0, UINT64_MAX);
	/* The kernel directly: no dlsym, so no allocation can recurse here. */
	r = syscall(SYS_mmap, addr, len, prot, flags, fd, off);
	if (r == -1 && errno == ENOMEM && (flags & MAP_32BIT)) {
		err = errno;
		shim_vmas_seen = walk(WINDOW_BEGIN, WINDOW_END);
		atomic_store(&cache_reset, 1);
		errno = err;
	}
	return r == -1 ? MAP_FAILED : (void *)(uintptr_t)r;
}

void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	return mmap(addr, len, prot, flags, fd, off);
}
