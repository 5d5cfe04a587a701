/*
 * store_write: writes what the daemon measured (daemon/store.h): each probe
 * run with its document, samples and series points in one transaction,
 * cycles, fingerprints, recommendations, headroom and the small state the
 * scheduler publishes, with the few reads of them the scheduler and the
 * response cache need (the last cycle, a state value, the data version).
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fingerprint.h"
#include "storep.h"
#include "xmalloc.h"

#define STORE_RAW_MAX 65536 /* bytes of raw output kept of an error run */

/* ---- writing runs ---------------------------------------------------------- */

/* The id of metric `name`, added (or its unit updated) as needed. */
static int metric_id(struct store *st, const char *name, const char *unit, int64_t *id)
{
	sqlite3_stmt *s = NULL;
	const struct bind b[] = {B_TEXT(":name", name)};
	int r = sq_get(st, Q_METRIC_GET, b, 1, &s), unit_same = 0;

	if (r >= 0 && (r = sq_step(st, s, name)) > 0) {
		*id = sqlite3_column_int64(s, 0);
		unit_same = !strcmp(sq_col_text(s, 1), unit);
	}
	sqlite3_reset(s);
	if (r > 0 && !unit_same) {
		const struct bind u[] = {B_INT(":id", *id), B_TEXT(":unit", unit)};

		r = sq_exec(st, Q_METRIC_UNIT, u, SQ_LEN(u), name, NULL);
	} else if (r == 0) {
		const struct bind a[] = {B_TEXT(":name", name), B_TEXT(":unit", unit)};

		r = sq_exec(st, Q_METRIC_ADD, a, SQ_LEN(a), name, NULL);
		*id = sqlite3_last_insert_rowid(st->db);
	}
	return r < 0 ? r : 0;
}

static int finite_number(const json_t *j, double *v)
{
	if (!json_is_number(j))
		return 0;
	*v = json_number_value(j);
	return isfinite(*v);
}

static int samples_insert(struct store *st, const struct store_run *run, int64_t run_id,
                          const json_t *scalars)
{
	const char *name;
	json_t *sc;
	int r = 0;

	if (scalars && !json_is_object(scalars))
		return sq_seterr(-EINVAL, "scalars: not an object");
	json_object_foreach((json_t *)(uintptr_t)scalars, name, sc)
	{
		const char *unit = json_string_value(json_object_get(sc, "unit"));
		char *metric;
		int64_t mid = 0;
		double v;

		if (!finite_number(json_object_get(sc, "value"), &v))
			return sq_seterr(-EINVAL, "scalars.%s.value: not a finite number", name);
		if (!unit)
			return sq_seterr(-EINVAL, "scalars.%s.unit: not a string", name);
		xasprintf(&metric, "%s.%s", run->probe, name);
		r = metric_id(st, metric, unit, &mid);
		if (r >= 0) {
			const struct bind b[] = {B_INT(":metric_id", mid),
			                         B_INT(":t", run->started_ms),
			                         B_INT(":run_id", run_id), B_REAL(":value", v)};

			r = sq_exec(st, Q_SAMPLE_ADD, b, SQ_LEN(b), metric, NULL);
		}
		free(metric);
		if (r < 0)
			return sq_seterr(r, "scalars.%s: %s", name, store_last_error());
	}
	return 0;
}

static int points_insert(struct store *st, int64_t series_id, const char *name,
                         const json_t *points)
{
	size_t i;
	json_t *p;
	int r;

	if (!json_is_array(points))
		return sq_seterr(-EINVAL, "series.%s.points: not an array", name);
	json_array_foreach(points, i, p)
	{
		double x, y;

		if (json_array_size(p) != 2 || !finite_number(json_array_get(p, 0), &x) ||
		    !finite_number(json_array_get(p, 1), &y))
			return sq_seterr(-EINVAL,
			                 "series.%s.points[%zu]: not a pair of finite numbers",
			                 name, i);
		const struct bind b[] = {B_INT(":series_id", series_id), B_INT(":i", (int64_t)i),
		                         B_REAL(":x", x), B_REAL(":y", y)};
		r = sq_exec(st, Q_POINT_ADD, b, SQ_LEN(b), name, NULL);
		if (r < 0)
			return sq_seterr(r, "series.%s.points[%zu]: %s", name, i,
			                 store_last_error());
	}
	return 0;
}

