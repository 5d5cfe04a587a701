/*
 * store: the SQLite database of probe runs, samples, points, fingerprints,
 * cycles, recommendations and headroom (see daemon/store.h). The only file
 * that calls SQLite: every statement is in the table below, every value is
 * bound by name, every write is one explicit transaction, and every SQLite
 * error goes through store_fail() to a -errno and a message.
 */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "builtin.h"
#include "catalog.h"
#include "fingerprint.h"
#include "store.h"
#include "xmalloc.h"

#define STORE_APP_ID 0x54576462u /* "TWdb", set by sql/schema.sql */
#define STORE_BUSY_MS 5000
#define STORE_RAW_MAX 65536
#define STORE_BATCH 1000
#define MS_PER_DAY INT64_C(86400000)
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Every statement the store runs. */
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
	Q_EVENT_ADD,
	Q_EVENT_LAST_REF,
	Q_EVENTS_PAGE,
	Q_EVENTS_COUNT,
	Q_EVENT_TOTALS,
	Q_HIST_SCALAR,
	Q_HIST_POINT,
	Q_VERDICTS,
	Q_RUN_BACK,
	Q__COUNT
};

/* The columns every run listing reads, in this order. */
#define RUN_COLS "id, probe, status, reason, cycle_id, started_ms, ended_ms"

/* The latest ok run of each probe, which retention keeps whole. */
#define KEEP_CTE                                                                                   \
	"WITH keep(id) AS (SELECT (SELECT r.id FROM runs r WHERE r.probe = p.probe"                \
	" AND r.status = 'ok' ORDER BY r.id DESC LIMIT 1)"                                         \
	" FROM (SELECT DISTINCT probe FROM run_totals) p) "

/* The next batch of runs whose documents and points are due to go. */
#define OLD_UNPRUNED                                                                               \
	KEEP_CTE ", old(id) AS (SELECT id FROM runs WHERE pruned_ms IS NULL"                       \
	         " AND started_ms < :cut AND id NOT IN (SELECT id FROM keep WHERE id IS NOT NULL)" \
	         " ORDER BY started_ms, id LIMIT :batch) "

/* The fingerprint row a run was measured on: its cycle's, else the one
 * current when it started; 0 when unknown. */
#define FP_OF_RUN                                                                                  \
	"coalesce(c.fingerprint_id, (SELECT max(f.id) FROM fingerprints f"                         \
	" WHERE f.first_seen_ms <= r.started_ms), 0)"

/* Runs listed newest first from :cursor down, filtered. The unary + keeps
 * the planner on the id order for the time range. */
#define RUNS_PAGE(where)                                                                           \
	"SELECT " RUN_COLS " FROM runs WHERE " where " id < :cursor"                               \
	" AND (:probe IS NULL OR probe = :probe) AND (:status IS NULL OR status = :status)"        \
	" AND +started_ms BETWEEN :since AND :until ORDER BY id DESC LIMIT :limit"

static const char *const queries[Q__COUNT] = {
    [Q_BEGIN] = "BEGIN",
    [Q_BEGIN_WRITE] = "BEGIN IMMEDIATE",
    [Q_COMMIT] = "COMMIT",
    [Q_ROLLBACK] = "ROLLBACK",
    [Q_USER_VERSION] = "PRAGMA user_version",
    [Q_APP_ID] = "PRAGMA application_id",
    [Q_OBJECTS] = "SELECT count(*) FROM sqlite_schema",
    /* The tables every schema version since 1 has: a file that claims a
     * version but lacks them (a bad salvage, say) is refused. */
    [Q_TABLES_V1] = "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name IN"
                    " ('fingerprints', 'cycles', 'runs', 'run_docs', 'run_totals', 'metrics',"
                    " 'samples', 'series', 'points', 'recommendations', 'recommendation_runs',"
                    " 'headroom', 'state')",
    [Q_QUICK_CHECK] = "PRAGMA quick_check",
    [Q_INTEGRITY] = "PRAGMA integrity_check",
    [Q_FK_CHECK] = "PRAGMA foreign_key_check",
    [Q_WAL] = "PRAGMA journal_mode = WAL",
    [Q_RUN_ADD] = "INSERT INTO runs (cycle_id, probe, started_ms, ended_ms, status, reason,"
                  " params, loadavg1, steal_pct, cpu_s) VALUES (:cycle_id, :probe, :started_ms,"
                  " :ended_ms, :status, :reason, :params, :loadavg1, :steal_pct, :cpu_s)",
    [Q_DOC_ADD] = "INSERT INTO run_docs (run_id, doc, raw) VALUES (:run_id, :doc, :raw)",
    [Q_TOTAL_BUMP] = "INSERT INTO run_totals (probe, status, n) VALUES (:probe, :status, 1)"
                     " ON CONFLICT (probe, status) DO UPDATE SET n = n + 1",
    [Q_METRIC_GET] = "SELECT id, unit FROM metrics WHERE name = :name",
    [Q_METRIC_ADD] = "INSERT INTO metrics (name, unit) VALUES (:name, :unit)",
    [Q_METRIC_UNIT] = "UPDATE metrics SET unit = :unit WHERE id = :id",
    [Q_SAMPLE_ADD] = "INSERT INTO samples (metric_id, t, run_id, value)"
                     " VALUES (:metric_id, :t, :run_id, :value)",
    [Q_SERIES_ADD] = "INSERT INTO series (run_id, name, x_unit, y_unit)"
                     " VALUES (:run_id, :name, :x_unit, :y_unit)",
    [Q_POINT_ADD] = "INSERT INTO points (series_id, i, x, y) VALUES (:series_id, :i, :x, :y)",
    [Q_CYCLE_ADD] = "INSERT INTO cycles (started_ms, trigger, waited_s, fingerprint_id)"
                    " VALUES (:started_ms, :trigger, :waited_s,"
                    " (SELECT max(id) FROM fingerprints))",
    [Q_CYCLE_END] = "UPDATE cycles SET ended_ms = :ended_ms, status = :status WHERE id = :id",
    [Q_CYCLE_LAST] = "SELECT id, trigger, status, started_ms, ended_ms, waited_s FROM cycles"
                     " WHERE ended_ms IS NOT NULL ORDER BY id DESC LIMIT 1",
    [Q_FP_LATEST] = "SELECT id, first_seen_ms, last_seen_ms, identity FROM fingerprints"
                    " ORDER BY id DESC LIMIT 1",
    [Q_FP_SEEN] = "UPDATE fingerprints SET last_seen_ms = max(last_seen_ms, :now),"
                  " full = :full WHERE id = :id",
    [Q_FP_ADD] = "INSERT INTO fingerprints (first_seen_ms, last_seen_ms, identity, full, diff)"
                 " VALUES (:now, :now, :identity, :full, :diff)",
    [Q_FP_ALL] = "SELECT id, first_seen_ms, last_seen_ms, identity, full, diff"
                 " FROM fingerprints ORDER BY id DESC",
    [Q_REC_ADD] = "INSERT INTO recommendations (computed_ms, verdict, confidence, result,"
                  " inputs) VALUES (:computed_ms, :verdict, :confidence, :result, :inputs)",
    [Q_REC_RUN_ADD] = "INSERT OR IGNORE INTO recommendation_runs (recommendation_id, run_id)"
                      " VALUES (:rec_id, :run_id)",
    [Q_REC_LATEST] = "SELECT id, computed_ms, result, inputs FROM recommendations"
                     " ORDER BY id DESC LIMIT 1",
    [Q_REC_RUNS] = "SELECT run_id FROM recommendation_runs WHERE recommendation_id = :id"
                   " ORDER BY run_id",
    [Q_HEADROOM_ADD] = "INSERT INTO headroom (computed_ms, data) VALUES (:computed_ms, :data)",
    [Q_HEADROOM_LATEST] = "SELECT computed_ms, data FROM headroom ORDER BY id DESC LIMIT 1",
    [Q_STATE_SET] = "INSERT INTO state (key, value) VALUES (:key, :value)"
                    " ON CONFLICT (key) DO UPDATE SET value = excluded.value",
    [Q_STATE_GET] = "SELECT value FROM state WHERE key = :key",
    [Q_DATA_VERSION] = "PRAGMA data_version",
    [Q_LATEST_OK] = "SELECT r.probe, r.id, d.doc FROM (SELECT DISTINCT probe FROM run_totals) p"
                    " JOIN runs r ON r.id = (SELECT x.id FROM runs x JOIN run_docs xd"
                    " ON xd.run_id = x.id WHERE x.probe = p.probe AND x.status = 'ok'"
                    " AND xd.doc IS NOT NULL ORDER BY x.id DESC LIMIT 1)"
                    " JOIN run_docs d ON d.run_id = r.id ORDER BY r.probe",
    [Q_RUNS_PAGE] = RUNS_PAGE(""),
    [Q_RUNS_PAGE_PROBE] = RUNS_PAGE("probe = :probe AND"),
    [Q_RUNS_PAGE_STATUS] = RUNS_PAGE("status = :status AND"),
    [Q_RUN_KEY] = "SELECT s.value, m.unit FROM metrics m JOIN samples s ON s.metric_id = m.id"
                  " AND s.t = :t AND s.run_id = :run_id WHERE m.name = :metric",
    [Q_RUN_GET] = "SELECT " RUN_COLS ", params, d.doc, d.raw, loadavg1, steal_pct, cpu_s,"
                  " pruned_ms FROM runs LEFT JOIN run_docs d ON d.run_id = runs.id"
                  " WHERE runs.id = :id",
    [Q_RUN_SAMPLES] = "SELECT m.name, s.value, m.unit FROM samples s"
                      " JOIN metrics m ON m.id = s.metric_id WHERE s.run_id = :id"
                      " ORDER BY m.name",
    [Q_RUN_POINTS] = "SELECT s.name, s.x_unit, s.y_unit, p.x, p.y FROM series s"
                     " LEFT JOIN points p ON p.series_id = s.id WHERE s.run_id = :id"
                     " ORDER BY s.name, p.i",
    /* Series buckets, two ways to the same answer: one range aggregate per
     * bucket, which needs no sort (up to SERIES_SEEK_MAX buckets), or
     * grouping by the integer quotient of the time (many sparse buckets). */
    [Q_SERIES_SEEK] = "WITH RECURSIVE b(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM b"
                      " WHERE i + 1 < :buckets) SELECT i, (SELECT json_array(min(value),"
                      " avg(value), max(value), count(*)) FROM samples"
                      " WHERE metric_id = :metric_id AND t >= :since + i * :step"
                      " AND t < min(:since + (i + 1) * :step, :until)) FROM b",
    [Q_SERIES_GROUP] = "SELECT (t - :since) / :step AS b, min(value), avg(value), max(value),"
                       " count(*) FROM samples WHERE metric_id = :metric_id"
                       " AND t >= :since AND t < :until GROUP BY b ORDER BY b",
    [Q_MARKERS] = "SELECT first_seen_ms, diff FROM fingerprints WHERE diff IS NOT NULL"
                  " AND first_seen_ms >= :since AND first_seen_ms < :until"
                  " ORDER BY first_seen_ms",
    [Q_METRIC_NAMES] = "SELECT name, unit FROM metrics ORDER BY name",
    [Q_SNAP_PROBES] = "SELECT p.probe,"
                      " (SELECT id FROM runs WHERE probe = p.probe ORDER BY id DESC LIMIT 1),"
                      " (SELECT id FROM runs WHERE probe = p.probe AND status = 'ok'"
                      " ORDER BY id DESC LIMIT 1)"
                      " FROM (SELECT DISTINCT probe FROM run_totals) p ORDER BY p.probe",
    [Q_RUN_TIMES] = "SELECT status, started_ms, ended_ms FROM runs WHERE id = :id",
    [Q_TOTALS] = "SELECT probe, status, n FROM run_totals ORDER BY probe, status",
    [Q_RET_RUNS] = KEEP_CTE "DELETE FROM runs WHERE id IN (SELECT id FROM runs"
                            " WHERE started_ms < :cut AND id NOT IN (SELECT id FROM keep"
                            " WHERE id IS NOT NULL) ORDER BY started_ms LIMIT :batch)",
    [Q_RET_DOCS] = OLD_UNPRUNED "DELETE FROM run_docs WHERE run_id IN (SELECT id FROM old)",
    [Q_RET_SERIES] = OLD_UNPRUNED "DELETE FROM series WHERE run_id IN (SELECT id FROM old)",
    [Q_RET_PRUNE] = OLD_UNPRUNED "UPDATE runs SET pruned_ms = :now"
                                 " WHERE id IN (SELECT id FROM old)",
    [Q_RET_RECS] = "DELETE FROM recommendations WHERE id IN (SELECT id FROM recommendations"
                   " WHERE computed_ms < :cut AND id < (SELECT max(id) FROM recommendations)"
                   " ORDER BY computed_ms LIMIT :batch)",
    [Q_RET_HEADROOM] = "DELETE FROM headroom WHERE id IN (SELECT id FROM headroom"
                       " WHERE computed_ms < :cut AND id < (SELECT max(id) FROM headroom)"
                       " ORDER BY computed_ms LIMIT :batch)",
    [Q_RET_CYCLES] = "DELETE FROM cycles WHERE id IN (SELECT id FROM cycles c"
                     " WHERE started_ms < :cut AND id < (SELECT max(id) FROM cycles)"
                     " AND NOT EXISTS (SELECT 1 FROM runs WHERE cycle_id = c.id)"
                     " ORDER BY id LIMIT :batch)",
    [Q_EVENT_ADD] = "INSERT INTO events (kind, metric, t_ms, ref_id, detected_ms, recorded_ms,"
                    " data) VALUES (:kind, :metric, :t_ms, :ref_id, :detected_ms, :recorded_ms,"
                    " :data) ON CONFLICT (metric, ref_id) DO NOTHING",
    [Q_EVENT_LAST_REF] = "SELECT ref_id FROM events WHERE metric = :metric"
                         " ORDER BY ref_id DESC LIMIT 1",
    [Q_EVENTS_PAGE] = "SELECT id, recorded_ms, data FROM events"
                      " WHERE (:metric IS NULL OR metric = :metric)"
                      " AND t_ms BETWEEN :since AND :until ORDER BY t_ms DESC, id DESC"
                      " LIMIT :limit",
    [Q_EVENTS_COUNT] = "SELECT count(*) FROM events WHERE (:metric IS NULL OR metric = :metric)"
                       " AND t_ms BETWEEN :since AND :until",
    [Q_EVENT_TOTALS] = "SELECT metric, count(*), max(detected_ms) FROM events GROUP BY metric"
                       " ORDER BY metric",
    [Q_HIST_SCALAR] = "SELECT r.id, s.t, s.value, " FP_OF_RUN " FROM metrics m"
                      " JOIN samples s ON s.metric_id = m.id JOIN runs r ON r.id = s.run_id"
                      " LEFT JOIN cycles c ON c.id = r.cycle_id WHERE m.name = :metric"
                      " AND s.run_id >= :from AND r.status = 'ok' ORDER BY s.run_id",
    [Q_HIST_POINT] = "SELECT r.id, r.started_ms, p.y, " FP_OF_RUN " FROM runs r"
                     " JOIN series se ON se.run_id = r.id AND se.name = :series"
                     " JOIN points p ON p.series_id = se.id AND p.x BETWEEN :x - :tol AND :x + :tol"
                     " LEFT JOIN cycles c ON c.id = r.cycle_id WHERE r.probe = :probe"
                     " AND r.status = 'ok' AND r.id >= :from ORDER BY r.id, p.i",
    [Q_RUN_BACK] = "SELECT id FROM runs WHERE probe = :probe AND status = 'ok' AND id <= :before"
                   " ORDER BY id DESC LIMIT 1 OFFSET :back",
    [Q_VERDICTS] = "SELECT r.id, r.computed_ms, r.verdict, r.confidence,"
                   " coalesce((SELECT max(f.id) FROM fingerprints f"
                   " WHERE f.first_seen_ms <= r.computed_ms), 0)"
                   " FROM recommendations r WHERE r.id >= :from ORDER BY r.id",
};

