/*
 * store_read: the read model (daemon/store.h, store_read_*()): the host,
 * recommendation, runs, one run, series, metric names, headroom, events
 * and the /metrics snapshot as rows of JSON values (times as Unix ms), each
 * from one read transaction, plus the latest documents the scheduler
 * starts from. The API's bodies are made of them by daemon/api_format.c.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "jnum.h"
#include "catalog.h"
#include "storep.h"
#include "xmalloc.h"

/* ---- JSON of columns and values ------------------------------------------- */

json_t *sq_jnum_checked(double d)
{
	return sq_jcheck(jnum(d));
}

/* Sets o[key] = v, stealing v; a key that is not UTF-8 is cleaned first. */
void sq_jset(json_t *o, const char *key, json_t *v)
{
	json_t *k;

	if (json_object_set(o, key, v) < 0) {
		k = sq_jtext(key);
		if (json_object_set(o, json_string_value(k), v) < 0)
			sq_jcheck(NULL);
		json_decref(k);
	}
	json_decref(v);
}

static json_t *sq_col_int_json(sqlite3_stmt *s, int i)
{
	return sq_col_null(s, i) ? json_null() : sq_jint(sqlite3_column_int64(s, i));
}

json_t *sq_col_real_json(sqlite3_stmt *s, int i)
{
	return sq_col_null(s, i) ? json_null() : sq_jnum_checked(sqlite3_column_double(s, i));
}

static json_t *sq_col_text_json(sqlite3_stmt *s, int i)
{
	const void *p = sqlite3_column_blob(s, i);

	return p ? sq_jtextn(p, (size_t)sqlite3_column_bytes(s, i)) : json_null();
}

/* ---- reads ---------------------------------------------------------------------- */

static int latest_docs_tx(struct store *st, void *ctx)
{
	struct read_args *c = ctx;
	sqlite3_stmt *s = NULL;
	json_t *doc;
	int r = sq_get(st, Q_LATEST_OK, NULL, 0, &s);

	c->out = sq_jcheck(json_object());
	c->out2 = sq_jcheck(json_object());
	while (r >= 0 && (r = sq_step(st, s, "reading the latest documents")) > 0) {
		r = sq_col_json(s, 2, "a run's document", &doc);
		if (r < 0)
			break;
		sq_jset(c->out, sq_col_text(s, 0), doc);
		sq_jset(c->out2, sq_col_text(s, 0), sq_jint(sqlite3_column_int64(s, 1)));
	}
	return r;
}

int store_latest_docs(struct store *st, json_t **docs, json_t **run_ids)
{
	struct read_args c = {0};

	return sq_read_call(st, latest_docs_tx, &c, docs, run_ids);
}

static int latest_failures_tx(struct store *st, void *ctx)
{
	struct read_args *c = ctx;
	sqlite3_stmt *s = NULL;
	struct failure f;
	int r = sq_get(st, Q_LATEST_FAILED, NULL, 0, &s);

	c->out = sq_jcheck(json_object());
	while (r >= 0 && (r = sq_step(st, s, "reading the latest failed runs")) > 0) {
		json_t *o = sq_jcheck(json_object());

		sq_jset(o, "run_id", sq_jint(sqlite3_column_int64(s, 1)));
		sq_jset(o, "t_ms", sq_jint(sqlite3_column_int64(s, 2)));
		sq_jset(o, "reason", sq_col_text_json(s, 3));
		failure_set(&f,
		            (enum failure_kind)(failure_kind_parse(sq_col_text(s, 4)) < 0
		                                    ? FAILURE_ERROR
		                                    : failure_kind_parse(sq_col_text(s, 4))),
		            sqlite3_column_int(s, 5));
		sq_jset(o, "kind", sq_jtext(failure_kind_names[f.kind]));
		sq_jset(o, "signal", f.signal[0] ? sq_jtext(f.signal) : json_null());
		sq_jset(c->out, sq_col_text(s, 0), o);
	}
	return r;
}

int store_latest_failures(struct store *st, json_t **out)
{
	struct read_args c = {0};

	return sq_read_call(st, latest_failures_tx, &c, out, NULL);
}

static int host_tx(struct store *st, void *ctx)
{
	struct read_args *c = ctx;
	json_t *history = sq_jcheck(json_array()), *o, *j;
	sqlite3_stmt *s = NULL;
	int r = sq_get(st, Q_FP_ALL, NULL, 0, &s);

	c->out = sq_jcheck(json_object());
	sq_jset(c->out, "history", history);
	while (r >= 0 && (r = sq_step(st, s, "reading the fingerprints")) > 0) {
		o = sq_jcheck(json_object());
		sq_jset(o, "id", sq_jint(sqlite3_column_int64(s, 0)));
		sq_jset(o, "first_seen_ms", sq_jint(sqlite3_column_int64(s, 1)));
		sq_jset(o, "last_seen_ms", sq_jint(sqlite3_column_int64(s, 2)));
		if (!json_object_get(c->out, "current")) {
			r = sq_col_json(s, 4, "the fingerprint", &j);
			if (r < 0) {
				json_decref(o);
				break;
			}
			json_t *cur = sq_jcheck(json_deep_copy(o));
			sq_jset(cur, "fingerprint", j);
			sq_jset(c->out, "current", cur);
		}
		sq_jset(o, "diff", sq_col_text_json(s, 5));
		r = sq_col_json(s, 3, "a fingerprint identity", &j);
		if (r < 0) {
			json_decref(o);
			break;
		}
		sq_jset(o, "identity", j);
		json_array_append_new(history, o);
	}
	if (r >= 0 && json_array_size(history) == 0)
		r = sq_seterr(-ENOENT, "no host fingerprint has been recorded yet");
	return r;
}

