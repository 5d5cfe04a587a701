/*
 * api: the endpoints under /api/v1 (see api.h). Each handler checks its
 * parameters with the pure parsers in api_parse.c, asks the store, and
 * returns the JSON the OpenAPI document (web/openapi.json) describes.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "api.h"
#include "api_format.h"
#include "health.h"
#include "catalog.h"
#include "headroom.h"

/* The titles of the statuses the API answers with (RFC 9110). */
static const struct {
	unsigned status;
	const char *title;
} titles[] = {
    {400, "Bad Request"},         {401, "Unauthorized"},
    {403, "Forbidden"},           {404, "Not Found"},
    {405, "Method Not Allowed"},  {409, "Conflict"},
    {413, "Content Too Large"},   {414, "URI Too Long"},
    {429, "Too Many Requests"},   {500, "Internal Server Error"},
    {503, "Service Unavailable"},
};

const char *api_status_title(unsigned status)
{
	for (size_t i = 0; i < sizeof(titles) / sizeof(titles[0]); i++)
		if (titles[i].status == status)
			return titles[i].title;
	return status >= 500 ? "Server Error" : "Client Error";
}

json_t *api_error_body(const struct api_error *err)
{
	char msg[sizeof(err->message)];

	/* Messages quote what the client sent, which need not be UTF-8. */
	api_printable(msg, sizeof(msg), err->message);
	/* RFC 9457: "about:blank" says the status explains the problem, and
	 * the title is its phrase. "error" is an extension member that keeps
	 * the shape clients of threadwatch 0.1 read. */
	return json_pack("{s:s,s:s,s:i,s:s,s:{s:i,s:s}}", "type", "about:blank", "title",
	                 api_status_title(err->status), "status", (int)err->status, "detail", msg,
	                 "error", "status", (int)err->status, "message", msg);
}

unsigned api_store_error(struct api_error *err, int rc, const char *what)
{
	if (rc == -ENOENT)
		return api_fail(err, 404, "%s", what);
	snprintf(err->detail, sizeof(err->detail), "%s", store_last_error());
	return api_fail(err, 503, "store unavailable: %s", strerror(-rc));
}

static const char *const no_params[] = {NULL};

static unsigned simple(const struct api_target *t, int (*read)(struct store *, json_t **),
                       const struct api_ctx *ctx, json_t **body, struct api_error *err,
                       const char *none)
{
	int rc;

	if (api_check_params(t, no_params, err) < 0)
		return err->status;
	rc = read(ctx->st, body);
	return rc < 0 ? api_store_error(err, rc, none) : 200;
}

unsigned api_host(const struct api_ctx *ctx, const struct api_target *t, const char *arg,
                  json_t **body, struct api_error *err)
{
	unsigned status;

	(void)arg;
	status = simple(t, store_read_host, ctx, body, err, "no host fingerprint recorded yet");
	if (status == 200)
		api_format_host(*body);
	return status;
}

/* Seconds from now to ms, at least 0, at most an hour (a Retry-After). */
static unsigned secs_until(int64_t ms, int64_t now)
{
	int64_t s = ms > now ? (ms - now) / 1000 + 1 : 0;

	return s > 3600 ? 3600 : (unsigned)s;
}

/* A running cycle that waits for a quiet host before its probes: what it
 * waits for, the figure against the limit, and until when. */
static unsigned not_yet_quiet(struct api_error *err, const char *what, const struct health_wait *w,
                              int64_t now)
{
	char until[40];

	if (clock_rfc3339_ms(w->until_ms, until, sizeof(until)) < 0)
		snprintf(until, sizeof(until), "%lld ms", (long long)w->until_ms);
	err->retry_after_s = secs_until(w->until_ms, now);
	if (err->retry_after_s < 10)
		err->retry_after_s = 10;
	return api_fail(err, 503,
	                "%s; a cycle is waiting for a quiet host before its probes run: %s is "
	                "%.2f%s, above %.2f%s; it runs anyway at %s (in %u s), and this comes "
	                "at its end",
	                what, w->measure, w->value, w->unit, w->limit, w->unit, until,
	                secs_until(w->until_ms, now));
}

