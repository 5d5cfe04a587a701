/*
 * log: formats log lines and sends them to the journal (with PRIORITY,
 * PROBE, RUN_ID and MESSAGE_ID fields, the journal stamping the time) or
 * to stderr, each line led by its local time in RFC 3339.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "log.h"
#include "systemd.h"
#include "xmalloc.h"

static const char *log_ident = "threadwatch";
static int log_max = LOG_INFO;
static int log_to_journal;

void log_open(const char *ident, int max_priority)
{
	log_ident = ident;
	log_max = max_priority;
	log_to_journal = systemd_stderr_is_journal();
}

/* "2026-12-07T06:11:10.123+01:00": the time now, local, to the ms. */
static void log_stamp(char *buf, size_t len)
{
	struct timespec ts;
	struct tm tm;
	long off;
	char day[24];

	clock_gettime(CLOCK_REALTIME, &ts);
	if (!localtime_r(&ts.tv_sec, &tm) ||
	    !strftime(day, sizeof(day), "%Y-%m-%dT%H:%M:%S", &tm)) {
		snprintf(buf, len, "-");
		return;
	}
	off = tm.tm_gmtoff / 60;
	snprintf(buf, len, "%s.%03d%c%02d:%02d", day, (int)(ts.tv_nsec / 1000000),
	         off < 0 ? '-' : '+', (int)(labs(off) / 60 % 100), (int)(labs(off) % 60));
}

static void log_emit(int priority, const char *message_id, const char *probe, int64_t run_id,
                     const char *const *extra, const char *fmt, va_list ap)
{
	const char *fields[16];
	char *msg, *f_msg, *f_prio, *f_id = NULL, *f_probe = NULL, *f_run = NULL;
	size_t n = 0;

	if (priority > log_max)
		return;
	if (vasprintf(&msg, fmt, ap) < 0)
		return;
	if (!log_to_journal) {
		char when[48];

		log_stamp(when, sizeof(when));
		if (probe)
			fprintf(stderr, "%s %s: [%s] %s\n", when, log_ident, probe, msg);
		else
			fprintf(stderr, "%s %s: %s\n", when, log_ident, msg);
		free(msg);
		return;
	}
	xasprintf(&f_msg, "MESSAGE=%s", msg);
	xasprintf(&f_prio, "PRIORITY=%d", priority);
	fields[n++] = f_msg;
	fields[n++] = f_prio;
	fields[n++] = "SYSLOG_IDENTIFIER=threadwatchd";
	if (message_id) {
		xasprintf(&f_id, "MESSAGE_ID=%s", message_id);
		fields[n++] = f_id;
	}
	if (probe) {
		xasprintf(&f_probe, "PROBE=%s", probe);
		fields[n++] = f_probe;
	}
	if (run_id > 0) {
		xasprintf(&f_run, "RUN_ID=%lld", (long long)run_id);
		fields[n++] = f_run;
	}
	for (size_t i = 0; extra && extra[i] && n < sizeof(fields) / sizeof(fields[0]); i++)
		fields[n++] = extra[i];
	if (systemd_journal_send(fields, n) < 0)
		fprintf(stderr, "%s: %s\n", log_ident, msg);
	free(f_msg);
	free(f_prio);
	free(f_id);
	free(f_probe);
	free(f_run);
	free(msg);
}

void log_msg(int priority, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_emit(priority, NULL, NULL, 0, NULL, fmt, ap);
	va_end(ap);
}

void log_run(int priority, const char *probe, int64_t run_id, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_emit(priority, NULL, probe, run_id, NULL, fmt, ap);
	va_end(ap);
}

void log_event(int priority, const char *message_id, const char *const *fields, const char *fmt,
               ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_emit(priority, message_id, NULL, 0, fields, fmt, ap);
	va_end(ap);
}
