/*
 * pingpong: `make bench`'s second opinion on the handoff probe. Two
 * processes, one pinned to CPU A and one to CPU B (the same CPU when A ==
 * B), hand the turn back and forth: through a futex word in memory they
 * share (futex), or by passing one byte through two pipes (pipe). A
 * hand-off is one pass, half a round trip. Written apart from the probe
 * (processes, not threads; its own futex calls), so that what both see is
 * the host's wake-up, not either one's code.
 *
 * Usage: pingpong futex|pipe CPU_A CPU_B ROUND_TRIPS
 * Prints {"mode": M, "cpu_a": A, "cpu_b": B, "round_trips": N,
 * "ns_per_handoff": X}.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/futex.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set) < 0 ? -errno : 0;
}

/* Reads or writes exactly one byte, retrying on EINTR. 0 or -errno. */
static int one(int fd, int out)
{
	char c = 'x';
	ssize_t n;

	do
		n = out ? write(fd, &c, 1) : read(fd, &c, 1);
	while (n < 0 && errno == EINTR);
	return n == 1 ? 0 : n < 0 ? -errno : -EPIPE;
}

/* The shared word: whose turn it is (0: A's, 1: B's). */
static volatile uint32_t *turn;

static long futex(volatile uint32_t *w, int op, uint32_t val)
{
	return syscall(SYS_futex, w, op, val, NULL, NULL, 0);
}

/* Waits until the turn is `mine`, then hands it over. 0 or -errno. */
static int futex_pass(uint32_t mine)
{
	while (__atomic_load_n(turn, __ATOMIC_ACQUIRE) != mine)
		if (futex(turn, FUTEX_WAIT, !mine) < 0 && errno != EAGAIN && errno != EINTR)
			return -errno;
	__atomic_store_n(turn, !mine, __ATOMIC_RELEASE);
	return futex(turn, FUTEX_WAKE, 1) < 0 ? -errno : 0;
}

static double now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

/* Each side's part of one round trip, by mode: A passes and gets the turn
 * back; B gets it and passes it back. 0 or -errno. */
static int ping[2], pong[2];

static int pipe_a(void)
{
	int r = one(ping[1], 1);

	return r < 0 ? r : one(pong[0], 0);
}

static int pipe_b(void)
{
	int r = one(ping[0], 0);

	return r < 0 ? r : one(pong[1], 1);
}

static int futex_a(void)
{
	int r = futex_pass(0);

	/* the turn comes back when B has passed it */
	while (r == 0 && __atomic_load_n(turn, __ATOMIC_ACQUIRE) != 0)
		if (futex(turn, FUTEX_WAIT, 1) < 0 && errno != EAGAIN && errno != EINTR)
			r = -errno;
	return r;
}

static int futex_b(void)
{
	return futex_pass(1);
}

static int pipe_setup(void)
{
	return pipe(ping) < 0 || pipe(pong) < 0 ? -errno : 0;
}

static int futex_setup(void)
{
	void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return -errno;
	turn = p;
	return 0;
}

static const struct mode {
	const char *name;
	int (*setup)(void), (*a)(void), (*b)(void);
} modes[] = {
    {"futex", futex_setup, futex_a, futex_b},
    {"pipe", pipe_setup, pipe_a, pipe_b},
};

int main(int argc, char **argv)
{
	const struct mode *m = NULL;
	int a, b, st, r;
	long n;
	double t0, t1;
	pid_t pid;

	for (size_t i = 0; argc == 5 && i < sizeof(modes) / sizeof(modes[0]); i++)
		if (!strcmp(argv[1], modes[i].name))
			m = &modes[i];
	if (!m || (a = atoi(argv[2])) < 0 || (b = atoi(argv[3])) < 0 || (n = atol(argv[4])) < 2) {
		fprintf(stderr, "usage: pingpong futex|pipe CPU_A CPU_B ROUND_TRIPS (2 or more)\n");
		return 2;
	}
	if ((r = m->setup()) < 0) {
		fprintf(stderr, "pingpong: %s: %s\n", m->name, strerror(-r));
		return 1;
	}
	pid = fork();
	if (pid < 0) {
		perror("pingpong: fork");
		return 1;
	}
	if (pid == 0) {
		if (pin(b) < 0)
			_exit(3);
		for (long i = 0; i < n; i++)
			if (m->b() < 0)
				_exit(4);
		_exit(0);
	}
	if (pin(a) < 0) {
		fprintf(stderr, "pingpong: cannot run on CPU %d: %s\n", a, strerror(errno));
		kill(pid, SIGKILL);
		waitpid(pid, &st, 0);
		return 1;
	}
	/* one round trip first, so that both sides are placed and waiting */
	if (m->a() < 0)
		goto broken;
	t0 = now_ns();
	for (long i = 1; i < n; i++)
		if (m->a() < 0)
			goto broken;
	t1 = now_ns();
	if (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st)) {
		fprintf(stderr, "pingpong: the partner on CPU %d failed\n", b);
		return 1;
	}
	printf("{\"mode\": \"%s\", \"cpu_a\": %d, \"cpu_b\": %d, \"round_trips\": %ld, "
	       "\"ns_per_handoff\": %.3f}\n",
	       m->name, a, b, n - 1, (t1 - t0) / (double)(n - 1) / 2);
	return 0;
broken:
	fprintf(stderr, "pingpong: the %s hand-off broke (partner on CPU %d)\n", m->name, b);
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	return 1;
}
