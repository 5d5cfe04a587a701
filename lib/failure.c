/*
 * failure: a failed probe run's kind (crash, time limit, other error) and
 * its short description, from the runner's reason (lib/failure.h).
 */
#include <stdio.h>
#include <string.h>

#include "failure.h"

const char *const failure_kind_names[] = {"error", "crash", "timeout"};

enum failure_kind failure_kind_of(const char *reason, char *sig, size_t siglen)
{
	const char *p;

	if (siglen)
		sig[0] = '\0';
	if (!reason)
		return FAILURE_ERROR;
	if (!strncmp(reason, FAILURE_TIMEOUT_PREFIX, strlen(FAILURE_TIMEOUT_PREFIX)))
		return FAILURE_TIMEOUT;
	if (strncmp(reason, FAILURE_CRASH_PREFIX, strlen(FAILURE_CRASH_PREFIX)))
		return FAILURE_ERROR;
	p = reason + strlen(FAILURE_CRASH_PREFIX);
	/* the signal's name runs to the " (stderr: ...)" the runner may add */
	snprintf(sig, siglen, "%.*s",
	         (int)(strstr(p, " (") ? strstr(p, " (") - p : (long)strlen(p)), p);
	return FAILURE_CRASH;
}

static json_t *id_or_null(long long v)
{
	return v >= 0 ? json_integer(v) : json_null();
}

json_t *failure_json(const char *probe, const char *reason, long long run_id, long long t_ms)
{
	char sig[64];
	enum failure_kind k = failure_kind_of(reason, sig, sizeof(sig));

	return json_pack("{s:s s:s s:s s:o s:s s:o s:o}", "probe", probe, "status", "error", "kind",
	                 failure_kind_names[k], "signal", sig[0] ? json_string(sig) : json_null(),
	                 "reason", reason ? reason : "unknown", "run_id", id_or_null(run_id),
	                 "t_ms", id_or_null(t_ms));
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
