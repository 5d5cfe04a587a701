/*
 * metrics_procself: the process_* figures from /proc/self (see metrics_procself.h): CPU
 * time, resident size and start time from /proc/self/stat (start time in
 * clock ticks after boot, plus btime of /proc/stat), open descriptors as
 * the entries of /proc/self/fd.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "metrics_procself.h"

/* Reads a whole small file into buf (NUL-terminated). 0 or -errno. */
static int slurp(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "re");
	size_t n;
	int rc = 0;

	if (!f)
		return -errno;
	n = fread(buf, 1, size - 1, f);
	if (ferror(f))
		rc = -EIO;
	buf[n] = '\0';
	fclose(f);
	return rc;
}

/* The boot time (btime of /proc/stat), as a Unix time. 0 or -errno. */
static int boot_time(double *out)
{
	char buf[16384];
	const char *b;
	unsigned long long t;
	int rc = slurp("/proc/stat", buf, sizeof(buf));

	if (rc < 0)
		return rc;
	b = strstr(buf, "\nbtime ");
	if (!b || sscanf(b, "\nbtime %llu", &t) != 1)
		return -EPROTO;
	*out = (double)t;
	return 0;
}

/* utime, stime, starttime (ticks) and rss (pages) of /proc/self/stat, the
 * fields after the command name's closing parenthesis. 0 or -errno. */
static int stat_fields(double *cpu_ticks, double *start_ticks, double *rss_pages)
{
	char buf[2048];
	const char *p;
	unsigned long long ut, st, start;
	long long rss;
	int rc = slurp("/proc/self/stat", buf, sizeof(buf));

	if (rc < 0)
		return rc;
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 1,
	                 " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %*d %*d %*d %*d "
	                 "%*d %*d %llu %*u %lld",
	                 &ut, &st, &start, &rss) != 4)
		return -EPROTO;
	*cpu_ticks = (double)(ut + st);
	*start_ticks = (double)start;
	*rss_pages = (double)rss;
	return 0;
}

/* The entries of /proc/self/fd but the one reading it. 0 or -errno. */
static int count_fds(double *out)
{
	DIR *d = opendir("/proc/self/fd");
	const struct dirent *e;
	double n = 0;

	if (!d)
		return -errno;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	*out = n - 1;
	return 0;
}

int metrics_procself_read(struct metrics_procself *p)
{
	double cpu, start, rss, btime;
	long hz = sysconf(_SC_CLK_TCK), page = sysconf(_SC_PAGESIZE);
	int rc;

	if (hz <= 0 || page <= 0)
		return -EINVAL;
	rc = stat_fields(&cpu, &start, &rss);
	if (rc == 0)
		rc = boot_time(&btime);
	if (rc == 0)
		rc = count_fds(&p->open_fds);
	if (rc < 0)
		return rc;
	p->cpu_seconds = cpu / (double)hz;
	p->start_time_seconds = btime + start / (double)hz;
	p->resident_bytes = rss * (double)page;
	return 0;
}