int store_read_host(struct store *st, json_t **out)
{
	struct read_args c = {0};

	return sq_read_call(st, host_tx, &c, out, NULL);
}

static int rec_tx(struct store *st, void *ctx)
{
	struct read_args *c = ctx;
	json_t *runs, *inputs;
	sqlite3_stmt *s = NULL;
	int64_t id;
	int r = sq_get(st, Q_REC_LATEST, NULL, 0, &s);

	if (r >= 0 && (r = sq_step(st, s, "reading the recommendation")) == 0)
		r = sq_seterr(-ENOENT, "no recommendation has been computed yet");
	if (r < 0)
		return r;
	id = sqlite3_column_int64(s, 0);
	r = sq_col_json(s, 2, "the recommendation", &c->out);
	if (r < 0)
		return r;
	if (!json_is_object(c->out))
		return sq_seterr(-EBADMSG, "the stored recommendation is not an object");
	r = sq_col_json(s, 3, "the recommendation's inputs", &inputs);
	if (r < 0)
		return r;
	sq_jset(c->out, "inputs", inputs);
	sq_jset(c->out, "id", sq_jint(id));
	sq_jset(c->out, "computed_ms", sq_jint(sqlite3_column_int64(s, 1)));
	runs = sq_jcheck(json_array());
	sq_jset(c->out, "run_ids", runs);
	const struct bind b[] = {B_INT(":id", id)};
	r = sq_get(st, Q_REC_RUNS, b, SQ_LEN(b), &s);
	while (r >= 0 && (r = sq_step(st, s, "reading the recommendation's runs")) > 0)
		json_array_append_new(runs, sq_jint(sqlite3_column_int64(s, 0)));
	return r;
}

int store_read_recommendation(struct store *st, json_t **out)
{
	struct read_args c = {0};

	return sq_read_call(st, rec_tx, &c, out, NULL);
}

/* The scalar shown next to each run in listings (the catalogue's). */
static const char *key_figure(const char *probe)
{
	const struct catalog_probe *p = catalog_probe_find(probe);

	return p ? p->key_scalar : NULL;
}

/* A failed run's kind and a crash's signal name (null for other runs),
 * from columns 7 and 8 of RUN_COLS. */
static void run_failure(json_t *o, sqlite3_stmt *row)
{
	int kind = failure_kind_parse(sq_col_text(row, 7));
	struct failure f;

	if (kind < 0) {
		sq_jset(o, "failure", json_null());
		sq_jset(o, "signal", json_null());
		return;
	}
	failure_set(&f, (enum failure_kind)kind, sqlite3_column_int(row, 8));
	sq_jset(o, "failure", sq_jtext(failure_kind_names[f.kind]));
	sq_jset(o, "signal", f.signal[0] ? sq_jtext(f.signal) : json_null());
}

/* One run from a row of RUN_COLS, with its key figure's value and unit. */
static int run_brief(struct store *st, sqlite3_stmt *row, json_t **out)
{
	const char *probe = sq_col_text(row, 1), *key = key_figure(probe);
	const int64_t id = sqlite3_column_int64(row, 0), t0 = sqlite3_column_int64(row, 5);
	json_t *o = sq_jcheck(json_object());
	int r = 0;

	sq_jset(o, "id", sq_jint(id));
	sq_jset(o, "probe", sq_jtext(probe));
	sq_jset(o, "status", sq_jtext(sq_col_text(row, 2)));
	sq_jset(o, "reason", sq_col_text_json(row, 3));
	sq_jset(o, "cycle_id", sq_col_int_json(row, 4));
	sq_jset(o, "started_ms", sq_jint(t0));
	sq_jset(o, "ended_ms", sq_jint(sqlite3_column_int64(row, 6)));
	run_failure(o, row);
	if (key) {
		char *metric;
		sqlite3_stmt *s = NULL;

		xasprintf(&metric, "%s.%s", probe, key);
		const struct bind b[] = {B_INT(":t", t0), B_INT(":run_id", id),
		                         B_TEXT(":metric", metric)};
		r = sq_get(st, Q_RUN_KEY, b, SQ_LEN(b), &s);
		if (r >= 0 && (r = sq_step(st, s, "reading a key figure")) > 0) {
			sq_jset(o, "key_metric", sq_jtext(metric));
			sq_jset(o, "key_value", sq_col_real_json(s, 0));
			sq_jset(o, "key_unit", sq_jtext(sq_col_text(s, 1)));
		}
		sqlite3_reset(s);
		free(metric);
	}
	*out = o;
	return r < 0 ? r : 0;
}