static int series_insert(struct store *st, int64_t run_id, const json_t *series)
{
	const char *name;
	json_t *se;
	int r;

	if (series && !json_is_object(series))
		return sq_seterr(-EINVAL, "series: not an object");
	json_object_foreach((json_t *)(uintptr_t)series, name, se)
	{
		const char *xu = json_string_value(json_object_get(se, "x_unit"));
		const char *yu = json_string_value(json_object_get(se, "y_unit"));
		const struct bind b[] = {B_INT(":run_id", run_id), B_TEXT(":name", name),
		                         B_TEXT(":x_unit", xu), B_TEXT(":y_unit", yu)};

		if (!xu || !yu)
			return sq_seterr(-EINVAL, "series.%s: x_unit or y_unit is not a string",
			                 name);
		r = sq_exec(st, Q_SERIES_ADD, b, SQ_LEN(b), name, NULL);
		if (r < 0)
			return sq_seterr(r, "series.%s: %s", name, store_last_error());
		r = points_insert(st, sqlite3_last_insert_rowid(st->db), name,
		                  json_object_get(se, "points"));
		if (r < 0)
			return r;
	}
	return 0;
}

struct run_insert {
	const struct store_run *run;
	int64_t id;
};

static int run_insert_tx(struct store *st, void *ctx)
{
	struct run_insert *c = ctx;
	const struct store_run *run = c->run;
	const int error = !strcmp(run->status, "error");
	const json_t *doc = error ? NULL : run->doc;
	char *doc_text = NULL, *params = NULL, *raw_doc = NULL;
	const char *raw = NULL;
	int r = 0;

	if (doc && !json_is_object(doc))
		return sq_seterr(-EINVAL, "the document is not an object");
	if (doc)
		r = sq_json_text(doc, 0, "the document", &doc_text);
	if (r >= 0 && doc && json_object_get(doc, "params"))
		r = sq_json_text(json_object_get(doc, "params"), 0, "params", &params);
	if (r >= 0 && error) {
		raw = run->raw;
		if (!raw && run->doc && sq_json_text(run->doc, 0, "the document", &raw_doc) >= 0)
			raw = raw_doc;
	}
	if (r >= 0) {
		const struct bind b[] = {
		    B_ID(":cycle_id", run->cycle_id),
		    B_TEXT(":probe", run->probe),
		    B_INT(":started_ms", run->started_ms),
		    B_INT(":ended_ms", run->ended_ms),
		    B_TEXT(":status", run->status),
		    B_TEXT(":reason", run->reason),
		    B_TEXT(":params", params),
		    B_REAL(":loadavg1", run->loadavg1),
		    B_REAL(":steal_pct", run->steal_pct),
		    B_REAL(":cpu_s", run->cpu_s),
		    /* an error of no known kind is an error */
		    B_TEXT(":failure", strcmp(run->status, "error") ? NULL
		                       : run->failure ? failure_kind_names[run->failure->kind]
		                                      : failure_kind_names[FAILURE_ERROR]),
		    B_ID(":term_signal", run->failure && run->failure->kind == FAILURE_CRASH
		                             ? (int64_t)run->term_signal
		                             : 0),
		};
		r = sq_exec(st, Q_RUN_ADD, b, SQ_LEN(b), "the run", NULL);
	}
	c->id = sqlite3_last_insert_rowid(st->db);
	if (r >= 0 && (doc_text || raw)) {
		size_t raw_len = raw == run->raw && run->raw_len ? run->raw_len
		                 : raw                           ? strlen(raw)
		                                                 : 0;
		const struct bind b[] = {
		    B_INT(":run_id", c->id),
		    B_TEXT(":doc", doc_text),
		    B_BLOB(":raw", raw, raw_len < STORE_RAW_MAX ? raw_len : STORE_RAW_MAX),
		};
		r = sq_exec(st, Q_DOC_ADD, b, SQ_LEN(b), "the run's document", NULL);
	}
	if (r >= 0) {
		const struct bind b[] = {B_TEXT(":probe", run->probe),
		                         B_TEXT(":status", run->status)};

		r = sq_exec(st, Q_TOTAL_BUMP, b, SQ_LEN(b), "the run counters", NULL);
	}
	if (r >= 0 && doc)
		r = samples_insert(st, run, c->id, json_object_get(doc, "scalars"));
	if (r >= 0 && doc)
		r = series_insert(st, c->id, json_object_get(doc, "series"));
	free(doc_text);
	free(params);
	free(raw_doc);
	return r;
}

