/*
 * failure: a failed probe run's kind (crash, time limit, other error) and
 * its short description (lib/failure.h).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "errbuf.h"
#include "failure.h"

const char *const failure_kind_names[] = {"error", "crash", "timeout"};

int failure_kind_parse(const char *name)
{
	for (int k = 0; name && k < FAILURE_N_KINDS; k++)
		if (!strcmp(name, failure_kind_names[k]))
			return k;
	return -EINVAL;
}

void failure_set(struct failure *f, enum failure_kind kind, int sig)
{
	const char *abbrev = sig > 0 ? sigabbrev_np(sig) : NULL;

	f->kind = kind;
	f->signal[0] = '\0';
	if (kind != FAILURE_CRASH || sig <= 0)
		return;
	if (abbrev)
		snprintf(f->signal, sizeof(f->signal), "SIG%s", abbrev);
	else
		snprintf(f->signal, sizeof(f->signal), "signal %d", sig);
}

int failure_parse_json(const json_t *e, struct failure *f, const char *what, char *err,
                       size_t errlen)
{
	const json_t *kind = json_object_get(e, "kind"), *sig = json_object_get(e, "signal");
	int k = FAILURE_ERROR;
	const char *s;

	if (kind && !json_is_null(kind) && (k = failure_kind_parse(json_string_value(kind))) < 0)
		return errbuf_set(err, errlen, -EINVAL, "%s.kind: must be error, crash or timeout",
		                  what);
	failure_set(f, (enum failure_kind)k, 0);
	if (!sig || json_is_null(sig))
		return 0;
	s = json_string_value(sig);
	if (!s || k != FAILURE_CRASH || !*s || strlen(s) >= sizeof(f->signal) ||
	    (strncmp(s, "SIG", 3) && strncmp(s, "signal ", 7)))
		return errbuf_set(
		    err, errlen, -EINVAL,
		    "%s.signal: must be null, or a crash's signal such as \"SIGSEGV\"", what);
	snprintf(f->signal, sizeof(f->signal), "%s", s);
	return 0;
}

static json_t *id_or_null(long long v)
{
	return v >= 0 ? json_integer(v) : json_null();
}

json_t *failure_json(const char *probe, const struct failure *f, const char *reason,
                     long long run_id, long long t_ms)
{
	return json_pack("{s:s s:s s:s s:o s:s s:o s:o}", "probe", probe, "status", "error", "kind",
	                 failure_kind_names[f->kind], "signal",
	                 f->signal[0] ? json_string(f->signal) : json_null(), "reason",
	                 reason ? reason : "unknown", "run_id", id_or_null(run_id), "t_ms",
	                 id_or_null(t_ms));
}

void failure_short(const json_t *f, char *buf, size_t len)
{
	const char *probe = json_string_value(json_object_get(f, "probe")) ?: "?";
	const char *kind = json_string_value(json_object_get(f, "kind")) ?: "error";
	const char *sig = json_string_value(json_object_get(f, "signal"));
	const char *reason = json_string_value(json_object_get(f, "reason")) ?: "unknown";

	if (!strcmp(kind, "crash"))
		snprintf(buf, len, "%s crashed (%s)", probe, sig ? sig : "signal");
	else if (!strcmp(kind, "timeout"))
		snprintf(buf, len, "%s timed out", probe);
	else
		snprintf(buf, len, "%s failed (%s)", probe, reason);
}
