/*
 * v30_mmap: an LD_PRELOAD test double of the x86-64 free-area search of
 * Linux v3.0 (the kernels before 3.8 searched alike): it runs that search,
 * lookup by lookup, before each mmap() the process makes, then lets the
 * real kernel place the mapping. What it adds to a call is what v3.0's
 * search cost; where the mapping lands is today's kernel's choice, which
 * for the mappings the probes make is the hole v3.0 would have taken (the
 * highest that fits below mmap_base, or the lowest in the MAP_32BIT window).
 *
 * It follows arch/x86/kernel/sys_x86_64.c and mm/mmap.c of v3.0, in the
 * top-down layout that x86-64 processes get (mmap_is_legacy() false: a
 * finite stack rlimit and vm.legacy_va_layout 0):
 *
 * arch_get_unmapped_area_topdown(), a plain mmap without MAP_FIXED:
 *     if (addr) { addr = PAGE_ALIGN(addr); vma = find_vma(mm, addr);
 *                 if (fits) return addr; }
 *     if (len <= mm->cached_hole_size) {
 *             mm->cached_hole_size = 0;
 *             mm->free_area_cache = mm->mmap_base; }
 *     addr = mm->free_area_cache;
 *     if (addr > len) { addr -= len; vma = find_vma(mm, addr);
 *                       if (fits) return mm->free_area_cache = addr; }
 *     if (mm->mmap_base < len) goto bottomup;
 *     addr = mm->mmap_base - len;
 *     do {
 *             vma = find_vma(mm, addr);
 *             if (!vma || addr + len <= vma->vm_start)
 *                     return mm->free_area_cache = addr;
 *             if (addr + mm->cached_hole_size < vma->vm_start)
 *                     mm->cached_hole_size = vma->vm_start - addr;
 *             addr = vma->vm_start - len;
 *     } while (len < vma->vm_start);
 *   One find_vma() per step, and each step lands `len` below the VMA it
 *   met: a run of packed stacks of `len` bytes costs one step per stack (a
 *   stack's guard VMA is met, its other VMA jumped), a run of page-sized
 *   VMAs mostly jumped.
 *
 * The same function with MAP_32BIT (a 64-bit task) does `goto bottomup`:
 *     mm->cached_hole_size = ~0UL;
 *     mm->free_area_cache = TASK_UNMAPPED_BASE;
 *     addr = arch_get_unmapped_area(filp, addr0, len, pgoff, flags);
 *     mm->free_area_cache = mm->mmap_base;
 *     mm->cached_hole_size = ~0UL;
 *   and arch_get_unmapped_area(), with find_start_end()'s window begin =
 *   0x40000000 (randomised by less than 32 MiB under PF_RANDOMIZE: left
 *   out here), end = 0x80000000, and len <= cached_hole_size, starts at
 *   begin and runs
 *     for (vma = find_vma(mm, addr); ; vma = vma->vm_next) {
 *             if (end - len < addr) return -ENOMEM;   (start_addr == begin)
 *             if (!vma || addr + len <= vma->vm_start)
 *                     { mm->free_area_cache = addr + len; return addr; }
 *             ...
 *             addr = vma->vm_end;
 *     }
 *   one step per VMA of the window below its hole, or all of them when it
 *   fails. On the way out the top-down cache is left at mmap_base with
 *   cached_hole_size ~0UL: the next plain mmap searches from mmap_base,
 *   through every stack below it down to its hole.
 *
 * munmap(): detach_vmas_to_be_unmapped() calls mm->unmap_area(mm, addr)
 * with the start of the VMA above the hole (mmap_base when there is none),
 * and arch_unmap_area_topdown() raises free_area_cache to it, never above
 * mmap_base.
 *
 * A step is one PROCMAP_QUERY ioctl on /proc/self/maps (Linux 6.11+,
 * do_procmap_query() in fs/proc/task_mmu.c) for the VMA covering or
 * following an address, which is find_vma()'s answer, looked up in the
 * kernel's tree under the mmap lock as find_vma() was under mmap_sem; a
 * vm_next step is the same query at the last VMA's end. So a search costs
 * in proportion to its steps, at whatever one lookup costs on the host.
 *
 * mmap_base is not visible from user space: it is taken as the end of the
 * highest mapping below the main thread's stack, which is the dynamic
 * loader's, placed first at mmap_base - its size by load_elf_binary().
 *
 * Not modelled, and passed to the kernel untouched: the legacy bottom-up
 * layout (an unlimited stack rlimit or vm.legacy_va_layout 1, where a plain
 * mmap walks every VMA from TASK_UNMAPPED_BASE through vm_next: the double
 * says so on stderr once and charges nothing), MAP_FIXED, mremap() and
 * glibc's own mmap and munmap calls (malloc, its stack cache), which do
 * not go through the symbols interposed here. Without PROCMAP_QUERY the
 * double is inert and says so. Elsewhere than x86-64 it is inert.
 *
 * v30_mmap_steps (a global the tests may read with dlsym) counts the steps
 * of the last search it ran.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef MAP_32BIT
#define MAP_32BIT 0
#endif

#define WINDOW_BEGIN 0x40000000ull
#define WINDOW_END 0x80000000ull
#define PAGE_BYTES 4096ull

/* include/uapi/linux/fs.h of Linux 6.11+ (older headers lack it). */
struct v30_query {
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
#define V30_PROCMAP_QUERY _IOWR('f', 17, struct v30_query)
#define V30_COVERING_OR_NEXT_VMA 0x10

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off);
void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off);
int munmap(void *addr, size_t len);

