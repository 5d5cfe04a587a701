/*
 * observer_link: threadwatchd's end of the privilege separation. The
 * observer (threadwatch-observer: root with CAP_NET_ADMIN and
 * CAP_SYS_PTRACE alone) sees every process; threadwatchd, sandboxed, sees
 * its own. The observer hands each window's document to a Unix socket
 * threadwatchd listens on; threadwatchd takes it only from uid 0 or its
 * own uid (SO_PEERCRED), checks its shape and keeps the latest in memory.
 */
#ifndef TW_OBSERVER_LINK_H
#define TW_OBSERVER_LINK_H

#include <stddef.h>

#include <jansson.h>

/* The largest document taken: 10,000 workloads of about 1 KiB each, and
 * room. */
#define OLINK_MAX_BYTES (64u << 20)

/* How old a window the daemon still takes for the headroom: a few of the
 * observer's default 60 s windows. */
#define OLINK_FRESH_S 300.0

/* Called on the link's thread with each window taken, after the observer
 * has had its answer. */
typedef void olink_window_fn(const json_t *doc, void *ctx);

/* Binds `path` (a stale socket there is replaced; mode 0666, since the
 * peer's uid decides who may hand a window) and starts the thread that
 * takes windows, handing each to fn (may be NULL). 0, or -errno with the
 * reason in err. */
int olink_start(const char *path, olink_window_fn *fn, void *ctx, char *err, size_t errlen);
/* Stops the thread and removes the socket. Safe when not started. */
void olink_stop(void);
/* The latest window's document when it came at most max_age_s ago (a new
 * reference), or NULL. */
json_t *olink_latest(double max_age_s);
/* 0 when doc has the shape a window's document has (an object with
 * window_s a positive number, workloads an array of objects, mechanisms an
 * object, largest_vmas an object), or -EINVAL with the reason in err. */
int olink_check(const json_t *doc, char *err, size_t errlen);

#endif
