/*
 * clock: monotonic nanoseconds, wall timestamps and, on x86-64, TSC cycles
 * with a calibrated frequency.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "clock.h"

uint64_t clock_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int64_t clock_wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

#if defined(__x86_64__)
uint64_t clock_cycles(void)
{
	unsigned lo, hi, aux;

	/* rdtscp waits for earlier instructions; the lfence keeps later ones
	 * from starting before the read. */
	__asm__ volatile("rdtscp; lfence" : "=a"(lo), "=d"(hi), "=c"(aux)::"memory");
	return ((uint64_t)hi << 32) | lo;
}

int clock_have_tsc(void)
{
	return 1;
}
#else
uint64_t clock_cycles(void)
{
	return 0;
}

int clock_have_tsc(void)
{
	return 0;
}
#endif

double clock_tsc_hz(unsigned ms)
{
	static double hz;
	struct timespec req;
	uint64_t c0, c1, t0, t1;

	if (hz > 0 || !clock_have_tsc())
		return hz;
	if (ms == 0)
		ms = 50;
	req.tv_sec = ms / 1000;
	req.tv_nsec = (long)(ms % 1000) * 1000000l;
	t0 = clock_ns();
	c0 = clock_cycles();
	nanosleep(&req, NULL);
	t1 = clock_ns();
	c1 = clock_cycles();
	if (t1 > t0 && c1 > c0)
		hz = (double)(c1 - c0) * 1e9 / (double)(t1 - t0);
	return hz;
}

void clock_rfc3339(int64_t wall_ns, char *buf, unsigned len)
{
	time_t secs = (time_t)(wall_ns / 1000000000ll);
	struct tm tm;
	char tmp[32];

	gmtime_r(&secs, &tm);
	strftime(tmp, sizeof(tmp), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, len, "%s.%03dZ", tmp, (int)((wall_ns / 1000000ll) % 1000));
}

double clock_mono_s(void)
{
	return (double)clock_ns() / 1e9;
}

int64_t clock_wall_ms(void)
{
	return clock_wall_ns() / 1000000;
}