int store_run_insert(struct store *st, const struct store_run *run, int64_t *run_id)
{
	struct run_insert c = {.run = run};
	int r;

	if (!run->probe || !run->status) {
		sq_clearerr();
		return sq_seterr(-EINVAL, "a run needs a probe name and a status");
	}
	r = store_call(st, 1, run_insert_tx, &c);
	if (r < 0)
		return sq_seterr(r, "storing a run of \"%s\": %s", run->probe, store_last_error());
	if (run_id)
		*run_id = c.id;
	return 0;
}

/* ---- cycles, fingerprints, recommendations, headroom, state ---------------- */

struct cycle_args {
	int64_t id, ms;
	const char *text;
	double waited_s;
};

static int cycle_begin_tx(struct store *st, void *ctx)
{
	struct cycle_args *c = ctx;
	const struct bind b[] = {B_INT(":started_ms", c->ms), B_TEXT(":trigger", c->text),
	                         B_REAL(":waited_s", c->waited_s)};
	int r = sq_exec(st, Q_CYCLE_ADD, b, SQ_LEN(b), "starting a cycle", NULL);

	c->id = sqlite3_last_insert_rowid(st->db);
	return r;
}

int store_cycle_begin(struct store *st, int64_t now_ms, const char *trigger, double waited_s,
                      int64_t *cycle_id)
{
	struct cycle_args c = {.ms = now_ms, .text = trigger, .waited_s = waited_s};
	int r = store_call(st, 1, cycle_begin_tx, &c);

	if (r >= 0 && cycle_id)
		*cycle_id = c.id;
	return r;
}

static int cycle_end_tx(struct store *st, void *ctx)
{
	struct cycle_args *c = ctx;
	const struct bind b[] = {B_INT(":ended_ms", c->ms), B_TEXT(":status", c->text),
	                         B_INT(":id", c->id)};
	int64_t n = 0;
	int r = sq_exec(st, Q_CYCLE_END, b, SQ_LEN(b), "ending a cycle", &n);

	if (r >= 0 && n == 0)
		r = sq_seterr(-ENOENT, "there is no cycle %" PRId64, c->id);
	return r;
}

int store_cycle_end(struct store *st, int64_t cycle_id, int64_t now_ms, const char *status)
{
	struct cycle_args c = {.id = cycle_id, .ms = now_ms, .text = status};

	return store_call(st, 1, cycle_end_tx, &c);
}

struct interrupt_args {
	int64_t ms, n;
};

static int cycles_interrupt_tx(struct store *st, void *ctx)
{
	struct interrupt_args *c = ctx;
	const struct bind b[] = {B_INT(":ended_ms", c->ms)};

	return sq_exec(st, Q_CYCLE_INTERRUPT, b, SQ_LEN(b), "closing unfinished cycles", &c->n);
}

int store_cycles_interrupt(struct store *st, int64_t now_ms, int64_t *n)
{
	struct interrupt_args c = {.ms = now_ms};
	int r = store_call(st, 1, cycles_interrupt_tx, &c);

	if (r >= 0 && n)
		*n = c.n;
	return r;
}

struct fp_args {
	const json_t *fp;
	int64_t now;
	int changed;
};

static int fp_record_tx(struct store *st, void *ctx)
{
	struct fp_args *c = ctx;
	json_t *ident = fingerprint_identity(c->fp), *prev = NULL;
	char *ident_text = NULL, *full = NULL, *diff = NULL;
	int64_t prev_id = 0;
	sqlite3_stmt *s = NULL;
	int r;

	r = sq_json_text(ident, JSON_SORT_KEYS, "the fingerprint", &ident_text);
	if (r >= 0)
		r = sq_json_text(c->fp, JSON_SORT_KEYS, "the fingerprint", &full);
	if (r >= 0)
		r = sq_get(st, Q_FP_LATEST, NULL, 0, &s);
	if (r >= 0 && (r = sq_step(st, s, "reading the fingerprint")) > 0) {
		prev_id = sqlite3_column_int64(s, 0);
		if (strcmp(sq_col_text(s, 3), ident_text) != 0)
			r = sq_col_json(s, 3, "the last fingerprint", &prev);
	}
	if (r >= 0)
		sqlite3_reset(s);
	/* A value learned where the row had none (fingerprint_diff() sees no
	 * change) updates the row's identity in place. */
	if (prev)
		diff = fingerprint_diff(prev, ident);
	if (r >= 0 && prev_id && !diff) {
		const struct bind b[] = {B_INT(":now", c->now), B_TEXT(":identity", ident_text),
		                         B_TEXT(":full", full), B_INT(":id", prev_id)};

		r = sq_exec(st, Q_FP_SEEN, b, SQ_LEN(b), "updating the fingerprint", NULL);
	} else if (r >= 0) {
		const struct bind b[] = {B_INT(":now", c->now), B_TEXT(":identity", ident_text),
		                         B_TEXT(":full", full), B_TEXT(":diff", diff)};
		r = sq_exec(st, Q_FP_ADD, b, SQ_LEN(b), "storing the fingerprint", NULL);
		c->changed = r >= 0;
	}
	json_decref(ident);
	json_decref(prev);
	free(ident_text);
	free(full);
	free(diff);
	return r;
}

