/*
 * runq: the run queue around a command, for the regress tests. Samples
 * procs_running in /proc/stat every 2 ms for BEFORE_MS, then while the
 * command runs (its output goes to OUT), then for AFTER_MS, and prints one
 * line: "before_peak B during_peak D during_p99 P after_peak A". Exits
 * with the command's status (2 on a usage or system error).
 *
 *   runq BEFORE_MS AFTER_MS OUT COMMAND [ARGS...]
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define RUNQ_PERIOD_NS 2000000L
#define RUNQ_MAX_SAMPLES 200000

static int procs_running(void)
{
	char buf[8192];
	ssize_t got;
	const char *p;
	int fd = open("/proc/stat", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	got = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (got <= 0)
		return -1;
	buf[got] = '\0';
	p = strstr(buf, "\nprocs_running ");
	return p ? atoi(p + 15) : -1;
}

static void nap(void)
{
	struct timespec ts = {0, RUNQ_PERIOD_NS};

	nanosleep(&ts, NULL);
}

/* The peak over `ms` milliseconds of samples. */
static int sample_for(long ms)
{
	int peak = 0;

	for (long i = 0; i < ms * 1000000L / RUNQ_PERIOD_NS; i++) {
		int v = procs_running();

		if (v > peak)
			peak = v;
		nap();
	}
	return peak;
}

static int cmp_int(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

int main(int argc, char **argv)
{
	static int samples[RUNQ_MAX_SAMPLES];
	size_t n = 0;
	int before, after, status, fd;
	pid_t pid;

	if (argc < 5) {
		fputs("usage: runq BEFORE_MS AFTER_MS OUT COMMAND [ARGS...]\n", stderr);
		return 2;
	}
	before = sample_for(atol(argv[1]));
	fd = open(argv[3], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		fprintf(stderr, "runq: %s: %s\n", argv[3], strerror(errno));
		return 2;
	}
	pid = fork();
	if (pid < 0) {
		perror("runq: fork");
		return 2;
	}
	if (pid == 0) {
		dup2(fd, STDOUT_FILENO);
		execvp(argv[4], argv + 4);
		perror("runq: exec");
		_exit(127);
	}
	close(fd);
	while (waitpid(pid, &status, WNOHANG) == 0) {
		if (n < RUNQ_MAX_SAMPLES)
			samples[n++] = procs_running();
		nap();
	}
	after = sample_for(atol(argv[2]));
	if (!n)
		samples[n++] = procs_running();
	qsort(samples, n, sizeof(samples[0]), cmp_int);
	printf("before_peak %d during_peak %d during_p99 %d after_peak %d samples %zu\n", before,
	       samples[n - 1], samples[n * 99 / 100], after, n);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 2;
}
