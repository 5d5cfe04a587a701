/*
 * twbpfcost: what the BPF counter costs the threads it counts, end to end.
 * The counter's programs time their own bodies (observer.in_kernel_s), but
 * not the tracepoint's call into them; this measures the whole: the CPU a
 * thread create and join takes in this process (CLOCK_PROCESS_CPUTIME_ID,
 * which takes in each ended thread's time, its exit's program too) with
 * the programs attached, against the mean of the same without them just
 * before and after, ROUNDS times interleaved. Prints JSON:
 *   {"rounds", "creates_per_round", "added_ns_per_create": {median, q1, q3},
 *    "self_timed_ns_per_create": median}
 * usage: twbpfcost [ROUNDS [CREATES [--exits]]] (needs CAP_BPF and
 * CAP_PERFMON); --exits attaches the exit program too, as
 * --no-event-filter does.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "observep.h"

static void *nothing(void *arg)
{
	return arg;
}

static double cpu_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* CPU nanoseconds a create and join takes, over n of them. */
static double creates_ns(int n)
{
	double a = cpu_s();

	for (int i = 0; i < n; i++) {
		pthread_t t;

		if (pthread_create(&t, NULL, nothing, NULL) != 0)
			return -1;
		pthread_join(t, NULL);
	}
	return (cpu_s() - a) / n * 1e9;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 21, n = argc > 2 ? atoi(argv[2]) : 20000;
	int exits = argc > 3 && strcmp(argv[3], "--exits") == 0;
	double *added, *self;
	char err[320];

	if (rounds < 3 || rounds > 1000 || n < 100) {
		fprintf(stderr, "usage: twbpfcost [ROUNDS (3-1000) [CREATES (>= 100)]]\n");
		return 2;
	}
	added = calloc((size_t)rounds, sizeof(*added));
	self = calloc((size_t)rounds, sizeof(*self));
	if (!added || !self)
		return 1;
	for (int r = 0; r < rounds; r++) {
		struct obs_bpf_stats s0, s1;
		struct obs_bpf b;
		double off0 = creates_ns(n), on, off1;

		if (obs_bpf_open(&b, exits, err, sizeof(err)) < 0) {
			fprintf(stderr, "twbpfcost: %s\n", err);
			return 1;
		}
		(void)obs_bpf_drain(&b, NULL, NULL);
		(void)obs_bpf_stats(&b, &s0);
		on = creates_ns(n);
		(void)obs_bpf_stats(&b, &s1);
		obs_bpf_close(&b);
		off1 = creates_ns(n);
		if (off0 < 0 || on < 0 || off1 < 0)
			return 1;
		added[r] = on - (off0 + off1) / 2;
		/* a run's time (the host's other creates and execs alike) times
		 * the runs a create of ours makes: one, two with --exits */
		self[r] = s1.timed > s0.timed ? (double)(s1.run_ns - s0.run_ns) /
		                                    (double)(s1.timed - s0.timed) * (exits ? 2 : 1)
		                              : 0;
	}
	qsort(added, (size_t)rounds, sizeof(*added), cmp);
	qsort(self, (size_t)rounds, sizeof(*self), cmp);
	printf("{\"rounds\": %d, \"creates_per_round\": %d, \"added_ns_per_create\": {\"median\": "
	       "%.1f, \"q1\": %.1f, \"q3\": %.1f}, \"self_timed_ns_per_create\": %.1f}\n",
	       rounds, n, added[rounds / 2], added[rounds / 4], added[3 * rounds / 4],
	       self[rounds / 2]);
	free(added);
	free(self);
	return 0;
}
