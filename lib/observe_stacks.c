/*
 * observe_stacks: a process's thread stacks, found in /proc/PID/maps by
 * their layout and measured without walking the whole address space:
 * PAGEMAP_SCAN (fs/proc/task_mmu.c, Linux 6.7) over the stack ranges only,
 * or, on older kernels, the per-VMA Rss and AnonHugePages of smaps.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include "observep.h"
#include "xmalloc.h"

/* PAGEMAP_SCAN's ABI (include/uapi/linux/fs.h since 6.7; this build's
 * headers may predate it). */
struct tw_pm_scan_arg {
	uint64_t size, flags, start, end, walk_end, vec, vec_len, max_pages;
	uint64_t category_inverted, category_mask, category_anyof_mask, return_mask;
};
struct tw_page_region {
	uint64_t start, end, categories;
};
#define TW_PAGE_IS_PRESENT (1ULL << 3)
#define TW_PAGE_IS_HUGE (1ULL << 6) /* THP or hugetlb (pagemap_thp_category()) */
#define TW_PAGEMAP_SCAN _IOWR('f', 16, struct tw_pm_scan_arg)

/* The smallest stack glibc makes (PTHREAD_STACK_MIN on x86-64 and arm64
 * is 16 KiB or more). */
#define STACK_MIN 16384

struct maps_line {
	uint64_t start, end;
	char perms[5];
	int anon; /* no file: inode 0 and no name, or an [anon:...] name */
};

/* One maps line (show_map_vma(): "start-end perms offset dev inode name").
 * 0, or -EINVAL. */
static int maps_line(const char *line, size_t len, struct maps_line *m)
{
	char buf[512], *p, *end;
	unsigned long long inode;
	const char *name;

	if (len >= sizeof(buf))
		len = sizeof(buf) - 1;
	memcpy(buf, line, len);
	buf[len] = '\0';
	errno = 0;
	m->start = strtoull(buf, &p, 16);
	if (*p != '-')
		return -EINVAL;
	m->end = strtoull(p + 1, &p, 16);
	if (errno || *p != ' ' || m->end <= m->start || strlen(p + 1) < 5)
		return -EINVAL;
	memcpy(m->perms, p + 1, 4);
	m->perms[4] = '\0';
	p += 5;
	/* offset, dev, inode */
	(void)strtoull(p, &end, 16);
	if (end == p)
		return -EINVAL;
	p = end + strspn(end, " ");
	p += strcspn(p, " ");
	inode = strtoull(p, &end, 10);
	if (end == p)
		return -EINVAL;
	name = end + strspn(end, " ");
	m->anon = inode == 0 && (!*name || !strncmp(name, "[anon:", 6));
	return 0;
}

size_t obs_stacks_find(const char *maps, struct obs_vma **out)
{
	struct maps_line prev = {0}, cur;
	size_t n = 0, cap = 0;
	int have_prev = 0;

	*out = NULL;
	for (const char *line = maps; *line;) {
		size_t len = strcspn(line, "\n");

		if (maps_line(line, len, &cur) == 0) {
			if (have_prev && cur.anon && prev.anon && !strcmp(cur.perms, "rw-p") &&
			    !strcmp(prev.perms, "---p") && prev.end == cur.start &&
			    prev.end - prev.start <= OBS_GUARD_MAX &&
			    cur.end - cur.start >= STACK_MIN) {
				if (n == cap) {
					cap = cap ? cap * 2 : 16;
					*out = xreallocarray(*out, cap, sizeof(**out));
				}
				(*out)[n].start = cur.start;
				(*out)[n].end = cur.end;
				n++;
			}
			prev = cur;
			have_prev = 1;
		} else {
			have_prev = 0;
		}
		line += len + (line[len] != 0);
	}
	return n;
}

int obs_pagemap_scan(int fd, const struct obs_vma *v, size_t n, struct obs_stack_use *use)
{
	struct tw_page_region regs[64];

	for (size_t i = 0; i < n; i++) {
		uint64_t at = v[i].start;

		memset(&use[i], 0, sizeof(use[i]));
		while (at < v[i].end) {
			struct tw_pm_scan_arg a = {
			    .size = sizeof(a),
			    .start = at,
			    .end = v[i].end,
			    .vec = (uint64_t)(uintptr_t)regs,
			    .vec_len = sizeof(regs) / sizeof(regs[0]),
			    .category_mask = TW_PAGE_IS_PRESENT,
			    .return_mask = TW_PAGE_IS_PRESENT | TW_PAGE_IS_HUGE,
			};
			int r = ioctl(fd, TW_PAGEMAP_SCAN, &a);

			if (r < 0)
				return -errno;
			for (int k = 0; k < r && k < (int)a.vec_len; k++) {
				uint64_t bytes = regs[k].end - regs[k].start;

				use[i].resident += bytes;
				if (regs[k].categories & TW_PAGE_IS_HUGE) {
					use[i].huge += bytes;
					use[i].thp = 1;
				}
			}
			/* walk_end: where the scan stopped (the vector filled) */
			if (a.walk_end <= at || a.walk_end > v[i].end)
				break;
			at = a.walk_end;
		}
	}
	return 0;
}

/* "Name:   N kB" of an smaps line, in bytes: 0, or -EINVAL. */
static int smaps_kb(const char *line, const char *key, uint64_t *bytes)
{
	size_t k = strlen(key);
	char *end;
	unsigned long long v;

	if (strncmp(line, key, k) || line[k] != ':')
		return -ENOENT;
	v = strtoull(line + k + 1, &end, 10);
	if (end == line + k + 1)
		return -EINVAL;
	*bytes = v * 1024;
	return 0;
}

int obs_smaps_stacks(const char *smaps, const struct obs_vma *v, size_t n,
                     struct obs_stack_use *use)
{
	struct obs_stack_use *at = NULL;
	struct maps_line m;

	memset(use, 0, n * sizeof(*use));
	for (const char *line = smaps; *line;) {
		size_t len = strcspn(line, "\n");
		uint64_t b;

		if (maps_line(line, len, &m) == 0 && strchr("0123456789abcdef", line[0])) {
			at = NULL;
			for (size_t i = 0; i < n; i++)
				if (v[i].start == m.start && v[i].end == m.end)
					at = &use[i];
		} else if (at && smaps_kb(line, "Rss", &b) == 0) {
			at->resident = b;
		} else if (at && smaps_kb(line, "AnonHugePages", &b) == 0) {
			at->huge = b;
			at->thp = b > 0;
		}
		line += len + (line[len] != 0);
	}
	return 0;
}
