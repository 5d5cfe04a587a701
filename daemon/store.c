/*
 * store: opens, locks and migrates the SQLite database (see daemon/store.h),
 * runs transactions, turns SQLite errors into -errno and a message, and
 * holds the table of every statement the store runs. The other parts
 * (store_write.c, store_read.c, store_events.c, store_retention.c) share
 * daemon/storep.h; only these files call SQLite: every statement is in the
 * table below, every value is bound by name, every write is one explicit
 * transaction, and every SQLite error goes through sq_fail().
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
#include <unistd.h>

#include <sqlite3.h>

#include "errbuf.h"
#include "builtin.h"
#include "health.h"
#include "storep.h"
#include "xmalloc.h"

#define STORE_APP_ID 0x54576462u /* "TWdb", set by sql/schema.sql */
#define STORE_BUSY_MS 5000

/* The columns every run listing reads, in this order. */
#define RUN_COLS "id, probe, status, reason, cycle_id, started_ms, ended_ms, failure, term_signal"

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
                  " params, loadavg1, steal_pct, cpu_s, failure, term_signal) VALUES (:cycle_id,"
                  " :probe, :started_ms, :ended_ms, :status, :reason, :params, :loadavg1,"
                  " :steal_pct, :cpu_s, :failure, :term_signal)",
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
    [Q_CYCLE_INTERRUPT] = "UPDATE cycles SET ended_ms = :ended_ms, status = 'interrupted'"
                          " WHERE status IS NULL",
    [Q_CYCLE_LAST] = "SELECT id, trigger, status, started_ms, ended_ms, waited_s FROM cycles"
                     " WHERE ended_ms IS NOT NULL ORDER BY id DESC LIMIT 1",
    [Q_FP_LATEST] = "SELECT id, first_seen_ms, last_seen_ms, identity, full FROM fingerprints"
                    " ORDER BY id DESC LIMIT 1",
    [Q_FP_SEEN] = "UPDATE fingerprints SET last_seen_ms = max(last_seen_ms, :now),"
                  " identity = :identity, full = :full WHERE id = :id",
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
    /* each probe whose latest run is an error, with that run */
    [Q_LATEST_FAILED] =
        "SELECT r.probe, r.id, r.started_ms, r.reason, r.failure, r.term_signal FROM"
        " (SELECT DISTINCT probe FROM run_totals) p JOIN runs r ON r.id ="
        " (SELECT max(id) FROM runs x WHERE x.probe = p.probe)"
        " WHERE r.status = 'error' ORDER BY r.probe",
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
     * grouping by the integer quotient of the time (many sparse buckets).
     * Each also gives the time of the bucket's newest sample. */
    [Q_SERIES_SEEK] = "WITH RECURSIVE b(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM b"
                      " WHERE i + 1 < :buckets) SELECT i, (SELECT json_array(min(value),"
                      " avg(value), max(value), count(*), max(t)) FROM samples"
                      " WHERE metric_id = :metric_id AND t >= :since + i * :step"
                      " AND t < min(:since + (i + 1) * :step, :until)) FROM b",
    [Q_SERIES_GROUP] = "SELECT (t - :since) / :step AS b, min(value), avg(value), max(value),"
                       " count(*), max(t) FROM samples WHERE metric_id = :metric_id"
                       " AND t >= :since AND t < :until GROUP BY b ORDER BY b",
    [Q_MARKERS] = "SELECT first_seen_ms, diff FROM fingerprints WHERE diff IS NOT NULL"
                  " AND first_seen_ms >= :since AND first_seen_ms < :until"
                  " ORDER BY first_seen_ms",
    [Q_METRIC_NAMES] = "SELECT name, unit FROM metrics ORDER BY name",
    [Q_SNAP_PROBES] = "SELECT p.probe,"
                      " (SELECT id FROM runs WHERE probe = p.probe ORDER BY id DESC LIMIT 1),"
                      " (SELECT id FROM runs WHERE probe = p.probe AND status = 'ok'"
                      " ORDER BY id DESC LIMIT 1),"
                      /* the failures since the last run that did not fail */
                      " (SELECT count(*) FROM runs WHERE probe = p.probe AND id >"
                      " coalesce((SELECT max(id) FROM runs WHERE probe = p.probe"
                      " AND status != 'error'), 0))"
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
    [Q_RET_NEWEST] = "SELECT coalesce(max(started_ms), 0) FROM runs",
    [Q_RET_NEWEST_BEFORE] = "SELECT coalesce(max(started_ms), 0) FROM runs"
                            " WHERE cycle_id IS NULL OR cycle_id != :cycle_id",
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
    [Q_HIST_SCALAR] =
        "SELECT r.id, s.t, s.value, " FP_OF_RUN ", r.steal_pct, r.loadavg1 FROM metrics m"
        " JOIN samples s ON s.metric_id = m.id JOIN runs r ON r.id = s.run_id"
        " LEFT JOIN cycles c ON c.id = r.cycle_id WHERE m.name = :metric"
        " AND s.run_id >= :from AND r.status = 'ok' ORDER BY s.run_id",
    [Q_HIST_POINT] = "SELECT r.id, r.started_ms, p.y, " FP_OF_RUN ", r.steal_pct, r.loadavg1"
                     " FROM runs r"
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
    /* the workloads (store_workloads.c) */
    [Q_WL_FIND_KEY] = "SELECT id, ref FROM workloads WHERE key = :key",
    /* a ref another key holds already (a hash collision, which a user may
     * build) inserts nothing: the caller tries another ref */
    [Q_WL_ADD] = "INSERT INTO workloads (key, ref, kind, name) VALUES (:key, :ref, :kind, :name)"
                 " ON CONFLICT DO NOTHING",
    [Q_WL_FIGURE_ADD] = "INSERT INTO workload_figure_names (idx, name) VALUES"
                        " ((SELECT coalesce(max(idx) + 1, 0) FROM workload_figure_names), :name)",
    [Q_WL_FIGURE_FIND] = "SELECT idx FROM workload_figure_names WHERE name = :name",
    [Q_WL_WINDOW_ADD] = "INSERT INTO workload_windows (t_ms, window_s, seen)"
                        " VALUES (:t_ms, :window_s, :seen)",
    [Q_WL_FIGURES_ADD] = "INSERT INTO workload_figures (window_id, rank, workload_id, figures)"
                         " VALUES (:window_id, :rank, :workload_id, :figures)",
    [Q_WL_LATEST_SET] = "INSERT INTO workload_latest (id, window_id, doc)"
                        " VALUES (1, :window_id, :doc) ON CONFLICT (id) DO UPDATE"
                        " SET window_id = excluded.window_id, doc = excluded.doc",
    [Q_WL_LATEST] = "SELECT w.t_ms, w.window_s, w.seen, l.doc FROM workload_latest l"
                    " JOIN workload_windows w ON w.id = l.window_id",
    [Q_WL_LATEST_END] = "SELECT w.t_ms FROM workload_latest l"
                        " JOIN workload_windows w ON w.id = l.window_id",
    [Q_WL_FIND] = "SELECT id, key, kind, name FROM workloads WHERE ref = :ref",
    [Q_WL_SERIES] = "SELECT (w.t_ms - :since) / :step AS b, min(v), avg(v), max(v), count(v),"
                    " max(w.t_ms) FROM (SELECT w.t_ms, json_extract(f.figures, :path) AS v"
                    " FROM workload_figures f JOIN workload_windows w ON w.id = f.window_id"
                    " WHERE f.workload_id = :workload_id AND w.t_ms >= :since"
                    " AND w.t_ms < :until) w GROUP BY b ORDER BY b",
    [Q_RET_WL_WINDOWS] = "DELETE FROM workload_windows WHERE id IN (SELECT id FROM"
                         " workload_windows WHERE t_ms < :cut AND id < (SELECT max(id) FROM"
                         " workload_windows) ORDER BY t_ms LIMIT :batch)",
    [Q_RET_WL_ORPHANS] = "DELETE FROM workloads WHERE id IN (SELECT id FROM workloads x"
                         " WHERE NOT EXISTS (SELECT 1 FROM workload_figures"
                         " WHERE workload_id = x.id) LIMIT :batch)",
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

