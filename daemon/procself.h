/*
 * procself: the daemon's own process figures, read from /proc/self, that
 * /metrics exports as the process_* families every exporter has.
 */
#ifndef TW_PROCSELF_H
#define TW_PROCSELF_H

struct procself {
	double cpu_seconds;        /* user + system CPU time */
	double resident_bytes;     /* resident set size */
	double start_time_seconds; /* when the process started, as a Unix time */
	double open_fds;           /* open file descriptors */
};

/* Fills *p from /proc/self/stat, /proc/stat and /proc/self/fd. 0 or -errno
 * (-EPROTO: a file not in the kernel's format). */
int procself_read(struct procself *p);

#endif
