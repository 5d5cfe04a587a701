/*
 * headroom: reads the host's thread and mapping limits with what is in use,
 * scans /proc for the process with the most VMAs, and turns the figures
 * into limits with a warning when one is within HEADROOM_WARN_PCT percent.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "headroom.h"
#include "sysinfo.h"
#include "xmalloc.h"

static void read_comm(int dirfd, char *buf, size_t len)
{
	int fd = openat(dirfd, "comm", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, buf, len - 1) : -1;

	if (fd >= 0)
		close(fd);
	buf[n > 0 ? n : 0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
}

static int all_digits(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s))
			return 0;
	return 1;
}

int headroom_scan_vmas(const char *proc_root, struct headroom_sample *s)
{
	DIR *d = opendir(proc_root);
	struct dirent *e;

	s->largest_vmas = -1;
	s->largest_pid = 0;
	s->largest_comm[0] = '\0';
	s->scanned = s->unreadable = 0;
	if (!d)
		return -errno;
	while ((e = readdir(d))) {
		int pfd;
		long n;

		if (!all_digits(e->d_name))
			continue;
		pfd = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (pfd < 0)
			continue; /* exited meanwhile */
		n = sys_count_lines_at(pfd, "maps");
		if (n == -EACCES || n == -EPERM)
			s->unreadable++;
		else if (n >= 0) {
			s->scanned++;
			if (n > s->largest_vmas) {
				s->largest_vmas = n;
				s->largest_pid = atoi(e->d_name);
				read_comm(pfd, s->largest_comm, sizeof(s->largest_comm));
			}
		}
		close(pfd);
	}
	closedir(d);
	return 0;
}

int headroom_take_observer(struct headroom_sample *s, const json_t *largest)
{
	const json_t *v = json_object_get(largest, "vmas"), *pid = json_object_get(largest, "pid");
	const char *comm = json_string_value(json_object_get(largest, "comm"));

	if (!json_is_integer(v) || json_integer_value(v) < 0 || !json_is_integer(pid))
		return -EINVAL;
	s->largest_vmas = (long)json_integer_value(v);
	s->largest_pid = (int)json_integer_value(pid);
	snprintf(s->largest_comm, sizeof(s->largest_comm), "%s", comm ? comm : "");
	s->scanned = (unsigned)json_integer_value(json_object_get(largest, "processes_scanned"));
	s->unreadable =
	    (unsigned)json_integer_value(json_object_get(largest, "processes_unreadable"));
	s->by_observer = 1;
	return 0;
}

int headroom_read(struct headroom_sample *s)
{
	struct sys_limits l;

	memset(s, 0, sizeof(*s));
	sys_limits_read(&l);
	s->threads = l.threads_now;
	s->threads_max = l.threads_max;
	s->pid_max = l.pid_max;
	s->pids_current = l.pids_current;
	s->pids_max = l.pids_max;
	s->max_map_count = l.max_map_count;
	return headroom_scan_vmas("/proc", s);
}

/* A count as JSON: null when unknown (0) or unlimited. */
static json_t *count_or_null(uint64_t v)
{
	return v && v != UINT64_MAX ? json_integer((json_int_t)v) : json_null();
}

static const struct headroom_limit {
	const char *name;
	const char *what;   /* for the warning text */
	size_t used, limit; /* offsets into the sample */
	int vmas;           /* used is largest_vmas (a long) */
} limits[] = {
    {"threads_max", "threads on the host against kernel.threads-max",
     offsetof(struct headroom_sample, threads), offsetof(struct headroom_sample, threads_max), 0},
    {"pid_max", "threads on the host against kernel.pid_max",
     offsetof(struct headroom_sample, threads), offsetof(struct headroom_sample, pid_max), 0},
    {"pids_max", "tasks in threadwatchd's cgroup against pids.max",
     offsetof(struct headroom_sample, pids_current), offsetof(struct headroom_sample, pids_max), 0},
    {"max_map_count", "VMAs of the largest process against vm.max_map_count", 0,
     offsetof(struct headroom_sample, max_map_count), 1},
};