/* ---- errors ------------------------------------------------------------ */

/* The store's functions return -errno, as every helper does, and leave
 * the message where errbuf_set() would: in an error buffer, here one per
 * thread, because the HTTP threads and the scheduler share the store and
 * each reads the message of its own last call (store_last_error()). */
static _Thread_local char store_msg[512];

const char *store_last_error(void)
{
	return store_msg;
}

void sq_clearerr(void)
{
	store_msg[0] = '\0';
}

/* Sets the message (which may quote the previous one) and returns err. */
int __attribute__((format(printf, 2, 3))) sq_seterr(int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	err = errbuf_vset(store_msg, sizeof(store_msg), err, fmt, ap);
	va_end(ap);
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
	for (size_t i = 0; i < SQ_LEN(sqlite_errnos); i++)
		if (sqlite_errnos[i].code == (rc & 0xff))
			return -sqlite_errnos[i].err;
	return -EIO;
}

/* The one exit for SQLite errors: "what: SQLite's message". */
static int sq_fail(struct store *st, int rc, const char *what)
{
	int err = sqlite_errno(st->db, rc);

	if (err == -ENOSPC)
		return sq_seterr(err, "%s: the disk is full (%s)", what, sqlite3_errmsg(st->db));
	return sq_seterr(err, "%s: %s", what, st->db ? sqlite3_errmsg(st->db) : sqlite3_errstr(rc));
}