/* What is not there yet but will be: 503 with Retry-After, saying what it
 * waits for (a quiet host, the running cycle and its probe, or the next
 * cycle), so that a script tells "not yet" from a wrong URL (404). */
static unsigned api_not_yet(struct api_error *err, const char *said)
{
	struct health_cycle h;
	int64_t now = clock_wall_ms(), wait_ms;
	char what[sizeof(err->message)];

	snprintf(what, sizeof(what), "%s", said); /* said may be err->message */

	err->retry_after_s = 10;
	if (health_get_cycle(&h) < 0)
		return api_fail(err, 503, "%s; the scheduler has not started yet", what);
	if (h.running && h.wait.measure[0])
		return not_yet_quiet(err, what, &h.wait, now);
	if (h.running)
		return api_fail(err, 503,
		                "%s; a cycle is running (probe %s), and this comes at its end",
		                what, h.probe[0] ? h.probe : "none yet");
	wait_ms = h.next_cycle_ms - now;
	if (wait_ms > 0)
		err->retry_after_s = secs_until(h.next_cycle_ms, now);
	return api_fail(err, 503, "%s; the next cycle starts in %lld s", what,
	                (long long)(wait_ms > 0 ? wait_ms / 1000 + 1 : 0));
}

unsigned api_recommendation(const struct api_ctx *ctx, const struct api_target *t, const char *arg,
                            json_t **body, struct api_error *err)
{
	unsigned status;

	(void)arg;
	status =
	    simple(t, store_read_recommendation, ctx, body, err,
	           "not enough data yet: a recommendation is computed once a probe has answered");
	if (status == 404)
		return api_not_yet(err, err->message);
	if (status == 200)
		api_format_times(*body);
	return status;
}

/* The recorded headroom with each limit's ratio and the warnings. */
unsigned api_headroom(const struct api_ctx *ctx, const struct api_target *t, const char *arg,
                      json_t **body, struct api_error *err)
{
	json_t *limits, *warnings, *v;
	unsigned status;
	size_t i;

	(void)arg;
	status = simple(t, store_read_headroom, ctx, body, err, "no headroom recorded yet");
	if (status == 404)
		return api_not_yet(err, err->message);
	if (status != 200)
		return status;
	api_format_times(*body);
	limits = headroom_limits(json_object_get(*body, "headroom"));
	warnings = json_array();
	json_array_foreach(limits, i, v)
	{
		char msg[160];

		if (!json_is_true(json_object_get(v, "warning")))
			continue;
		snprintf(msg, sizeof(msg), "%s: %.0f of %.0f in use (%.1f%%)",
		         json_string_value(json_object_get(v, "name")),
		         json_number_value(json_object_get(v, "used")),
		         json_number_value(json_object_get(v, "limit")),
		         100 * json_number_value(json_object_get(v, "ratio")));
		json_array_append_new(
		    warnings,
		    json_pack("{s:O,s:s}", "limit", json_object_get(v, "name"), "message", msg));
	}
	json_object_set_new(*body, "limits", limits);
	json_object_set_new(*body, "warnings", warnings);
	/* once, at the top: the record's own lists are what they were made from */
	json_object_del(json_object_get(*body, "headroom"), "limits");
	json_object_del(json_object_get(*body, "headroom"), "warnings");
	return 200;
}

unsigned api_runs(const struct api_ctx *ctx, const struct api_target *t, const char *arg,
                  json_t **body, struct api_error *err)
{
	struct store_runs_query q;
	struct store_page page;
	int rc;

	(void)arg;
	if (api_parse_runs_query(t, clock_wall_ms(), &q, err) < 0)
		return err->status;
	rc = store_read_runs(ctx->st, &q, &page);
	if (rc < 0)
		return api_store_error(err, rc, "no runs");
	*body = api_format_runs(&page);
	return 200;
}

unsigned api_events(const struct api_ctx *ctx, const struct api_target *t, const char *arg,
                    json_t **body, struct api_error *err)
{
	struct store_events_query q;
	struct store_page page;
	int rc;

	(void)arg;
	if (api_parse_events_query(t, clock_wall_ms(), &q, err) < 0)
		return err->status;
	rc = store_read_events(ctx->st, &q, &page);
	if (rc < 0)
		return api_store_error(err, rc, "no events");
	*body = api_format_events(&page);
	return 200;
}