/* Connection settings, run once at open. */
static const char *const settings_rw[] = {
    "PRAGMA foreign_keys = ON",
    "PRAGMA synchronous = NORMAL", /* WAL: a commit survives the process's death */
    "PRAGMA journal_size_limit = 16777216",
};
static const char *const settings_ro[] = {
    "PRAGMA query_only = ON",
};

struct store {
	pthread_mutex_t lock; /* serialises every call on the handle */
	sqlite3 *db;
	sqlite3_stmt *stmt[Q__COUNT];
	int flags;
	int lock_fd; /* flock'ed "<path>.lock" of a writer, or -1 */
	char *path;
};

/* ---- errors ------------------------------------------------------------ */

static _Thread_local char store_msg[512];

const char *store_last_error(void)
{
	return store_msg;
}

/* Sets the message (which may quote the previous one) and returns err. */
static int __attribute__((format(printf, 2, 3))) seterr(int err, const char *fmt, ...)
{
	char buf[sizeof(store_msg)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	memcpy(store_msg, buf, sizeof(buf));
	return err;
}

/* SQLite's primary result codes as errno values. */
static const struct {
	int code;
	int err;
} sqlite_errnos[] = {
    {SQLITE_FULL, ENOSPC},       {SQLITE_BUSY, EBUSY},      {SQLITE_LOCKED, EBUSY},
    {SQLITE_CORRUPT, EBADMSG},   {SQLITE_NOTADB, EBADMSG},  {SQLITE_NOMEM, ENOMEM},
    {SQLITE_READONLY, EROFS},    {SQLITE_PERM, EACCES},     {SQLITE_AUTH, EACCES},
    {SQLITE_CONSTRAINT, EINVAL}, {SQLITE_MISMATCH, EINVAL}, {SQLITE_TOOBIG, E2BIG},
    {SQLITE_INTERRUPT, EINTR},   {SQLITE_CANTOPEN, ENOENT}, {SQLITE_NOLFS, EFBIG},
    {SQLITE_RANGE, ERANGE},      {SQLITE_SCHEMA, EAGAIN},   {SQLITE_IOERR, EIO},
};

/* The errno behind an I/O error. SQLite keeps it per file (the write-ahead
 * log, the main file); the connection's copy may already be overwritten. */
static int io_errno(sqlite3 *db)
{
	sqlite3_file *wal = NULL;
	int e = 0;

	if (!db)
		return 0;
	if (sqlite3_file_control(db, "main", SQLITE_FCNTL_JOURNAL_POINTER, &wal) == SQLITE_OK &&
	    wal && wal->pMethods &&
	    wal->pMethods->xFileControl(wal, SQLITE_FCNTL_LAST_ERRNO, &e) == SQLITE_OK && e > 0)
		return e;
	if (sqlite3_file_control(db, "main", SQLITE_FCNTL_LAST_ERRNO, &e) == SQLITE_OK && e > 0)
		return e;
	return sqlite3_system_errno(db);
}

static int sqlite_errno(sqlite3 *db, int rc)
{
	if ((rc & 0xff) == SQLITE_IOERR || (rc & 0xff) == SQLITE_CANTOPEN) {
		int sys = io_errno(db);

		if (sys == ENOSPC || sys == EFBIG || sys == EDQUOT)
			return -ENOSPC;
		if (sys > 0)
			return -sys;
	}
	for (size_t i = 0; i < ARRAY_SIZE(sqlite_errnos); i++)
		if (sqlite_errnos[i].code == (rc & 0xff))
			return -sqlite_errnos[i].err;
	return -EIO;
}

/* The one exit for SQLite errors: "what: SQLite's message". */
static int store_fail(struct store *st, int rc, const char *what)
{
	int err = sqlite_errno(st->db, rc);

	if (err == -ENOSPC)
		return seterr(err, "%s: the disk is full (%s)", what, sqlite3_errmsg(st->db));
	return seterr(err, "%s: %s", what, st->db ? sqlite3_errmsg(st->db) : sqlite3_errstr(rc));
}

/* ---- statements ------------------------------------------------------- */

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

/* clang-format off */
#define B_INT(nm, v) {.name = (nm), .type = BT_INT, .i = (v)}
#define B_REAL(nm, v) {.name = (nm), .type = BT_REAL, .d = (v)}
/* A text, or NULL. */
#define B_TEXT(nm, v) {.name = (nm), .type = BT_TEXT, .p = (v)}
#define B_BLOB(nm, v, len) {.name = (nm), .type = BT_BLOB, .p = (v), .n = (len)}
/* An id, or NULL when it is not positive. */
#define B_ID(nm, v) {.name = (nm), .type = (v) > 0 ? BT_INT : BT_NULL, .i = (v)}
/* clang-format on */

static int bind_one(sqlite3_stmt *s, const struct bind *b)
{
	int idx = sqlite3_bind_parameter_index(s, b->name);

	if (idx == 0) {
		assert(b->optional); /* a name the SQL does not use is a typo */
		return SQLITE_OK;
	}
	switch (b->type) {
	case BT_INT:
		return sqlite3_bind_int64(s, idx, b->i);
	case BT_REAL:
		/* NaN and infinities mean "unknown" here. */
		return isfinite(b->d) ? sqlite3_bind_double(s, idx, b->d)
		                      : sqlite3_bind_null(s, idx);
	case BT_TEXT:
		if (!b->p)
			return sqlite3_bind_null(s, idx);
		return sqlite3_bind_text(s, idx, b->p, -1, SQLITE_STATIC);
	case BT_BLOB:
		if (!b->p)
			return sqlite3_bind_null(s, idx);
		return sqlite3_bind_blob64(s, idx, b->p, b->n, SQLITE_STATIC);
	case BT_NULL:
		break;
	}
	return sqlite3_bind_null(s, idx);
}

/* The prepared statement q with the values bound, ready to step. */
static int stmt_get(struct store *st, enum query q, const struct bind *b, size_t n,
                    sqlite3_stmt **out)
{
	sqlite3_stmt *s = st->stmt[q];
	int rc;

	if (!s) {
		rc =
		    sqlite3_prepare_v3(st->db, queries[q], -1, SQLITE_PREPARE_PERSISTENT, &s, NULL);
		if (rc != SQLITE_OK)
			return store_fail(st, rc, "preparing a statement");
		st->stmt[q] = s;
	}
	sqlite3_reset(s);
	sqlite3_clear_bindings(s);
	for (size_t i = 0; i < n; i++) {
		rc = bind_one(s, &b[i]);
		if (rc != SQLITE_OK)
			return store_fail(st, rc, b[i].name);
	}
	*out = s;
	return 0;
}

/* Steps s: 1 with a row, 0 when done, or -errno. */
static int stmt_step(struct store *st, sqlite3_stmt *s, const char *what)
{
	int rc = sqlite3_step(s);

	if (rc == SQLITE_ROW)
		return 1;
	if (rc == SQLITE_DONE)
		return 0;
	return store_fail(st, rc, what);
}

/* Runs a statement to completion; *changes (may be NULL) gets the count of
 * rows it changed. */
static int stmt_exec(struct store *st, enum query q, const struct bind *b, size_t n,
                     const char *what, int64_t *changes)
{
	sqlite3_stmt *s = NULL;
	int r = stmt_get(st, q, b, n, &s);

	while (r >= 0 && (r = stmt_step(st, s, what)) > 0)
		;
	sqlite3_reset(s);
	if (r >= 0 && changes)
		*changes = sqlite3_changes64(st->db);
	return r;
}

/* Runs a statement that yields one integer: 1 with *v set, 0 without a row. */
static int stmt_int(struct store *st, enum query q, const struct bind *b, size_t n,
                    const char *what, int64_t *v)
{
	sqlite3_stmt *s = NULL;
	int r = stmt_get(st, q, b, n, &s);

	if (r >= 0 && (r = stmt_step(st, s, what)) > 0)
		*v = sqlite3_column_int64(s, 0);
	sqlite3_reset(s);
	return r;
}

static const char *col_text(sqlite3_stmt *s, int i)
{
	return (const char *)sqlite3_column_text(s, i);
}

static int col_null(sqlite3_stmt *s, int i)
{
	return sqlite3_column_type(s, i) == SQLITE_NULL;
}

/* ---- JSON ---------------------------------------------------------------- */

static json_t *jcheck(json_t *j)
{
	if (!j) {
		fprintf(stderr, "threadwatch: out of memory building JSON\n");
		abort();
	}
	return j;
}

/* Length of the valid UTF-8 sequence at p (at most n bytes), or 0. */
static size_t utf8_len(const unsigned char *p, size_t n)
{
	size_t len;
	uint32_t c, min;

	if (p[0] < 0x80)
		return 1;
	if ((p[0] & 0xe0) == 0xc0)
		len = 2, c = p[0] & 0x1f, min = 0x80;
	else if ((p[0] & 0xf0) == 0xe0)
		len = 3, c = p[0] & 0x0f, min = 0x800;
	else if ((p[0] & 0xf8) == 0xf0)
		len = 4, c = p[0] & 0x07, min = 0x10000;
	else
		return 0;
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (p[i] & 0x3f);
	}
	if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return 0;
	return len;
}

