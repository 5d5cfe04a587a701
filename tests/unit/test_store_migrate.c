/*
 * test_store_migrate: the store's schema migrations on temporary files: a
 * database of an older version is copied aside, migrated in one
 * transaction and its rows kept; what each migration adds works on old
 * and new rows alike.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include <sqlite3.h>

#include "store.h"
#include "store_fixture.h"

/* The tables version 5 added (sql/005-workloads.sql), dropped to turn a
 * database back into an older version. */
#define DROP_V5                                                                                    \
	"DROP TABLE workload_latest; DROP TABLE workload_figures; DROP TABLE workload_windows;"    \
	"DROP TABLE workloads; DROP TABLE workload_figure_names;"

/* Turns the file back into a version-2 database: the runs table as it was
 * before "not_applicable", with its rows. */
static void make_version_2(const char *path)
{
	static const char sql[] =
	    "PRAGMA foreign_keys = OFF; BEGIN;" DROP_V5
	    "CREATE TABLE runs2 (id INTEGER PRIMARY KEY,"
	    " cycle_id INTEGER REFERENCES cycles (id) ON DELETE SET NULL,"
	    " probe TEXT NOT NULL CHECK (length(probe) BETWEEN 1 AND 64),"
	    " started_ms INTEGER NOT NULL, ended_ms INTEGER NOT NULL,"
	    " status TEXT NOT NULL CHECK (status IN ('ok', 'skipped', 'error')),"
	    " reason TEXT CHECK (status = 'ok' OR length(reason) > 0),"
	    " params TEXT CHECK (params IS NULL OR json_valid(params)), loadavg1 REAL,"
	    " steal_pct REAL, cpu_s REAL, pruned_ms INTEGER,"
	    " CHECK (status = 'ok' OR reason IS NOT NULL)) STRICT;"
	    "INSERT INTO runs2 SELECT id, cycle_id, probe, started_ms, ended_ms, status, reason,"
	    " params, loadavg1, steal_pct, cpu_s, pruned_ms FROM runs; DROP TABLE runs;"
	    "ALTER TABLE runs2 RENAME TO runs;"
	    "CREATE INDEX runs_probe ON runs (probe, id);"
	    "CREATE INDEX runs_status ON runs (status, id);"
	    "CREATE INDEX runs_started ON runs (started_ms);"
	    "CREATE INDEX runs_cycle ON runs (cycle_id);"
	    "CREATE INDEX runs_unpruned ON runs (started_ms) WHERE pruned_ms IS NULL;"
	    "PRAGMA user_version = 2; COMMIT;";
	sqlite3 *db = NULL;

	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
}

/* A probe that does not apply to the host (map32 on arm64) is stored as
 * such, in a new database and in one migrated from version 2. */
static void test_not_applicable_run(void **state)
{
	struct fixture *f = *state;
	struct store *st = open_rw(f->path);
	struct store_runs_query q = {.status = "not_applicable", .limit = 10};
	json_t *doc = doc_new("map32", T0 + 1000);
	struct store_page page;
	int64_t id = 0;

	add_run(st, "ctxsw", T0, 1);
	store_close(st);
	make_version_2(f->path);
	assert_int_equal(header_u32(f->path, 60), 2);
	st = open_rw(f->path);
	assert_int_equal(count_runs(st, "ctxsw"), 1);
	store_close(st); /* a clean close checkpoints */
	assert_int_equal(header_u32(f->path, 60), 5);
	st = open_rw(f->path);
	json_object_set_new(doc, "status", json_string("not_applicable"));
	assert_int_equal(insert_doc(st, doc, T0 + 1000, 0, &id), 0);
	assert_int_equal(store_read_runs(st, &q, &page), 0);
	assert_int_equal(json_array_size(page.rows), 1);
	assert_string_equal(
	    json_string_value(json_object_get(json_array_get(page.rows, 0), "status")),
	    "not_applicable");
	json_decref(page.rows);
	json_decref(doc);
	store_close(st);
}

/* A migration starts with a copy of the database as it was: PATH.bak-vN
 * holds schema version N and its runs. */
