/*
 * systemd: thin wrappers around libsystemd so that no other module includes
 * its headers. Each returns 0 (or a count) on success and -errno on failure.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <systemd/sd-daemon.h>
#include <systemd/sd-journal.h>

#include "systemd.h"
#include "xmalloc.h"

int systemd_notify(const char *state)
{
	return sd_notify(0, state);
}

int systemd_notifyf(const char *fmt, ...)
{
	va_list ap;
	char *s;
	int r;

	va_start(ap, fmt);
	r = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (r < 0)
		return -ENOMEM;
	r = sd_notify(0, s);
	free(s);
	return r;
}

unsigned long long systemd_watchdog_usec(void)
{
	uint64_t usec = 0;

	if (sd_watchdog_enabled(0, &usec) <= 0)
		return 0;
	return usec;
}

int systemd_listen_fds(void)
{
	return sd_listen_fds(1);
}

int systemd_stderr_is_journal(void)
{
	const char *e = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;

	if (!e || sscanf(e, "%llu:%llu", &dev, &ino) != 2)
		return 0;
	if (fstat(2, &st) < 0)
		return 0;
	return (unsigned long long)st.st_dev == dev && (unsigned long long)st.st_ino == ino;
}

int systemd_journal_send(const char *const *fields, size_t n)
{
	struct iovec *iov = xcalloc(n, sizeof(*iov));
	int r;

	for (size_t i = 0; i < n; i++) {
		iov[i].iov_base = (void *)(uintptr_t)fields[i];
		iov[i].iov_len = strlen(fields[i]);
	}
	r = sd_journal_sendv(iov, (int)n);
	free(iov);
	return r;
}