/* The listing whose index fits the filters best. */
static enum query runs_page_query(const struct store_runs_query *q)
{
	if (q->probe)
		return Q_RUNS_PAGE_PROBE;
	return q->status ? Q_RUNS_PAGE_STATUS : Q_RUNS_PAGE;
}

static int runs_tx(struct store *st, void *ctx)
{
	struct read_args *c = ctx;
	const struct store_runs_query *q = c->in;
	json_t *run;
	sqlite3_stmt *s = NULL;
	int64_t last = 0, n = 0;
	const struct bind b[] = {
	    B_TEXT(":probe", q->probe),
	    B_TEXT(":status", q->status),
	    B_INT(":cursor", q->cursor > 0 ? q->cursor : INT64_MAX),
	    B_INT(":since", q->since_ms ? q->since_ms : INT64_MIN),
	    B_INT(":until", q->until_ms ? q->until_ms : INT64_MAX),
	    B_INT(":limit", q->limit + 1), /* one more tells whether a next page exists */
	};
	int r = sq_get(st, runs_page_query(q), b, SQ_LEN(b), &s);

	c->out = sq_jcheck(json_array());
	while (r >= 0 && (r = sq_step(st, s, "listing runs")) > 0) {
		if (++n > q->limit)
			break;
		r = run_brief(st, s, &run);
		json_array_append_new(c->out, run);
		last = sqlite3_column_int64(s, 0);
	}
	c->page->more = n > q->limit;
	c->page->last_id = last;
	return r < 0 ? r : 0;
}

int store_read_runs(struct store *st, const struct store_runs_query *q, struct store_page *page)
{
	struct read_args c = {.in = q, .page = page};

	*page = (struct store_page){.total = -1};
	if (q->limit < 1 || q->limit > 500) {
		sq_clearerr();
		return sq_seterr(-EINVAL, "limit %d is not within 1..500", q->limit);
	}
	return sq_read_call(st, runs_tx, &c, &page->rows, NULL);
}

/* The series of one run: {name: {x_unit, y_unit, points}}. */
static int run_points(struct store *st, int64_t id, json_t *series)
{
	const struct bind b[] = {B_INT(":id", id)};
	json_t *cur = NULL, *points = NULL;
	sqlite3_stmt *s = NULL;
	int r = sq_get(st, Q_RUN_POINTS, b, SQ_LEN(b), &s);

	while (r >= 0 && (r = sq_step(st, s, "reading a run's points")) > 0) {
		const char *name = sq_col_text(s, 0);

		if (!cur || strcmp(name, json_string_value(json_object_get(cur, "name")))) {
			if (cur)
				json_object_del(cur, "name");
			cur = sq_jcheck(json_object());
			points = sq_jcheck(json_array());
			sq_jset(cur, "name", sq_jtext(name));
			sq_jset(cur, "x_unit", sq_jtext(sq_col_text(s, 1)));
			sq_jset(cur, "y_unit", sq_jtext(sq_col_text(s, 2)));
			sq_jset(cur, "points", points);
			sq_jset(series, name, cur);
		}
		if (!sq_col_null(s, 3))
			json_array_append_new(points,
			                      sq_jcheck(json_pack("[oo]", sq_col_real_json(s, 3),
			                                          sq_col_real_json(s, 4))));
	}
	if (cur)
		json_object_del(cur, "name");
	return r;
}

static int run_tx(struct store *st, void *ctx)
{
	struct read_args *c = ctx;
	const int64_t id = *(const int64_t *)c->in;
	const struct bind b[] = {B_INT(":id", id)};
	json_t *samples, *series, *j;
	sqlite3_stmt *s = NULL;
	int r = sq_get(st, Q_RUN_GET, b, SQ_LEN(b), &s);

	if (r >= 0 && (r = sq_step(st, s, "reading a run")) == 0)
		r = sq_seterr(-ENOENT, "there is no run %" PRId64, id);
	if (r >= 0)
		r = run_brief(st, s, &c->out);
	if (r >= 0)
		r = sq_col_json(s, STORE_RUN_NCOLS, "the run's params", &j);
	if (r < 0)
		return r;
	sq_jset(c->out, "params", j);
	r = sq_col_json(s, STORE_RUN_NCOLS + 1, "the run's document", &j);
	if (r < 0)
		return r;
	sq_jset(c->out, "doc", j);
	sq_jset(c->out, "raw", sq_col_text_json(s, STORE_RUN_NCOLS + 2));
	sq_jset(c->out, "loadavg1", sq_col_real_json(s, STORE_RUN_NCOLS + 3));
	sq_jset(c->out, "steal_pct", sq_col_real_json(s, STORE_RUN_NCOLS + 4));
	sq_jset(c->out, "cpu_s", sq_col_real_json(s, STORE_RUN_NCOLS + 5));
	sq_jset(c->out, "pruned_ms", sq_col_int_json(s, STORE_RUN_NCOLS + 6));
	sqlite3_reset(s);
	samples = sq_jcheck(json_array());
	sq_jset(c->out, "samples", samples);
	r = sq_get(st, Q_RUN_SAMPLES, b, SQ_LEN(b), &s);
	while (r >= 0 && (r = sq_step(st, s, "reading a run's samples")) > 0)
		json_array_append_new(
		    samples, sq_jcheck(json_pack(
		                 "{s:o, s:o, s:o}", "metric", sq_jtext(sq_col_text(s, 0)), "value",
		                 sq_col_real_json(s, 1), "unit", sq_jtext(sq_col_text(s, 2)))));
	if (r < 0)
		return r;
	series = sq_jcheck(json_object());
	sq_jset(c->out, "series", series);
	return run_points(st, id, series);
}

