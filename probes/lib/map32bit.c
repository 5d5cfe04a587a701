/*
 * map32bit: one MAP_32BIT page, and where it landed (see map32bit.h).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "map32bit.h"

int map32bit_applicable(char *why, size_t n)
{
#if defined(__x86_64__)
	snprintf(why, n, "x86-64");
	return 1;
#else
	struct utsname u;

	if (uname(&u) < 0)
		snprintf(u.machine, sizeof(u.machine), "this architecture");
	snprintf(why, n, "no MAP_32BIT window on %s: the flag exists only on x86-64", u.machine);
	return 0;
#endif
}

int map32bit_check(char *what, size_t n)
{
#if defined(__x86_64__)
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	void *p = mmap(NULL, page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
	uintptr_t a = (uintptr_t)p;

	if (p == MAP_FAILED) {
		snprintf(what, n, "unavailable: a MAP_32BIT mmap of one page failed: %s",
		         strerror(errno));
		return 0;
	}
	munmap(p, page);
	if (a < MAP32BIT_WINDOW_BEGIN || a + page > MAP32BIT_WINDOW_END) {
		snprintf(what, n,
		         "unavailable: MAP_32BIT placed a page at 0x%jx, outside the window "
		         "0x%lx-0x%lx: this kernel or emulator ignores the flag",
		         (uintmax_t)a, MAP32BIT_WINDOW_BEGIN, MAP32BIT_WINDOW_END);
		return 0;
	}
	snprintf(what, n, "honoured: a page landed at 0x%jx, in the window 0x%lx-0x%lx",
	         (uintmax_t)a, MAP32BIT_WINDOW_BEGIN, MAP32BIT_WINDOW_END);
	return 1;
#else
	snprintf(what, n, "unavailable: MAP_32BIT exists only on x86-64");
	return 0;
#endif
}
