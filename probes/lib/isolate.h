/*
 * isolate: runs one function in a forked child, so that a fault, a crash
 * or a hang in it ends the child and never the probe. The child sends what
 * it learns through a pipe as it goes; the parent gets every byte sent
 * before the end, and how the child ended, so that it can say which step
 * faulted and by which signal.
 */
#ifndef TW_ISOLATE_H
#define TW_ISOLATE_H

#include <stddef.h>

/* What the child runs: it writes its findings to fd (isolate_send). Its
 * return is the child's exit status. */
typedef int isolate_fn(int fd, void *arg);

/* How the child ended. */
struct isolate_end {
	size_t got;    /* bytes received before the pipe closed */
	int status;    /* waitpid() status */
	int timed_out; /* killed by the parent after timeout_ms */
	int timeout_ms;
};

/* Forks, runs fn(fd, arg) in the child and collects at most len bytes of
 * what it sends into buf. A child still running after timeout_ms is killed
 * with SIGKILL. Returns 0 (see *end) or -errno when no child could be
 * run. Call only while the process has a single thread. */
int isolate_run(isolate_fn *fn, void *arg, void *buf, size_t len, int timeout_ms,
                struct isolate_end *end);

/* Writes all of p to fd: 0 or -errno. */
int isolate_send(int fd, const void *p, size_t n);

/* Whether the child exited with status 0 and was not killed. */
int isolate_clean(const struct isolate_end *end);

/* How the child ended, in words: "exited with status 0", "was killed by
 * SIGSEGV (Segmentation fault)", "did not finish in 2000 ms and was
 * killed". Returns buf. */
const char *isolate_describe(const struct isolate_end *end, char *buf, size_t n);

#endif