int store_read_run(struct store *st, int64_t id, json_t **out)
{
	struct read_args c = {.in = &id};

	return sq_read_call(st, run_tx, &c, out, NULL);
}

struct series_query {
	const char *metric;
	int64_t since, until, step;
};

/* The most buckets read with one range aggregate each; beyond that (most
 * buckets empty) grouping is cheaper. */
#define SERIES_SEEK_MAX 20000

/* A bucket is stamped with its newest sample's time (t), so that a run is
 * drawn when it ran, and names where it starts (bucket_ms) and how wide it
 * is (step_ms of the answer). */
static json_t *series_point(int64_t t, int64_t start, json_t *min, json_t *avg, json_t *max,
                            int64_t n)
{
	return sq_jcheck(json_pack("{s:o, s:o, s:o, s:o, s:o, s:o}", "t", sq_jint(t), "bucket_ms",
	                           sq_jint(start), "min", min, "avg", avg, "max", max, "n",
	                           sq_jint(n)));
}

static double jarray_num(const json_t *a, size_t i)
{
	return json_number_value(json_array_get(a, i));
}

/* Buckets by one range aggregate each (rows: i, [min, avg, max, n, newest t]). */
static int series_seek(struct store *st, const struct series_query *q, int64_t metric_id,
                       int64_t buckets, json_t *points)
{
	const int64_t range = q->until - q->since;
	const struct bind b[] = {
	    B_INT(":metric_id", metric_id), B_INT(":since", q->since),
	    B_INT(":until", q->until),      B_INT(":step", q->step < range ? q->step : range),
	    B_INT(":buckets", buckets),
	};
	sqlite3_stmt *s = NULL;
	json_error_t jerr;
	int r = sq_get(st, Q_SERIES_SEEK, b, SQ_LEN(b), &s);

	while (r >= 0 && (r = sq_step(st, s, "reading the series")) > 0) {
		json_t *a = json_loads(sq_col_text(s, 1), 0, &jerr);
		int64_t n = json_integer_value(json_array_get(a, 3));

		if (!json_is_array(a) || json_array_size(a) != 5) {
			json_decref(a);
			return sq_seterr(-EIO, "a series bucket came back as \"%s\"",
			                 sq_col_text(s, 1));
		}
		if (n > 0)
			json_array_append_new(
			    points, series_point(json_integer_value(json_array_get(a, 4)),
			                         q->since + sqlite3_column_int64(s, 0) * q->step,
			                         sq_jnum_checked(jarray_num(a, 0)),
			                         sq_jnum_checked(jarray_num(a, 1)),
			                         sq_jnum_checked(jarray_num(a, 2)), n));
		json_decref(a);
	}
	return r;
}

/* Buckets by grouping on (t - since) / step. */
static int series_group(struct store *st, const struct series_query *q, int64_t metric_id,
                        json_t *points)
{
	const struct bind b[] = {B_INT(":metric_id", metric_id), B_INT(":since", q->since),
	                         B_INT(":until", q->until), B_INT(":step", q->step)};
	sqlite3_stmt *s = NULL;
	int r = sq_get(st, Q_SERIES_GROUP, b, SQ_LEN(b), &s);

	while (r >= 0 && (r = sq_step(st, s, "reading the series")) > 0)
		json_array_append_new(
		    points, series_point(sqlite3_column_int64(s, 5),
		                         q->since + sqlite3_column_int64(s, 0) * q->step,
		                         sq_col_real_json(s, 1), sq_col_real_json(s, 2),
		                         sq_col_real_json(s, 3), sqlite3_column_int64(s, 4)));
	return r;
}

