/*
 * recommend_failed: the probes the recommendation needs whose latest run
 * failed or that the operator disabled (inputs.failed_probes and
 * inputs.disabled_probes): checked, carried into the result and told in
 * its sentence and reasons, so that a crashed ctxsw is named where the
 * verdict is read instead of passing for "no figures were given".
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errbuf.h"
#include "failure.h"
#include "recommend.h"
#include "recommendp.h"
#include "xmalloc.h"

const char *const rec_probes[] = {"ctxsw", "map32", "threads", NULL};

int rec_inputs_needed(const char *probe)
{
	for (size_t i = 0; probe && rec_probes[i]; i++)
		if (!strcmp(probe, rec_probes[i]))
			return 1;
	return 0;
}

/* A number of a failure entry: absent or null is -1. */
static int entry_id(const json_t *e, const char *key, long long *out, const char *what, char *err,
                    size_t errlen)
{
	const json_t *v = json_object_get(e, key);

	*out = -1;
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_integer(v) || json_integer_value(v) < 0)
		return errbuf_set(err, errlen, -EINVAL, "%s.%s: must be a whole number >= 0", what,
		                  key);
	*out = json_integer_value(v);
	return 0;
}

/* One entry of inputs.failed_probes, rebuilt from its probe, kind, signal,
 * reason, run id and time. */
static int failed_entry(const json_t *e, size_t i, json_t *out, char *err, size_t errlen)
{
	const char *probe = json_string_value(json_object_get(e, "probe"));
	const char *reason = json_string_value(json_object_get(e, "reason"));
	long long run_id, t_ms;
	struct failure f;
	char what[64];

	snprintf(what, sizeof(what), "inputs.failed_probes[%zu]", i);
	if (!json_is_object(e))
		return errbuf_set(err, errlen, -EINVAL, "%s: must be an object", what);
	if (!rec_inputs_needed(probe))
		return errbuf_set(err, errlen, -EINVAL, "%s.probe: must be ctxsw, map32 or threads",
		                  what);
	if (!reason || !*reason)
		return errbuf_set(err, errlen, -EINVAL, "%s.reason: must be a non-empty string",
		                  what);
	if (entry_id(e, "run_id", &run_id, what, err, errlen) < 0 ||
	    entry_id(e, "t_ms", &t_ms, what, err, errlen) < 0 ||
	    failure_parse_json(e, &f, what, err, errlen) < 0)
		return -EINVAL;
	json_array_append_new(out, failure_json(probe, &f, reason, run_id, t_ms));
	return 0;
}

int rec_failed_parse(const json_t *inputs, struct rec_failed *f, char *err, size_t errlen)
{
	const json_t *failed = json_object_get(inputs, "failed_probes");
	const json_t *disabled = json_object_get(inputs, "disabled_probes"), *v;
	size_t i;

	f->failed = json_array();
	f->disabled = json_array();
	if (failed && !json_is_null(failed) && !json_is_array(failed))
		return errbuf_set(err, errlen, -EINVAL, "inputs.failed_probes: must be an array");
	if (disabled && !json_is_null(disabled) && !json_is_array(disabled))
		return errbuf_set(err, errlen, -EINVAL, "inputs.disabled_probes: must be an array");
	json_array_foreach(failed, i,
	                   v) if (failed_entry(v, i, f->failed, err, errlen) < 0) return -EINVAL;
	json_array_foreach(disabled, i, v)
	{
		if (!rec_inputs_needed(json_string_value(v)))
			return errbuf_set(
			    err, errlen, -EINVAL,
			    "inputs.disabled_probes[%zu]: must be ctxsw, map32 or threads", i);
		json_array_append_new(f->disabled, json_string(json_string_value(v)));
	}
	return 0;
}

void rec_failed_clear(struct rec_failed *f)
{
	json_decref(f->failed);
	json_decref(f->disabled);
	f->failed = f->disabled = NULL;
}

/* The failure entry of a probe, or NULL. */
static const json_t *failed_find(const struct rec_failed *f, const char *probe)
{
	const json_t *e;
	size_t i;

	json_array_foreach(
	    f->failed, i,
	    e) if (!strcmp(json_string_value(json_object_get(e, "probe")), probe)) return e;
	return NULL;
}

static int disabled_has(const struct rec_failed *f, const char *probe)
{
	const json_t *e;
	size_t i;

	json_array_foreach(f->disabled, i, e) if (!strcmp(json_string_value(e), probe)) return 1;
	return 0;
}

const char *rec_failed_why(const struct rec_failed *f, const char *probe, char *buf, size_t len)
{
	const json_t *e = failed_find(f, probe);

	if (disabled_has(f, probe))
		snprintf(buf, len, "%s is disabled in the configuration (probes_disabled)", probe);
	else if (e)
		snprintf(buf, len, "%s'%s last run failed: %s", probe,
		         probe[0] && probe[strlen(probe) - 1] == 's' ? "" : "s",
		         json_string_value(json_object_get(e, "reason")));
	else
		return NULL;
	return buf;
}

/* Adds "WHY; ..." at the front of the reasons and, in brackets, to the
 * sentence, for a probe the rule did not already name. */
static void tell(json_t *result, const char *why, int has_figures)
{
	json_t *reasons = json_object_get(result, "reasons");
	const char *sent = json_string_value(json_object_get(result, "sentence"));
	const char *tail = has_figures ? "its figures here are from its last ok run"
	                               : "the verdict goes without its figures";
	char *s;

	xasprintf(&s, "%s; %s.", why, tail);
	json_array_insert_new(reasons, 0, json_string(s));
	free(s);
	xasprintf(&s, "%s (%s; %s.)", sent ? sent : "", why, tail);
	json_object_set_new(result, "sentence", json_string(s));
	free(s);
}

void rec_failed_apply(const struct rec_failed *f, const json_t *inputs, json_t *result,
                      const char *named)
{
	char why[1024];

	json_object_set(result, "failed_probes", f->failed);
	json_object_set(result, "disabled_probes", f->disabled);
	for (int i = 0; rec_probes[i]; i++) {
		if (named && !strcmp(named, rec_probes[i]))
			continue;
		if (rec_failed_why(f, rec_probes[i], why, sizeof(why)))
			tell(result, why, json_object_get(inputs, rec_probes[i]) != NULL);
	}
}
