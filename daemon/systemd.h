/*
 * systemd: the only module that calls libsystemd. Readiness and status
 * notification, socket activation and journal records.
 */
#ifndef TW_SYSTEMD_H
#define TW_SYSTEMD_H

#include <stddef.h>

/* Sends one notify message ("READY=1", "STATUS=...", ...). Returns > 0 when
 * sent, 0 when NOTIFY_SOCKET is unset, -errno on failure. */
int systemd_notify(const char *state);
int systemd_notifyf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Watchdog interval in microseconds, or 0 when the watchdog is off. */
unsigned long long systemd_watchdog_usec(void);

/* Number of sockets passed by socket activation (first is fd 3), 0 for none,
 * -errno on error. Unsets the LISTEN_* variables. */
int systemd_listen_fds(void);

/* True when stderr is connected to the journal (JOURNAL_STREAM matches). */
int systemd_stderr_is_journal(void);

/* Writes one journal record from n "NAME=value" strings. 0 or -errno. */
int systemd_journal_send(const char *const *fields, size_t n);

#endif