static int series_tx(struct store *st, void *ctx)
{
	struct read_args *c = ctx;
	const struct series_query *q = c->in;
	const int64_t range = q->until - q->since;
	const int64_t buckets = range / q->step + (range % q->step != 0);
	const struct bind m[] = {B_TEXT(":name", q->metric)};
	const struct bind b[] = {B_INT(":since", q->since), B_INT(":until", q->until)};
	json_t *points, *markers;
	sqlite3_stmt *s = NULL;
	int64_t mid = 0;
	int r = sq_get(st, Q_METRIC_GET, m, SQ_LEN(m), &s);

	if (r >= 0 && (r = sq_step(st, s, "finding the metric")) == 0)
		r = sq_seterr(-ENOENT, "no metric named \"%s\" has been recorded", q->metric);
	if (r < 0)
		return r;
	mid = sqlite3_column_int64(s, 0);
	c->out = sq_jcheck(json_object());
	sq_jset(c->out, "metric", sq_jtext(q->metric));
	sq_jset(c->out, "unit", sq_jtext(sq_col_text(s, 1)));
	sq_jset(c->out, "since_ms", sq_jint(q->since));
	sq_jset(c->out, "until_ms", sq_jint(q->until));
	sq_jset(c->out, "step_ms", sq_jint(q->step));
	points = sq_jcheck(json_array());
	markers = sq_jcheck(json_array());
	sq_jset(c->out, "points", points);
	sq_jset(c->out, "markers", markers);
	if (buckets <= SERIES_SEEK_MAX)
		r = series_seek(st, q, mid, buckets, points);
	else
		r = series_group(st, q, mid, points);
	if (r < 0)
		return r;
	r = sq_get(st, Q_MARKERS, b, SQ_LEN(b), &s);
	while (r >= 0 && (r = sq_step(st, s, "reading the host changes")) > 0)
		json_array_append_new(
		    markers,
		    sq_jcheck(json_pack("{s:o, s:o}", "t", sq_jint(sqlite3_column_int64(s, 0)),
		                        "diff", sq_col_text_json(s, 1))));
	return r;
}

int store_read_series(struct store *st, const char *metric, int64_t since_ms, int64_t until_ms,
                      int64_t step_ms, json_t **out)
{
	struct series_query q = {metric, since_ms, until_ms, step_ms};
	struct read_args c = {.in = &q};

	*out = NULL;
	sq_clearerr();
	if (!metric)
		return sq_seterr(-EINVAL, "no metric given");
	/* Non-negative times keep (t - since) / step an exact integer. */
	if (since_ms < 0 || until_ms <= since_ms)
		return sq_seterr(-EINVAL,
		                 "the range %" PRId64 "..%" PRId64 " ms is empty or negative",
		                 since_ms, until_ms);
	if (step_ms <= 0)
		return sq_seterr(-EINVAL, "the step %" PRId64 " ms is not positive", step_ms);
	return sq_read_call(st, series_tx, &c, out, NULL);
}

static int metric_names_tx(struct store *st, void *ctx)
{
	struct read_args *c = ctx;
	sqlite3_stmt *s = NULL;
	int r = sq_get(st, Q_METRIC_NAMES, NULL, 0, &s);

	c->out = sq_jcheck(json_array());
	while (r >= 0 && (r = sq_step(st, s, "reading the metric names")) > 0)
		json_array_append_new(
		    c->out, sq_jcheck(json_pack("{s:o, s:o}", "name", sq_jtext(sq_col_text(s, 0)),
		                                "unit", sq_jtext(sq_col_text(s, 1)))));
	return r;
}

int store_read_metric_names(struct store *st, json_t **out)
{
	struct read_args c = {0};

	return sq_read_call(st, metric_names_tx, &c, out, NULL);
}

/* {"computed_ms", "headroom"} of the latest record, or NULL (-ENOENT). */
static int headroom_latest(struct store *st, json_t **out)
{
	sqlite3_stmt *s = NULL;
	json_t *data;
	int r = sq_get(st, Q_HEADROOM_LATEST, NULL, 0, &s);

	*out = NULL;
	if (r >= 0 && (r = sq_step(st, s, "reading the headroom")) == 0)
		return sq_seterr(-ENOENT, "no headroom has been recorded yet");
	if (r >= 0)
		r = sq_col_json(s, 1, "the headroom", &data);
	if (r < 0)
		return r;
	*out = sq_jcheck(json_object());
	sq_jset(*out, "computed_ms", sq_jint(sqlite3_column_int64(s, 0)));
	sq_jset(*out, "headroom", data);
	return 0;
}

static int headroom_read_tx(struct store *st, void *ctx)
{
	struct read_args *c = ctx;

	return headroom_latest(st, &c->out);
}

int store_read_headroom(struct store *st, json_t **out)
{
	struct read_args c = {0};

	return sq_read_call(st, headroom_read_tx, &c, out, NULL);
}

/* ---- the /metrics snapshot ---------------------------------------------------- */

/* status, started_ms and duration of run `id` into o under prefix_*. */
static int snap_run(struct store *st, int64_t id, json_t *o, int ok)
{
	const struct bind b[] = {B_INT(":id", id)};
	sqlite3_stmt *s = NULL;
	int r = sq_get(st, Q_RUN_TIMES, b, SQ_LEN(b), &s);

	if (r >= 0 && (r = sq_step(st, s, "reading a run")) > 0) {
		int64_t t0 = sqlite3_column_int64(s, 1), t1 = sqlite3_column_int64(s, 2);

		if (ok) {
			sq_jset(o, "last_ok_run_id", sq_jint(id));
			sq_jset(o, "last_ok_ms", sq_jint(t0));
		} else {
			sq_jset(o, "last_run_id", sq_jint(id));
			sq_jset(o, "last_run_ms", sq_jint(t0));
			sq_jset(o, "last_status", sq_jtext(sq_col_text(s, 0)));
			sq_jset(o, "last_duration_s",
			        sq_jnum_checked(t1 > t0 ? (double)(t1 - t0) / 1e3 : 0));
		}
	}
	sqlite3_reset(s);
	return r < 0 ? r : 0;
}