/* Text from the database as a JSON string; bytes that are not UTF-8
 * become U+FFFD, so nothing a probe printed can break the response. */
static json_t *jtextn(const void *data, size_t n)
{
	const unsigned char *p = data;
	char *buf;
	size_t o = 0, k;
	json_t *j;

	if (!p)
		return json_null();
	buf = xmalloc(n * 3 + 1);
	for (size_t i = 0; i < n; i += k) {
		k = utf8_len(p + i, n - i);
		if (k) {
			memcpy(buf + o, p + i, k);
			o += k;
		} else {
			memcpy(buf + o, "\xef\xbf\xbd", 3);
			o += 3;
			k = 1;
		}
	}
	j = jcheck(json_stringn(buf, o));
	free(buf);
	return j;
}

static json_t *jtext(const char *s)
{
	return s ? jtextn(s, strlen(s)) : json_null();
}

static json_t *jnum(double d)
{
	return isfinite(d) ? jcheck(json_real(d)) : json_null();
}

static json_t *jint(int64_t v)
{
	return jcheck(json_integer(v));
}

/* Sets o[key] = v, stealing v; a key that is not UTF-8 is cleaned first. */
static void jset(json_t *o, const char *key, json_t *v)
{
	json_t *k;

	if (json_object_set(o, key, v) < 0) {
		k = jtext(key);
		if (json_object_set(o, json_string_value(k), v) < 0)
			jcheck(NULL);
		json_decref(k);
	}
	json_decref(v);
}

static json_t *col_int_json(sqlite3_stmt *s, int i)
{
	return col_null(s, i) ? json_null() : jint(sqlite3_column_int64(s, i));
}

static json_t *col_real_json(sqlite3_stmt *s, int i)
{
	return col_null(s, i) ? json_null() : jnum(sqlite3_column_double(s, i));
}

static json_t *col_text_json(sqlite3_stmt *s, int i)
{
	const void *p = sqlite3_column_blob(s, i);

	return p ? jtextn(p, (size_t)sqlite3_column_bytes(s, i)) : json_null();
}

/* A JSON column parsed (NULL column: json null). -EBADMSG when damaged. */
static int col_json(sqlite3_stmt *s, int i, const char *what, json_t **out)
{
	json_error_t jerr;
	const char *t = col_text(s, i);

	if (!t) {
		*out = json_null();
		return 0;
	}
	*out = json_loadb(t, (size_t)sqlite3_column_bytes(s, i), JSON_DECODE_ANY, &jerr);
	if (!*out)
		return seterr(-EBADMSG, "%s holds damaged JSON: %s", what, jerr.text);
	return 0;
}

/* Unix ms as RFC 3339 UTC with milliseconds. */
static json_t *jtime(int64_t ms)
{
	int64_t secs = ms / 1000 - (ms % 1000 < 0);
	time_t t = (time_t)secs;
	struct tm tm;
	char buf[48];

	if (!gmtime_r(&t, &tm) || tm.tm_year + 1900 < 0 || tm.tm_year + 1900 > 9999)
		return json_null();
	snprintf(buf, sizeof(buf), "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
	         tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
	         (int)(ms - secs * 1000));
	return jcheck(json_string(buf));
}

/* Compact text of a JSON value for a JSON column; flags may add
 * JSON_SORT_KEYS for a canonical form. */
static int json_text(const json_t *j, size_t flags, const char *what, char **out)
{
	*out = json_dumps(j, JSON_COMPACT | JSON_ENCODE_ANY | flags);
	if (!*out)
		return seterr(-EINVAL, "%s cannot be written as JSON", what);
	return 0;
}

/* ---- transactions and locking ---------------------------------------------- */

typedef int store_fn(struct store *st, void *ctx);

static void stmts_reset(struct store *st)
{
	for (sqlite3_stmt *s = NULL; (s = sqlite3_next_stmt(st->db, s));)
		if (sqlite3_stmt_busy(s))
			sqlite3_reset(s);
}

/* Rolls back what is open, keeping the message of the failure that led
 * here. */
static void tx_rollback(struct store *st)
{
	char saved[sizeof(store_msg)];

	memcpy(saved, store_msg, sizeof(saved));
	stmts_reset(st);
	if (!sqlite3_get_autocommit(st->db))
		stmt_exec(st, Q_ROLLBACK, NULL, 0, "rolling back", NULL);
	memcpy(store_msg, saved, sizeof(saved));
}

/* Runs fn inside one transaction: a write one (BEGIN IMMEDIATE) or a read
 * one that sees a single snapshot. */
static int tx_run(struct store *st, int write, store_fn *fn, void *ctx)
{
	int r;

	r = stmt_exec(st, write ? Q_BEGIN_WRITE : Q_BEGIN, NULL, 0, "starting a transaction", NULL);
	if (r < 0)
		return r;
	r = fn(st, ctx);
	stmts_reset(st);
	if (r >= 0)
		r = stmt_exec(st, Q_COMMIT, NULL, 0, "committing", NULL);
	if (r < 0)
		tx_rollback(st);
	return r;
}

/* Every public call that touches the database goes through here. */
static int store_call(struct store *st, int write, store_fn *fn, void *ctx)
{
	int r;

	assert(st);
	store_msg[0] = '\0';
	pthread_mutex_lock(&st->lock);
	if (write && (st->flags & STORE_READONLY))
		r = seterr(-EROFS, "the database handle is read-only");
	else
		r = tx_run(st, write, fn, ctx);
	pthread_mutex_unlock(&st->lock);
	return r;
}

/* ---- opening --------------------------------------------------------------- */

/* The newest schema version this build knows: 1, or the highest NNN of the
 * embedded sql/NNN-name.sql migrations. */
static int schema_latest(void)
{
	int latest = 1;

	for (unsigned i = 0; i < builtin_count; i++) {
		const char *n = builtin_files[i].name;
		int v;

		if (sscanf(n, "sql/%3d-", &v) == 1 && strlen(n) > 8 && n[7] == '-' && v > latest)
			latest = v;
	}
	return latest;
}

static const struct builtin_file *migration_find(int version)
{
	char prefix[24];

	snprintf(prefix, sizeof(prefix), "sql/%03d-", version);
	for (unsigned i = 0; i < builtin_count; i++)
		if (!strncmp(builtin_files[i].name, prefix, strlen(prefix)))
			return &builtin_files[i];
	return NULL;
}

/* Takes the writer's lock: an exclusive flock on "<path>.lock" holding the
 * owner's pid, next to the real file so that a symlink finds the same lock. */
static int lock_take(struct store *st, const char *path)
{
	char *real = realpath(path, NULL), *lock_path, buf[32];
	ssize_t n;
	int fd, r = 0;

	xasprintf(&lock_path, "%s.lock", real ? real : path);
	free(real);
	fd = open(lock_path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOCTTY, 0644);
	if (fd < 0) {
		r = seterr(-errno, "cannot open the lock file \"%s\": %s", lock_path,
		           strerror(errno));
		goto out;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		if (errno != EWOULDBLOCK) {
			r = seterr(-errno, "cannot lock \"%s\": %s", lock_path, strerror(errno));
		} else {
			n = pread(fd, buf, sizeof(buf) - 1, 0);
			buf[n > 0 ? n : 0] = '\0';
			buf[strcspn(buf, "\n")] = '\0';
			r = seterr(-EBUSY,
			           "\"%s\" is in use by another threadwatchd (pid %s holds \"%s\")",
			           path, buf[0] ? buf : "unknown", lock_path);
		}
		close(fd);
		goto out;
	}
	/* The pid only helps the message above; failing to write it is harmless. */
	if (ftruncate(fd, 0) == 0) {
		n = snprintf(buf, sizeof(buf), "%ld\n", (long)getpid());
		if (pwrite(fd, buf, (size_t)n, 0) != n)
			buf[0] = '\0';
	}
	st->lock_fd = fd;
out:
	free(lock_path);
	return r;
}

static uint32_t be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* What is at `path` before SQLite touches it. */
struct file_state {
	int exists; /* a non-empty file */
	int wal;    /* a non-empty write-ahead log next to it */
};

/* Looks at the path without opening it: closing any descriptor of the
 * database would drop the POSIX locks SQLite holds on it in this process
 * (another handle may have it open). */
static int file_inspect(const char *path, struct file_state *fs)
{
	struct stat sb;
	char *wal_path;

	memset(fs, 0, sizeof(*fs));
	if (stat(path, &sb) < 0) {
		if (errno == ENOENT)
			return 0;
		return seterr(-errno, "cannot stat \"%s\": %s", path, strerror(errno));
	}
	if (!S_ISREG(sb.st_mode))
		return seterr(-EINVAL, "\"%s\" is not a regular file", path);
	fs->exists = sb.st_size > 0;
	xasprintf(&wal_path, "%s-wal", path);
	fs->wal = stat(wal_path, &sb) == 0 && sb.st_size > 0;
	free(wal_path);
	return 0;
}