/* A VMA as find_vma() returns it; none: start = end = 0. */
struct v30_vma {
	uint64_t start, end;
};

/* The mm_struct fields the search keeps, under one lock (mmap_sem). */
static struct {
	atomic_flag lock;
	int state; /* 0: not set up, 1: modelling, -1: inert */
	int maps_fd;
	uint64_t mmap_base, free_area_cache, cached_hole_size;
} mm = {.lock = ATOMIC_FLAG_INIT};

volatile unsigned long v30_mmap_steps;

static void say(const char *s)
{
	if (write(2, s, strlen(s)) < 0)
		return;
}

/* find_vma(): the first VMA that ends above addr. */
static struct v30_vma find_vma(uint64_t addr)
{
	struct v30_query q = {
	    .size = sizeof(q), .query_flags = V30_COVERING_OR_NEXT_VMA, .query_addr = addr};

	v30_mmap_steps++;
	if (ioctl(mm.maps_fd, V30_PROCMAP_QUERY, &q) < 0)
		return (struct v30_vma){0, 0};
	return (struct v30_vma){q.vma_start, q.vma_end};
}

static int fits(struct v30_vma v, uint64_t addr, uint64_t len)
{
	return !v.end || addr + len <= v.start;
}

/* mmap_is_legacy() of arch/x86/mm/mmap.c. */
static int layout_legacy(void)
{
	struct rlimit r;
	char c = '0';
	int fd = open("/proc/sys/vm/legacy_va_layout", O_RDONLY | O_CLOEXEC);

	if (fd >= 0) {
		if (read(fd, &c, 1) != 1)
			c = '0';
		close(fd);
	}
	return c != '0' || (getrlimit(RLIMIT_STACK, &r) == 0 && r.rlim_cur == RLIM_INFINITY);
}

/* The end of the highest VMA below the main thread's stack. */
static uint64_t base_below(uint64_t stack_addr)
{
	struct v30_vma v = {0, 0};
	uint64_t at = 0, base = 0;

	for (;;) {
		struct v30_query q = {
		    .size = sizeof(q), .query_flags = V30_COVERING_OR_NEXT_VMA, .query_addr = at};

		if (ioctl(mm.maps_fd, V30_PROCMAP_QUERY, &q) < 0)
			return base;
		v = (struct v30_vma){q.vma_start, q.vma_end};
		if (v.end > stack_addr)
			return base;
		base = v.end;
		at = v.end;
	}
}

/* Sets the model up from the main thread, before main(). */
__attribute__((constructor)) static void v30_setup(void)
{
	struct v30_query q = {.size = sizeof(q), .query_flags = V30_COVERING_OR_NEXT_VMA};
	int here;

	mm.state = -1;
	if (!MAP_32BIT)
		return;
	if (layout_legacy()) {
		say("v30_mmap: the legacy bottom-up layout is not modelled: nothing charged\n");
		return;
	}
	mm.maps_fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	if (mm.maps_fd < 0)
		return;
	if (ioctl(mm.maps_fd, V30_PROCMAP_QUERY, &q) < 0) {
		say("v30_mmap: no PROCMAP_QUERY (Linux 6.11+): nothing charged\n");
		return;
	}
	mm.mmap_base = base_below((uint64_t)(uintptr_t)&here);
	mm.free_area_cache = mm.mmap_base;
	mm.cached_hole_size = ~0ull;
	mm.state = 1;
}