/* The scalars of run `id` as {scalar: {value, unit}} (names without the
 * "probe." prefix). */
static int snap_scalars(struct store *st, const char *probe, int64_t id, json_t *scalars)
{
	const struct bind b[] = {B_INT(":id", id)};
	const size_t plen = strlen(probe);
	sqlite3_stmt *s = NULL;
	int r = sq_get(st, Q_RUN_SAMPLES, b, SQ_LEN(b), &s);

	while (r >= 0 && (r = sq_step(st, s, "reading a run's samples")) > 0) {
		const char *name = sq_col_text(s, 0);

		if (strlen(name) > plen + 1 && !strncmp(name, probe, plen) && name[plen] == '.')
			name += plen + 1;
		sq_jset(scalars, name,
		        sq_jcheck(json_pack("{s:o, s:o}", "value", sq_col_real_json(s, 1), "unit",
		                            sq_jtext(sq_col_text(s, 2)))));
	}
	sqlite3_reset(s);
	return r;
}

static int snap_probes(struct store *st, json_t *probes)
{
	sqlite3_stmt *s = NULL;
	int r = sq_get(st, Q_SNAP_PROBES, NULL, 0, &s);

	while (r >= 0 && (r = sq_step(st, s, "reading the probes")) > 0) {
		const char *probe = sq_col_text(s, 0);
		json_t *o = sq_jcheck(json_pack("{s:n, s:n, s:n, s:n, s:n, s:n}", "last_run_id",
		                                "last_run_ms", "last_status", "last_duration_s",
		                                "last_ok_run_id", "last_ok_ms"));
		json_t *scalars = sq_jcheck(json_object());

		sq_jset(o, "scalars", scalars);
		sq_jset(o, "consecutive_failures", sq_jint(sqlite3_column_int64(s, 3)));
		sq_jset(probes, probe, o);
		if (!sq_col_null(s, 1))
			r = snap_run(st, sqlite3_column_int64(s, 1), o, 0);
		if (r >= 0 && !sq_col_null(s, 2))
			r = snap_run(st, sqlite3_column_int64(s, 2), o, 1);
		if (r >= 0 && !sq_col_null(s, 2))
			r = snap_scalars(st, probe, sqlite3_column_int64(s, 2), scalars);
	}
	return r;
}

static int snap_totals(struct store *st, json_t *totals)
{
	sqlite3_stmt *s = NULL;
	int r = sq_get(st, Q_TOTALS, NULL, 0, &s);

	while (r >= 0 && (r = sq_step(st, s, "reading the run counters")) > 0) {
		const char *probe = sq_col_text(s, 0);
		json_t *o = json_object_get(totals, probe);

		if (!o) {
			o = sq_jcheck(json_object());
			sq_jset(totals, probe, json_incref(o));
			json_decref(o);
		}
		sq_jset(o, sq_col_text(s, 1), sq_jint(sqlite3_column_int64(s, 2)));
	}
	return r;
}

static int snap_recommendation(struct store *st, json_t **out)
{
	sqlite3_stmt *s = NULL;
	json_t *res;
	int r = sq_get(st, Q_REC_LATEST, NULL, 0, &s);

	*out = json_null();
	if (r >= 0 && (r = sq_step(st, s, "reading the recommendation")) <= 0)
		return r;
	r = sq_col_json(s, 2, "the recommendation", &res);
	if (r < 0)
		return r;
	json_decref(*out);
	*out = sq_jcheck(json_object());
	sq_jset(*out, "verdict", json_incref(json_object_get(res, "verdict")) ?: json_null());
	sq_jset(*out, "confidence", json_incref(json_object_get(res, "confidence")) ?: json_null());
	sq_jset(*out, "computed_ms", sq_jint(sqlite3_column_int64(s, 1)));
	sq_jset(*out, "figures", json_incref(json_object_get(res, "figures")) ?: json_null());
	json_decref(res);
	return 0;
}

static int snap_cycle(struct store *st, json_t **out)
{
	sqlite3_stmt *s = NULL;
	int r = sq_get(st, Q_CYCLE_LAST, NULL, 0, &s);

	*out = json_null();
	if (r >= 0 && (r = sq_step(st, s, "reading the last cycle")) > 0) {
		int64_t t0 = sqlite3_column_int64(s, 3), t1 = sqlite3_column_int64(s, 4);

		json_decref(*out);
		*out = sq_jcheck(json_object());
		sq_jset(*out, "id", sq_jint(sqlite3_column_int64(s, 0)));
		sq_jset(*out, "trigger", sq_jtext(sq_col_text(s, 1)));
		sq_jset(*out, "status", sq_col_text_json(s, 2));
		sq_jset(*out, "started_ms", sq_jint(t0));
		sq_jset(*out, "ended_ms", sq_jint(t1));
		sq_jset(*out, "duration_s", sq_jnum_checked(t1 > t0 ? (double)(t1 - t0) / 1e3 : 0));
		sq_jset(*out, "waited_s", sq_col_real_json(s, 5));
	}
	return r;
}

