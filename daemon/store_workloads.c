/*
 * store_workloads: the workloads' history (daemon/store.h,
 * store_workloads_*()): each observer window's kept workloads as rows of
 * figures, the latest window whole, and a workload's series of one figure.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"
#include "storep.h"
#include "workload_key.h"
#include "xmalloc.h"

struct wl_write {
	int64_t now;
	json_t *doc;    /* a copy: each row's "ref" becomes the one stored */
	json_t *places; /* figure name -> its place in a row, found once */
};

/* How many other refs a key tries when its own is another key's. */
#define REF_TRIES 8

/* Adds a workload under the first free ref of its own and REF_TRIES
 * derived ones (KEY, then KEY "#1", ...); 1 with *id set, 0 when every
 * one was taken. */
static int workload_add(struct store *st, json_t *w, int64_t *id)
{
	const char *key = json_string_value(json_object_get(w, "key"));
	char ref[WKEY_REF_LEN], *salted;
	int64_t changed = 0;
	int r;

	snprintf(ref, sizeof(ref), "%s", json_string_value(json_object_get(w, "ref")));
	for (int i = 0; i <= REF_TRIES; i++) {
		const struct bind b[] = {
		    B_TEXT(":key", key),
		    B_TEXT(":ref", ref),
		    B_TEXT(":kind", json_string_value(json_object_get(w, "kind"))),
		    B_TEXT(":name", json_string_value(json_object_get(w, "name"))),
		};

		r = sq_exec(st, Q_WL_ADD, b, SQ_LEN(b), "naming a workload", &changed);
		if (r < 0)
			return r;
		if (changed) {
			*id = sqlite3_last_insert_rowid(st->db);
			json_object_set_new(w, "ref", sq_jtext(ref));
			return 1;
		}
		xasprintf(&salted, "%s#%d", key, i + 1);
		wkey_ref(salted, ref);
		free(salted);
	}
	return 0;
}

/* The workload's id, made on its first window; its stored ref goes into
 * w (a key keeps the ref it got first). */
static int workload_id(struct store *st, json_t *w, int64_t *id)
{
	const struct bind b[] = {B_TEXT(":key", json_string_value(json_object_get(w, "key")))};
	sqlite3_stmt *s = NULL;
	int r = sq_get(st, Q_WL_FIND_KEY, b, SQ_LEN(b), &s);

	if (r >= 0)
		r = sq_step(st, s, "finding a workload");
	if (r > 0) {
		*id = sqlite3_column_int64(s, 0);
		json_object_set_new(w, "ref", sq_jtext(sq_col_text(s, 1)));
		return 0;
	}
	if (r == 0)
		r = workload_add(st, w, id);
	return r < 0 ? r : r ? 0 : sq_seterr(-EEXIST, "every ref of a workload's key is taken");
}

/* The place of a figure in a row, made on its first use; found once a
 * window (c->places). */
static int figure_place(struct store *st, struct wl_write *c, const char *name, int64_t *idx)
{
	const struct bind b[] = {B_TEXT(":name", name)};
	const json_t *known = json_object_get(c->places, name);
	int r;

	if (known) {
		*idx = json_integer_value(known);
		return 0;
	}
	r = sq_int(st, Q_WL_FIGURE_FIND, b, SQ_LEN(b), "finding a workload figure", idx);
	if (r == 0) {
		r = sq_exec(st, Q_WL_FIGURE_ADD, b, SQ_LEN(b), "naming a workload figure", NULL);
		if (r >= 0)
			r = sq_int(st, Q_WL_FIGURE_FIND, b, SQ_LEN(b), "finding a workload figure",
			           idx);
		if (r == 0)
			r = sq_seterr(-EIO, "naming a workload figure gave no place");
	}
	if (r < 0)
		return r;
	if (*idx < 0 || *idx > 1000)
		return sq_seterr(-EIO, "workload figure \"%s\" has place %" PRId64, name, *idx);
	json_object_set_new(c->places, name, sq_jint(*idx));
	return 0;
}

/* A row's figures as an array of numbers, each at its figure's place. */
static int figures_array(struct store *st, struct wl_write *c, const json_t *figures, json_t **out)
{
	const char *name;
	const json_t *v;
	int64_t idx;
	int r = 0;

	*out = sq_jcheck(json_array());
	json_object_foreach((json_t *)(uintptr_t)figures, name, v)
	{
		r = figure_place(st, c, name, &idx);
		if (r < 0)
			break;
		while ((int64_t)json_array_size(*out) <= idx)
			json_array_append_new(*out, json_null());
		json_array_set(*out, (size_t)idx, (json_t *)(uintptr_t)v);
	}
	return r < 0 ? r : 0;
}

