/*
 * twload: a service of known behaviour for the observer's tests, each
 * mode doing one thing at a rate it keeps and counting it itself:
 *
 *   twload create RATE      creates and joins RATE threads a second, each
 *                           sleeping 100 us before it ends
 *   twload pingpong RATE    two threads, on two CPUs, hand a futex word to
 *                           each other RATE times a second
 *   twload thpstacks N      parks N threads on stacks it maps itself, 2 MiB
 *                           aligned, without MAP_STACK, advised
 *                           MADV_HUGEPAGE, each above a guard page of its own
 *   twload glibcstacks N    parks N threads on glibc's own stacks
 *   twload mmaplat N        parks N threads on glibc's stacks, and its main
 *                           thread maps and unmaps 64 KiB every millisecond,
 *                           timing each pair (the stall a reader of its
 *                           /proc files could cause it)
 *
 * Options: --name NAME sets the comm (prctl PR_SET_NAME: any bytes, a
 * terminal escape too); --seconds S ends it after S seconds (default 120).
 * It prints "ready" once set up. On SIGUSR1 it prints one line of its own
 * truth, "t MONOTONIC_S creates N switches N": the threads it created, and
 * the context switches of all its threads, those that ended too, as
 * getrusage(RUSAGE_SELF) counts them (the signal struct the kernel folds
 * each ending thread into: not /proc, which the observer reads, nor
 * taskstats); in
 * mmaplat mode, "lat n N p50_us X p99_us X p999_us X max_us X" of the
 * pairs since the last SIGUSR1. In the stacks modes, SIGUSR2 wakes each
 * parked thread once (its main thread signals them one by one), which
 * switches each of them once: a quiet process that runs again.
 */
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define HUGE_BYTES (2UL << 20)
#define GUARD_BYTES 4096UL

static atomic_ulong creates;
static atomic_int stopping, wake_all;
/* the parked threads, for SIGUSR2's wake-up; WAKE_SIG is what wakes each
 * (they block SIGUSR2, which the main thread takes) */
