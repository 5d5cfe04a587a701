/*
 * detection: runs regression detection (lib/detect.h) over what the store
 * holds and records the events: per key figure (the catalogue's rows with
 * key set), the history since its last
 * event (but no more than the recent runs the judgement can look back at),
 * judged from the first run not judged before (the store's state remembers
 * where each metric stopped), with the runs taken under contention marked
 * (lib/contention.h), and the recommendations' verdicts.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "catalog.h"
#include "contention.h"
#include "detect.h"
#include "detection.h"
#include "log.h"
#include "stats.h"
#include "store.h"
#include "xmalloc.h"

/* The fingerprint rows and their identities, for the events' diffs. */
struct fp_table {
	json_t *host;
	struct detect_fp *fp;
	size_t n;
};

static int fp_table_load(struct store *st, struct fp_table *t)
{
	const json_t *h;
	size_t i;
	int r = store_read_host(st, &t->host);

	if (r == -ENOENT)
		return 0;
	if (r < 0)
		return r;
	t->fp = xcalloc(json_array_size(json_object_get(t->host, "history")) + 1, sizeof(*t->fp));
	json_array_foreach(json_object_get(t->host, "history"), i, h) t->fp[t->n++] =
	    (struct detect_fp){json_integer_value(json_object_get(h, "id")),
	                       json_object_get(h, "identity")};
	return 0;
}

static void fp_table_free(struct fp_table *t)
{
	free(t->fp);
	json_decref(t->host);
}

static int through_get(struct store *st, const char *metric, int64_t *id)
{
	char key[192], *v = NULL, *end;
	int r;

	snprintf(key, sizeof(key), "%s%s", DETECTION_STATE_PREFIX, metric);
	*id = 0;
	r = store_state_get(st, key, &v);
	if (r == -ENOENT)
		return 0;
	if (r < 0)
		return r;
	errno = 0;
	*id = strtoll(v, &end, 10);
	if (errno || end == v || *end || *id < 0)
		*id = 0; /* damaged: judge again; recording an event twice is refused */
	free(v);
	return 0;
}

static int through_set(struct store *st, const char *metric, int64_t id)
{
	char key[192], v[32];

	snprintf(key, sizeof(key), "%s%s", DETECTION_STATE_PREFIX, metric);
	snprintf(v, sizeof(v), "%" PRId64, id);
	return store_state_set(st, key, v);
}

/* Records the events; appends those that are new to found. */
static int record(struct store *st, int64_t now_ms, const struct detect_event *ev, size_t n,
                  json_t *found)
{
	int64_t id;
	int r = 0;

	for (size_t i = 0; i < n && r >= 0; i++) {
		json_t *j = detect_event_json(&ev[i]);

		r = store_event_insert(st, now_ms, j, &id);
		if (r >= 0 && id > 0) {
			json_object_set_new(j, "id", json_integer(id));
			json_object_set_new(j, "recorded_ms", json_integer(now_ms));
			json_array_append(found, j);
		}
		json_decref(j);
	}
	return r;
}

/* One value per run: a series' points near the figure's x (the store
 * gives them one by one) become their median, which evens out the noise
 * of single buckets; a run taken under contention (lib/contention.h, on
 * this host's ncpus) is marked. Returns the runs written to out. */
static size_t collapse(const struct store_point *sp, size_t n, long ncpus, struct detect_point *out)
{
	double *v = xcalloc(n, sizeof(*v));
	size_t m = 0;

	for (size_t i = 0, j; i < n; i = j) {
		for (j = i; j < n && sp[j].run_id == sp[i].run_id; j++)
			v[j - i] = sp[j].value;
		struct contention_reading cr = {sp[i].steal_pct, sp[i].loadavg1};

		out[m++] = (struct detect_point){sp[i].run_id, sp[i].t_ms, stats_median(v, j - i),
		                                 sp[i].fp_id, contention_of_run(&cr, ncpus)};
	}
	free(v);
	return m;
}

/* How many runs before the last one judged the next judgement may look
 * at, twice over: the k runs, a stretch since a fingerprint change too
 * short to judge, and the baseline (or the noise window) before it. */
static size_t reach(const struct detect_config *c)
{
	size_t back = c->baseline_runs > DETECT_NOISE_RUNS ? c->baseline_runs : DETECT_NOISE_RUNS;

	return 2 * ((size_t)c->k_sustained + detect_min_baseline(c) + back);
}

static int detect_figure(struct store *st, const struct detect_config *c,
                         const struct catalog_metric *f, const struct fp_table *fps, int64_t now_ms,
                         json_t *found)
{
	struct detect_series s = {.metric = f->name,
	                          .unit = f->unit,
	                          .abs_floor = f->abs_floor,
	                          .fps = fps->fp,
	                          .n_fps = fps->n};
	struct detect_event *ev = NULL;
	struct store_point *sp = NULL;
	struct detect_point *pts = NULL;
	int64_t from = 0, cut = 0;
	size_t n = 0, n_ev = 0;
	int r;

	r = through_get(st, f->name, &s.after_run_id);
	if (r >= 0)
		r = store_event_last_ref(st, f->name, &from);
	/* Runs judged before matter only as baselines of the new ones: read
	 * no further back than a judgement can look, twice over. */
	if (r >= 0 && s.after_run_id > 0)
		r = store_run_back(st, f->probe, s.after_run_id, reach(c), &cut);
	if (cut > from)
		from = cut;
	if (r >= 0)
		r = store_metric_history(st, f->probe, f->scalar, f->series, f->x,
		                         DETECT_X_TOLERANCE, from, &sp, &n);
	if (r < 0 || n == 0 || sp[n - 1].run_id <= s.after_run_id)
		goto out;
	pts = xcalloc(n, sizeof(*pts));
	s.pts = pts;
	s.n = collapse(sp, n, sysconf(_SC_NPROCESSORS_ONLN), pts);
	r = detect_scan(c, &s, &ev, &n_ev);
	if (r >= 0)
		r = record(st, now_ms, ev, n_ev, found);
	if (r >= 0)
		r = through_set(st, f->name, pts[s.n - 1].run_id);
out:
	detect_events_free(ev, n_ev);
	free(pts);
	free(sp);
	return r < 0 ? r : 0;
}