/* Checks the SQLite header of an existing file, read through SQLite's own
 * descriptor before SQLite reads a page. Without a write-ahead log the
 * header is the truth, so a file that is not a database, is truncated,
 * belongs to another program or is newer than this build is refused
 * before anything else happens to it. */
static int header_check(struct store *st, int wal)
{
	unsigned char h[100];
	uint32_t page, pages, version;
	sqlite3_file *f = NULL;
	sqlite3_int64 size = 0;
	const char *path = st->path;

	if (sqlite3_file_control(st->db, "main", SQLITE_FCNTL_FILE_POINTER, &f) != SQLITE_OK ||
	    !f || !f->pMethods || f->pMethods->xFileSize(f, &size) != SQLITE_OK)
		return seterr(-EIO, "cannot read the size of \"%s\"", path);
	if (size < (sqlite3_int64)sizeof(h) || f->pMethods->xRead(f, h, sizeof(h), 0) != SQLITE_OK)
		return seterr(-EBADMSG, "\"%s\" is not a database (%lld bytes, too short)", path,
		              (long long)size);
	if (memcmp(h, "SQLite format 3", 16) != 0)
		return seterr(-EBADMSG, "\"%s\" is not an SQLite database (no SQLite header)",
		              path);
	page = (uint32_t)h[16] << 8 | h[17];
	if (page == 1)
		page = 65536;
	if (page < 512 || page > 65536 || (page & (page - 1)))
		return seterr(-EBADMSG, "\"%s\" is damaged (page size %u in its header)", path,
		              page);
	if (wal)
		return 0; /* the log may hold newer pages; SQLite decides below */
	pages = be32(h + 28);
	if (size % page)
		return seterr(-EBADMSG,
		              "\"%s\" is truncated or damaged (%lld bytes is not a whole number "
		              "of %u-byte pages)",
		              path, (long long)size, page);
	if (pages && be32(h + 24) == be32(h + 92) && (uint64_t)size < (uint64_t)pages * page)
		return seterr(
		    -EBADMSG,
		    "\"%s\" is truncated (its header counts %u pages, the file holds %lld)", path,
		    pages, (long long)(size / page));
	version = be32(h + 60);
	if (version > (uint32_t)schema_latest())
		return seterr(-ENOTSUP,
		              "\"%s\" has schema version %u, newer than this build knows (%d); "
		              "use a newer threadwatch",
		              path, version, schema_latest());
	if (version && be32(h + 68) != STORE_APP_ID)
		return seterr(-EBADMSG, "\"%s\" is not a threadwatch database (application_id %#x)",
		              path, be32(h + 68));
	return 0;
}

static int exec_list(struct store *st, const char *const *sql, size_t n)
{
	char *msg = NULL;
	int rc;

	for (size_t i = 0; i < n; i++) {
		rc = sqlite3_exec(st->db, sql[i], NULL, NULL, &msg);
		if (rc != SQLITE_OK) {
			sqlite3_free(msg);
			return store_fail(st, rc, sql[i]);
		}
	}
	return 0;
}

/* The first row of a check pragma: 0 when "ok", else -EBADMSG with the
 * finding on one line. */
static int check_pragma(struct store *st, enum query q, const char *what)
{
	sqlite3_stmt *s = NULL;
	char finding[256];
	int r = stmt_get(st, q, NULL, 0, &s);

	if (r >= 0)
		r = stmt_step(st, s, what);
	if (r > 0) {
		const char *res = col_text(s, 0);

		snprintf(finding, sizeof(finding), "%s", res ? res : "no answer");
		for (char *c = finding; *c; c++)
			if (*c == '\n')
				*c = ' ';
		if (strcmp(finding, "ok"))
			r = seterr(-EBADMSG, "\"%s\" is damaged (%s: %s)", st->path, what, finding);
		else
			r = 0;
	} else if (r == 0) {
		r = seterr(-EBADMSG, "\"%s\" is damaged (%s gave no answer)", st->path, what);
	}
	sqlite3_reset(s);
	return r;
}

/* Switches to write-ahead logging (kept in the file once set). */
static int wal_enable(struct store *st)
{
	sqlite3_stmt *s = NULL;
	int r = stmt_get(st, Q_WAL, NULL, 0, &s);

	if (r >= 0)
		r = stmt_step(st, s, "switching to write-ahead logging");
	if (r >= 0 && (r == 0 || strcmp(col_text(s, 0), "wal")))
		r = seterr(-EIO, "cannot switch to write-ahead logging");
	sqlite3_reset(s);
	if (r < 0)
		return seterr(r, "\"%s\": %s", st->path, store_last_error());
	return 0;
}

/* Reads the schema version and refuses what this build cannot use. */
static int db_inspect(struct store *st, int64_t *version)
{
	int64_t app = 0, objects = 0;
	int r;

	r = stmt_int(st, Q_USER_VERSION, NULL, 0, "reading the schema version", version);
	if (r >= 0)
		r = stmt_int(st, Q_APP_ID, NULL, 0, "reading the application id", &app);
	if (r >= 0)
		r = stmt_int(st, Q_OBJECTS, NULL, 0, "reading the schema", &objects);
	if (r < 0)
		return seterr(r, "\"%s\": %s", st->path, store_last_error());
	if (*version > schema_latest())
		return seterr(-ENOTSUP,
		              "\"%s\" has schema version %" PRId64 ", newer than this build "
		              "knows (%d); use a newer threadwatch",
		              st->path, *version, schema_latest());
	if (*version == 0 && objects > 0)
		return seterr(-EBADMSG, "\"%s\" is not a threadwatch database (it has tables)",
		              st->path);
	if (*version > 0 && (uint32_t)app != STORE_APP_ID)
		return seterr(-EBADMSG,
		              "\"%s\" is not a threadwatch database (application_id %#" PRIx64 ")",
		              st->path, (uint64_t)app);
	if (*version > 0) {
		r = stmt_int(st, Q_TABLES_V1, NULL, 0, "reading the schema", &objects);
		if (r < 0)
			return seterr(r, "\"%s\": %s", st->path, store_last_error());
		if (objects != 13)
			return seterr(-EBADMSG,
			              "\"%s\" is damaged: schema version %" PRId64 " but %" PRId64
			              " of its 13 tables",
			              st->path, *version, objects);
	}
	return 0;
}

/* Applies one embedded SQL file in one transaction; it must leave
 * user_version at `version` and every foreign key intact. */
static int migrate_one(struct store *st, const struct builtin_file *f, int version)
{
	static const char *const fk_off[] = {"PRAGMA foreign_keys = OFF"};
	static const char *const fk_on[] = {"PRAGMA foreign_keys = ON"};
	char *msg = NULL;
	int64_t got = 0, bad = 0;
	int rc, r;

	r = exec_list(st, fk_off, 1);
	if (r < 0)
		return r;
	r = stmt_exec(st, Q_BEGIN_WRITE, NULL, 0, "starting a migration", NULL);
	if (r < 0)
		return r;
	rc = sqlite3_exec(st->db, (const char *)f->data, NULL, NULL, &msg);
	sqlite3_free(msg);
	if (rc != SQLITE_OK)
		r = store_fail(st, rc, f->name);
	if (r >= 0)
		r = stmt_int(st, Q_USER_VERSION, NULL, 0, f->name, &got);
	if (r >= 0 && got != version)
		r = seterr(-EPROTO, "%s left schema version %" PRId64 ", not %d", f->name, got,
		           version);
	if (r >= 0)
		r = stmt_int(st, Q_FK_CHECK, NULL, 0, f->name, &bad);
	if (r > 0)
		r = seterr(-EPROTO, "%s broke a foreign key", f->name);
	if (r >= 0)
		r = stmt_exec(st, Q_COMMIT, NULL, 0, "committing a migration", NULL);
	if (r < 0)
		tx_rollback(st);
	if (r >= 0)
		r = exec_list(st, fk_on, 1);
	return r < 0 ? r : 0;
}

static int migrate(struct store *st, int64_t from)
{
	const int latest = schema_latest();
	const struct builtin_file *f;
	int r;

	if (from == 0) {
		f = builtin_find("sql/schema.sql");
		if (!f)
			return seterr(-ENOENT, "sql/schema.sql is not built in");
		return migrate_one(st, f, latest);
	}
	for (int v = (int)from + 1; v <= latest; v++) {
		f = migration_find(v);
		if (!f)
			return seterr(-ENOENT, "no migration to schema version %d is built in", v);
		r = migrate_one(st, f, v);
		if (r < 0)
			return r;
	}
	return 0;
}

/* Opens the connection and checks the database; writes nothing until the
 * checks passed (a refused file is left exactly as it was). */
static int store_connect(struct store *st, const struct file_state *fs)
{
	const int ro = st->flags & STORE_READONLY;
	int oflags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE;
	int64_t version = 0;
	int rc, r;

	if (!fs->exists && !ro)
		oflags |= SQLITE_OPEN_CREATE;
	rc = sqlite3_open_v2(st->path, &st->db, oflags, NULL);
	if (rc != SQLITE_OK)
		return seterr(sqlite_errno(st->db, rc), "cannot open \"%s\": %s", st->path,
		              st->db ? sqlite3_errmsg(st->db) : sqlite3_errstr(rc));
	/* Until the checks pass, closing must not checkpoint into the file. */
	sqlite3_db_config(st->db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, NULL);
	sqlite3_busy_timeout(st->db, STORE_BUSY_MS);
	r = fs->exists ? header_check(st, fs->wal) : 0;
	if (r >= 0)
		r = db_inspect(st, &version);
	if (r < 0)
		return r;
	if (ro) {
		if (version != schema_latest())
			return seterr(version ? -ENOTSUP : -ENOENT,
			              "\"%s\" has schema version %" PRId64 ", not %d; open it "
			              "read-write once to create or migrate it",
			              st->path, version, schema_latest());
		return exec_list(st, settings_ro, ARRAY_SIZE(settings_ro));
	}
	if (version > 0) {
		r = check_pragma(st, Q_QUICK_CHECK, "quick_check");
		if (r < 0)
			return r;
	}
	r = wal_enable(st);
	if (r < 0)
		return r;
	r = exec_list(st, settings_rw, ARRAY_SIZE(settings_rw));
	if (r >= 0 && version < schema_latest())
		r = migrate(st, version);
	if (r < 0)
		return seterr(r, "\"%s\": %s", st->path, store_last_error());
	sqlite3_db_config(st->db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 0, NULL);
	return 0;
}