unsigned api_run(const struct api_ctx *ctx, const struct api_target *t, const char *arg,
                 json_t **body, struct api_error *err)
{
	int64_t id;
	int rc;

	if (api_parse_id(arg, &id) < 0)
		return api_fail(
		    err, 400, "path parameter 'id' must be a positive run id, not \"%.32s\"", arg);
	if (api_check_params(t, no_params, err) < 0)
		return err->status;
	rc = store_read_run(ctx->st, id, body);
	if (rc == -ENOENT)
		return api_fail(err, 404, "no run %lld", (long long)id);
	if (rc < 0)
		return api_store_error(err, rc, "");
	api_format_run(*body);
	return 200;
}

/* With no 'since' and an automatic step the range starts at the oldest
 * sample, so that "all history" is bucketed as finely as the data allows:
 * each read narrows the range to the start of the first bucket that holds a sample
 * (three reads take 20 years down to seconds). *out is the last read. */
static int series_narrowed(struct store *st, struct api_series_query *q, json_t **out)
{
	json_t *first;
	int64_t t;
	int rc;

	for (int pass = 0;; pass++) {
		rc = store_read_series(st, q->metric, q->since_ms, q->until_ms, q->step_ms, out);
		if (rc < 0 || pass == 3)
			return rc;
		first = json_array_get(json_object_get(*out, "points"), 0);
		if (!json_is_integer(json_object_get(first, "bucket_ms")))
			return 0;
		t = json_integer_value(json_object_get(first, "bucket_ms"));
		if (t <= q->since_ms || t >= q->until_ms)
			return 0;
		json_decref(*out);
		*out = NULL;
		q->since_ms = t;
		q->step_ms =
		    (q->until_ms - t + API_SERIES_AUTO_BUCKETS - 1) / API_SERIES_AUTO_BUCKETS;
		if (q->step_ms < 1000)
			q->step_ms = 1000;
	}
}

/* A metric with no point stored: a probe scalar the catalogue has is 200
 * with no points (as Prometheus answers an empty range), any other 404. */
static unsigned series_none_yet(const struct api_series_query *q, json_t **body,
                                struct api_error *err)
{
	const struct catalog_metric *d = catalog_metric_find(q->metric);

	if (!d || !d->scalar)
		return api_fail(err, 404, "no metric \"%s\" (see /api/v1/metrics)", q->metric);
	*body = json_pack("{s:s,s:s,s:I,s:I,s:I,s:[],s:[]}", "metric", d->name, "unit", d->unit,
	                  "since_ms", (json_int_t)q->since_ms, "until_ms", (json_int_t)q->until_ms,
	                  "step_ms", (json_int_t)q->step_ms, "points", "markers");
	return 200;
}

/* A /metrics family given as the metric (threadwatch_ctxsw_ratio): the 400
 * names the API's name for it, from the catalogue (the parser, which
 * links no catalogue, only says the form is wrong). */
static unsigned series_name_hint(const struct api_target *t, struct api_error *err)
{
	const char *m = api_param_get(t, "metric");
	const struct catalog_metric *d = m ? catalog_metric_find_prom(m) : NULL;

	if (d && strstr(err->message, "parameter 'metric' must look like"))
		api_fail(err, 400,
		         "parameter 'metric' takes the API's names (\"%s\" for %s%s%s%s; see "
		         "/api/v1/catalog)",
		         d->name, d->prom.name, d->prom.labels ? "{" : "",
		         d->prom.labels ? d->prom.labels : "",
		         d->prom.labels ? "}, one of several" : "");
	return err->status;
}

