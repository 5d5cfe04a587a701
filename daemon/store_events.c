/*
 * store_events: regression events (lib/detect.h, doc/regression.md):
 * recording them, where detection resumes, and the histories of key
 * figures and verdicts that detection reads.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "storep.h"
#include "xmalloc.h"

/* ---- regression events --------------------------------------------------------- */

struct event_args {
	int64_t now, ref_id, changed; /* ref_id: the event's id (insert) or ref_id (read) */
	const json_t *event;
	const char *metric;
};

/* An integer member of the event, or -EINVAL naming it. */
static int event_int(const json_t *ev, const char *key, int64_t *v)
{
	const json_t *j = json_object_get(ev, key);

	if (!json_is_integer(j))
		return sq_seterr(-EINVAL, "event: \"%s\" must be an integer", key);
	*v = json_integer_value(j);
	return 0;
}

static int event_add_tx(struct store *st, void *ctx)
{
	struct event_args *c = ctx;
	const json_t *ev = c->event;
	const char *kind = json_string_value(json_object_get(ev, "kind"));
	const char *metric = json_string_value(json_object_get(ev, "metric"));
	int64_t t = 0, detected = 0, ref = 0;
	char *data = NULL;
	int r;

	if (!json_is_object(ev))
		return sq_seterr(-EINVAL, "event: not an object");
	if (!kind || (strcmp(kind, "step") && strcmp(kind, "flip")))
		return sq_seterr(-EINVAL, "event: \"kind\" must be \"step\" or \"flip\"");
	if (!metric || !*metric || strlen(metric) > 129)
		return sq_seterr(-EINVAL, "event: \"metric\" must be 1 to 129 characters");
	r = event_int(ev, "t_ms", &t);
	if (r >= 0)
		r = event_int(ev, "detected_ms", &detected);
	if (r >= 0)
		r = event_int(ev, !strcmp(kind, "step") ? "run_id" : "recommendation_id", &ref);
	if (r >= 0)
		r = sq_json_text(ev, 0, "the event", &data);
	if (r < 0)
		return r;
	const struct bind b[] = {
	    B_TEXT(":kind", kind), B_TEXT(":metric", metric),       B_INT(":t_ms", t),
	    B_INT(":ref_id", ref), B_INT(":detected_ms", detected), B_INT(":recorded_ms", c->now),
	    B_TEXT(":data", data),
	};
	r = sq_exec(st, Q_EVENT_ADD, b, SQ_LEN(b), "recording an event", &c->changed);
	if (r >= 0 && c->changed > 0)
		c->ref_id = sqlite3_last_insert_rowid(st->db);
	free(data);
	return r;
}

int store_event_insert(struct store *st, int64_t now_ms, const json_t *event, int64_t *event_id)
{
	struct event_args c = {.now = now_ms, .event = event};
	int r = store_call(st, 1, event_add_tx, &c);

	if (event_id)
		*event_id = r >= 0 ? c.ref_id : 0;
	return r;
}

static int event_last_tx(struct store *st, void *ctx)
{
	struct event_args *c = ctx;
	const struct bind b[] = {B_TEXT(":metric", c->metric)};
	int r = sq_int(st, Q_EVENT_LAST_REF, b, SQ_LEN(b), "reading the last event", &c->ref_id);

	return r < 0 ? r : 0;
}

int store_event_last_ref(struct store *st, const char *metric, int64_t *ref_id)
{
	struct event_args c = {.metric = metric};
	int r = store_call(st, 0, event_last_tx, &c);

	*ref_id = r < 0 ? 0 : c.ref_id;
	return r;
}
struct history_args {
	const char *probe, *scalar, *series;
	double x, tol;
	int64_t from;
	struct store_point *pts;
	size_t n;
};

