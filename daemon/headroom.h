/*
 * headroom: how close the host is to the limits that stop thread creation
 * and mapping: threads against threads-max and pid_max, the cgroup's tasks
 * against pids.max, and the largest process's VMA count against
 * vm.max_map_count. Read once per cycle; a limit within HEADROOM_WARN_PCT
 * percent is a warning (the one definition of that threshold).
 */
#ifndef TW_HEADROOM_H
#define TW_HEADROOM_H

#include <stdint.h>

#include <jansson.h>

/* A limit this close (in percent) is a warning: used/limit at or above
 * HEADROOM_WARN_RATIO. */
#define HEADROOM_WARN_PCT 10
#define HEADROOM_WARN_RATIO (1 - HEADROOM_WARN_PCT / 100.0)

struct headroom_sample {
	uint64_t threads;       /* threads on the host */
	uint64_t threads_max;   /* kernel.threads-max */
	uint64_t pid_max;       /* kernel.pid_max */
	uint64_t pids_current;  /* our cgroup's pids.current (0: unknown) */
	uint64_t pids_max;      /* our cgroup's pids.max (UINT64_MAX: none) */
	uint64_t max_map_count; /* vm.max_map_count */
	long largest_vmas;      /* VMAs of the largest readable process (-1: none read) */
	int largest_pid;
	char largest_comm[32];
	unsigned scanned;    /* processes whose maps were read */
	unsigned unreadable; /* processes whose maps we may not read */
	int by_observer;     /* the VMA counts are the observer's (every process),
	                        not this daemon's own scan (its sandbox's) */
};

/* Counts the VMAs (lines of maps) of every process under proc_root
 * ("/proc") and keeps the largest. 0 or -errno when proc_root cannot be
 * listed. */
int headroom_scan_vmas(const char *proc_root, struct headroom_sample *s);

/* Takes the largest process from the observer's window (largest_vmas of
 * its document: {pid, comm, vmas, processes_scanned,
 * processes_unreadable}), which sees every process where this daemon's
 * sandbox shows it its own. 0, or -EINVAL (s unchanged) when it holds no
 * count. */
int headroom_take_observer(struct headroom_sample *s, const json_t *largest);

/* Reads the whole sample from /proc and the cgroup. 0 or -errno. */
int headroom_read(struct headroom_sample *s);

/* The sample as JSON (new reference):
 *   {"threads", "threads_max", "pid_max", "pids_current", "pids_max",
 *    "max_map_count", "largest_vmas", "largest_vmas_pid",
 *    "largest_vmas_comm", "processes_scanned", "processes_unreadable",
 *    "vmas_seen_by": "observer"|"threadwatchd",
 *    "limits": [{"name": "threads_max"|"pid_max"|"pids_max"|"max_map_count",
 *                "used", "limit", "ratio", "warning": bool}, ...],
 *    "warnings": ["text", ...]}
 * Unknown values are null; a limit whose value is unknown or unlimited is
 * left out of "limits". */
json_t *headroom_json(const struct headroom_sample *s);

/* The limits of a headroom record (as headroom_json() writes it, with
 * "limits": [{"name", "used", "limit"}], or an older {name: {"used",
 * "limit"}}) as [{"name", "used", "limit", "ratio", "warning"}], where
 * ratio is used/limit (null without a limit) and warning is true at or
 * above HEADROOM_WARN_RATIO, computed here whatever the record carried, so
 * that the API and /metrics agree. Never NULL. New reference. */
json_t *headroom_limits(const json_t *headroom);

#endif