int store_open(const char *path, int flags, struct store **out, char *err, size_t errlen)
{
	struct file_state fs;
	struct store *st;
	int r;

	store_msg[0] = '\0';
	*out = NULL;
	st = xcalloc(1, sizeof(*st));
	pthread_mutex_init(&st->lock, NULL);
	st->flags = flags;
	st->lock_fd = -1;
	st->path = xstrdup(path);
	r = (flags & STORE_READONLY) ? 0 : lock_take(st, path);
	if (r >= 0)
		r = file_inspect(path, &fs);
	if (r >= 0 && (flags & STORE_READONLY) && !fs.exists)
		r = seterr(-ENOENT, "\"%s\" does not exist or is empty", path);
	if (r >= 0)
		r = store_connect(st, &fs);
	if (r < 0) {
		char saved[sizeof(store_msg)];

		memcpy(saved, store_msg, sizeof(saved));
		store_close(st);
		memcpy(store_msg, saved, sizeof(saved));
		if (r == -EBADMSG || r == -ENOTSUP)
			seterr(r, "%s; the file was left untouched", saved);
		if (err && errlen)
			snprintf(err, errlen, "%s", store_msg);
		return r;
	}
	*out = st;
	return 0;
}

void store_close(struct store *st)
{
	if (!st)
		return;
	for (size_t i = 0; i < Q__COUNT; i++)
		sqlite3_finalize(st->stmt[i]);
	sqlite3_close(st->db);
	if (st->lock_fd >= 0)
		close(st->lock_fd);
	pthread_mutex_destroy(&st->lock);
	free(st->path);
	free(st);
}

/* ---- writing runs ---------------------------------------------------------- */