static int snap_fingerprint(struct store *st, json_t **out)
{
	sqlite3_stmt *s = NULL;
	json_t *j;
	int r = sq_get(st, Q_FP_LATEST, NULL, 0, &s);

	*out = json_null();
	if (r >= 0 && (r = sq_step(st, s, "reading the fingerprint")) > 0) {
		json_decref(*out);
		*out = sq_jcheck(json_pack("{s:o, s:o, s:o}", "id",
		                           sq_jint(sqlite3_column_int64(s, 0)), "first_seen_ms",
		                           sq_jint(sqlite3_column_int64(s, 1)), "last_seen_ms",
		                           sq_jint(sqlite3_column_int64(s, 2))));
		/* The whole fingerprint, for the cohort labels of /metrics. */
		r = sq_col_json(s, 4, "the fingerprint", &j);
		if (r >= 0)
			sq_jset(*out, "host", j);
	}
	return r;
}

static int snap_events(struct store *st, json_t **out)
{
	json_t *total = sq_jcheck(json_object());
	sqlite3_stmt *s = NULL;
	int64_t last = 0;
	int r = sq_get(st, Q_EVENT_TOTALS, NULL, 0, &s);

	while (r >= 0 && (r = sq_step(st, s, "counting the events")) > 0) {
		sq_jset(total, sq_col_text(s, 0), sq_jint(sqlite3_column_int64(s, 1)));
		if (sqlite3_column_int64(s, 2) > last)
			last = sqlite3_column_int64(s, 2);
	}
	*out = sq_jcheck(json_pack("{s:o, s:o}", "total", total, "last_detected_ms",
	                           json_object_size(total) ? sq_jint(last) : json_null()));
	return r;
}

/* When the scheduler expects its next cycle (the state it records for
 * /api/v1/status), or null before it has recorded one. */
static int snap_next_cycle(struct store *st, json_t **out)
{
	const struct bind b[] = {B_TEXT(":key", "next_cycle_ms")};
	sqlite3_stmt *s = NULL;
	int r = sq_get(st, Q_STATE_GET, b, SQ_LEN(b), &s);
	long long ms;
	char *end;

	*out = json_null();
	if (r >= 0 && (r = sq_step(st, s, "reading the next cycle")) > 0) {
		ms = strtoll(sq_col_text(s, 0), &end, 10);
		if (*end == '\0' && end != sq_col_text(s, 0) && ms > 0) {
			json_decref(*out);
			*out = sq_jint(ms);
		}
	}
	sqlite3_reset(s);
	return r;
}

/* A number the scheduler keeps in the state table, or null. */
static int snap_state_int(struct store *st, const char *key, json_t **out)
{
	const struct bind b[] = {B_TEXT(":key", key)};
	sqlite3_stmt *s = NULL;
	int r = sq_get(st, Q_STATE_GET, b, SQ_LEN(b), &s);
	long long v;
	char *end;

	*out = json_null();
	if (r >= 0 && (r = sq_step(st, s, key)) > 0) {
		v = strtoll(sq_col_text(s, 0), &end, 10);
		if (*end == '\0' && end != sq_col_text(s, 0)) {
			json_decref(*out);
			*out = sq_jint(v);
		}
	}
	sqlite3_reset(s);
	return r;
}

/* Whether retention is held by the clock check, and how often it was. */
static int snap_retention(struct store *st, json_t **out)
{
	json_t *held = NULL, *skipped = NULL;
	int r = snap_state_int(st, "retention_held", &held);

	if (r >= 0)
		r = snap_state_int(st, "retention_skipped_total", &skipped);
	*out = sq_jcheck(json_pack("{s:o, s:o}", "held", held ?: json_null(), "skipped_total",
	                           skipped ?: json_null()));
	return r;
}

static int snapshot_tx(struct store *st, void *ctx)
{
	struct read_args *c = ctx;
	json_t *probes = sq_jcheck(json_object()), *totals = sq_jcheck(json_object()), *j;
	int r;

	c->out = sq_jcheck(json_object());
	sq_jset(c->out, "probes", probes);
	sq_jset(c->out, "runs_total", totals);
	r = snap_probes(st, probes);
	if (r >= 0)
		r = snap_totals(st, totals);
	if (r >= 0) {
		r = snap_recommendation(st, &j);
		sq_jset(c->out, "recommendation", j);
	}
	if (r >= 0) {
		r = headroom_latest(st, &j);
		if (r == -ENOENT)
			r = 0;
		sq_jset(c->out, "headroom", j ?: json_null());
	}
	if (r >= 0) {
		r = snap_cycle(st, &j);
		sq_jset(c->out, "last_cycle", j);
	}
	if (r >= 0) {
		r = snap_fingerprint(st, &j);
		sq_jset(c->out, "fingerprint", j);
	}
	if (r >= 0) {
		r = snap_events(st, &j);
		sq_jset(c->out, "events", j);
	}
	if (r >= 0) {
		r = snap_next_cycle(st, &j);
		sq_jset(c->out, "next_cycle_ms", j);
	}
	if (r >= 0) {
		r = snap_retention(st, &j);
		sq_jset(c->out, "retention", j);
	}
	return r < 0 ? r : 0;
}