static uint64_t u64_at(const struct headroom_sample *s, size_t off)
{
	uint64_t v;

	memcpy(&v, (const char *)s + off, sizeof(v));
	return v;
}

json_t *headroom_json(const struct headroom_sample *s)
{
	json_t *o, *arr = json_array(), *warn = json_array();

	o = json_pack(
	    "{s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:I, s:I, s:s}", "threads",
	    count_or_null(s->threads), "threads_max", count_or_null(s->threads_max), "pid_max",
	    count_or_null(s->pid_max), "pids_current", count_or_null(s->pids_current), "pids_max",
	    count_or_null(s->pids_max), "max_map_count", count_or_null(s->max_map_count),
	    "largest_vmas", s->largest_vmas >= 0 ? json_integer(s->largest_vmas) : json_null(),
	    "largest_vmas_pid", s->largest_vmas >= 0 ? json_integer(s->largest_pid) : json_null(),
	    "largest_vmas_comm", s->largest_vmas >= 0 ? json_string(s->largest_comm) : json_null(),
	    "processes_scanned", (json_int_t)s->scanned, "processes_unreadable",
	    (json_int_t)s->unreadable, "vmas_seen_by",
	    s->by_observer ? "observer" : "threadwatchd");
	for (size_t i = 0; i < sizeof(limits) / sizeof(limits[0]); i++) {
		const struct headroom_limit *l = &limits[i];
		uint64_t limit = u64_at(s, l->limit), used;
		double ratio;
		int w;

		if (l->vmas) {
			if (s->largest_vmas < 0)
				continue;
			used = (uint64_t)s->largest_vmas;
		} else
			used = u64_at(s, l->used);
		if (!limit || limit == UINT64_MAX || (!used && !l->vmas))
			continue;
		ratio = (double)used / (double)limit;
		w = ratio >= HEADROOM_WARN_RATIO;
		json_array_append_new(arr,
		                      json_pack("{s:s, s:I, s:I, s:f, s:b}", "name", l->name,
		                                "used", (json_int_t)used, "limit",
		                                (json_int_t)limit, "ratio", ratio, "warning", w));
		if (w) {
			char *text;

			xasprintf(&text, "%s: %llu of %llu (%.0f%%)", l->what,
			          (unsigned long long)used, (unsigned long long)limit, ratio * 100);
			json_array_append_new(warn, json_string(text));
			free(text);
		}
	}
	json_object_set_new(o, "limits", arr);
	json_object_set_new(o, "warnings", warn);
	return o;
}

/* One limit entry with ratio and warning computed here, so that the API
 * and /metrics agree whatever the record carried. */
static json_t *limit_entry(const char *name, const json_t *used, const json_t *limit)
{
	json_t *ratio = json_null();

	if (json_is_number(limit) && json_number_value(limit) > 0)
		ratio = json_real(json_number_value(used) / json_number_value(limit));
	return json_pack("{s:s,s:O,s:O,s:o,s:b}", "name", name, "used", used, "limit",
	                 limit ? limit : json_null(), "ratio", ratio, "warning",
	                 json_is_real(ratio) && json_real_value(ratio) >= HEADROOM_WARN_RATIO);
}

json_t *headroom_limits(const json_t *headroom)
{
	/* jansson's iterators take non-const values but do not modify them. */
	json_t *obj = (json_t *)(uintptr_t)headroom, *list = json_object_get(headroom, "limits");
	json_t *out = json_array(), *v;
	const char *name;
	size_t i;

	if (json_is_array(list)) {
		json_array_foreach(list, i, v)
		{
			name = json_string_value(json_object_get(v, "name"));
			if (name && json_is_number(json_object_get(v, "used")))
				json_array_append_new(out,
				                      limit_entry(name, json_object_get(v, "used"),
				                                  json_object_get(v, "limit")));
		}
		return out;
	}
	json_object_foreach(obj, name, v)
	{
		if (json_is_number(json_object_get(v, "used")))
			json_array_append_new(out, limit_entry(name, json_object_get(v, "used"),
			                                       json_object_get(v, "limit")));
	}
	return out;
}