unsigned api_series(const struct api_ctx *ctx, const struct api_target *t, const char *arg,
                    json_t **body, struct api_error *err)
{
	struct api_series_query q;
	int rc;

	(void)arg;
	if (api_parse_series_query(t, clock_wall_ms(), &q, err) < 0)
		return series_name_hint(t, err);
	if (!q.since_given && q.step_auto)
		rc = series_narrowed(ctx->st, &q, body);
	else
		rc = store_read_series(ctx->st, q.metric, q.since_ms, q.until_ms, q.step_ms, body);
	if (rc == -ENOENT)
		return series_none_yet(&q, body, err);
	if (rc == -EINVAL)
		return api_fail(err, 400, "parameter 'step' does not fit the range");
	return rc < 0 ? api_store_error(err, rc, "") : 200;
}

static json_t *metric_entry(const char *name, const char *unit, int stored)
{
	const struct catalog_metric *d = catalog_metric_find(name);

	return json_pack("{s:s,s:s,s:s?,s:b}", "name", name, "unit",
	                 unit ? unit : (d ? d->unit : ""), "description", d ? d->description : NULL,
	                 "stored", stored);
}

unsigned api_metrics(const struct api_ctx *ctx, const struct api_target *t, const char *arg,
                     json_t **body, struct api_error *err)
{
	json_t *names = NULL, *list, *seen, *v;
	size_t i;
	int rc;

	(void)arg;
	if (api_check_params(t, no_params, err) < 0)
		return err->status;
	rc = store_read_metric_names(ctx->st, &names);
	if (rc < 0 && rc != -ENOENT)
		return api_store_error(err, rc, "");
	list = json_array();
	seen = json_object();
	json_array_foreach(names, i, v)
	{
		const char *name = json_string_value(json_object_get(v, "name"));

		if (!name || json_object_get(seen, name))
			continue;
		json_object_set_new(seen, name, json_true());
		json_array_append_new(
		    list, metric_entry(name, json_string_value(json_object_get(v, "unit")), 1));
	}
	/* Then the probe scalars no run has stored yet (series points are
	 * not stored metrics: /series cannot read them). */
	for (i = 0; i < catalog_n_metrics; i++)
		if (catalog_metrics[i].scalar && !json_object_get(seen, catalog_metrics[i].name))
			json_array_append_new(list, metric_entry(catalog_metrics[i].name, NULL, 0));
	json_decref(seen);
	json_decref(names);
	*body = json_pack("{s:o}", "metrics", list);
	return 200;
}

/* GET /api/v1/catalog: what the dashboard labels its figures with. */
unsigned api_catalog(const struct api_ctx *ctx, const struct api_target *t, const char *arg,
                     json_t **body, struct api_error *err)
{
	(void)ctx;
	(void)arg;
	if (api_check_params(t, no_params, err) < 0)
		return err->status;
	*body = catalog_json();
	return 200;
}

/* The scheduler state /status publishes (daemon/scheduler.c writes it as
 * text): how each value reads. */
enum state_kind { STATE_MS, STATE_FLAG, STATE_TEXT, STATE_COUNT };
static const struct {
	const char *key;
	enum state_kind kind;
} status_keys[] = {
    {"last_cycle_ms", STATE_MS},       {"next_cycle_ms", STATE_MS},
    {"cycle_running", STATE_FLAG},     {"trigger_enabled", STATE_FLAG},
    {"last_cycle_status", STATE_TEXT}, {"current_probe", STATE_TEXT},
    {"next_cycle_retry", STATE_COUNT},
};

/* A state value as JSON: a time (0 or absent: null), a flag (absent: null),
 * a text (empty or absent: null) or a count (absent: null). */
static json_t *state_value(struct store *st, const char *key, enum state_kind kind, int *rc)
{
	char *v = NULL, *end;
	long long n = 0;
	json_t *out = json_null();

	*rc = store_state_get(st, key, &v);
	if (*rc == -ENOENT)
		*rc = 0;
	if (!v)
		return out;
	if (kind != STATE_TEXT)
		n = strtoll(v, &end, 10);
	if (kind == STATE_TEXT && v[0])
		out = json_string(v);
	else if (kind == STATE_FLAG && (!strcmp(v, "true") || !strcmp(v, "false")))
		out = json_boolean(v[0] == 't');
	else if (kind != STATE_TEXT && end != v && !*end &&
	         (kind == STATE_FLAG || n > 0 || (kind == STATE_COUNT && n == 0)))
		out = kind == STATE_FLAG ? json_boolean(n != 0) : json_integer(n);
	free(v);
	return out;
}

