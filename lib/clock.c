/*
 * clock: monotonic nanoseconds, wall timestamps and, on x86-64, TSC cycles
 * with a calibrated frequency.
 */
#include <errno.h>
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

int clock_rfc3339_ms(int64_t ms, char *buf, unsigned len)
{
	int64_t secs = ms / 1000 - (ms % 1000 < 0);
	time_t t = (time_t)secs;
	struct tm tm;

	if (len)
		buf[0] = '\0';
	if (!gmtime_r(&t, &tm) || tm.tm_year + 1900 < 0 || tm.tm_year + 1900 > 9999)
		return -ERANGE;
	snprintf(buf, len, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1,
	         tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (int)(ms - secs * 1000));
	return 0;
}

void clock_rfc3339(int64_t wall_ns, char *buf, unsigned len)
{
	int64_t ms = wall_ns / 1000000 - (wall_ns % 1000000 < 0);

	clock_rfc3339_ms(ms, buf, len);
}

double clock_mono_s(void)
{
	return (double)clock_ns() / 1e9;
}

int64_t clock_wall_ms(void)
{
	return clock_wall_ns() / 1000000;
}
