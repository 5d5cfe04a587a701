/*
 * storep: what the parts of the store share (daemon/store.c, store_write.c,
 * store_read.c, store_events.c, store_retention.c) and nobody else may
 * include: the handle, the statement ids of the table in store.c, named
 * binds, the transaction wrapper and the column and JSON helpers. Helpers
 * that can fail return -errno with a message for store_last_error().
 */
#ifndef TW_STOREP_H
#define TW_STOREP_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>
#include <sqlite3.h>

#include "store.h"

#define SQ_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* Every statement the store runs; the SQL is the queries table in store.c. */
enum query {
	Q_BEGIN,
	Q_BEGIN_WRITE,
	Q_COMMIT,
	Q_ROLLBACK,
	Q_USER_VERSION,
	Q_APP_ID,
	Q_OBJECTS,
	Q_QUICK_CHECK,
	Q_INTEGRITY,
	Q_FK_CHECK,
	Q_WAL,
	Q_RUN_ADD,
	Q_DOC_ADD,
	Q_TOTAL_BUMP,
	Q_METRIC_GET,
	Q_METRIC_ADD,
	Q_METRIC_UNIT,
	Q_SAMPLE_ADD,
	Q_SERIES_ADD,
	Q_POINT_ADD,
	Q_CYCLE_ADD,
	Q_CYCLE_END,
	Q_CYCLE_INTERRUPT,
	Q_CYCLE_LAST,
	Q_FP_LATEST,
	Q_FP_SEEN,
	Q_FP_ADD,
	Q_FP_ALL,
	Q_REC_ADD,
	Q_REC_RUN_ADD,
	Q_REC_LATEST,
	Q_REC_RUNS,
	Q_HEADROOM_ADD,
	Q_HEADROOM_LATEST,
	Q_STATE_SET,
	Q_STATE_GET,
	Q_DATA_VERSION,
	Q_TABLES_V1,
	Q_LATEST_OK,
	Q_LATEST_FAILED,
	Q_RUNS_PAGE,
	Q_RUNS_PAGE_PROBE,
	Q_RUNS_PAGE_STATUS,
	Q_RUN_KEY,
	Q_RUN_GET,
	Q_RUN_SAMPLES,
	Q_RUN_POINTS,
	Q_SERIES_SEEK,
	Q_SERIES_GROUP,
	Q_MARKERS,
	Q_METRIC_NAMES,
	Q_SNAP_PROBES,
	Q_RUN_TIMES,
	Q_TOTALS,
	Q_RET_RUNS,
	Q_RET_DOCS,
	Q_RET_SERIES,
	Q_RET_PRUNE,
	Q_RET_RECS,
	Q_RET_HEADROOM,
	Q_RET_CYCLES,
	Q_RET_NEWEST,
	Q_RET_NEWEST_BEFORE,
	Q_EVENT_ADD,
	Q_EVENT_LAST_REF,
	Q_EVENTS_PAGE,
	Q_EVENTS_COUNT,
	Q_EVENT_TOTALS,
	Q_HIST_SCALAR,
	Q_HIST_POINT,
	Q_VERDICTS,
	Q_RUN_BACK,
	Q_WL_FIND_KEY,
	Q_WL_ADD,
	Q_WL_FIGURE_ADD,
	Q_WL_FIGURE_FIND,
	Q_WL_WINDOW_ADD,
	Q_WL_FIGURES_ADD,
	Q_WL_LATEST_SET,
	Q_WL_LATEST,
	Q_WL_LATEST_END,
	Q_WL_FIND,
	Q_WL_SERIES,
	Q_RET_WL_WINDOWS,
	Q_RET_WL_ORPHANS,
	Q__COUNT
};

struct store {
	pthread_mutex_t lock; /* serialises every call on the handle */
	sqlite3 *db;
	sqlite3_stmt *stmt[Q__COUNT];
	int flags;
	int lock_fd; /* flock'ed "<path>.lock" of a writer, or -1 */
	char *path;
};

/* ---- errors (store.c) --------------------------------------------------- */

/* Clears the calling thread's message for store_last_error() (a call that
 * succeeded leaves none). */