/* ---- statements ------------------------------------------------------- */

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
int sq_get(struct store *st, enum query q, const struct bind *b, size_t n, sqlite3_stmt **out)
{
	sqlite3_stmt *s = st->stmt[q];
	int rc;

	if (!s) {
		rc =
		    sqlite3_prepare_v3(st->db, queries[q], -1, SQLITE_PREPARE_PERSISTENT, &s, NULL);
		if (rc != SQLITE_OK)
			return sq_fail(st, rc, "preparing a statement");
		st->stmt[q] = s;
	}
	sqlite3_reset(s);
	sqlite3_clear_bindings(s);
	for (size_t i = 0; i < n; i++) {
		rc = bind_one(s, &b[i]);
		if (rc != SQLITE_OK)
			return sq_fail(st, rc, b[i].name);
	}
	*out = s;
	return 0;
}

/* Steps s: 1 with a row, 0 when done, or -errno. */
int sq_step(struct store *st, sqlite3_stmt *s, const char *what)
{
	int rc = sqlite3_step(s);

	if (rc == SQLITE_ROW)
		return 1;
	if (rc == SQLITE_DONE)
		return 0;
	return sq_fail(st, rc, what);
}

/* Runs a statement to completion; *changes (may be NULL) gets the count of
 * rows it changed. */
int sq_exec(struct store *st, enum query q, const struct bind *b, size_t n, const char *what,
            int64_t *changes)
{
	sqlite3_stmt *s = NULL;
	int r = sq_get(st, q, b, n, &s);

	while (r >= 0 && (r = sq_step(st, s, what)) > 0)
		;
	sqlite3_reset(s);
	if (r >= 0 && changes)
		*changes = sqlite3_changes64(st->db);
	return r;
}

/* Runs a statement that yields one integer: 1 with *v set, 0 without a row. */
int sq_int(struct store *st, enum query q, const struct bind *b, size_t n, const char *what,
           int64_t *v)
{
	sqlite3_stmt *s = NULL;
	int r = sq_get(st, q, b, n, &s);

	if (r >= 0 && (r = sq_step(st, s, what)) > 0)
		*v = sqlite3_column_int64(s, 0);
	sqlite3_reset(s);
	return r;
}

const char *sq_col_text(sqlite3_stmt *s, int i)
{
	return (const char *)sqlite3_column_text(s, i);
}

int sq_col_null(sqlite3_stmt *s, int i)
{
	return sqlite3_column_type(s, i) == SQLITE_NULL;
}

/* ---- JSON ---------------------------------------------------------------- */

json_t *sq_jcheck(json_t *j)
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
json_t *sq_jtextn(const void *data, size_t n)
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
	j = sq_jcheck(json_stringn(buf, o));
	free(buf);
	return j;
}

json_t *sq_jtext(const char *s)
{
	return s ? sq_jtextn(s, strlen(s)) : json_null();
}

json_t *sq_jint(int64_t v)
{
	return sq_jcheck(json_integer(v));
}

/* A JSON column parsed (NULL column: json null). -EBADMSG when damaged. */
int sq_col_json(sqlite3_stmt *s, int i, const char *what, json_t **out)
{
	json_error_t jerr;
	const char *t = sq_col_text(s, i);

	if (!t) {
		*out = json_null();
		return 0;
	}
	*out = json_loadb(t, (size_t)sqlite3_column_bytes(s, i), JSON_DECODE_ANY, &jerr);
	if (!*out)
		return sq_seterr(-EBADMSG, "%s holds damaged JSON: %s", what, jerr.text);
	return 0;
}

