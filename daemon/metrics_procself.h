/*
 * metrics_procself: the daemon's own process figures, read from /proc/self, that
 * /metrics exports as the process_* families every exporter has.
 */
#ifndef TW_METRICS_PROCSELF_H
#define TW_METRICS_PROCSELF_H

struct metrics_procself {
	double cpu_seconds;        /* user + system CPU time */
	double resident_bytes;     /* resident set size */
	double start_time_seconds; /* when the process started, as a Unix time */
	double open_fds;           /* open file descriptors */
};

/* Fills *p from /proc/self/stat, /proc/stat and /proc/self/fd. 0 or -errno
 * (-EPROTO: a file not in the kernel's format). */
int metrics_procself_read(struct metrics_procself *p);

#endif