/* arch_get_unmapped_area() for MAP_32BIT, from begin (bottomup: reset the
 * cache first), then the top-down cache left at mmap_base. */
static void search_map32(uint64_t len)
{
	uint64_t addr = WINDOW_BEGIN;
	struct v30_vma v;

	for (v = find_vma(addr);; v = find_vma(v.end)) {
		if (WINDOW_END - len < addr)
			break;
		if (fits(v, addr, len))
			break;
		addr = v.end;
	}
	mm.free_area_cache = mm.mmap_base;
	mm.cached_hole_size = ~0ull;
}

/* arch_get_unmapped_area_topdown() for a plain mmap: the steps as v3.0
 * takes them; the caller sets free_area_cache to where the kernel put the
 * mapping. */
static void search_topdown(uint64_t hint, uint64_t len)
{
	uint64_t addr;
	struct v30_vma v;

	if (hint) {
		addr = (hint + PAGE_BYTES - 1) & ~(PAGE_BYTES - 1);
		if (fits(find_vma(addr), addr, len))
			return;
	}
	if (len <= mm.cached_hole_size) {
		mm.cached_hole_size = 0;
		mm.free_area_cache = mm.mmap_base;
	}
	addr = mm.free_area_cache;
	if (addr > len && fits(find_vma(addr - len), addr - len, len))
		return;
	if (mm.mmap_base < len)
		return; /* bottomup: not reached by the probes' mappings */
	addr = mm.mmap_base - len;
	do {
		v = find_vma(addr);
		if (fits(v, addr, len))
			return;
		if (addr + mm.cached_hole_size < v.start)
			mm.cached_hole_size = v.start - addr;
		addr = v.start - len;
	} while (len < v.start);
}

static void lock(void)
{
	while (atomic_flag_test_and_set_explicit(&mm.lock, memory_order_acquire))
		;
}

static void unlock(void)
{
	atomic_flag_clear_explicit(&mm.lock, memory_order_release);
}

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	uint64_t plen = ((uint64_t)len + PAGE_BYTES - 1) & ~(PAGE_BYTES - 1);
	int model = mm.state == 1 && !(flags & MAP_FIXED) && plen;
	long r;
	int err;

	if (model) {
		lock();
		v30_mmap_steps = 0;
		if (flags & MAP_32BIT)
			search_map32(plen);
		else
			search_topdown((uint64_t)(uintptr_t)addr, plen);
	}
	/* The kernel directly: no dlsym, so no allocation can recurse here. */
	r = syscall(SYS_mmap, addr, len, prot, flags, fd, off);
	err = errno;
	if (model) {
		if (r != -1 && !(flags & MAP_32BIT))
			mm.free_area_cache = (uint64_t)r;
		unlock();
	}
	errno = err;
	return r == -1 ? MAP_FAILED : (void *)(uintptr_t)r;
}

void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	return mmap(addr, len, prot, flags, fd, off);
}

/* arch_unmap_area_topdown(mm, addr), addr the start of the VMA above the
 * hole (mmap_base when there is none). */
int munmap(void *addr, size_t len)
{
	uint64_t end = (uint64_t)(uintptr_t)addr + len;
	long r;
	int err;

	if (mm.state != 1)
		return (int)syscall(SYS_munmap, addr, len);
	lock();
	r = syscall(SYS_munmap, addr, len);
	err = errno;
	if (r == 0) {
		struct v30_query q = {
		    .size = sizeof(q), .query_flags = V30_COVERING_OR_NEXT_VMA, .query_addr = end};
		uint64_t above =
		    ioctl(mm.maps_fd, V30_PROCMAP_QUERY, &q) < 0 ? mm.mmap_base : q.vma_start;

		if (above > mm.free_area_cache)
			mm.free_area_cache = above;
		if (mm.free_area_cache > mm.mmap_base)
			mm.free_area_cache = mm.mmap_base;
	}
	unlock();
	errno = err;
	return (int)r;
}