/* Compact text of a JSON value for a JSON column; flags may add
 * JSON_SORT_KEYS for a canonical form. */
int sq_json_text(const json_t *j, size_t flags, const char *what, char **out)
{
	*out = json_dumps(j, JSON_COMPACT | JSON_ENCODE_ANY | flags);
	if (!*out)
		return sq_seterr(-EINVAL, "%s cannot be written as JSON", what);
	return 0;
}

/* ---- transactions and locking ---------------------------------------------- */

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
		sq_exec(st, Q_ROLLBACK, NULL, 0, "rolling back", NULL);
	memcpy(store_msg, saved, sizeof(saved));
}

/* Runs fn inside one transaction: a write one (BEGIN IMMEDIATE) or a read
 * one that sees a single snapshot. */
static int tx_run(struct store *st, int write, store_fn *fn, void *ctx)
{
	int r;

	r = sq_exec(st, write ? Q_BEGIN_WRITE : Q_BEGIN, NULL, 0, "starting a transaction", NULL);
	if (r < 0)
		return r;
	r = fn(st, ctx);
	stmts_reset(st);
	if (r >= 0)
		r = sq_exec(st, Q_COMMIT, NULL, 0, "committing", NULL);
	if (r < 0)
		tx_rollback(st);
	return r;
}

/* Every public call that touches the database goes through here. */
int store_call(struct store *st, int write, store_fn *fn, void *ctx)
{
	int r;

	assert(st);
	store_msg[0] = '\0';
	pthread_mutex_lock(&st->lock);
	if (write && (st->flags & STORE_READONLY)) {
		r = sq_seterr(-EROFS, "the database handle is read-only");
	} else {
		r = tx_run(st, write, fn, ctx);
		health_store_result(write, r, store_msg);
	}
	pthread_mutex_unlock(&st->lock);
	return r;
}

/* Runs a read and hands over its result, or frees it on failure. */
int sq_read_call(struct store *st, store_fn *fn, struct read_args *c, json_t **out, json_t **out2)
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
		r = sq_seterr(-errno, "cannot open the lock file \"%s\": %s", lock_path,
		              strerror(errno));
		goto out;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		if (errno != EWOULDBLOCK) {
			r = sq_seterr(-errno, "cannot lock \"%s\": %s", lock_path, strerror(errno));
		} else {
			n = pread(fd, buf, sizeof(buf) - 1, 0);
			buf[n > 0 ? n : 0] = '\0';
			buf[strcspn(buf, "\n")] = '\0';
			r = sq_seterr(
			    -EBUSY,
			    "\"%s\" is in use by another threadwatchd (pid %s holds \"%s\")", path,
			    buf[0] ? buf : "unknown", lock_path);
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
		return sq_seterr(-errno, "cannot stat \"%s\": %s", path, strerror(errno));
	}
	if (!S_ISREG(sb.st_mode))
		return sq_seterr(-EINVAL, "\"%s\" is not a regular file", path);
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
		return sq_seterr(-EIO, "cannot read the size of \"%s\"", path);
	if (size < (sqlite3_int64)sizeof(h) || f->pMethods->xRead(f, h, sizeof(h), 0) != SQLITE_OK)
		return sq_seterr(-EBADMSG, "\"%s\" is not a database (%lld bytes, too short)", path,
		                 (long long)size);
	if (memcmp(h, "SQLite format 3", 16) != 0)
		return sq_seterr(-EBADMSG, "\"%s\" is not an SQLite database (no SQLite header)",
		                 path);
	page = (uint32_t)h[16] << 8 | h[17];
	if (page == 1)
		page = 65536;
	if (page < 512 || page > 65536 || (page & (page - 1)))
		return sq_seterr(-EBADMSG, "\"%s\" is damaged (page size %u in its header)", path,
		                 page);
	if (wal)
		return 0; /* the log may hold newer pages; SQLite decides below */
	pages = be32(h + 28);
	if (size % page)
		return sq_seterr(-EBADMSG,
		                 "\"%s\" is truncated or damaged (%lld bytes is not a whole number "
		                 "of %u-byte pages)",
		                 path, (long long)size, page);
	if (pages && be32(h + 24) == be32(h + 92) && (uint64_t)size < (uint64_t)pages * page)
		return sq_seterr(
		    -EBADMSG,
		    "\"%s\" is truncated (its header counts %u pages, the file holds %lld)", path,
		    pages, (long long)(size / page));
	version = be32(h + 60);
	if (version > (uint32_t)schema_latest())
		return sq_seterr(-ENOTSUP,
		                 "\"%s\" has schema version %u, newer than this build knows (%d); "
		                 "use a newer threadwatch",
		                 path, version, schema_latest());
	if (version && be32(h + 68) != STORE_APP_ID)
		return sq_seterr(-EBADMSG,
		                 "\"%s\" is not a threadwatch database (application_id %#x)", path,
		                 be32(h + 68));
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
			return sq_fail(st, rc, sql[i]);
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
	int r = sq_get(st, q, NULL, 0, &s);

	if (r >= 0)
		r = sq_step(st, s, what);
	if (r > 0) {
		const char *res = sq_col_text(s, 0);

		snprintf(finding, sizeof(finding), "%s", res ? res : "no answer");
		for (char *c = finding; *c; c++)
			if (*c == '\n')
				*c = ' ';
		if (strcmp(finding, "ok"))
			r = sq_seterr(-EBADMSG, "\"%s\" is damaged (%s: %s)", st->path, what,
			              finding);
		else
			r = 0;
	} else if (r == 0) {
		r = sq_seterr(-EBADMSG, "\"%s\" is damaged (%s gave no answer)", st->path, what);
	}
	sqlite3_reset(s);
	return r;
}