static void test_migration_backup(void **state)
{
	struct fixture *f = *state;
	struct store *st = open_rw(f->path);
	char bak[PATH_MAX];
	sqlite3 *db = NULL;
	sqlite3_stmt *q = NULL;

	add_run(st, "ctxsw", T0, 1);
	store_close(st);
	make_version_2(f->path);
	snprintf(bak, sizeof(bak), "%s.bak-v2", f->path);
	assert_int_equal(access(bak, F_OK), -1);
	st = open_rw(f->path);
	store_close(st);
	assert_int_equal(header_u32(f->path, 60), 5);
	assert_int_equal(header_u32(bak, 60), 2);
	assert_int_equal(sqlite3_open_v2(bak, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(db, "SELECT count(*) FROM runs", -1, &q, NULL),
	                 SQLITE_OK);
	assert_int_equal(sqlite3_step(q), SQLITE_ROW);
	assert_int_equal(sqlite3_column_int(q, 0), 1);
	sqlite3_finalize(q);
	sqlite3_close(db);
	/* A database already at the latest version is not copied again. */
	unlink(bak);
	st = open_rw(f->path);
	store_close(st);
	assert_int_equal(access(bak, F_OK), -1);
}

/* Turns the file back into a version-3 database: the runs table without
 * the failure columns, with error runs worded as the runner of that time
 * worded them. */
static void make_version_3(const char *path)
{
	static const char sql[] =
	    "BEGIN;" DROP_V5 "CREATE TABLE runs3 (id INTEGER PRIMARY KEY,"
	    " cycle_id INTEGER REFERENCES cycles (id) ON DELETE SET NULL,"
	    " probe TEXT NOT NULL CHECK (length(probe) BETWEEN 1 AND 64),"
	    " started_ms INTEGER NOT NULL, ended_ms INTEGER NOT NULL,"
	    " status TEXT NOT NULL CHECK (status IN ('ok', 'skipped', 'not_applicable', 'error')),"
	    " reason TEXT CHECK (status = 'ok' OR length(reason) > 0),"
	    " params TEXT CHECK (params IS NULL OR json_valid(params)), loadavg1 REAL,"
	    " steal_pct REAL, cpu_s REAL, pruned_ms INTEGER,"
	    " CHECK (status = 'ok' OR reason IS NOT NULL)) STRICT;"
	    "INSERT INTO runs3 SELECT id, cycle_id, probe, started_ms, ended_ms, status, reason,"
	    " params, loadavg1, steal_pct, cpu_s, pruned_ms FROM runs; DROP TABLE runs;"
	    "ALTER TABLE runs3 RENAME TO runs;"
	    "CREATE INDEX runs_probe ON runs (probe, id);"
	    "CREATE INDEX runs_status ON runs (status, id);"
	    "CREATE INDEX runs_started ON runs (started_ms);"
	    "CREATE INDEX runs_cycle ON runs (cycle_id);"
	    "CREATE INDEX runs_unpruned ON runs (started_ms) WHERE pruned_ms IS NULL;"
	    "INSERT INTO runs (probe, started_ms, ended_ms, status, reason) VALUES"
	    " ('ctxsw', 1, 2, 'error', 'crashed with SIGSEGV (stderr: fault)'),"
	    " ('threads', 3, 4, 'error', 'killed after the 20 s time limit'),"
	    " ('map32', 5, 6, 'error', 'empty output'),"
	    " ('ctxsw', 7, 8, 'error', 'crashed with signal 42');"
	    "PRAGMA user_version = 3; COMMIT;";
	sqlite3 *db = NULL;
	char *msg = NULL;

	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK)
		fail_msg("making a version-3 database: %s", msg);
	sqlite3_close(db);
}

/* One column of the run with that reason, as text ("" for NULL). */
static void run_column(const char *path, const char *reason, const char *col, char *out, size_t len)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *q = NULL;
	char sql[128];

	snprintf(sql, sizeof(sql), "SELECT %s FROM runs WHERE reason = ?", col);
	assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &q, NULL), SQLITE_OK);
	sqlite3_bind_text(q, 1, reason, -1, SQLITE_STATIC);
	assert_int_equal(sqlite3_step(q), SQLITE_ROW);
	snprintf(out, len, "%s",
	         sqlite3_column_text(q, 0) ? (const char *)sqlite3_column_text(q, 0) : "");
	sqlite3_finalize(q);
	sqlite3_close(db);
}

static void expect_column(const char *path, const char *reason, const char *col, const char *want)
{
	char got[64];

	run_column(path, reason, col, got, sizeof(got));
	assert_string_equal(got, want);
}

/* What a failed run was is stored as data (sql/004-run-failure.sql): the
 * migration reads the old runs' reasons once, and a new run gets its kind
 * and signal from the runner, whatever its reason says. */
