/*
 * failure: what a failed probe run was (a crash by a signal, the time
 * limit, or any other error), kept as data from the runner on (the runs
 * table's failure and term_signal columns), so that the recommendation,
 * the dashboard and `threadwatch fleet` name it the same way. The reason
 * sentence is for people; nothing parses it.
 */
#ifndef TW_FAILURE_H
#define TW_FAILURE_H

#include <stddef.h>

#include <jansson.h>

enum failure_kind { FAILURE_ERROR, FAILURE_CRASH, FAILURE_TIMEOUT, FAILURE_N_KINDS };
/* "error", "crash", "timeout", in the order of enum failure_kind. */
extern const char *const failure_kind_names[];

/* One failed run's kind and, for a crash, its signal's name. */
struct failure {
	enum failure_kind kind;
	char signal[24]; /* "SIGSEGV", "signal 42"; "" unless a crash */
};

/* The kind of that name; -EINVAL for any other (NULL included). */
int failure_kind_parse(const char *name);
/* A failure of that kind; a crash's signal number (0: none) is named. */
void failure_set(struct failure *f, enum failure_kind kind, int sig);

/* The kind and signal of a failure object: "kind" one of failure_kind_names
 * (absent or null: error), "signal" a crash's signal name ("SIGSEGV",
 * "signal 42"; absent or null: none). 0, or -EINVAL with a message naming
 * `what` in err. */
int failure_parse_json(const json_t *o, struct failure *f, const char *what, char *err,
                       size_t errlen);

/* One failed run as the recommendation carries it: {"probe", "status":
 * "error", "kind", "signal" (or null), "reason", "run_id", "t_ms"} (ids and
 * times < 0 are null). New reference. */
json_t *failure_json(const char *probe, const struct failure *f, const char *reason,
                     long long run_id, long long t_ms);

/* "ctxsw crashed (SIGSEGV)", "ctxsw timed out", "ctxsw failed (REASON)"
 * for one failure_json() object, into buf. */
void failure_short(const json_t *f, char *buf, size_t len);

#endif