static int figures_add(struct store *st, struct wl_write *c, int64_t window_id, size_t rank,
                       json_t *w)
{
	char *text = NULL;
	json_t *arr = NULL;
	int64_t wid = 0;
	int r = workload_id(st, w, &wid);

	if (r >= 0)
		r = figures_array(st, c, json_object_get(w, "figures"), &arr);
	if (r >= 0)
		r = sq_json_text(arr, JSON_REAL_PRECISION(6), "a workload's figures", &text);
	json_decref(arr);
	if (r >= 0) {
		const struct bind b[] = {B_INT(":window_id", window_id),
		                         B_INT(":rank", (int64_t)rank), B_INT(":workload_id", wid),
		                         B_TEXT(":figures", text)};

		r = sq_exec(st, Q_WL_FIGURES_ADD, b, SQ_LEN(b), "storing a workload's figures",
		            NULL);
	}
	free(text);
	return r;
}

static int record_tx(struct store *st, void *ctx)
{
	struct wl_write *c = ctx;
	json_t *list = json_object_get(c->doc, "workloads"), *w;
	const struct bind b[] = {
	    B_INT(":t_ms", c->now),
	    B_REAL(":window_s", json_number_value(json_object_get(c->doc, "window_s"))),
	    B_INT(":seen", json_integer_value(json_object_get(c->doc, "seen"))),
	};
	char *text = NULL;
	int64_t window_id;
	size_t i;
	int r = sq_exec(st, Q_WL_WINDOW_ADD, b, SQ_LEN(b), "storing a workload window", NULL);

	if (r < 0)
		return r;
	json_object_clear(c->places); /* what a rolled back try made is gone */
	window_id = sqlite3_last_insert_rowid(st->db);
	json_array_foreach(list, i, w) if ((r = figures_add(st, c, window_id, i, w)) < 0) return r;
	r = sq_json_text(c->doc, 0, "the latest workload window", &text);
	if (r >= 0) {
		const struct bind l[] = {B_INT(":window_id", window_id), B_TEXT(":doc", text)};

		r = sq_exec(st, Q_WL_LATEST_SET, l, SQ_LEN(l), "storing the latest workload window",
		            NULL);
	}
	free(text);
	return r;
}

int store_workloads_record(struct store *st, int64_t now_ms, const json_t *doc)
{
	struct wl_write c = {now_ms, NULL, NULL};
	int r;
	const json_t *w;
	size_t i;

	sq_clearerr();
	if (!json_is_array(json_object_get(doc, "workloads")))
		return sq_seterr(-EINVAL, "the window has no workloads array");
	json_array_foreach(json_object_get(doc, "workloads"), i, w)
	{
		if (!json_is_string(json_object_get(w, "key")) ||
		    !json_is_string(json_object_get(w, "ref")) ||
		    !json_is_string(json_object_get(w, "kind")) ||
		    !json_is_string(json_object_get(w, "name")) ||
		    !json_is_object(json_object_get(w, "figures")))
			return sq_seterr(-EINVAL,
			                 "workloads[%zu] lacks its key, ref, kind, name or "
			                 "figures",
			                 i);
	}
	c.doc = sq_jcheck(json_deep_copy(doc));
	c.places = sq_jcheck(json_object());
	r = store_call(st, 1, record_tx, &c);
	json_decref(c.doc);
	json_decref(c.places);
	return r;
}

static int latest_tx(struct store *st, void *ctx)
{
	struct read_args *c = ctx;
	sqlite3_stmt *s = NULL;
	json_t *doc;
	int r = sq_get(st, Q_WL_LATEST, NULL, 0, &s);

	if (r >= 0 && (r = sq_step(st, s, "reading the latest workload window")) == 0)
		return sq_seterr(-ENOENT, "no workload window has been stored yet");
	if (r >= 0)
		r = sq_col_json(s, 3, "the latest workload window", &doc);
	if (r < 0)
		return r;
	if (!json_is_object(doc)) {
		json_decref(doc);
		return sq_seterr(-EBADMSG, "the latest workload window is not an object");
	}
	sq_jset(doc, "window_end_ms", sq_jint(sqlite3_column_int64(s, 0)));
	sq_jset(doc, "window_s", sq_jnum_checked(sqlite3_column_double(s, 1)));
	sq_jset(doc, "seen", sq_jint(sqlite3_column_int64(s, 2)));
	c->out = doc;
	return 0;
}

