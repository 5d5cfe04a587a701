/*
 * observe_proc: the parsers of a process's and a thread's /proc files the
 * observer reads: stat (do_task_stat() in fs/proc/array.c) and sched
 * (proc_sched_show_task() in kernel/sched/debug.c), or status where a
 * kernel has no sched file. The text is the kernel's, but a comm in it is
 * anybody's.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "observep.h"

int obs_stat_parse(const char *text, struct obs_stat *st)
{
	const char *open = strchr(text, '('), *close = strrchr(text, ')'), *p;
	size_t n;

	memset(st, 0, sizeof(*st));
	if (!open || !close || close < open || close[1] != ' ')
		return -EINVAL;
	n = (size_t)(close - open - 1);
	if (n > 16)
		return -EINVAL; /* TASK_COMM_LEN less its NUL, or a kthread's 16 */
	memcpy(st->comm, open + 1, n);
	st->comm[n] = '\0';
	/* after ") ": the state (field 3), then numbers: ppid (4), flags (9) ...
	 * num_threads (20) ... starttime (22); tty_nr and nice may be negative */
	p = close + 2;
	if (!*p || p[1] != ' ')
		return -EINVAL;
	p += 2;
	for (int field = 4; field <= 22; field++) {
		char *end;
		long long v;

		errno = 0;
		v = strtoll(p, &end, 10);
		if (end == p || errno)
			return -EINVAL;
		if (field == 4)
			st->ppid = (pid_t)v;
		else if (field == 9)
			st->kthread = ((unsigned long long)v & OBS_PF_KTHREAD) != 0;
		else if (field == 20)
			st->threads = (long)v;
		else if (field == 22)
			st->starttime = (unsigned long long)v;
		p = end;
	}
	return st->ppid < 0 || st->threads < 0 ? -EINVAL : 0;
}

/* Table of the counts each file gives: the line's key and its field. */
static const struct count_key {
	const char *key;
	size_t off;
	int migr;
} count_keys[] = {
    /* sched: "NAME    :    VALUE" */
    {"nr_voluntary_switches", offsetof(struct obs_counts, vol), 0},
    {"nr_involuntary_switches", offsetof(struct obs_counts, invol), 0},
    {"se.nr_migrations", offsetof(struct obs_counts, migr), 1},
    /* status: "NAME:\tVALUE" */
    {"voluntary_ctxt_switches", offsetof(struct obs_counts, vol), 0},
    {"nonvoluntary_ctxt_switches", offsetof(struct obs_counts, invol), 0},
};

int obs_sched_parse(const char *text, struct obs_counts *c)
{
	int seen = 0;

	memset(c, 0, sizeof(*c));
	for (const char *line = text; *line;) {
		size_t len = strcspn(line, "\n"), klen = strcspn(line, " \t:");

		for (size_t i = 0; i < sizeof(count_keys) / sizeof(count_keys[0]); i++) {
			const char *v;
			char *end;
			unsigned long long x;

			if (strlen(count_keys[i].key) != klen ||
			    strncmp(line, count_keys[i].key, klen))
				continue;
			v = line + klen + strspn(line + klen, " \t:");
			errno = 0;
			x = strtoull(v, &end, 10);
			if (end == v || errno || (*end != '\n' && *end != '\0'))
				return -EINVAL;
			*(uint64_t *)((char *)c + count_keys[i].off) = x;
			if (count_keys[i].migr)
				c->have_migr = 1;
			else
				seen++;
		}
		/* the sched file's three come within its first lines, of some
		 * thirty: the rest need not be read. The one line another user
		 * writes, its head's comm, holds at most 15 bytes (TASK_COMM_LEN),
		 * fewer than any key here, so it cannot pass one off first */
		if (seen >= 2 && c->have_migr)
			return 0;
		line += len + (line[len] != 0);
	}
	return seen >= 2 ? 0 : -EINVAL;
}