int store_fingerprint_record(struct store *st, const json_t *fp, int64_t now_ms, int *changed)
{
	struct fp_args c = {.fp = fp, .now = now_ms};
	int r = store_call(st, 1, fp_record_tx, &c);

	if (changed)
		*changed = r >= 0 && c.changed;
	return r;
}

struct rec_args {
	int64_t now;
	const json_t *inputs, *result;
	const int64_t *run_ids;
	size_t n_runs;
};

static int rec_insert_tx(struct store *st, void *ctx)
{
	struct rec_args *c = ctx;
	char *result = NULL, *inputs = NULL;
	int64_t id;
	int r;

	r = sq_json_text(c->result, 0, "the result", &result);
	if (r >= 0)
		r = sq_json_text(c->inputs, 0, "the inputs", &inputs);
	if (r >= 0) {
		const struct bind b[] = {
		    B_INT(":computed_ms", c->now),
		    B_TEXT(":verdict", json_string_value(json_object_get(c->result, "verdict"))),
		    B_TEXT(":confidence",
		           json_string_value(json_object_get(c->result, "confidence"))),
		    B_TEXT(":result", result),
		    B_TEXT(":inputs", inputs),
		};
		r = sq_exec(st, Q_REC_ADD, b, SQ_LEN(b), "the recommendation", NULL);
	}
	id = sqlite3_last_insert_rowid(st->db);
	for (size_t i = 0; r >= 0 && i < c->n_runs; i++) {
		const struct bind b[] = {B_INT(":rec_id", id), B_INT(":run_id", c->run_ids[i])};

		r = sq_exec(st, Q_REC_RUN_ADD, b, SQ_LEN(b), "the recommendation's runs", NULL);
	}
	free(result);
	free(inputs);
	return r;
}

int store_recommendation_insert(struct store *st, int64_t now_ms, const json_t *inputs,
                                const json_t *result, const int64_t *run_ids, size_t n_runs)
{
	struct rec_args c = {.now = now_ms,
	                     .inputs = inputs,
	                     .result = result,
	                     .run_ids = run_ids,
	                     .n_runs = n_runs};

	return store_call(st, 1, rec_insert_tx, &c);
}

struct headroom_args {
	int64_t now;
	const json_t *data;
};

static int headroom_tx(struct store *st, void *ctx)
{
	struct headroom_args *c = ctx;
	char *data = NULL;
	int r = sq_json_text(c->data, 0, "the headroom", &data);

	if (r >= 0) {
		const struct bind b[] = {B_INT(":computed_ms", c->now), B_TEXT(":data", data)};

		r = sq_exec(st, Q_HEADROOM_ADD, b, SQ_LEN(b), "the headroom", NULL);
	}
	free(data);
	return r;
}

int store_headroom_record(struct store *st, int64_t now_ms, const json_t *headroom)
{
	struct headroom_args c = {.now = now_ms, .data = headroom};

	return store_call(st, 1, headroom_tx, &c);
}

struct state_args {
	const char *key, *value;
};

static int state_set_tx(struct store *st, void *ctx)
{
	struct state_args *c = ctx;
	const struct bind b[] = {B_TEXT(":key", c->key), B_TEXT(":value", c->value)};

	return sq_exec(st, Q_STATE_SET, b, SQ_LEN(b), c->key, NULL);
}

int store_state_set(struct store *st, const char *key, const char *value)
{
	struct state_args c = {.key = key, .value = value};

	return store_call(st, 1, state_set_tx, &c);
}