/* Switches to write-ahead logging (kept in the file once set). */
static int wal_enable(struct store *st)
{
	sqlite3_stmt *s = NULL;
	int r = sq_get(st, Q_WAL, NULL, 0, &s);

	if (r >= 0)
		r = sq_step(st, s, "switching to write-ahead logging");
	if (r >= 0 && (r == 0 || strcmp(sq_col_text(s, 0), "wal")))
		r = sq_seterr(-EIO, "cannot switch to write-ahead logging");
	sqlite3_reset(s);
	if (r < 0)
		return sq_seterr(r, "\"%s\": %s", st->path, store_last_error());
	return 0;
}

/* Reads the schema version and refuses what this build cannot use. */
static int db_inspect(struct store *st, int64_t *version)
{
	int64_t app = 0, objects = 0;
	int r;

	r = sq_int(st, Q_USER_VERSION, NULL, 0, "reading the schema version", version);
	if (r >= 0)
		r = sq_int(st, Q_APP_ID, NULL, 0, "reading the application id", &app);
	if (r >= 0)
		r = sq_int(st, Q_OBJECTS, NULL, 0, "reading the schema", &objects);
	if (r < 0)
		return sq_seterr(r, "\"%s\": %s", st->path, store_last_error());
	if (*version > schema_latest())
		return sq_seterr(-ENOTSUP,
		                 "\"%s\" has schema version %" PRId64 ", newer than this build "
		                 "knows (%d); use a newer threadwatch",
		                 st->path, *version, schema_latest());
	if (*version == 0 && objects > 0)
		return sq_seterr(-EBADMSG, "\"%s\" is not a threadwatch database (it has tables)",
		                 st->path);
	if (*version > 0 && (uint32_t)app != STORE_APP_ID)
		return sq_seterr(
		    -EBADMSG, "\"%s\" is not a threadwatch database (application_id %#" PRIx64 ")",
		    st->path, (uint64_t)app);
	if (*version > 0) {
		r = sq_int(st, Q_TABLES_V1, NULL, 0, "reading the schema", &objects);
		if (r < 0)
			return sq_seterr(r, "\"%s\": %s", st->path, store_last_error());
		if (objects != 13)
			return sq_seterr(-EBADMSG,
			                 "\"%s\" is damaged: schema version %" PRId64
			                 " but %" PRId64 " of its 13 tables",
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
	r = sq_exec(st, Q_BEGIN_WRITE, NULL, 0, "starting a migration", NULL);
	if (r < 0)
		return r;
	rc = sqlite3_exec(st->db, (const char *)f->data, NULL, NULL, &msg);
	sqlite3_free(msg);
	if (rc != SQLITE_OK)
		r = sq_fail(st, rc, f->name);
	if (r >= 0)
		r = sq_int(st, Q_USER_VERSION, NULL, 0, f->name, &got);
	if (r >= 0 && got != version)
		r = sq_seterr(-EPROTO, "%s left schema version %" PRId64 ", not %d", f->name, got,
		              version);
	if (r >= 0)
		r = sq_int(st, Q_FK_CHECK, NULL, 0, f->name, &bad);
	if (r > 0)
		r = sq_seterr(-EPROTO, "%s broke a foreign key", f->name);
	if (r >= 0)
		r = sq_exec(st, Q_COMMIT, NULL, 0, "committing a migration", NULL);
	if (r < 0)
		tx_rollback(st);
	if (r >= 0)
		r = exec_list(st, fk_on, 1);
	return r < 0 ? r : 0;
}

/* A copy of the database as it is, at PATH.bak-vFROM, before a migration
 * changes it: sqlite3_backup, which reads a consistent snapshot (the WAL
 * included) and writes a file of its own. */
static int backup_before(struct store *st, int64_t from)
{
	sqlite3 *dst = NULL;
	sqlite3_backup *b;
	char *path;
	int rc;

	xasprintf(&path, "%s.bak-v%" PRId64, st->path, from);
	rc = sqlite3_open_v2(path, &dst,
	                     SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX |
	                         SQLITE_OPEN_EXRESCODE,
	                     NULL);
	b = rc == SQLITE_OK ? sqlite3_backup_init(dst, "main", st->db, "main") : NULL;
	if (b) {
		int step = sqlite3_backup_step(b, -1);

		rc = sqlite3_backup_finish(b);
		if (step != SQLITE_DONE)
			rc = step;
	} else if (rc == SQLITE_OK) {
		rc = sqlite3_errcode(dst);
	}
	if (rc != SQLITE_OK)
		rc = sq_seterr(dst ? sqlite_errno(dst, rc) : -ENOMEM,
		               "cannot back up to \"%s\" before migrating: %s", path,
		               dst ? sqlite3_errmsg(dst) : sqlite3_errstr(rc));
	sqlite3_close(dst);
	free(path);
	return rc;
}

static int migrate(struct store *st, int64_t from)
{
	const int latest = schema_latest();
	const struct builtin_file *f;
	int r;

	if (from == 0) {
		f = builtin_find("sql/schema.sql");
		if (!f)
			return sq_seterr(-ENOENT, "sql/schema.sql is not built in");
		return migrate_one(st, f, latest);
	}
	r = backup_before(st, from);
	if (r < 0)
		return r;
	for (int v = (int)from + 1; v <= latest; v++) {
		f = migration_find(v);
		if (!f)
			return sq_seterr(-ENOENT, "no migration to schema version %d is built in",
			                 v);
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
		return sq_seterr(sqlite_errno(st->db, rc), "cannot open \"%s\": %s", st->path,
		                 st->db ? sqlite3_errmsg(st->db) : sqlite3_errstr(rc));
	/* SQLite opens a file it may not write read-only without a word;
	 * every cycle would then fail to store its runs. */
	if (!ro && sqlite3_db_readonly(st->db, "main") == 1)
		return sq_seterr(-EROFS, "\"%s\" is not writable by this process (uid %u)",
		                 st->path, (unsigned)geteuid());
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
			return sq_seterr(version ? -ENOTSUP : -ENOENT,
			                 "\"%s\" has schema version %" PRId64 ", not %d; open it "
			                 "read-write once to create or migrate it",
			                 st->path, version, schema_latest());
		return exec_list(st, settings_ro, SQ_LEN(settings_ro));
	}
	if (version > 0) {
		r = check_pragma(st, Q_QUICK_CHECK, "quick_check");
		if (r < 0)
			return r;
	}
	r = wal_enable(st);
	if (r < 0)
		return r;
	r = exec_list(st, settings_rw, SQ_LEN(settings_rw));
	if (r >= 0 && version < schema_latest())
		r = migrate(st, version);
	if (r < 0)
		return sq_seterr(r, "\"%s\": %s", st->path, store_last_error());
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
		r = sq_seterr(-ENOENT, "\"%s\" does not exist or is empty", path);
	if (r >= 0)
		r = store_connect(st, &fs);
	if (r < 0) {
		char saved[sizeof(store_msg)];

		memcpy(saved, store_msg, sizeof(saved));
		store_close(st);
		memcpy(store_msg, saved, sizeof(saved));
		if (r == -EBADMSG || r == -ENOTSUP)
			sq_seterr(r, "%s; the file was left untouched", saved);
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