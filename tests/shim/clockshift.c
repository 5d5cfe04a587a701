/*
 * clockshift: an LD_PRELOAD shim that steps the wall clock of one process
 * tree, for the clock-jump test of the scheduler. CLOCK_REALTIME as seen
 * through clock_gettime(), gettimeofday() and time() is moved by the
 * seconds written in the file named by $TW_CLOCKSHIFT_FILE (re-read at most
 * every 50 ms, so a test can step the clock while the process runs);
 * CLOCK_MONOTONIC is left alone.
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

typedef int clock_gettime_fn(clockid_t, struct timespec *);

static int64_t shift_ns, checked_ns;

static clock_gettime_fn *real_clock_gettime(void)
{
	static clock_gettime_fn *fn;

	if (!fn)
		fn = (clock_gettime_fn *)dlsym(RTLD_NEXT, "clock_gettime");
	return fn;
}

/* The shift in ns, re-read from the file when the last reading is old. */
static int64_t current_shift(void)
{
	const char *path = getenv("TW_CLOCKSHIFT_FILE");
	struct timespec now;
	int64_t mono, last = __atomic_load_n(&checked_ns, __ATOMIC_RELAXED);
	char buf[64];
	ssize_t n;
	int fd;

	if (!path || real_clock_gettime()(CLOCK_MONOTONIC, &now) < 0)
		return __atomic_load_n(&shift_ns, __ATOMIC_RELAXED);
	mono = (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
	if (mono - last < 50000000 && last)
		return __atomic_load_n(&shift_ns, __ATOMIC_RELAXED);
	__atomic_store_n(&checked_ns, mono, __ATOMIC_RELAXED);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n > 0) {
			buf[n] = '\0';
			__atomic_store_n(&shift_ns, (int64_t)(strtod(buf, NULL) * 1e9),
			                 __ATOMIC_RELAXED);
		}
	}
	return __atomic_load_n(&shift_ns, __ATOMIC_RELAXED);
}

static void add_ns(struct timespec *ts, int64_t ns)
{
	int64_t t = (int64_t)ts->tv_sec * 1000000000 + ts->tv_nsec + ns;

	ts->tv_sec = (time_t)(t / 1000000000);
	ts->tv_nsec = (long)(t % 1000000000);
	if (ts->tv_nsec < 0) {
		ts->tv_nsec += 1000000000;
		ts->tv_sec--;
	}
}

int clock_gettime(clockid_t clk, struct timespec *ts)
{
	int r = real_clock_gettime()(clk, ts);

	if (r == 0 && (clk == CLOCK_REALTIME || clk == CLOCK_REALTIME_COARSE))
		add_ns(ts, current_shift());
	return r;
}

int gettimeofday(struct timeval *restrict tv, void *restrict tz)
{
	struct timespec ts;

	(void)tz;
	if (clock_gettime(CLOCK_REALTIME, &ts) < 0)
		return -1;
	tv->tv_sec = ts.tv_sec;
	tv->tv_usec = ts.tv_nsec / 1000;
	return 0;
}

time_t time(time_t *tloc)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	if (tloc)
		*tloc = ts.tv_sec;
	return ts.tv_sec;
}