/* The scheduler's status in memory wins over what the store last took (a
 * store that stopped taking writes would freeze it), and the store's own
 * failure is said: store_error, null while it works. */
static void overlay_health(json_t *body)
{
	struct health_cycle h;
	char why[512];

	if (health_get_cycle(&h) == 0) {
		json_object_set_new(body, "cycle_running", json_boolean(h.running));
		json_object_set_new(body, "last_cycle_status",
		                    h.last_status != CYCLE_NONE
		                        ? json_string(cycle_status_name(h.last_status))
		                        : json_null());
		json_object_set_new(body, "last_cycle_ms",
		                    h.last_cycle_ms > 0 ? json_integer(h.last_cycle_ms)
		                                        : json_null());
		json_object_set_new(body, "next_cycle_ms",
		                    h.next_cycle_ms > 0 ? json_integer(h.next_cycle_ms)
		                                        : json_null());
		json_object_set_new(body, "current_probe",
		                    h.probe[0] ? json_string(h.probe) : json_null());
		json_object_set_new(body, "next_cycle_retry", json_integer(h.retry));
		json_object_set_new(body, "waiting_for_quiet_host",
		                    h.wait.measure[0]
		                        ? json_pack("{s:s,s:f,s:f,s:s,s:I}", "measure",
		                                    h.wait.measure, "value", h.wait.value, "limit",
		                                    h.wait.limit, "unit", h.wait.unit, "until_ms",
		                                    (json_int_t)h.wait.until_ms)
		                        : json_null());
	}
	json_object_set_new(body, "store_error",
	                    health_store_error(why, sizeof(why)) < 0 ? json_string(why)
	                                                             : json_null());
}

unsigned api_status(const struct api_ctx *ctx, const struct api_target *t, const char *arg,
                    json_t **body, struct api_error *err)
{
	json_t *snap = NULL, *cycle, *v;
	int64_t wl_ms = 0;
	int rc = 0;

	(void)arg;
	if (api_check_params(t, no_params, err) < 0)
		return err->status;
	*body =
	    json_pack("{s:s,s:I}", "version", TW_VERSION, "now_ms", (json_int_t)clock_wall_ms());
	for (size_t i = 0; i < sizeof(status_keys) / sizeof(status_keys[0]) && rc == 0; i++)
		json_object_set_new(
		    *body, status_keys[i].key,
		    state_value(ctx->st, status_keys[i].key, status_keys[i].kind, &rc));
	if (rc == 0)
		rc = store_read_snapshot(ctx->st, &snap);
	if (rc == 0)
		rc = store_workloads_latest_ms(ctx->st, &wl_ms);
	if (rc < 0) {
		json_decref(*body);
		*body = NULL;
		return api_store_error(err, rc, "");
	}
	cycle = json_object_get(snap, "last_cycle");
	json_object_set(*body, "last_cycle", cycle ? cycle : json_null());
	/* Before the scheduler publishes anything, the store still knows. */
	v = json_object_get(cycle, "ended_ms");
	if (json_is_null(json_object_get(*body, "last_cycle_ms")) && json_is_integer(v))
		json_object_set(*body, "last_cycle_ms", v);
	v = json_object_get(cycle, "status");
	if (json_is_null(json_object_get(*body, "last_cycle_status")) && json_is_string(v))
		json_object_set(*body, "last_cycle_status", v);
	if (!json_is_boolean(json_object_get(*body, "cycle_running")))
		json_object_set_new(*body, "cycle_running", json_false());
	if (!json_is_boolean(json_object_get(*body, "trigger_enabled")))
		json_object_set_new(*body, "trigger_enabled",
		                    json_boolean(ctx->trigger_configured));
	/* the page asks /workloads only once there is a window */
	json_object_set_new(*body, "workloads_window_end_ms",
	                    wl_ms > 0 ? json_integer(wl_ms) : json_null());
	json_decref(snap);
	overlay_health(*body);
	return 200;
}
