/*
 * isolate: a function run in a forked child, with what it said and how it
 * ended (see isolate.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "isolate.h"

int isolate_send(int fd, const void *p, size_t n)
{
	const char *c = p;

	while (n > 0) {
		ssize_t k = write(fd, c, n);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return k < 0 ? -errno : -EIO;
		c += k;
		n -= (size_t)k;
	}
	return 0;
}

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

/* Reads from fd into buf until end of file, len bytes or the deadline.
 * Returns 1 when the deadline passed first. */
static int collect(int fd, char *buf, size_t len, long deadline, size_t *got)
{
	char sink[256];

	for (;;) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		long left = deadline - now_ms();
		ssize_t k;
		int r;

		if (left <= 0)
			return 1;
		r = poll(&p, 1, (int)left);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r == 0;
		/* Past len, keep draining so that the child never blocks. */
		if (*got < len)
			k = read(fd, buf + *got, len - *got);
		else
			k = read(fd, sink, sizeof(sink));
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return 0;
		if (*got < len)
			*got += (size_t)k;
	}
}

/* The signals a faulting instruction raises. */
static const int fault_signals[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE};

int isolate_run(isolate_fn *fn, void *arg, void *buf, size_t len, int timeout_ms,
                struct isolate_end *end)
{
	int p[2];
	pid_t pid;

	memset(end, 0, sizeof(*end));
	end->timeout_ms = timeout_ms;
	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	fflush(NULL); /* nothing buffered is written twice */
	pid = fork();
	if (pid < 0) {
		int e = errno;

		close(p[0]);
		close(p[1]);
		return -e;
	}
	if (pid == 0) {
		close(p[0]);
		/* A fault ends the child by its own signal, even where a
		 * sanitizer's handler would turn it into an exit status. */
		for (size_t i = 0; i < sizeof(fault_signals) / sizeof(fault_signals[0]); i++)
			signal(fault_signals[i], SIG_DFL);
		_exit(fn(p[1], arg) & 0xff);
	}
	close(p[1]);
	end->timed_out = collect(p[0], buf, len, now_ms() + timeout_ms, &end->got);
	close(p[0]);
	if (end->timed_out)
		kill(pid, SIGKILL);
	while (waitpid(pid, &end->status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return 0;
}

int isolate_clean(const struct isolate_end *end)
{
	return !end->timed_out && WIFEXITED(end->status) && WEXITSTATUS(end->status) == 0;
}

const char *isolate_describe(const struct isolate_end *end, char *buf, size_t n)
{
	int sig = WTERMSIG(end->status);

	if (end->timed_out)
		snprintf(buf, n, "did not finish in %d ms and was killed", end->timeout_ms);
	else if (WIFSIGNALED(end->status) && sigabbrev_np(sig))
		snprintf(buf, n, "was killed by SIG%s (%s)", sigabbrev_np(sig), strsignal(sig));
	else if (WIFSIGNALED(end->status))
		snprintf(buf, n, "was killed by signal %d", sig);
	else
		snprintf(buf, n, "exited with status %d", WEXITSTATUS(end->status));
	return buf;
}
