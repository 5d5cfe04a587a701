/*
 * v30walk: counts the steps of the v3.0 double's top-down retry
 * (tests/shim/v30_mmap.c) over a ladder it builds, so that a test can
 * check the double against what the loop does by hand. Run under
 * LD_PRELOAD=v30_mmap.so:
 *     v30walk stacks N   N packed 8 MiB stacks (guard page + rest)
 *     v30walk pages N    N page-sized VMAs (one PROT_READ page after each
 *                        PROT_NONE page of one reservation)
 * then one MAP_32BIT page (the bottomup path leaves the top-down cache at
 * mmap_base) and one plain mmap of a stack's size, the retry. Prints
 * "steps S" of that retry. Exits 77 where the double is not loaded or not
 * modelling (no MAP_32BIT, no PROCMAP_QUERY, the legacy layout).
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#ifndef MAP_32BIT
#define MAP_32BIT 0
#endif

#define STACK_LEN ((8u << 20) + 4096u)

static int usage(void)
{
	fputs("usage: v30walk stacks|pages N\n", stderr);
	return 2;
}

static int build_stacks(long n)
{
	for (long i = 0; i < n; i++) {
		char *p = mmap(NULL, STACK_LEN, PROT_READ,
		               MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

		if (p == MAP_FAILED || mprotect(p, 4096, PROT_NONE) < 0)
			return -errno;
	}
	return 0;
}

static int build_pages(long n)
{
	char *p = mmap(NULL, (size_t)(2 * n + 1) * 4096, PROT_NONE,
	               MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (p == MAP_FAILED)
		return -errno;
	for (long i = 0; i < n; i++)
		if (mprotect(p + (2 * i + 1) * 4096, 4096, PROT_READ) < 0)
			return -errno;
	return 0;
}

int main(int argc, char **argv)
{
	volatile unsigned long *steps = dlsym(RTLD_DEFAULT, "v30_mmap_steps");
	char *end;
	long n;
	int rc;
	void *p;

	if (argc != 3)
		return usage();
	n = strtol(argv[2], &end, 10);
	if (*end || n < 0 || n > 100000)
		return usage();
	if (!steps || !MAP_32BIT) {
		fputs("v30walk: the v3.0 double is not loaded\n", stderr);
		return 77;
	}
	if (!strcmp(argv[1], "stacks"))
		rc = build_stacks(n);
	else if (!strcmp(argv[1], "pages"))
		rc = build_pages(n);
	else
		return usage();
	if (rc < 0) {
		fprintf(stderr, "v30walk: building the ladder: %s\n", strerror(-rc));
		return 1;
	}
	p = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
	if (p == MAP_FAILED) {
		perror("v30walk: MAP_32BIT");
		return 1;
	}
	*steps = 0;
	p = mmap(NULL, STACK_LEN, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED) {
		perror("v30walk: the retry");
		return 1;
	}
	if (!*steps) {
		fputs("v30walk: the double charged nothing (not modelling here)\n", stderr);
		return 77;
	}
	printf("steps %lu\n", *steps);
	return 0;
}