#define WAKE_SIG (SIGRTMIN + 1)
static pthread_t *parked;
static unsigned nparked;
static int word; /* the ping-pong's futex word: 0 A's turn, 1 B's */

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void sleep_until(double t)
{
	struct timespec ts = {.tv_sec = (time_t)t,
	                      .tv_nsec = (long)((t - (double)(time_t)t) * 1e9)};

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

/* Every switch of the process's threads, live and ended. */
static unsigned long process_switches(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (unsigned long)(ru.ru_nvcsw + ru.ru_nivcsw);
}

/* A created thread: one sleep, a switch at least. */
static void *short_life(void *arg)
{
	usleep(100);
	return arg;
}

static void run_create(double rate)
{
	double t0 = now_s();

	for (unsigned long i = 0; !atomic_load(&stopping); i++) {
		pthread_t t;

		sleep_until(t0 + (double)i / rate);
		if (pthread_create(&t, NULL, short_life, NULL) == 0) {
			pthread_join(t, NULL);
			atomic_fetch_add(&creates, 1);
		}
	}
}

static void futex_wait(int *w, int val)
{
	while (__atomic_load_n(w, __ATOMIC_ACQUIRE) == val)
		syscall(SYS_futex, w, FUTEX_WAIT_PRIVATE, val, NULL, NULL, 0);
}

static void futex_set(int *w, int val)
{
	__atomic_store_n(w, val, __ATOMIC_RELEASE);
	syscall(SYS_futex, w, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	(void)sched_setaffinity(0, sizeof(set), &set);
}

/* B: waits for its turn and gives it back, on the second CPU. */
static void *pong(void *arg)
{
	(void)arg;
	pin(1);
	while (!atomic_load(&stopping)) {
		futex_wait(&word, 0);
		futex_set(&word, 0);
	}
	return NULL;
}

static void run_pingpong(double rate)
{
	double t0 = now_s();
	pthread_t b;

	pthread_create(&b, NULL, pong, NULL);
	pin(0);
	for (unsigned long i = 0; !atomic_load(&stopping); i++) {
		sleep_until(t0 + (double)i / rate);
		futex_set(&word, 1);
		futex_wait(&word, 1);
	}
	futex_set(&word, 1);
	pthread_join(b, NULL);
}

static void *park(void *arg)
{
	/* touch the stack's top so that its pages (a huge one, if any) fault in */
	volatile char touch[8192];

	sigset_t usr2;

	touch[0] = touch[sizeof(touch) - 1] = 1;
	(void)arg;
	sigemptyset(&usr2);
	sigaddset(&usr2, SIGUSR2);
	pthread_sigmask(SIG_BLOCK, &usr2, NULL);
	while (!atomic_load(&stopping))
		pause();
	return NULL;
}

/* A stack of its own: 2 MiB at a 2 MiB boundary, a PROT_NONE guard page
 * directly below, no MAP_STACK, advised MADV_HUGEPAGE. */
static void *huge_stack(void)
{
	size_t span = 3 * HUGE_BYTES;
	char *p = mmap(NULL, span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), *a;

	if (p == MAP_FAILED)
		return NULL;
	a = (char *)(((uintptr_t)p + GUARD_BYTES + HUGE_BYTES - 1) & ~(HUGE_BYTES - 1));
	if (a - GUARD_BYTES > p)
		munmap(p, (size_t)(a - GUARD_BYTES - p));
	munmap(a + HUGE_BYTES, (size_t)(p + span - (a + HUGE_BYTES)));
	if (mprotect(a, HUGE_BYTES, PROT_READ | PROT_WRITE) < 0)
		return NULL;
	(void)madvise(a, HUGE_BYTES, MADV_HUGEPAGE);
	return a;
}

static void start_stacks(unsigned n, int huge)
{
	parked = calloc(n ? n : 1, sizeof(*parked));
	if (!parked) {
		fprintf(stderr, "twload: out of memory\n");
		exit(1);
	}
	for (unsigned i = 0; i < n; i++) {
		pthread_attr_t attr;
		pthread_t t;
		void *s = huge ? huge_stack() : NULL;

		pthread_attr_init(&attr);
		if (huge && (!s || pthread_attr_setstack(&attr, s, HUGE_BYTES) != 0)) {
			fprintf(stderr, "twload: cannot map a stack: %s\n", strerror(errno));
			exit(1);
		}
		if (pthread_create(&t, &attr, park, NULL) != 0) {
			fprintf(stderr, "twload: cannot create thread %u\n", i);
			exit(1);
		}
		parked[nparked++] = t;
		pthread_attr_destroy(&attr);
		atomic_fetch_add(&creates, 1);
	}
}

static void run_stacks_only(unsigned n)
{
	start_stacks(n, 0);
}

static void run_stacks(unsigned n, int huge)
{
	sigset_t usr2, old;

	start_stacks(n, huge);
	/* SIGUSR2 waits blocked but within sigsuspend(): one that comes
	 * between the check and the wait is not lost */
	sigemptyset(&usr2);
	sigaddset(&usr2, SIGUSR2);
	sigprocmask(SIG_BLOCK, &usr2, &old);
	printf("ready\n");
	fflush(stdout);
	while (!atomic_load(&stopping)) {
		sigsuspend(&old);
		if (atomic_exchange(&wake_all, 0))
			for (unsigned i = 0; i < nparked; i++)
				pthread_kill(parked[i], WAKE_SIG);
	}
}

/* mmaplat: the pairs' durations since the last report, in ns */
#define LAT_MAX 1000000
static uint32_t *lat;
static atomic_ulong nlat;
static atomic_int lat_report;

static int u32_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

static void lat_print(void)
{
	unsigned long n = atomic_load(&nlat);

	if (n > LAT_MAX)
		n = LAT_MAX;
	qsort(lat, n, sizeof(*lat), u32_cmp);
#define PCT(q) (n ? lat[(size_t)((double)(n - 1) * (q))] / 1e3 : 0.0)
	printf("lat n %lu p50_us %.1f p99_us %.1f p999_us %.1f max_us %.1f\n", n, PCT(0.5),
	       PCT(0.99), PCT(0.999), PCT(1.0));
#undef PCT
	fflush(stdout);
	atomic_store(&nlat, 0);
}

static void run_mmaplat(unsigned n)
{
	double next = now_s();

	lat = calloc(LAT_MAX, sizeof(*lat));
	run_stacks_only(n);
	printf("ready\n");
	fflush(stdout);
	while (!atomic_load(&stopping)) {
		double t0 = now_s();
		void *p =
		    mmap(NULL, 65536, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		unsigned long i;

		if (p != MAP_FAILED) {
			((volatile char *)p)[0] = 1;
			munmap(p, 65536);
		}
		i = atomic_fetch_add(&nlat, 1);
		if (i < LAT_MAX)
			lat[i] = (uint32_t)((now_s() - t0) * 1e9);
		if (atomic_exchange(&lat_report, 0))
			lat_print();
		next += 0.001;
		sleep_until(next);
	}
}

static void on_usr1(int sig)
{
	if (lat) {
		(void)sig;
		atomic_store(&lat_report, 1);
		return;
	}
	char line[160];
	int n;

	(void)sig;
	n = snprintf(line, sizeof(line), "t %.6f creates %lu switches %lu\n", now_s(),
	             atomic_load(&creates), process_switches());
	(void)!write(1, line, (size_t)n);
}

static void on_usr2(int sig)
{
	(void)sig;
	atomic_store(&wake_all, 1);
}

static void on_wake(int sig)
{
	(void)sig;
}

static void on_stop(int sig)
{
	(void)sig;
	atomic_store(&stopping, 1);
}

int main(int argc, char **argv)
{
	double seconds = 120, arg;
	const char *mode, *name = NULL;
	struct sigaction usr = {.sa_handler = on_usr1}, stop = {.sa_handler = on_stop},
	                 usr2 = {.sa_handler = on_usr2}, wake = {.sa_handler = on_wake};

	if (argc < 3) {
		fprintf(stderr, "usage: twload create|pingpong RATE | thpstacks|glibcstacks N "
		                "[--name NAME] [--seconds S]\n");
		return 2;
	}
	mode = argv[1];
	arg = atof(argv[2]);
	for (int i = 3; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--name"))
			name = argv[i + 1];
		else if (!strcmp(argv[i], "--seconds"))
			seconds = atof(argv[i + 1]);
	}
	if (name)
		prctl(PR_SET_NAME, name, 0, 0, 0);
	sigaction(SIGUSR1, &usr, NULL);
	sigaction(SIGUSR2, &usr2, NULL);
	sigaction(WAKE_SIG, &wake, NULL);
	sigaction(SIGTERM, &stop, NULL);
	sigaction(SIGALRM, &stop, NULL);
	alarm((unsigned)seconds);
	if (!strcmp(mode, "create") || !strcmp(mode, "pingpong")) {
		printf("ready\n");
		fflush(stdout);
		if (mode[0] == 'c')
			run_create(arg);
		else
			run_pingpong(arg);
	} else if (!strcmp(mode, "thpstacks") || !strcmp(mode, "glibcstacks")) {
		run_stacks((unsigned)arg, mode[0] == 't');
	} else if (!strcmp(mode, "mmaplat")) {
		run_mmaplat((unsigned)arg);
	} else {
		fprintf(stderr, "twload: unknown mode \"%s\"\n", mode);
		return 2;
	}
	return 0;
}
