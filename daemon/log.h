/*
 * log: one place that writes log lines, to the journal with structured fields
 * when running under systemd and to stderr otherwise.
 *
 * Helpers never log; their callers log once. Non-fatal messages end with
 * ", ignoring". Paths are quoted: "Failed to open \"%s\": %s".
 */
#ifndef TW_LOG_H
#define TW_LOG_H

#include <stdint.h>
#include <syslog.h>

/* Chooses journal or stderr (journal when JOURNAL_STREAM is set and
 * matches stderr) and the lowest priority printed. */
void log_open(const char *ident, int max_priority);

void log_msg(int priority, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A message about one probe run; PROBE= and RUN_ID= become journal fields
 * (run_id <= 0 omits RUN_ID). */
void log_run(int priority, const char *probe, int64_t run_id, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* A message carrying its own MESSAGE_ID (a 128-bit id as 32 hex digits) and
 * extra NAME=value fields (NULL-terminated list, may be NULL). */
void log_event(int priority, const char *message_id, const char *const *fields, const char *fmt,
               ...) __attribute__((format(printf, 4, 5)));

#define log_err(...) log_msg(LOG_ERR, __VA_ARGS__)
#define log_warning(...) log_msg(LOG_WARNING, __VA_ARGS__)
#define log_notice(...) log_msg(LOG_NOTICE, __VA_ARGS__)
#define log_info(...) log_msg(LOG_INFO, __VA_ARGS__)
#define log_debug(...) log_msg(LOG_DEBUG, __VA_ARGS__)

#endif
