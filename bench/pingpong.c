/*
 * pingpong: `make bench`'s second opinion on the handoff probe. Two
 * processes, one pinned to CPU A and one to CPU B (the same CPU when A ==
 * B), pass one byte back and forth through two pipes; a hand-off is one
 * pass (half a round trip). A different mechanism from the probe's (pipes
 * between processes, not a futex between threads), so that what both see
 * is the host's wake-up, not either one's code.
 *
 * Usage: pingpong CPU_A CPU_B ROUND_TRIPS
 * Prints {"cpu_a": A, "cpu_b": B, "round_trips": N, "ns_per_handoff": X}.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

static double now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

int main(int argc, char **argv)
{
	int ping[2], pong[2], a, b, st;
	long n;
	double t0, t1;
	pid_t pid;

	if (argc != 4 || (a = atoi(argv[1])) < 0 || (b = atoi(argv[2])) < 0 ||
	    (n = atol(argv[3])) < 1) {
		fprintf(stderr, "usage: pingpong CPU_A CPU_B ROUND_TRIPS\n");
		return 2;
	}
	if (pipe(ping) < 0 || pipe(pong) < 0) {
		perror("pingpong: pipe");
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
			if (one(ping[0], 0) < 0 || one(pong[1], 1) < 0)
				_exit(4);
		_exit(0);
	}
	if (pin(a) < 0) {
		fprintf(stderr, "pingpong: cannot run on CPU %d: %s\n", a, strerror(errno));
		kill(pid, SIGKILL);
		return 1;
	}
	/* one round trip first, so that both sides are placed and waiting */
	if (one(ping[1], 1) < 0 || one(pong[0], 0) < 0)
		goto broken;
	t0 = now_ns();
	for (long i = 1; i < n; i++)
		if (one(ping[1], 1) < 0 || one(pong[0], 0) < 0)
			goto broken;
	t1 = now_ns();
	if (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st)) {
		fprintf(stderr, "pingpong: the partner on CPU %d failed\n", b);
		return 1;
	}
	printf("{\"cpu_a\": %d, \"cpu_b\": %d, \"round_trips\": %ld, \"ns_per_handoff\": %.3f}\n",
	       a, b, n - 1, n > 1 ? (t1 - t0) / (double)(n - 1) / 2 : 0.0);
	return 0;
broken:
	fprintf(stderr, "pingpong: the pipe broke (partner on CPU %d)\n", b);
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	return 1;
}