static int detect_verdicts(struct store *st, const struct fp_table *fps, int64_t now_ms,
                           json_t *found)
{
	struct detect_verdict *v = NULL;
	struct detect_event *ev = NULL;
	json_t *hist = NULL, *h;
	int64_t after = 0;
	size_t n = 0, n_ev = 0, i;
	int r;

	r = through_get(st, DETECT_VERDICT_METRIC, &after);
	if (r >= 0)
		r = store_verdict_history(st, after, &hist);
	if (r < 0 || json_array_size(hist) < 2)
		goto out;
	v = xcalloc(json_array_size(hist), sizeof(*v));
	json_array_foreach(hist, i, h) v[n++] = (struct detect_verdict){
	    .id = json_integer_value(json_object_get(h, "id")),
	    .t_ms = json_integer_value(json_object_get(h, "computed_ms")),
	    .verdict = json_string_value(json_object_get(h, "verdict")),
	    .confidence = json_string_value(json_object_get(h, "confidence")),
	    .fp_id = json_integer_value(json_object_get(h, "fingerprint_id")),
	};
	r = detect_flips(v, n, after, fps->fp, fps->n, &ev, &n_ev);
	if (r >= 0)
		r = record(st, now_ms, ev, n_ev, found);
	if (r >= 0)
		r = through_set(st, DETECT_VERDICT_METRIC, v[n - 1].id);
out:
	detect_events_free(ev, n_ev);
	free(v);
	json_decref(hist);
	return r < 0 ? r : 0;
}

static int by_change_time(const void *a, const void *b)
{
	json_int_t x = json_integer_value(json_object_get(*(json_t *const *)a, "t_ms"));
	json_int_t y = json_integer_value(json_object_get(*(json_t *const *)b, "t_ms"));

	return (x > y) - (x < y);
}

/* The found events, oldest change first. */
static void sort_found(json_t *found)
{
	size_t n = json_array_size(found);
	json_t **v = xcalloc(n + 1, sizeof(*v));

	for (size_t i = 0; i < n; i++)
		v[i] = json_incref(json_array_get(found, i));
	qsort(v, n, sizeof(*v), by_change_time);
	json_array_clear(found);
	for (size_t i = 0; i < n; i++)
		json_array_append_new(found, v[i]);
	free(v);
}

int detection_run(struct store *st, const struct detect_config *c, int64_t now_ms, json_t **found)
{
	struct fp_table fps = {0};
	json_t *all = json_array();
	int r;

	if (!all)
		abort();
	r = detect_config_check(c, NULL, 0);
	if (r >= 0)
		r = fp_table_load(st, &fps);
	for (size_t i = 0; r >= 0 && i < catalog_n_metrics; i++)
		if (catalog_metrics[i].key)
			r = detect_figure(st, c, &catalog_metrics[i], &fps, now_ms, all);
	if (r >= 0)
		r = detect_verdicts(st, &fps, now_ms, all);
	fp_table_free(&fps);
	sort_found(all);
	if (found)
		*found = all;
	else
		json_decref(all);
	return r;
}

/* "NAME=value" for a number member, or NULL when it is not a number. */
static char *num_field(const json_t *event, const char *key, const char *name, int digits)
{
	const json_t *j = json_object_get(event, key);
	char *f;

	if (!json_is_number(j))
		return NULL;
	xasprintf(&f, "%s=%.*g", name, digits, json_number_value(j));
	return f;
}

void detection_log(const json_t *event)
{
	const char *kind = json_string_value(json_object_get(event, "kind"));
	const char *metric = json_string_value(json_object_get(event, "metric"));
	const char *dot = metric ? strchr(metric, '.') : NULL;
	json_t *run = json_object_get(event, "run_id");
	const char *fields[9];
	char *f[8];
	size_t n = 0;

	xasprintf(&f[n++], "EVENT_KIND=%s", kind ? kind : "?");
	xasprintf(&f[n++], "METRIC=%s", metric ?: "?");
	/* A step names the probe of its figure and the first run after the
	 * change, like the probe's own log lines. */
	if (dot)
		xasprintf(&f[n++], "PROBE=%.*s", (int)(dot - metric), metric);
	if (json_is_integer(run))
		xasprintf(&f[n++], "RUN_ID=%" JSON_INTEGER_FORMAT, json_integer_value(run));
	xasprintf(&f[n++], "FINGERPRINT_DIFF=%s",
	          json_string_value(json_object_get(event, "fingerprint_diff")) ?: "");
	xasprintf(&f[n++], "EVENT_ID=%" JSON_INTEGER_FORMAT,
	          json_integer_value(json_object_get(event, "id")));
	if ((f[n] = num_field(event, "change_pct", "CHANGE_PCT", 4)))
		n++;
	if ((f[n] = num_field(event, "p_value", "P_VALUE", 3)))
		n++;
	for (size_t i = 0; i < n; i++)
		fields[i] = f[i];
	fields[n] = NULL;
	log_event(LOG_NOTICE,
	          kind && !strcmp(kind, "flip") ? DETECT_MESSAGE_ID_FLIP : DETECT_MESSAGE_ID_STEP,
	          fields, "%s",
	          json_string_value(json_object_get(event, "message")) ?: "a regression event");
	for (size_t i = 0; i < n; i++)
		free(f[i]);
}