void sq_clearerr(void);
/* Sets the message (which may quote the previous one) and returns err. */
int __attribute__((format(printf, 2, 3))) sq_seterr(int err, const char *fmt, ...);

/* ---- statements (store.c) ----------------------------------------------- */

enum bind_type { BT_NULL, BT_INT, BT_REAL, BT_TEXT, BT_BLOB };

struct bind {
	const char *name;
	enum bind_type type;
	int optional; /* the statement need not use the name */
	int64_t i;
	double d;
	const void *p;
	size_t n;
};

/* The columns of RUN_COLS (store.c), which the statements that read a run
 * put first. */
#define STORE_RUN_NCOLS 9

/* clang-format off */
#define B_INT(nm, v) {.name = (nm), .type = BT_INT, .i = (v)}
#define B_REAL(nm, v) {.name = (nm), .type = BT_REAL, .d = (v)}
/* A text, or NULL. */
#define B_TEXT(nm, v) {.name = (nm), .type = BT_TEXT, .p = (v)}
#define B_BLOB(nm, v, len) {.name = (nm), .type = BT_BLOB, .p = (v), .n = (len)}
/* An id, or NULL when it is not positive. */
#define B_ID(nm, v) {.name = (nm), .type = (v) > 0 ? BT_INT : BT_NULL, .i = (v)}
/* clang-format on */

/* The prepared statement q with the values bound, ready to step. */
int sq_get(struct store *st, enum query q, const struct bind *b, size_t n, sqlite3_stmt **out);
/* Steps s: 1 with a row, 0 when done, or -errno. */
int sq_step(struct store *st, sqlite3_stmt *s, const char *what);
/* Runs a statement to completion; *changes (may be NULL) gets the count of
 * rows it changed. */
int sq_exec(struct store *st, enum query q, const struct bind *b, size_t n, const char *what,
            int64_t *changes);
/* Runs a statement that yields one integer: 1 with *v set, 0 without a row. */
int sq_int(struct store *st, enum query q, const struct bind *b, size_t n, const char *what,
           int64_t *v);
const char *sq_col_text(sqlite3_stmt *s, int i);
int sq_col_null(sqlite3_stmt *s, int i);

/* ---- JSON (store.c) ---------------------------------------------------- */

/* j, or abort when building it ran out of memory. */
json_t *sq_jcheck(json_t *j);
/* Text from the database as a JSON string; bytes that are not UTF-8
 * become U+FFFD. NULL: json null. */
json_t *sq_jtextn(const void *data, size_t n);
json_t *sq_jtext(const char *s);
json_t *sq_jint(int64_t v);
/* A JSON column parsed (NULL column: json null). -EBADMSG when damaged. */
int sq_col_json(sqlite3_stmt *s, int i, const char *what, json_t **out);
/* Compact text of a JSON value for a JSON column; flags may add
 * JSON_SORT_KEYS for a canonical form. */
int sq_json_text(const json_t *j, size_t flags, const char *what, char **out);

/* A finite number as JSON, null otherwise (store_read.c). */
json_t *sq_jnum_checked(double d);
/* Sets o[key] = v, stealing v; a key that is not UTF-8 is cleaned first
 * (store_read.c). */
void sq_jset(json_t *o, const char *key, json_t *v);
/* A REAL column as JSON; NULL: json null (store_read.c). */
json_t *sq_col_real_json(sqlite3_stmt *s, int i);

/* ---- transactions (store.c) --------------------------------------------- */

typedef int store_fn(struct store *st, void *ctx);

/* Every public call that touches the database goes through here: fn runs
 * under the handle's lock inside one transaction, a write one (BEGIN
 * IMMEDIATE) or a read one that sees a single snapshot. */
int store_call(struct store *st, int write, store_fn *fn, void *ctx);

/* A read's input and its results. */
struct read_args {
	const void *in;
	json_t *out, *out2;
	struct store_page *page; /* a listing's facts besides its rows (out) */
};
/* Runs a read and hands over its result, or frees it on failure. */
int sq_read_call(struct store *st, store_fn *fn, struct read_args *c, json_t **out, json_t **out2);

#endif