static int history_tx(struct store *st, void *ctx)
{
	struct history_args *c = ctx;
	char metric[160];
	sqlite3_stmt *s = NULL;
	size_t cap = 0;
	int r;

	if (c->scalar) {
		snprintf(metric, sizeof(metric), "%s.%s", c->probe, c->scalar);
		const struct bind b[] = {B_TEXT(":metric", metric), B_INT(":from", c->from)};
		r = sq_get(st, Q_HIST_SCALAR, b, SQ_LEN(b), &s);
	} else {
		const struct bind b[] = {B_TEXT(":probe", c->probe), B_TEXT(":series", c->series),
		                         B_REAL(":x", c->x), B_REAL(":tol", c->tol),
		                         B_INT(":from", c->from)};
		r = sq_get(st, Q_HIST_POINT, b, SQ_LEN(b), &s);
	}
	while (r >= 0 && (r = sq_step(st, s, "reading a metric's history")) > 0) {
		if (sq_col_null(s, 2))
			continue;
		if (c->n == cap) {
			cap = cap ? 2 * cap : 256;
			c->pts = xreallocarray(c->pts, cap, sizeof(*c->pts));
		}
		c->pts[c->n++] = (struct store_point){
		    .run_id = sqlite3_column_int64(s, 0),
		    .t_ms = sqlite3_column_int64(s, 1),
		    .value = sqlite3_column_double(s, 2),
		    .fp_id = sqlite3_column_int64(s, 3),
		    .steal_pct = sq_col_null(s, 4) ? NAN : sqlite3_column_double(s, 4),
		    .loadavg1 = sq_col_null(s, 5) ? NAN : sqlite3_column_double(s, 5),
		};
	}
	return r < 0 ? r : 0;
}

int store_metric_history(struct store *st, const char *probe, const char *scalar,
                         const char *series, double x, double x_tol, int64_t from_run_id,
                         struct store_point **pts, size_t *n)
{
	struct history_args c = {.probe = probe,
	                         .scalar = scalar,
	                         .series = series,
	                         .x = x,
	                         .tol = fabs(x * x_tol),
	                         .from = from_run_id};
	int r;

	*pts = NULL;
	*n = 0;
	if (!probe || (!scalar && !series)) {
		sq_clearerr();
		return sq_seterr(-EINVAL,
		                 "a metric's history needs a probe and a scalar or series");
	}
	r = store_call(st, 0, history_tx, &c);
	if (r < 0) {
		free(c.pts);
		return r;
	}
	*pts = c.pts;
	*n = c.n;
	return 0;
}

static int run_back_tx(struct store *st, void *ctx)
{
	struct history_args *c = ctx;
	const struct bind b[] = {B_TEXT(":probe", c->probe), B_INT(":before", c->from),
	                         B_INT(":back", (int64_t)c->n)};
	int64_t id = 0;
	int r = sq_int(st, Q_RUN_BACK, b, SQ_LEN(b), "counting runs back", &id);

	c->from = r > 0 ? id : 0;
	return r < 0 ? r : 0;
}

int store_run_back(struct store *st, const char *probe, int64_t before_id, size_t back,
                   int64_t *run_id)
{
	struct history_args c = {.probe = probe, .from = before_id, .n = back};
	int r = store_call(st, 0, run_back_tx, &c);

	*run_id = r < 0 ? 0 : c.from;
	return r;
}

static int verdicts_tx(struct store *st, void *ctx)
{
	struct read_args *c = ctx;
	const struct bind b[] = {B_INT(":from", *(const int64_t *)c->in)};
	sqlite3_stmt *s = NULL;
	int r = sq_get(st, Q_VERDICTS, b, SQ_LEN(b), &s);

	c->out = sq_jcheck(json_array());
	while (r >= 0 && (r = sq_step(st, s, "reading the verdicts")) > 0)
		json_array_append_new(
		    c->out, sq_jcheck(json_pack("{s:o, s:o, s:o, s:o, s:o}", "id",
		                                sq_jint(sqlite3_column_int64(s, 0)), "computed_ms",
		                                sq_jint(sqlite3_column_int64(s, 1)), "verdict",
		                                sq_jtext(sq_col_text(s, 2)), "confidence",
		                                sq_jtext(sq_col_text(s, 3)), "fingerprint_id",
		                                sq_jint(sqlite3_column_int64(s, 4)))));
	return r < 0 ? r : 0;
}

int store_verdict_history(struct store *st, int64_t from_id, json_t **out)
{
	struct read_args c = {.in = &from_id};

	return sq_read_call(st, verdicts_tx, &c, out, NULL);
}
