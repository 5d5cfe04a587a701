/*
 * linear_map32: an LD_PRELOAD test double for a kernel whose MAP_32BIT
 * search is linear, as x86-64 Linux was in 2008. A MAP_32BIT mmap that
 * fails (the window is full) first walks every VMA of the process, by
 * reading /proc/self/maps to the end, so its cost grows with the VMA count
 * the way the old free-area search did. Every other mmap is passed to the
 * kernel untouched. There are no knobs: the cost is whatever one walk over
 * the real VMAs costs on the host.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Elsewhere than x86-64 there is no MAP_32BIT and the shim is inert. */
#ifndef MAP_32BIT
#define MAP_32BIT 0
#endif

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off);
void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off);

/* Visits every VMA once; returns how many there were (the result keeps
 * the walk from being optimised away). */
static unsigned long walk_vmas(void)
{
	char buf[16384];
	unsigned long lines = 0;
	ssize_t got;
	int fd;

	fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	while ((got = read(fd, buf, sizeof(buf))) > 0)
		for (ssize_t i = 0; i < got; i++)
			lines += buf[i] == '\n';
	close(fd);
	return lines;
}

static volatile unsigned long shim_vmas_seen;

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	/* The kernel directly: no dlsym, so no allocation can recurse here. */
	long r = syscall(SYS_mmap, addr, len, prot, flags, fd, off);
	int err;

	if (r == -1 && errno == ENOMEM && (flags & MAP_32BIT)) {
		err = errno;
		shim_vmas_seen = walk_vmas();
		errno = err;
	}
	return r == -1 ? MAP_FAILED : (void *)(uintptr_t)r;
}

void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	return mmap(addr, len, prot, flags, fd, off);
}