/* The id of metric `name`, added (or its unit updated) as needed. */
static int metric_id(struct store *st, const char *name, const char *unit, int64_t *id)
{
	sqlite3_stmt *s = NULL;
	const struct bind b[] = {B_TEXT(":name", name)};
	int r = stmt_get(st, Q_METRIC_GET, b, 1, &s), unit_same = 0;

	if (r >= 0 && (r = stmt_step(st, s, name)) > 0) {
		*id = sqlite3_column_int64(s, 0);
		unit_same = !strcmp(col_text(s, 1), unit);
	}
	sqlite3_reset(s);
	if (r > 0 && !unit_same) {
		const struct bind u[] = {B_INT(":id", *id), B_TEXT(":unit", unit)};

		r = stmt_exec(st, Q_METRIC_UNIT, u, ARRAY_SIZE(u), name, NULL);
	} else if (r == 0) {
		const struct bind a[] = {B_TEXT(":name", name), B_TEXT(":unit", unit)};

		r = stmt_exec(st, Q_METRIC_ADD, a, ARRAY_SIZE(a), name, NULL);
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
		return seterr(-EINVAL, "scalars: not an object");
	json_object_foreach((json_t *)(uintptr_t)scalars, name, sc)
	{
		const char *unit = json_string_value(json_object_get(sc, "unit"));
		char *metric;
		int64_t mid = 0;
		double v;

		if (!finite_number(json_object_get(sc, "value"), &v))
			return seterr(-EINVAL, "scalars.%s.value: not a finite number", name);
		if (!unit)
			return seterr(-EINVAL, "scalars.%s.unit: not a string", name);
		xasprintf(&metric, "%s.%s", run->probe, name);
		r = metric_id(st, metric, unit, &mid);
		if (r >= 0) {
			const struct bind b[] = {B_INT(":metric_id", mid),
			                         B_INT(":t", run->started_ms),
			                         B_INT(":run_id", run_id), B_REAL(":value", v)};

			r = stmt_exec(st, Q_SAMPLE_ADD, b, ARRAY_SIZE(b), metric, NULL);
		}
		free(metric);
		if (r < 0)
			return seterr(r, "scalars.%s: %s", name, store_last_error());
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
		return seterr(-EINVAL, "series.%s.points: not an array", name);
	json_array_foreach(points, i, p)
	{
		double x, y;

		if (json_array_size(p) != 2 || !finite_number(json_array_get(p, 0), &x) ||
		    !finite_number(json_array_get(p, 1), &y))
			return seterr(-EINVAL,
			              "series.%s.points[%zu]: not a pair of finite numbers", name,
			              i);
		const struct bind b[] = {B_INT(":series_id", series_id), B_INT(":i", (int64_t)i),
		                         B_REAL(":x", x), B_REAL(":y", y)};
		r = stmt_exec(st, Q_POINT_ADD, b, ARRAY_SIZE(b), name, NULL);
		if (r < 0)
			return seterr(r, "series.%s.points[%zu]: %s", name, i, store_last_error());
	}
	return 0;
}

static int series_insert(struct store *st, int64_t run_id, const json_t *series)
{
	const char *name;
	json_t *se;
	int r;

	if (series && !json_is_object(series))
		return seterr(-EINVAL, "series: not an object");
	json_object_foreach((json_t *)(uintptr_t)series, name, se)
	{
		const char *xu = json_string_value(json_object_get(se, "x_unit"));
		const char *yu = json_string_value(json_object_get(se, "y_unit"));
		const struct bind b[] = {B_INT(":run_id", run_id), B_TEXT(":name", name),
		                         B_TEXT(":x_unit", xu), B_TEXT(":y_unit", yu)};

		if (!xu || !yu)
			return seterr(-EINVAL, "series.%s: x_unit or y_unit is not a string", name);
		r = stmt_exec(st, Q_SERIES_ADD, b, ARRAY_SIZE(b), name, NULL);
		if (r < 0)
			return seterr(r, "series.%s: %s", name, store_last_error());
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
		return seterr(-EINVAL, "the document is not an object");
	if (doc)
		r = json_text(doc, 0, "the document", &doc_text);
	if (r >= 0 && doc && json_object_get(doc, "params"))
		r = json_text(json_object_get(doc, "params"), 0, "params", &params);
	if (r >= 0 && error) {
		raw = run->raw;
		if (!raw && run->doc && json_text(run->doc, 0, "the document", &raw_doc) >= 0)
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
		};
		r = stmt_exec(st, Q_RUN_ADD, b, ARRAY_SIZE(b), "the run", NULL);
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
		r = stmt_exec(st, Q_DOC_ADD, b, ARRAY_SIZE(b), "the run's document", NULL);
	}
	if (r >= 0) {
		const struct bind b[] = {B_TEXT(":probe", run->probe),
		                         B_TEXT(":status", run->status)};

		r = stmt_exec(st, Q_TOTAL_BUMP, b, ARRAY_SIZE(b), "the run counters", NULL);
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
		store_msg[0] = '\0';
		return seterr(-EINVAL, "a run needs a probe name and a status");
	}
	r = store_call(st, 1, run_insert_tx, &c);
	if (r < 0)
		return seterr(r, "storing a run of \"%s\": %s", run->probe, store_last_error());
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
	int r = stmt_exec(st, Q_CYCLE_ADD, b, ARRAY_SIZE(b), "starting a cycle", NULL);

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
	int r = stmt_exec(st, Q_CYCLE_END, b, ARRAY_SIZE(b), "ending a cycle", &n);

	if (r >= 0 && n == 0)
		r = seterr(-ENOENT, "there is no cycle %" PRId64, c->id);
	return r;
}

int store_cycle_end(struct store *st, int64_t cycle_id, int64_t now_ms, const char *status)
{
	struct cycle_args c = {.id = cycle_id, .ms = now_ms, .text = status};

	return store_call(st, 1, cycle_end_tx, &c);
}

static int last_cycle_tx(struct store *st, void *ctx)
{
	sqlite3_stmt *s = NULL;
	int r = stmt_get(st, Q_CYCLE_LAST, NULL, 0, &s);

	if (r >= 0 && (r = stmt_step(st, s, "reading the last cycle")) > 0)
		*(int64_t *)ctx = sqlite3_column_int64(s, 4);
	else if (r == 0)
		r = seterr(-ENOENT, "no cycle has finished yet");
	return r < 0 ? r : 0;
}

int store_last_cycle(struct store *st, int64_t *ended_ms)
{
	return store_call(st, 0, last_cycle_tx, ended_ms);
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

	r = json_text(ident, JSON_SORT_KEYS, "the fingerprint", &ident_text);
	if (r >= 0)
		r = json_text(c->fp, JSON_SORT_KEYS, "the fingerprint", &full);
	if (r >= 0)
		r = stmt_get(st, Q_FP_LATEST, NULL, 0, &s);
	if (r >= 0 && (r = stmt_step(st, s, "reading the fingerprint")) > 0) {
		prev_id = sqlite3_column_int64(s, 0);
		if (strcmp(col_text(s, 3), ident_text) != 0)
			r = col_json(s, 3, "the last fingerprint", &prev);
	}
	if (r >= 0)
		sqlite3_reset(s);
	if (r >= 0 && prev_id && !prev) {
		const struct bind b[] = {B_INT(":now", c->now), B_TEXT(":full", full),
		                         B_INT(":id", prev_id)};

		r = stmt_exec(st, Q_FP_SEEN, b, ARRAY_SIZE(b), "updating the fingerprint", NULL);
	} else if (r >= 0) {
		if (prev) {
			diff = fingerprint_diff(prev, ident);
			if (!diff)
				diff = xstrdup("identity changed");
		}
		const struct bind b[] = {B_INT(":now", c->now), B_TEXT(":identity", ident_text),
		                         B_TEXT(":full", full), B_TEXT(":diff", diff)};
		r = stmt_exec(st, Q_FP_ADD, b, ARRAY_SIZE(b), "storing the fingerprint", NULL);
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

	r = json_text(c->result, 0, "the result", &result);
	if (r >= 0)
		r = json_text(c->inputs, 0, "the inputs", &inputs);
	if (r >= 0) {
		const struct bind b[] = {
		    B_INT(":computed_ms", c->now),
		    B_TEXT(":verdict", json_string_value(json_object_get(c->result, "verdict"))),
		    B_TEXT(":confidence",
		           json_string_value(json_object_get(c->result, "confidence"))),
		    B_TEXT(":result", result),
		    B_TEXT(":inputs", inputs),
		};
		r = stmt_exec(st, Q_REC_ADD, b, ARRAY_SIZE(b), "the recommendation", NULL);
	}
	id = sqlite3_last_insert_rowid(st->db);
	for (size_t i = 0; r >= 0 && i < c->n_runs; i++) {
		const struct bind b[] = {B_INT(":rec_id", id), B_INT(":run_id", c->run_ids[i])};

		r = stmt_exec(st, Q_REC_RUN_ADD, b, ARRAY_SIZE(b), "the recommendation's runs",
		              NULL);
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
	int r = json_text(c->data, 0, "the headroom", &data);

	if (r >= 0) {
		const struct bind b[] = {B_INT(":computed_ms", c->now), B_TEXT(":data", data)};

		r = stmt_exec(st, Q_HEADROOM_ADD, b, ARRAY_SIZE(b), "the headroom", NULL);
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
	char *out;
};

static int state_set_tx(struct store *st, void *ctx)
{
	struct state_args *c = ctx;
	const struct bind b[] = {B_TEXT(":key", c->key), B_TEXT(":value", c->value)};

	return stmt_exec(st, Q_STATE_SET, b, ARRAY_SIZE(b), c->key, NULL);
}

int store_state_set(struct store *st, const char *key, const char *value)
{
	struct state_args c = {.key = key, .value = value};

	return store_call(st, 1, state_set_tx, &c);
}

static int state_get_tx(struct store *st, void *ctx)
{
	struct state_args *c = ctx;
	const struct bind b[] = {B_TEXT(":key", c->key)};
	sqlite3_stmt *s = NULL;
	int r = stmt_get(st, Q_STATE_GET, b, ARRAY_SIZE(b), &s);

	if (r >= 0 && (r = stmt_step(st, s, c->key)) > 0)
		c->out = xstrdup(col_text(s, 0));
	else if (r == 0)
		r = seterr(-ENOENT, "no state \"%s\"", c->key);
	return r < 0 ? r : 0;
}

int store_state_get(struct store *st, const char *key, char **value)
{
	struct state_args c = {.key = key};
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
	int r = stmt_get(st, Q_DATA_VERSION, NULL, 0, &s);

	if (r >= 0 && (r = stmt_step(st, s, "data_version")) > 0)
		*v = (sqlite3_column_int64(s, 0) << 32) ^ sqlite3_total_changes64(st->db);
	return r < 0 ? r : 0;
}

int store_data_version(struct store *st, int64_t *version)
{
	*version = 0;
	return store_call(st, 0, data_version_tx, version);
}

/* ---- retention ---------------------------------------------------------------- */

/* Each step repeats its statements, one batch per transaction, until a
 * batch comes back short. The last statement's count decides. */
static const struct retention_step {
	enum query q[3];
	size_t n;
	int raw; /* uses the raw_days cut, else the samples_days one */
	const char *what;
} retention_steps[] = {
    {{Q_RET_RUNS}, 1, 0, "deleting old runs and their samples"},
    {{Q_RET_DOCS, Q_RET_SERIES, Q_RET_PRUNE}, 3, 1, "dropping old documents and points"},
    {{Q_RET_RECS}, 1, 1, "deleting old recommendations"},
    {{Q_RET_HEADROOM}, 1, 1, "deleting old headroom records"},
    {{Q_RET_CYCLES}, 1, 0, "deleting old cycles"},
};

struct retention_args {
	const struct retention_step *step;
	int64_t cut, now, batch, changed;
};

static int retention_tx(struct store *st, void *ctx)
{
	struct retention_args *c = ctx;
	int r = 0;

	for (size_t i = 0; r >= 0 && i < c->step->n; i++) {
		const struct bind b[] = {
		    B_INT(":cut", c->cut),
		    B_INT(":batch", c->batch),
		    {.name = ":now", .type = BT_INT, .i = c->now, .optional = 1},
		};
		r = stmt_exec(st, c->step->q[i], b, ARRAY_SIZE(b), c->step->what, &c->changed);
	}
	return r;
}

int store_retention(struct store *st, int64_t now_ms, int raw_days, int samples_days, int batch)
{
	struct retention_args c = {.now = now_ms, .batch = batch > 0 ? batch : STORE_BATCH};
	int r;

	for (size_t i = 0; i < ARRAY_SIZE(retention_steps); i++) {
		int days = retention_steps[i].raw ? raw_days : samples_days;

		if (days <= 0)
			continue;
		c.step = &retention_steps[i];
		c.cut = now_ms - days * MS_PER_DAY;
		/* Separate transactions let the scheduler and readers in between. */
		do {
			r = store_call(st, 1, retention_tx, &c);
			if (r < 0)
				return r;
		} while (c.changed >= c.batch);
	}
	return 0;
}

/* ---- reads ---------------------------------------------------------------------- */

struct read_args {
	const void *in;
	json_t *out, *out2;
};

static int latest_docs_tx(struct store *st, void *ctx)
{
	struct read_args *c = ctx;
	sqlite3_stmt *s = NULL;
	json_t *doc;
	int r = stmt_get(st, Q_LATEST_OK, NULL, 0, &s);

	c->out = jcheck(json_object());
	c->out2 = jcheck(json_object());
	while (r >= 0 && (r = stmt_step(st, s, "reading the latest documents")) > 0) {
		r = col_json(s, 2, "a run's document", &doc);
		if (r < 0)
			break;
		jset(c->out, col_text(s, 0), doc);
		jset(c->out2, col_text(s, 0), jint(sqlite3_column_int64(s, 1)));
	}
	return r;
}

/* Runs a read and hands over its result, or frees it on failure. */
static int read_call(struct store *st, store_fn *fn, struct read_args *c, json_t **out,
                     json_t **out2)
{
	int r = store_call(st, 0, fn, c);

	if (r < 0) {
		json_decref(c->out);
		json_decref(c->out2);
		c->out = c->out2 = NULL;
	}
	*out = c->out;
	if (out2)
		*out2 = c->out2;
	else
		json_decref(c->out2);
	return r;
}

int store_latest_docs(struct store *st, json_t **docs, json_t **run_ids)
{
	struct read_args c = {0};

	return read_call(st, latest_docs_tx, &c, docs, run_ids);
}

static int host_tx(struct store *st, void *ctx)
{
	struct read_args *c = ctx;
	json_t *history = jcheck(json_array()), *o, *j;
	sqlite3_stmt *s = NULL;
	int r = stmt_get(st, Q_FP_ALL, NULL, 0, &s);

	c->out = jcheck(json_object());
	jset(c->out, "history", history);
	while (r >= 0 && (r = stmt_step(st, s, "reading the fingerprints")) > 0) {
		o = jcheck(json_object());
		jset(o, "id", jint(sqlite3_column_int64(s, 0)));
		jset(o, "first_seen_ms", jint(sqlite3_column_int64(s, 1)));
		jset(o, "first_seen_at", jtime(sqlite3_column_int64(s, 1)));
		jset(o, "last_seen_ms", jint(sqlite3_column_int64(s, 2)));
		jset(o, "last_seen_at", jtime(sqlite3_column_int64(s, 2)));
		if (!json_object_get(c->out, "current")) {
			r = col_json(s, 4, "the fingerprint", &j);
			if (r < 0) {
				json_decref(o);
				break;
			}
			json_t *cur = jcheck(json_deep_copy(o));
			jset(cur, "fingerprint", j);
			jset(c->out, "current", cur);
		}
		jset(o, "diff", col_text_json(s, 5));
		r = col_json(s, 3, "a fingerprint identity", &j);
		if (r < 0) {
			json_decref(o);
			break;
		}
		jset(o, "identity", j);
		json_array_append_new(history, o);
	}
	if (r >= 0 && json_array_size(history) == 0)
		r = seterr(-ENOENT, "no host fingerprint has been recorded yet");
	return r;
}

int store_api_host(struct store *st, json_t **out)
{
	struct read_args c = {0};

	return read_call(st, host_tx, &c, out, NULL);
}

static int rec_tx(struct store *st, void *ctx)
{
	struct read_args *c = ctx;
	json_t *runs, *inputs;
	sqlite3_stmt *s = NULL;
	int64_t id;
	int r = stmt_get(st, Q_REC_LATEST, NULL, 0, &s);

	if (r >= 0 && (r = stmt_step(st, s, "reading the recommendation")) == 0)
		r = seterr(-ENOENT, "no recommendation has been computed yet");
	if (r < 0)
		return r;
	id = sqlite3_column_int64(s, 0);
	r = col_json(s, 2, "the recommendation", &c->out);
	if (r < 0)
		return r;
	if (!json_is_object(c->out))
		return seterr(-EBADMSG, "the stored recommendation is not an object");
	r = col_json(s, 3, "the recommendation's inputs", &inputs);
	if (r < 0)
		return r;
	jset(c->out, "inputs", inputs);
	jset(c->out, "id", jint(id));
	jset(c->out, "computed_ms", jint(sqlite3_column_int64(s, 1)));
	jset(c->out, "computed_at", jtime(sqlite3_column_int64(s, 1)));
	runs = jcheck(json_array());
	jset(c->out, "run_ids", runs);
	const struct bind b[] = {B_INT(":id", id)};
	r = stmt_get(st, Q_REC_RUNS, b, ARRAY_SIZE(b), &s);
	while (r >= 0 && (r = stmt_step(st, s, "reading the recommendation's runs")) > 0)
		json_array_append_new(runs, jint(sqlite3_column_int64(s, 0)));
	return r;
}

int store_api_recommendation(struct store *st, json_t **out)
{
	struct read_args c = {0};

	return read_call(st, rec_tx, &c, out, NULL);
}

/* The scalar shown next to each run in listings (the catalogue's). */
static const char *key_figure(const char *probe)
{
	const struct catalog_probe *p = catalog_probe_find(probe);

	return p ? p->key_scalar : NULL;
}

/* One run from a row of RUN_COLS, with its key figure. */
static int run_brief(struct store *st, sqlite3_stmt *row, json_t **out)
{
	const char *probe = col_text(row, 1), *key = key_figure(probe);
	const int64_t id = sqlite3_column_int64(row, 0), t0 = sqlite3_column_int64(row, 5),
	              t1 = sqlite3_column_int64(row, 6);
	json_t *o = jcheck(json_object()), *fig = json_null();
	int r = 0;

	jset(o, "id", jint(id));
	jset(o, "probe", jtext(probe));
	jset(o, "status", jtext(col_text(row, 2)));
	jset(o, "reason", col_text_json(row, 3));
	jset(o, "cycle_id", col_int_json(row, 4));
	jset(o, "started_ms", jint(t0));
	jset(o, "started_at", jtime(t0));
	jset(o, "ended_ms", jint(t1));
	jset(o, "duration_s", jnum(t1 > t0 ? (double)(t1 - t0) / 1e3 : 0));
	if (key) {
		char *metric;
		sqlite3_stmt *s = NULL;

		xasprintf(&metric, "%s.%s", probe, key);
		const struct bind b[] = {B_INT(":t", t0), B_INT(":run_id", id),
		                         B_TEXT(":metric", metric)};
		r = stmt_get(st, Q_RUN_KEY, b, ARRAY_SIZE(b), &s);
		if (r >= 0 && (r = stmt_step(st, s, "reading a key figure")) > 0) {
			json_decref(fig);
			fig = jcheck(json_object());
			jset(fig, "metric", jtext(metric));
			jset(fig, "value", col_real_json(s, 0));
			jset(fig, "unit", jtext(col_text(s, 1)));
		}
		sqlite3_reset(s);
		free(metric);
	}
	jset(o, "key_figure", fig);
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
	json_t *runs = jcheck(json_array()), *run;
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
	int r = stmt_get(st, runs_page_query(q), b, ARRAY_SIZE(b), &s);

	c->out = jcheck(json_object());
	jset(c->out, "runs", runs);
	while (r >= 0 && (r = stmt_step(st, s, "listing runs")) > 0) {
		if (++n > q->limit)
			break;
		r = run_brief(st, s, &run);
		json_array_append_new(runs, run);
		last = sqlite3_column_int64(s, 0);
	}
	jset(c->out, "next_cursor", n > q->limit ? jint(last) : json_null());
	return r < 0 ? r : 0;
}

int store_api_runs(struct store *st, const struct store_runs_query *q, json_t **out)
{
	struct read_args c = {.in = q};

	if (q->limit < 1 || q->limit > 500) {
		store_msg[0] = '\0';
		*out = NULL;
		return seterr(-EINVAL, "limit %d is not within 1..500", q->limit);
	}
	return read_call(st, runs_tx, &c, out, NULL);
}

/* The series of one run: {name: {x_unit, y_unit, points}}. */
static int run_points(struct store *st, int64_t id, json_t *series)
{
	const struct bind b[] = {B_INT(":id", id)};
	json_t *cur = NULL, *points = NULL;
	sqlite3_stmt *s = NULL;
	int r = stmt_get(st, Q_RUN_POINTS, b, ARRAY_SIZE(b), &s);

	while (r >= 0 && (r = stmt_step(st, s, "reading a run's points")) > 0) {
		const char *name = col_text(s, 0);

		if (!cur || strcmp(name, json_string_value(json_object_get(cur, "name")))) {
			if (cur)
				json_object_del(cur, "name");
			cur = jcheck(json_object());
			points = jcheck(json_array());
			jset(cur, "name", jtext(name));
			jset(cur, "x_unit", jtext(col_text(s, 1)));
			jset(cur, "y_unit", jtext(col_text(s, 2)));
			jset(cur, "points", points);
			jset(series, name, cur);
		}
		if (!col_null(s, 3))
			json_array_append_new(points, jcheck(json_pack("[oo]", col_real_json(s, 3),
			                                               col_real_json(s, 4))));
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
	int r = stmt_get(st, Q_RUN_GET, b, ARRAY_SIZE(b), &s);

	if (r >= 0 && (r = stmt_step(st, s, "reading a run")) == 0)
		r = seterr(-ENOENT, "there is no run %" PRId64, id);
	if (r >= 0)
		r = run_brief(st, s, &c->out);
	if (r >= 0)
		r = col_json(s, 7, "the run's params", &j);
	if (r < 0)
		return r;
	jset(c->out, "params", j);
	r = col_json(s, 8, "the run's document", &j);
	if (r < 0)
		return r;
	jset(c->out, "doc", j);
	jset(c->out, "raw", col_text_json(s, 9));
	jset(c->out, "loadavg1", col_real_json(s, 10));
	jset(c->out, "steal_pct", col_real_json(s, 11));
	jset(c->out, "cpu_s", col_real_json(s, 12));
	jset(c->out, "pruned_ms", col_int_json(s, 13));
	sqlite3_reset(s);
	samples = jcheck(json_array());
	jset(c->out, "samples", samples);
	r = stmt_get(st, Q_RUN_SAMPLES, b, ARRAY_SIZE(b), &s);
	while (r >= 0 && (r = stmt_step(st, s, "reading a run's samples")) > 0)
		json_array_append_new(
		    samples,
		    jcheck(json_pack("{s:o, s:o, s:o}", "metric", jtext(col_text(s, 0)), "value",
		                     col_real_json(s, 1), "unit", jtext(col_text(s, 2)))));
	if (r < 0)
		return r;
	series = jcheck(json_object());
	jset(c->out, "series", series);
	return run_points(st, id, series);
}

int store_api_run(struct store *st, int64_t id, json_t **out)
{
	struct read_args c = {.in = &id};

	return read_call(st, run_tx, &c, out, NULL);
}

struct series_query {
	const char *metric;
	int64_t since, until, step;
};

/* The most buckets read with one range aggregate each; beyond that (most
 * buckets empty) grouping is cheaper. */
#define SERIES_SEEK_MAX 20000

static json_t *series_point(int64_t t, json_t *min, json_t *avg, json_t *max, int64_t n)
{
	return jcheck(json_pack("{s:o, s:o, s:o, s:o, s:o}", "t", jint(t), "min", min, "avg", avg,
	                        "max", max, "n", jint(n)));
}

static double jarray_num(const json_t *a, size_t i)
{
	return json_number_value(json_array_get(a, i));
}

/* Buckets by one range aggregate each (rows: i, [min, avg, max, n]). */
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
	int r = stmt_get(st, Q_SERIES_SEEK, b, ARRAY_SIZE(b), &s);

	while (r >= 0 && (r = stmt_step(st, s, "reading the series")) > 0) {
		json_t *a = json_loads(col_text(s, 1), 0, &jerr);
		int64_t n = json_integer_value(json_array_get(a, 3));

		if (!json_is_array(a) || json_array_size(a) != 4) {
			json_decref(a);
			return seterr(-EIO, "a series bucket came back as \"%s\"", col_text(s, 1));
		}
		if (n > 0)
			json_array_append_new(
			    points, series_point(q->since + sqlite3_column_int64(s, 0) * q->step,
			                         jnum(jarray_num(a, 0)), jnum(jarray_num(a, 1)),
			                         jnum(jarray_num(a, 2)), n));
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
	int r = stmt_get(st, Q_SERIES_GROUP, b, ARRAY_SIZE(b), &s);

	while (r >= 0 && (r = stmt_step(st, s, "reading the series")) > 0)
		json_array_append_new(
		    points, series_point(q->since + sqlite3_column_int64(s, 0) * q->step,
		                         col_real_json(s, 1), col_real_json(s, 2),
		                         col_real_json(s, 3), sqlite3_column_int64(s, 4)));
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
	int r = stmt_get(st, Q_METRIC_GET, m, ARRAY_SIZE(m), &s);

	if (r >= 0 && (r = stmt_step(st, s, "finding the metric")) == 0)
		r = seterr(-ENOENT, "no metric named \"%s\" has been recorded", q->metric);
	if (r < 0)
		return r;
	mid = sqlite3_column_int64(s, 0);
	c->out = jcheck(json_object());
	jset(c->out, "metric", jtext(q->metric));
	jset(c->out, "unit", jtext(col_text(s, 1)));
	jset(c->out, "since_ms", jint(q->since));
	jset(c->out, "until_ms", jint(q->until));
	jset(c->out, "step_ms", jint(q->step));
	points = jcheck(json_array());
	markers = jcheck(json_array());
	jset(c->out, "points", points);
	jset(c->out, "markers", markers);
	if (buckets <= SERIES_SEEK_MAX)
		r = series_seek(st, q, mid, buckets, points);
	else
		r = series_group(st, q, mid, points);
	if (r < 0)
		return r;
	r = stmt_get(st, Q_MARKERS, b, ARRAY_SIZE(b), &s);
	while (r >= 0 && (r = stmt_step(st, s, "reading the host changes")) > 0)
		json_array_append_new(
		    markers, jcheck(json_pack("{s:o, s:o}", "t", jint(sqlite3_column_int64(s, 0)),
		                              "diff", col_text_json(s, 1))));
	return r;
}

int store_api_series(struct store *st, const char *metric, int64_t since_ms, int64_t until_ms,
                     int64_t step_ms, json_t **out)
{
	struct series_query q = {metric, since_ms, until_ms, step_ms};
	struct read_args c = {.in = &q};

	*out = NULL;
	store_msg[0] = '\0';
	if (!metric)
		return seterr(-EINVAL, "no metric given");
	/* Non-negative times keep (t - since) / step an exact integer. */
	if (since_ms < 0 || until_ms <= since_ms)
		return seterr(-EINVAL, "the range %" PRId64 "..%" PRId64 " ms is empty or negative",
		              since_ms, until_ms);
	if (step_ms <= 0)
		return seterr(-EINVAL, "the step %" PRId64 " ms is not positive", step_ms);
	return read_call(st, series_tx, &c, out, NULL);
}

static int metric_names_tx(struct store *st, void *ctx)
{
	struct read_args *c = ctx;
	sqlite3_stmt *s = NULL;
	int r = stmt_get(st, Q_METRIC_NAMES, NULL, 0, &s);

	c->out = jcheck(json_array());
	while (r >= 0 && (r = stmt_step(st, s, "reading the metric names")) > 0)
		json_array_append_new(c->out,
		                      jcheck(json_pack("{s:o, s:o}", "name", jtext(col_text(s, 0)),
		                                       "unit", jtext(col_text(s, 1)))));
	return r;
}

int store_api_metric_names(struct store *st, json_t **out)
{
	struct read_args c = {0};

	return read_call(st, metric_names_tx, &c, out, NULL);
}

/* {"computed_ms", "headroom"} of the latest record, or NULL (-ENOENT). */
static int headroom_latest(struct store *st, json_t **out)
{
	sqlite3_stmt *s = NULL;
	json_t *data;
	int r = stmt_get(st, Q_HEADROOM_LATEST, NULL, 0, &s);

	*out = NULL;
	if (r >= 0 && (r = stmt_step(st, s, "reading the headroom")) == 0)
		return seterr(-ENOENT, "no headroom has been recorded yet");
	if (r >= 0)
		r = col_json(s, 1, "the headroom", &data);
	if (r < 0)
		return r;
	*out = jcheck(json_object());
	jset(*out, "computed_ms", jint(sqlite3_column_int64(s, 0)));
	jset(*out, "headroom", data);
	return 0;
}

static int headroom_read_tx(struct store *st, void *ctx)
{
	struct read_args *c = ctx;
	int r = headroom_latest(st, &c->out);

	if (r >= 0)
		jset(c->out, "computed_at",
		     jtime(json_integer_value(json_object_get(c->out, "computed_ms"))));
	return r;
}

int store_api_headroom(struct store *st, json_t **out)
{
	struct read_args c = {0};

	return read_call(st, headroom_read_tx, &c, out, NULL);
}

/* ---- the /metrics snapshot ---------------------------------------------------- */

/* status, started_ms and duration of run `id` into o under prefix_*. */
static int snap_run(struct store *st, int64_t id, json_t *o, int ok)
{
	const struct bind b[] = {B_INT(":id", id)};
	sqlite3_stmt *s = NULL;
	int r = stmt_get(st, Q_RUN_TIMES, b, ARRAY_SIZE(b), &s);

	if (r >= 0 && (r = stmt_step(st, s, "reading a run")) > 0) {
		int64_t t0 = sqlite3_column_int64(s, 1), t1 = sqlite3_column_int64(s, 2);

		if (ok) {
			jset(o, "last_ok_run_id", jint(id));
			jset(o, "last_ok_ms", jint(t0));
		} else {
			jset(o, "last_run_id", jint(id));
			jset(o, "last_run_ms", jint(t0));
			jset(o, "last_status", jtext(col_text(s, 0)));
			jset(o, "last_duration_s", jnum(t1 > t0 ? (double)(t1 - t0) / 1e3 : 0));
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
	int r = stmt_get(st, Q_RUN_SAMPLES, b, ARRAY_SIZE(b), &s);

	while (r >= 0 && (r = stmt_step(st, s, "reading a run's samples")) > 0) {
		const char *name = col_text(s, 0);

		if (strlen(name) > plen + 1 && !strncmp(name, probe, plen) && name[plen] == '.')
			name += plen + 1;
		jset(scalars, name,
		     jcheck(json_pack("{s:o, s:o}", "value", col_real_json(s, 1), "unit",
		                      jtext(col_text(s, 2)))));
	}
	sqlite3_reset(s);
	return r;
}

static int snap_probes(struct store *st, json_t *probes)
{
	sqlite3_stmt *s = NULL;
	int r = stmt_get(st, Q_SNAP_PROBES, NULL, 0, &s);

	while (r >= 0 && (r = stmt_step(st, s, "reading the probes")) > 0) {
		const char *probe = col_text(s, 0);
		json_t *o = jcheck(json_pack("{s:n, s:n, s:n, s:n, s:n, s:n}", "last_run_id",
		                             "last_run_ms", "last_status", "last_duration_s",
		                             "last_ok_run_id", "last_ok_ms"));
		json_t *scalars = jcheck(json_object());

		jset(o, "scalars", scalars);
		jset(probes, probe, o);
		if (!col_null(s, 1))
			r = snap_run(st, sqlite3_column_int64(s, 1), o, 0);
		if (r >= 0 && !col_null(s, 2))
			r = snap_run(st, sqlite3_column_int64(s, 2), o, 1);
		if (r >= 0 && !col_null(s, 2))
			r = snap_scalars(st, probe, sqlite3_column_int64(s, 2), scalars);
	}
	return r;
}

static int snap_totals(struct store *st, json_t *totals)
{
	sqlite3_stmt *s = NULL;
	int r = stmt_get(st, Q_TOTALS, NULL, 0, &s);

	while (r >= 0 && (r = stmt_step(st, s, "reading the run counters")) > 0) {
		const char *probe = col_text(s, 0);
		json_t *o = json_object_get(totals, probe);

		if (!o) {
			o = jcheck(json_object());
			jset(totals, probe, json_incref(o));
			json_decref(o);
		}
		jset(o, col_text(s, 1), jint(sqlite3_column_int64(s, 2)));
	}
	return r;
}

static int snap_recommendation(struct store *st, json_t **out)
{
	sqlite3_stmt *s = NULL;
	json_t *res;
	int r = stmt_get(st, Q_REC_LATEST, NULL, 0, &s);

	*out = json_null();
	if (r >= 0 && (r = stmt_step(st, s, "reading the recommendation")) <= 0)
		return r;
	r = col_json(s, 2, "the recommendation", &res);
	if (r < 0)
		return r;
	json_decref(*out);
	*out = jcheck(json_object());
	jset(*out, "verdict", json_incref(json_object_get(res, "verdict")) ?: json_null());
	jset(*out, "confidence", json_incref(json_object_get(res, "confidence")) ?: json_null());
	jset(*out, "computed_ms", jint(sqlite3_column_int64(s, 1)));
	jset(*out, "figures", json_incref(json_object_get(res, "figures")) ?: json_null());
	json_decref(res);
	return 0;
}

static int snap_cycle(struct store *st, json_t **out)
{
	sqlite3_stmt *s = NULL;
	int r = stmt_get(st, Q_CYCLE_LAST, NULL, 0, &s);

	*out = json_null();
	if (r >= 0 && (r = stmt_step(st, s, "reading the last cycle")) > 0) {
		int64_t t0 = sqlite3_column_int64(s, 3), t1 = sqlite3_column_int64(s, 4);

		json_decref(*out);
		*out = jcheck(json_object());
		jset(*out, "id", jint(sqlite3_column_int64(s, 0)));
		jset(*out, "trigger", jtext(col_text(s, 1)));
		jset(*out, "status", col_text_json(s, 2));
		jset(*out, "started_ms", jint(t0));
		jset(*out, "ended_ms", jint(t1));
		jset(*out, "duration_s", jnum(t1 > t0 ? (double)(t1 - t0) / 1e3 : 0));
		jset(*out, "waited_s", col_real_json(s, 5));
	}
	return r;
}

static int snap_fingerprint(struct store *st, json_t **out)
{
	sqlite3_stmt *s = NULL;
	int r = stmt_get(st, Q_FP_LATEST, NULL, 0, &s);

	*out = json_null();
	if (r >= 0 && (r = stmt_step(st, s, "reading the fingerprint")) > 0) {
		json_decref(*out);
		*out = jcheck(json_pack("{s:o, s:o, s:o}", "id", jint(sqlite3_column_int64(s, 0)),
		                        "first_seen_ms", jint(sqlite3_column_int64(s, 1)),
		                        "last_seen_ms", jint(sqlite3_column_int64(s, 2))));
	}
	return r;
}

static int snap_events(struct store *st, json_t **out)
{
	json_t *total = jcheck(json_object());
	sqlite3_stmt *s = NULL;
	int64_t last = 0;
	int r = stmt_get(st, Q_EVENT_TOTALS, NULL, 0, &s);

	while (r >= 0 && (r = stmt_step(st, s, "counting the events")) > 0) {
		jset(total, col_text(s, 0), jint(sqlite3_column_int64(s, 1)));
		if (sqlite3_column_int64(s, 2) > last)
			last = sqlite3_column_int64(s, 2);
	}
	*out = jcheck(json_pack("{s:o, s:o}", "total", total, "last_detected_ms",
	                        json_object_size(total) ? jint(last) : json_null()));
	return r;
}

static int snapshot_tx(struct store *st, void *ctx)
{
	struct read_args *c = ctx;
	json_t *probes = jcheck(json_object()), *totals = jcheck(json_object()), *j;
	int r;

	c->out = jcheck(json_object());
	jset(c->out, "probes", probes);
	jset(c->out, "runs_total", totals);
	r = snap_probes(st, probes);
	if (r >= 0)
		r = snap_totals(st, totals);
	if (r >= 0) {
		r = snap_recommendation(st, &j);
		jset(c->out, "recommendation", j);
	}
	if (r >= 0) {
		r = headroom_latest(st, &j);
		if (r == -ENOENT)
			r = 0;
		jset(c->out, "headroom", j ?: json_null());
	}
	if (r >= 0) {
		r = snap_cycle(st, &j);
		jset(c->out, "last_cycle", j);
	}
	if (r >= 0) {
		r = snap_fingerprint(st, &j);
		jset(c->out, "fingerprint", j);
	}
	if (r >= 0) {
		r = snap_events(st, &j);
		jset(c->out, "events", j);
	}
	return r < 0 ? r : 0;
}

int store_api_snapshot(struct store *st, json_t **out)
{
	struct read_args c = {0};

	return read_call(st, snapshot_tx, &c, out, NULL);
}

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
		return seterr(-EINVAL, "event: \"%s\" must be an integer", key);
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
		return seterr(-EINVAL, "event: not an object");
	if (!kind || (strcmp(kind, "step") && strcmp(kind, "flip")))
		return seterr(-EINVAL, "event: \"kind\" must be \"step\" or \"flip\"");
	if (!metric || !*metric || strlen(metric) > 129)
		return seterr(-EINVAL, "event: \"metric\" must be 1 to 129 characters");
	r = event_int(ev, "t_ms", &t);
	if (r >= 0)
		r = event_int(ev, "detected_ms", &detected);
	if (r >= 0)
		r = event_int(ev, !strcmp(kind, "step") ? "run_id" : "recommendation_id", &ref);
	if (r >= 0)
		r = json_text(ev, 0, "the event", &data);
	if (r < 0)
		return r;
	const struct bind b[] = {
	    B_TEXT(":kind", kind), B_TEXT(":metric", metric),       B_INT(":t_ms", t),
	    B_INT(":ref_id", ref), B_INT(":detected_ms", detected), B_INT(":recorded_ms", c->now),
	    B_TEXT(":data", data),
	};
	r = stmt_exec(st, Q_EVENT_ADD, b, ARRAY_SIZE(b), "recording an event", &c->changed);
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
	int r =
	    stmt_int(st, Q_EVENT_LAST_REF, b, ARRAY_SIZE(b), "reading the last event", &c->ref_id);

	return r < 0 ? r : 0;
}

int store_event_last_ref(struct store *st, const char *metric, int64_t *ref_id)
{
	struct event_args c = {.metric = metric};
	int r = store_call(st, 0, event_last_tx, &c);

	*ref_id = r < 0 ? 0 : c.ref_id;
	return r;
}

static int events_tx(struct store *st, void *ctx)
{
	struct read_args *c = ctx;
	const struct store_events_query *q = c->in;
	json_t *list = jcheck(json_array()), *ev;
	sqlite3_stmt *s = NULL;
	int64_t total = 0;
	int n = 0;
	const struct bind b[] = {
	    B_TEXT(":metric", q->metric), B_INT(":since", q->since_ms ? q->since_ms : INT64_MIN),
	    B_INT(":until", q->until_ms ? q->until_ms : INT64_MAX),
	    B_INT(":limit", q->limit + 1), /* last: the count leaves it out */
	};
	int r = stmt_get(st, Q_EVENTS_PAGE, b, ARRAY_SIZE(b), &s);

	c->out = jcheck(json_object());
	jset(c->out, "events", list);
	while (r >= 0 && (r = stmt_step(st, s, "listing events")) > 0) {
		if (++n > q->limit)
			break;
		r = col_json(s, 2, "an event", &ev);
		if (r < 0)
			break;
		if (!json_is_object(ev)) {
			json_decref(ev);
			r = seterr(-EBADMSG, "event %lld is not an object",
			           (long long)sqlite3_column_int64(s, 0));
			break;
		}
		jset(ev, "id", jint(sqlite3_column_int64(s, 0)));
		jset(ev, "recorded_ms", jint(sqlite3_column_int64(s, 1)));
		json_array_append_new(list, ev);
	}
	jset(c->out, "more", json_boolean(n > q->limit));
	if (r >= 0)
		r = stmt_int(st, Q_EVENTS_COUNT, b, ARRAY_SIZE(b) - 1 /* all but :limit */,
		             "counting events", &total);
	jset(c->out, "total", jint(total));
	return r < 0 ? r : 0;
}

int store_api_events(struct store *st, const struct store_events_query *q, json_t **out)
{
	struct read_args c = {.in = q};

	if (q->limit < 1 || q->limit > 1000) {
		store_msg[0] = '\0';
		*out = NULL;
		return seterr(-EINVAL, "limit %d is not within 1..1000", q->limit);
	}
	return read_call(st, events_tx, &c, out, NULL);
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
		r = stmt_get(st, Q_HIST_SCALAR, b, ARRAY_SIZE(b), &s);
	} else {
		const struct bind b[] = {B_TEXT(":probe", c->probe), B_TEXT(":series", c->series),
		                         B_REAL(":x", c->x), B_REAL(":tol", c->tol),
		                         B_INT(":from", c->from)};
		r = stmt_get(st, Q_HIST_POINT, b, ARRAY_SIZE(b), &s);
	}
	while (r >= 0 && (r = stmt_step(st, s, "reading a metric's history")) > 0) {
		if (col_null(s, 2))
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
		store_msg[0] = '\0';
		return seterr(-EINVAL, "a metric's history needs a probe and a scalar or series");
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
	int r = stmt_int(st, Q_RUN_BACK, b, ARRAY_SIZE(b), "counting runs back", &id);

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
	int r = stmt_get(st, Q_VERDICTS, b, ARRAY_SIZE(b), &s);

	c->out = jcheck(json_array());
	while (r >= 0 && (r = stmt_step(st, s, "reading the verdicts")) > 0)
		json_array_append_new(
		    c->out, jcheck(json_pack(
		                "{s:o, s:o, s:o, s:o, s:o}", "id", jint(sqlite3_column_int64(s, 0)),
		                "computed_ms", jint(sqlite3_column_int64(s, 1)), "verdict",
		                jtext(col_text(s, 2)), "confidence", jtext(col_text(s, 3)),
		                "fingerprint_id", jint(sqlite3_column_int64(s, 4)))));
	return r < 0 ? r : 0;
}

int store_verdict_history(struct store *st, int64_t from_id, json_t **out)
{
	struct read_args c = {.in = &from_id};

	return read_call(st, verdicts_tx, &c, out, NULL);
}

/* ---- upkeep ---------------------------------------------------------------------- */

static int check_tx(struct store *st, void *ctx)
{
	(void)ctx;
	return check_pragma(st, Q_INTEGRITY, "integrity_check");
}

int store_check(struct store *st, char *err, size_t errlen)
{
	int r = store_call(st, 0, check_tx, NULL);

	if (err && errlen)
		snprintf(err, errlen, "%s", r < 0 ? store_last_error() : "ok");
	return r;
}