int store_read_snapshot(struct store *st, json_t **out)
{
	struct read_args c = {0};

	return sq_read_call(st, snapshot_tx, &c, out, NULL);
}

/* ---- regression events for the API ---------------------------------------------- */

static int events_tx(struct store *st, void *ctx)
{
	struct read_args *c = ctx;
	const struct store_events_query *q = c->in;
	json_t *ev;
	sqlite3_stmt *s = NULL;
	int64_t total = 0;
	int n = 0;
	const struct bind b[] = {
	    B_TEXT(":metric", q->metric), B_INT(":since", q->since_ms ? q->since_ms : INT64_MIN),
	    B_INT(":until", q->until_ms ? q->until_ms : INT64_MAX),
	    B_INT(":limit", q->limit + 1), /* last: the count leaves it out */
	};
	int r = sq_get(st, Q_EVENTS_PAGE, b, SQ_LEN(b), &s);

	c->out = sq_jcheck(json_array());
	while (r >= 0 && (r = sq_step(st, s, "listing events")) > 0) {
		if (++n > q->limit)
			break;
		r = sq_col_json(s, 2, "an event", &ev);
		if (r < 0)
			break;
		if (!json_is_object(ev)) {
			json_decref(ev);
			r = sq_seterr(-EBADMSG, "event %lld is not an object",
			              (long long)sqlite3_column_int64(s, 0));
			break;
		}
		sq_jset(ev, "id", sq_jint(sqlite3_column_int64(s, 0)));
		sq_jset(ev, "recorded_ms", sq_jint(sqlite3_column_int64(s, 1)));
		json_array_append_new(c->out, ev);
	}
	if (r >= 0)
		r = sq_int(st, Q_EVENTS_COUNT, b, SQ_LEN(b) - 1 /* all but :limit */,
		           "counting events", &total);
	c->page->more = n > q->limit;
	c->page->total = total;
	return r < 0 ? r : 0;
}

int store_read_events(struct store *st, const struct store_events_query *q, struct store_page *page)
{
	struct read_args c = {.in = q, .page = page};

	*page = (struct store_page){.total = -1};
	if (q->limit < 1 || q->limit > 1000) {
		sq_clearerr();
		return sq_seterr(-EINVAL, "limit %d is not within 1..1000", q->limit);
	}
	return sq_read_call(st, events_tx, &c, &page->rows, NULL);
}

/* --- the small reads the scheduler and the HTTP threads make ------------- */

static int last_cycle_tx(struct store *st, void *ctx)
{
	sqlite3_stmt *s = NULL;
	int r = sq_get(st, Q_CYCLE_LAST, NULL, 0, &s);

	if (r >= 0 && (r = sq_step(st, s, "reading the last cycle")) > 0)
		*(int64_t *)ctx = sqlite3_column_int64(s, 4);
	else if (r == 0)
		r = sq_seterr(-ENOENT, "no cycle has finished yet");
	return r < 0 ? r : 0;
}

int store_last_cycle(struct store *st, int64_t *ended_ms)
{
	return store_call(st, 0, last_cycle_tx, ended_ms);
}

struct state_get_args {
	const char *key;
	char *out;
};

static int state_get_tx(struct store *st, void *ctx)
{
	struct state_get_args *c = ctx;
	const struct bind b[] = {B_TEXT(":key", c->key)};
	sqlite3_stmt *s = NULL;
	int r = sq_get(st, Q_STATE_GET, b, SQ_LEN(b), &s);

	if (r >= 0 && (r = sq_step(st, s, c->key)) > 0)
		c->out = xstrdup(sq_col_text(s, 0));
	else if (r == 0)
		r = sq_seterr(-ENOENT, "no state \"%s\"", c->key);
	return r < 0 ? r : 0;
}

int store_state_get(struct store *st, const char *key, char **value)
{
	struct state_get_args c = {.key = key};
	int r = store_call(st, 0, state_get_tx, &c);

	*value = c.out;
	return r;
}

/* data_version moves when another connection commits; the handle's own
 * total_changes counts what it committed itself. Together they change
 * whenever anything a reader could see changed. */
static int data_version_tx(struct store *st, void *ctx)
{
	int64_t *v = ctx;
	sqlite3_stmt *s = NULL;
	int r = sq_get(st, Q_DATA_VERSION, NULL, 0, &s);

	if (r >= 0 && (r = sq_step(st, s, "data_version")) > 0)
		*v = (sqlite3_column_int64(s, 0) << 32) ^ sqlite3_total_changes64(st->db);
	return r < 0 ? r : 0;
}

int store_data_version(struct store *st, int64_t *version)
{
	*version = 0;
	return store_call(st, 0, data_version_tx, version);
}
