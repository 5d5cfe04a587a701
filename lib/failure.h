/*
 * failure: what a failed probe run was, told from the reason the runner
 * gave it (a crash by a signal, the time limit, or any other error), so
 * that the recommendation, the dashboard and `threadwatch fleet` name it
 * the same way. The runner words its reasons with the prefixes below.
 */
#ifndef TW_FAILURE_H
#define TW_FAILURE_H

#include <stddef.h>

#include <jansson.h>

#define FAILURE_CRASH_PREFIX "crashed with "       /* "crashed with SIGSEGV" */
#define FAILURE_TIMEOUT_PREFIX "killed after the " /* "killed after the 20 s time limit" */

enum failure_kind { FAILURE_ERROR, FAILURE_CRASH, FAILURE_TIMEOUT };
/* "error", "crash", "timeout", in the order of enum failure_kind. */
extern const char *const failure_kind_names[];

/* The kind of failure a reason tells; for a crash, the signal ("SIGSEGV",
 * "signal 42") goes to sig (else ""). */
enum failure_kind failure_kind_of(const char *reason, char *sig, size_t siglen);

/* One failed run as the recommendation carries it: {"probe", "status":
 * "error", "kind", "signal" (or null), "reason", "run_id", "t_ms"} (ids and
 * times < 0 are null). New reference. */
json_t *failure_json(const char *probe, const char *reason, long long run_id, long long t_ms);

/* "ctxsw crashed (SIGSEGV)", "ctxsw timed out", "ctxsw failed (REASON)"
 * for one failure_json() object, into buf. */
void failure_short(const json_t *f, char *buf, size_t len);

#endif