int store_workloads_latest(struct store *st, json_t **out)
{
	struct read_args c = {0};

	sq_clearerr();
	return sq_read_call(st, latest_tx, &c, out, NULL);
}

static int latest_end_tx(struct store *st, void *ctx)
{
	int r = sq_int(st, Q_WL_LATEST_END, NULL, 0, "reading the latest workload window", ctx);

	return r < 0 ? r : 0;
}

int store_workloads_latest_ms(struct store *st, int64_t *ms)
{
	*ms = 0;
	sq_clearerr();
	return store_call(st, 0, latest_end_tx, ms);
}

static int series_tx(struct store *st, void *ctx)
{
	struct read_args *c = ctx;
	const struct store_workload_series *q = c->in;
	const struct catalog_workload_metric *m = catalog_workload_metric_find(q->metric);
	const struct bind f[] = {B_TEXT(":ref", q->ref)};
	sqlite3_stmt *s = NULL;
	json_t *points;
	char path[80];
	int64_t wid;
	int r = sq_get(st, Q_WL_FIND, f, SQ_LEN(f), &s);

	if (r >= 0 && (r = sq_step(st, s, "finding the workload")) == 0)
		r = sq_seterr(-ENOENT, "no workload with ref \"%s\" has been stored", q->ref);
	if (r < 0)
		return r;
	wid = sqlite3_column_int64(s, 0);
	points = sq_jcheck(json_array());
	c->out = sq_jcheck(json_object());
	sq_jset(c->out, "ref", sq_jtext(q->ref));
	sq_jset(c->out, "key", sq_jtext(sq_col_text(s, 1)));
	sq_jset(c->out, "kind", sq_jtext(sq_col_text(s, 2)));
	sq_jset(c->out, "name", sq_jtext(sq_col_text(s, 3)));
	sq_jset(c->out, "metric", sq_jtext(m->name));
	sq_jset(c->out, "unit", sq_jtext(m->unit));
	sq_jset(c->out, "since_ms", sq_jint(q->since_ms));
	sq_jset(c->out, "until_ms", sq_jint(q->until_ms));
	sq_jset(c->out, "step_ms", sq_jint(q->step_ms));
	sq_jset(c->out, "points", points);
	{
		const struct bind n[] = {B_TEXT(":name", m->name)};
		int64_t idx = -1;

		r = sq_int(st, Q_WL_FIGURE_FIND, n, SQ_LEN(n), "finding a workload figure", &idx);
		if (r < 0)
			return r;
		/* a figure no window has held yet: every element is null */
		snprintf(path, sizeof(path), "$[%" PRId64 "]", r ? idx : INT64_C(1000000));
	}
	{
		const struct bind b[] = {B_INT(":workload_id", wid), B_INT(":since", q->since_ms),
		                         B_INT(":until", q->until_ms), B_INT(":step", q->step_ms),
		                         B_TEXT(":path", path)};

		r = sq_get(st, Q_WL_SERIES, b, SQ_LEN(b), &s);
	}
	while (r >= 0 && (r = sq_step(st, s, "reading the workload's series")) > 0) {
		if (!sqlite3_column_int64(s, 4))
			continue; /* windows where the figure was unknown */
		json_array_append_new(
		    points,
		    sq_jcheck(json_pack(
		        "{s:o, s:o, s:o, s:o, s:o, s:o}", "t", sq_jint(sqlite3_column_int64(s, 5)),
		        "bucket_ms", sq_jint(q->since_ms + sqlite3_column_int64(s, 0) * q->step_ms),
		        "min", sq_col_real_json(s, 1), "avg", sq_col_real_json(s, 2), "max",
		        sq_col_real_json(s, 3), "n", sq_jint(sqlite3_column_int64(s, 4)))));
	}
	return r;
}

int store_workloads_series(struct store *st, const struct store_workload_series *q, json_t **out)
{
	struct read_args c = {.in = q};

	*out = NULL;
	sq_clearerr();
	if (!q->ref || !catalog_workload_metric_find(q->metric))
		return sq_seterr(-EINVAL, "no workload figure named \"%s\"",
		                 q->metric ? q->metric : "");
	if (q->since_ms < 0 || q->until_ms <= q->since_ms || q->step_ms <= 0)
		return sq_seterr(-EINVAL, "the range or step is empty or negative");
	return sq_read_call(st, series_tx, &c, out, NULL);
}