static void test_run_failure_columns(void **state)
{
	struct fixture *f = *state;
	struct store *st = open_rw(f->path);
	struct failure crash, timeout;
	struct store_run run = {.probe = "ctxsw",
	                        .started_ms = T0,
	                        .ended_ms = T0 + 1,
	                        .status = "error",
	                        .reason = "a sentence that says nothing of signals",
	                        .failure = &crash,
	                        .term_signal = 7,
	                        .loadavg1 = NAN,
	                        .steal_pct = NAN,
	                        .cpu_s = NAN};
	json_t *failed = NULL, *o;
	int64_t id = 0;

	add_run(st, "threads", T0, 1);
	store_close(st);
	make_version_3(f->path);
	st = open_rw(f->path);
	store_close(st);
	assert_int_equal(header_u32(f->path, 60), 5);
	expect_column(f->path, "crashed with SIGSEGV (stderr: fault)", "failure", "crash");
	expect_column(f->path, "crashed with SIGSEGV (stderr: fault)", "term_signal", "11");
	expect_column(f->path, "killed after the 20 s time limit", "failure", "timeout");
	expect_column(f->path, "killed after the 20 s time limit", "term_signal", "");
	expect_column(f->path, "empty output", "failure", "error");
	expect_column(f->path, "crashed with signal 42", "failure", "crash");
	expect_column(f->path, "crashed with signal 42", "term_signal", "");

	st = open_rw(f->path);
	failure_set(&crash, FAILURE_CRASH, 7);
	assert_int_equal(store_run_insert(st, &run, &id), 0);
	failure_set(&timeout, FAILURE_TIMEOUT, 0);
	run.probe = "map32";
	run.reason = "another sentence";
	run.failure = &timeout;
	run.term_signal = 9; /* the runner's own kill: not a crash's signal */
	assert_int_equal(store_run_insert(st, &run, &id), 0);
	assert_int_equal(store_latest_failures(st, &failed), 0);
	o = json_object_get(failed, "ctxsw");
	assert_string_equal(json_string_value(json_object_get(o, "kind")), "crash");
	assert_string_equal(json_string_value(json_object_get(o, "signal")), "SIGBUS");
	o = json_object_get(failed, "map32");
	assert_string_equal(json_string_value(json_object_get(o, "kind")), "timeout");
	assert_true(json_is_null(json_object_get(o, "signal")));
	/* threads's latest run is the migrated timeout */
	o = json_object_get(failed, "threads");
	assert_string_equal(json_string_value(json_object_get(o, "kind")), "timeout");
	json_decref(failed);
	store_close(st);
	expect_column(f->path, "another sentence", "term_signal", "");
}

/* Version 4, as the release before the workloads' history left it. */
static void make_version_4(const char *path)
{
	static const char sql[] = "BEGIN;" DROP_V5 "PRAGMA user_version = 4; COMMIT;";
	sqlite3 *db = NULL;

	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
}

/* A database of the release before migrates to version 5: its runs kept, a
 * backup of it beside, and the workloads' tables there to store a window. */
static void test_workloads_migration(void **state)
{
	struct fixture *f = *state;
	struct store *st = open_rw(f->path);
	json_t *win, *got = NULL;
	char bak[PATH_MAX];

	add_run(st, "ctxsw", T0, 1);
	store_close(st);
	make_version_4(f->path);
	assert_int_equal(header_u32(f->path, 60), 4);
	st = open_rw(f->path);
	assert_int_equal(count_runs(st, "ctxsw"), 1);
	assert_int_equal(store_workloads_latest(st, &got), -ENOENT);
	win = json_pack("{s:f s:i s:[{s:s s:s s:s s:s s:{s:i}}]}", "window_s", 60.0, "seen", 1,
	                "workloads", "key", "unit:a.service", "ref", "0123456789abcdef", "kind",
	                "unit", "name", "a.service", "figures", "threads", 3);
	assert_int_equal(store_workloads_record(st, T0, win), 0);
	assert_int_equal(store_workloads_latest(st, &got), 0);
	assert_int_equal(json_integer_value(json_object_get(got, "window_end_ms")), T0);
	store_close(st);
	assert_int_equal(header_u32(f->path, 60), 5);
	snprintf(bak, sizeof(bak), "%s.bak-v4", f->path);
	assert_int_equal(header_u32(bak, 60), 4);
	json_decref(win);
	json_decref(got);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_not_applicable_run, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_migration_backup, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_run_failure_columns, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_workloads_migration, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
