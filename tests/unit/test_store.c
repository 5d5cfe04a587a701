/*
 * test_store: the SQLite store on temporary files: creating and reopening,
 * runs read back exactly, a failing insert leaves nothing, a second writer
 * is refused, damaged or newer files are refused and left byte for byte as
 * they were, retention, series buckets checked by hand, cursor pages, the
 * fingerprint history, a full disk, and values that look like SQL.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <limits.h>
#include <unistd.h>

#include <cmocka.h>

#include <sqlite3.h>

#include "store.h"
#include "store_fixture.h"

/* The file's bytes and modification time, to prove it was not touched. */
struct snapshot {
	char *bytes;
	size_t len;
	struct timespec mtime;
};

static void file_snap(const char *path, struct snapshot *s)
{
	struct stat sb;
	int fd = open(path, O_RDONLY);

	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &sb), 0);
	s->len = (size_t)sb.st_size;
	s->mtime = sb.st_mtim;
	s->bytes = malloc(s->len + 1);
	assert_int_equal(pread(fd, s->bytes, s->len, 0), (ssize_t)s->len);
	close(fd);
}

static void assert_unchanged(const char *path, struct snapshot *before)
{
	struct snapshot after;

	file_snap(path, &after);
	assert_int_equal(after.len, before->len);
	assert_memory_equal(after.bytes, before->bytes, before->len);
	assert_int_equal(after.mtime.tv_sec, before->mtime.tv_sec);
	assert_int_equal(after.mtime.tv_nsec, before->mtime.tv_nsec);
	free(after.bytes);
	free(before->bytes);
}

static void write_file(const char *path, const void *data, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, data, len), (ssize_t)len);
	close(fd);
}

static int exists(const char *path, const char *suffix)
{
	char p[160];

	snprintf(p, sizeof(p), "%s%s", path, suffix);
	return access(p, F_OK) == 0;
}

/* ---- opening --------------------------------------------------------------- */

static void test_create_and_reopen(void **state)
{
	struct fixture *f = *state;
	struct store *st = open_rw(f->path), *ro = NULL;
	char err[256];

	add_run(st, "ctxsw", T0, 1);
	store_close(st);
	/* Version 5 (sql/005-workloads.sql), our application id,
	 * write-ahead logging (header bytes 18, 19). */
	assert_int_equal(header_u32(f->path, 60), 5);
	assert_int_equal(header_u32(f->path, 68), 0x54576462);
	assert_int_equal(header_u32(f->path, 16) & 0xffff, 0x0202);
	assert_false(exists(f->path, "-wal")); /* a clean close checkpoints */

	st = open_rw(f->path);
	assert_int_equal(count_runs(st, NULL), 1);
	assert_int_equal(store_open(f->path, STORE_READONLY, &ro, err, sizeof(err)), 0);
	assert_int_equal(count_runs(ro, NULL), 1);
	assert_int_equal(store_check(st, err, sizeof(err)), 0);
	assert_string_equal(err, "ok");
	store_close(ro);
	store_close(st);
}

static void test_readonly(void **state)
{
	struct fixture *f = *state;
	struct store *st, *ro = NULL;
	char err[256], *v = NULL;

	assert_int_equal(store_open(f->path, STORE_READONLY, &ro, err, sizeof(err)), -ENOENT);
	assert_null(ro);
	assert_non_null(strstr(err, f->path));
	st = open_rw(f->path);
	assert_int_equal(store_state_set(st, "next_cycle_ms", "123"), 0);
	assert_int_equal(store_open(f->path, STORE_READONLY, &ro, err, sizeof(err)), 0);
	assert_int_equal(store_state_get(ro, "next_cycle_ms", &v), 0);
	assert_string_equal(v, "123");
	free(v);
	assert_int_equal(store_state_set(ro, "next_cycle_ms", "5"), -EROFS);
	assert_non_null(strstr(store_last_error(), "read-only"));
	assert_int_equal(store_cycle_begin(ro, T0, "api", 0, NULL), -EROFS);
	/* A write on the writer shows up on the reader. */
	add_run(st, "map32", T0, 3);
	assert_int_equal(count_runs(ro, NULL), 1);
	store_close(ro);
	store_close(st);
}

static void test_second_writer_refused(void **state)
{
	struct fixture *f = *state;
	struct store *st = open_rw(f->path), *two = NULL;
	char err[512], pid[32], link[128];

	assert_int_equal(store_open(f->path, 0, &two, err, sizeof(err)), -EBUSY);
	assert_null(two);
	assert_non_null(strstr(err, f->path));
	snprintf(pid, sizeof(pid), "pid %ld", (long)getpid());
	assert_non_null(strstr(err, pid));
	/* The same file by another name is the same database. */
	snprintf(link, sizeof(link), "%s/link.db", f->dir);
	assert_int_equal(symlink(f->path, link), 0);
	assert_int_equal(store_open(link, 0, &two, err, sizeof(err)), -EBUSY);
	unlink(link);
	/* Readers are welcome. */
	assert_int_equal(store_open(f->path, STORE_READONLY, &two, err, sizeof(err)), 0);
	store_close(two);
	store_close(st);
	/* Once the first writer is gone, the next one gets in. */
	st = open_rw(f->path);
	store_close(st);
}

static void test_newer_version_refused(void **state)
{
	struct fixture *f = *state;
	struct store *st = open_rw(f->path);
	const unsigned char v99[4] = {0, 0, 0, 99};
	struct snapshot before;
	char err[512];
	int fd;

	add_run(st, "ctxsw", T0, 1);
	store_close(st);
	fd = open(f->path, O_WRONLY);
	assert_int_equal(pwrite(fd, v99, 4, 60), 4);
	close(fd);
	file_snap(f->path, &before);
	usleep(20000); /* any write would now show in the mtime */
	st = NULL;
	assert_int_equal(store_open(f->path, 0, &st, err, sizeof(err)), -ENOTSUP);
	assert_null(st);
	assert_non_null(strstr(err, "version 99"));
	assert_non_null(strstr(err, f->path));
	assert_int_equal(store_open(f->path, STORE_READONLY, &st, err, sizeof(err)), -ENOTSUP);
	assert_unchanged(f->path, &before);
	assert_false(exists(f->path, "-wal"));
}

/* A file that claims a schema version but lacks the tables, such as a bad
 * salvage, is refused untouched instead of failing later. */
static void test_missing_tables_refused(void **state)
{
	struct fixture *f = *state;
	struct snapshot before;
	struct store *st = NULL;
	char cmd[1024], err[512];

	snprintf(cmd, sizeof(cmd),
	         "sqlite3 '%s' 'PRAGMA application_id = 1415013474; PRAGMA user_version = 1;"
	         " CREATE TABLE state (key TEXT, value TEXT);'",
	         f->path);
	assert_int_equal(system(cmd), 0);
	file_snap(f->path, &before);
	usleep(20000);
	assert_int_equal(store_open(f->path, 0, &st, err, sizeof(err)), -EBADMSG);
	assert_null(st);
	assert_non_null(strstr(err, "damaged"));
	assert_non_null(strstr(err, "1 of its 13 tables"));
	assert_unchanged(f->path, &before);
}

static void test_garbage_refused(void **state)
{
	struct fixture *f = *state;
	static const char *const contents[] = {
	    "hello, I am a text file\n", "SQLite format 3", /* too short */
	    NULL,                                           /* 8 KiB of noise */
	    NULL, /* a valid SQLite magic followed by noise */
	};
	char noise[8192], err[512];
	struct snapshot before;
	struct store *st;

	for (size_t i = 0; i < sizeof(noise); i++)
		noise[i] = (char)(i * 7919 % 251);
	for (size_t k = 0; k < 4; k++) {
		if (contents[k]) {
			write_file(f->path, contents[k], strlen(contents[k]));
		} else {
			if (k == 3)
				memcpy(noise, "SQLite format 3", 16);
			write_file(f->path, noise, sizeof(noise));
		}
		file_snap(f->path, &before);
		usleep(20000);
		st = NULL;
		assert_int_equal(store_open(f->path, 0, &st, err, sizeof(err)), -EBADMSG);
		assert_null(st);
		assert_non_null(strstr(err, f->path));
		assert_unchanged(f->path, &before);
		assert_false(exists(f->path, "-wal"));
	}
}

/* A database with enough pages to damage. */
static void make_db(const char *path)
{
	struct store *st = open_rw(path);

	for (int i = 0; i < 40; i++)
		add_run(st, i % 2 ? "ctxsw" : "map32", T0 + i * 1000, i);
	store_close(st);
}

static void test_truncated_refused(void **state)
{
	struct fixture *f = *state;
	struct snapshot before;
	struct store *st = NULL;
	struct stat sb;
	char err[512];

	make_db(f->path);
	assert_int_equal(stat(f->path, &sb), 0);
	assert_true(sb.st_size >= 8 * 4096);
	/* Cut at a page boundary: the header still counts the lost pages. */
	assert_int_equal(truncate(f->path, sb.st_size / 2 / 4096 * 4096), 0);
	file_snap(f->path, &before);
	usleep(20000);
	assert_int_equal(store_open(f->path, 0, &st, err, sizeof(err)), -EBADMSG);
	assert_non_null(strstr(err, "truncated"));
	assert_unchanged(f->path, &before);
	/* Cut in the middle of a page. */
	assert_int_equal(truncate(f->path, 3 * 4096 + 100), 0);
	file_snap(f->path, &before);
	assert_int_equal(store_open(f->path, 0, &st, err, sizeof(err)), -EBADMSG);
	assert_unchanged(f->path, &before);
	assert_null(st);
}

static void test_damaged_page_refused(void **state)
{
	struct fixture *f = *state;
	struct snapshot before;
	struct store *st = NULL;
	char junk[4096], err[512];
	int fd;

	make_db(f->path);
	memset(junk, 0xa5, sizeof(junk));
	fd = open(f->path, O_WRONLY);
	assert_int_equal(pwrite(fd, junk, sizeof(junk), 4 * 4096), (ssize_t)sizeof(junk));
	close(fd);
	file_snap(f->path, &before);
	usleep(20000);
	assert_int_equal(store_open(f->path, 0, &st, err, sizeof(err)), -EBADMSG);
	assert_null(st);
	assert_non_null(strstr(err, f->path));
	assert_unchanged(f->path, &before);
}

/* ---- runs ------------------------------------------------------------------ */

static void test_insert_read_back(void **state)
{
	struct fixture *f = *state;
	struct store *st = open_rw(f->path);
	json_t *doc = doc_new("ctxsw", T0), *run = NULL, *v, *docs = NULL, *ids = NULL;
	const double xy[] = {0, 1.25, 1, 1.5, 2, 1.75};
	int64_t id = 0, cycle = 0, eid;

	assert_int_equal(store_cycle_begin(st, T0 - 5, "start", 0.5, &cycle), 0);
	doc_scalar(doc, "ratio", 1.5, "ratio");
	doc_scalar(doc, "low_ns", 812.25, "ns");
	doc_series(doc, "pair_ratio", xy, 3);
	assert_int_equal(insert_doc(st, doc, T0, cycle, &id), 0);
	assert_int_equal(store_read_run(st, id, &run), 0);
	assert_string_equal(json_string_value(json_object_get(run, "probe")), "ctxsw");
	assert_string_equal(json_string_value(json_object_get(run, "status")), "ok");
	assert_true(json_is_null(json_object_get(run, "reason")));
	assert_int_equal(json_integer_value(json_object_get(run, "cycle_id")), cycle);
	/* A row: times as Unix ms only (the API formatter adds the rest). */
	assert_null(json_object_get(run, "started_at"));
	assert_null(json_object_get(run, "duration_s"));
	assert_int_equal(json_integer_value(json_object_get(run, "started_ms")), T0);
	assert_int_equal(json_integer_value(json_object_get(run, "ended_ms")), T0 + 1500);
	assert_float_equal(json_real_value(json_object_get(run, "loadavg1")), 0.25, 1e-12);
	assert_true(json_is_null(json_object_get(run, "steal_pct")));
	assert_true(json_is_true(json_object_get(json_object_get(run, "params"), "quick")));
	assert_string_equal(json_string_value(json_object_get(run, "key_metric")), "ctxsw.ratio");
	assert_float_equal(json_real_value(json_object_get(run, "key_value")), 1.5, 1e-12);
	assert_string_equal(json_string_value(json_object_get(run, "key_unit")), "ratio");
	v = json_object_get(run, "samples");
	assert_int_equal(json_array_size(v), 2);
	assert_string_equal(json_string_value(json_object_get(json_array_get(v, 0), "metric")),
	                    "ctxsw.low_ns");
	assert_float_equal(json_real_value(json_object_get(json_array_get(v, 0), "value")), 812.25,
	                   1e-12);
	assert_string_equal(json_string_value(json_object_get(json_array_get(v, 0), "unit")), "ns");
	v = json_object_get(json_object_get(run, "series"), "pair_ratio");
	assert_string_equal(json_string_value(json_object_get(v, "x_unit")), "count");
	v = json_object_get(v, "points");
	assert_int_equal(json_array_size(v), 3);
	assert_float_equal(json_real_value(json_array_get(json_array_get(v, 2), 0)), 2, 0);
	assert_float_equal(json_real_value(json_array_get(json_array_get(v, 2), 1)), 1.75, 0);
	assert_true(json_equal(json_object_get(run, "doc"), doc));
	assert_true(json_is_null(json_object_get(run, "raw")));
	json_decref(run);

	/* An error run keeps its (bounded, cleaned) output and no samples. */
	char *big = malloc(100000);
	memset(big, 'x', 99999);
	big[99999] = '\0';
	big[0] = '\xff';
	eid = add_error_run(st, "ctxsw", T0 + 10000, big);
	free(big);
	assert_int_equal(store_read_run(st, eid, &run), 0);
	assert_true(json_is_null(json_object_get(run, "doc")));
	assert_string_equal(json_string_value(json_object_get(run, "reason")), "killed by SIGSEGV");
	assert_int_equal(json_array_size(json_object_get(run, "samples")), 0);
	v = json_object_get(run, "raw");
	assert_int_equal(json_string_length(v), 65536 + 2); /* U+FFFD is 3 bytes */
	assert_memory_equal(json_string_value(v), "\xef\xbf\xbdxx", 5);
	json_decref(run);

	/* The latest ok document of each probe. */
	assert_int_equal(store_latest_docs(st, &docs, &ids), 0);
	assert_true(json_equal(json_object_get(docs, "ctxsw"), doc));
	assert_int_equal(json_integer_value(json_object_get(ids, "ctxsw")), id);
	json_decref(docs);
	json_decref(ids);
	assert_int_equal(store_read_run(st, 9999, &run), -ENOENT);
	assert_null(run);
	json_decref(doc);
	store_close(st);
}

static void test_failed_insert_leaves_nothing(void **state)
{
	struct fixture *f = *state;
	struct store *st = open_rw(f->path);
	json_t *doc = doc_new("ctxsw", T0), *names = NULL, *snap = NULL;
	const double xy[] = {0, 1};
	char long_name[80];
	int64_t id = 0;

	/* Samples and a first series are written before the overlong series
	 * name hits the schema's CHECK: the whole run must go. */
	doc_scalar(doc, "ratio", 1.5, "ratio");
	doc_scalar(doc, "low_ns", 800, "ns");
	doc_series(doc, "pair_ratio", xy, 1);
	memset(long_name, 's', sizeof(long_name) - 1);
	long_name[sizeof(long_name) - 1] = '\0';
	doc_series(doc, long_name, xy, 1);
	assert_int_equal(insert_doc(st, doc, T0, 0, &id), -EINVAL);
	assert_non_null(strstr(store_last_error(), "series."));
	json_object_del(json_object_get(doc, "series"), long_name);
	/* A point that is not a pair, after good ones. */
	json_array_append_new(
	    json_object_get(json_object_get(json_object_get(doc, "series"), "pair_ratio"),
	                    "points"),
	    json_pack("[f]", 1.0));
	assert_int_equal(insert_doc(st, doc, T0, 0, &id), -EINVAL);
	assert_non_null(strstr(store_last_error(), "pair_ratio.points[1]"));
	/* A cycle that does not exist (a foreign key). */
	json_object_del(json_object_get(doc, "series"), "pair_ratio");
	assert_int_equal(insert_doc(st, doc, T0, 777, &id), -EINVAL);
	/* A skipped run without a reason. */
	json_object_set_new(doc, "status", json_string("skipped"));
	struct store_run bad = {
	    .probe = "ctxsw", .started_ms = T0, .ended_ms = T0, .status = "skipped", .doc = doc};
	assert_int_equal(store_run_insert(st, &bad, &id), -EINVAL);

	assert_int_equal(count_runs(st, NULL), 0);
	assert_int_equal(store_read_metric_names(st, &names), 0);
	assert_int_equal(json_array_size(names), 0);
	assert_int_equal(store_read_snapshot(st, &snap), 0);
	assert_int_equal(json_object_size(json_object_get(snap, "runs_total")), 0);
	assert_int_equal(json_object_size(json_object_get(snap, "probes")), 0);
	assert_true(json_is_null(json_object_get(snap, "recommendation")));
	json_decref(names);
	json_decref(snap);
	json_decref(doc);
	/* And the store still works. */
	add_run(st, "ctxsw", T0, 2);
	assert_int_equal(count_runs(st, NULL), 1);
	store_close(st);
}

static void test_cursor_pagination(void **state)
{
	struct fixture *f = *state;
	struct store *st = open_rw(f->path);
	struct store_runs_query q = {.limit = 3};
	struct store_page page;
	json_t *runs;
	int64_t id[8];

	for (int i = 1; i <= 7; i++)
		id[i] = i == 4 ? add_error_run(st, "b", T0 + i * 1000, "")
		               : add_run(st, i % 2 ? "a" : "b", T0 + i * 1000, i);
	assert_int_equal(store_read_runs(st, &q, &page), 0);
	runs = page.rows;
	assert_int_equal(json_array_size(runs), 3);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(runs, 0), "id")), id[7]);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(runs, 2), "id")), id[5]);
	assert_true(page.more);
	assert_int_equal(page.last_id, id[5]);
	q.cursor = id[5];
	json_decref(page.rows);
	assert_int_equal(store_read_runs(st, &q, &page), 0);
	runs = page.rows;
	assert_int_equal(json_integer_value(json_object_get(json_array_get(runs, 0), "id")), id[4]);
	assert_true(page.more);
	assert_int_equal(page.last_id, id[2]);
	q.cursor = id[2];
	json_decref(page.rows);
	assert_int_equal(store_read_runs(st, &q, &page), 0);
	runs = page.rows;
	assert_int_equal(json_array_size(runs), 1);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(runs, 0), "id")), id[1]);
	assert_false(page.more);
	json_decref(page.rows);

	/* Filters: probe, status, time range; a page that ends exactly. */
	q = (struct store_runs_query){.probe = "a", .limit = 4};
	assert_int_equal(store_read_runs(st, &q, &page), 0);
	assert_int_equal(json_array_size(page.rows), 4);
	assert_false(page.more);
	json_decref(page.rows);
	q = (struct store_runs_query){.probe = "b", .status = "error", .limit = 10};
	assert_int_equal(store_read_runs(st, &q, &page), 0);
	runs = page.rows;
	assert_int_equal(json_array_size(runs), 1);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(runs, 0), "id")), id[4]);
	assert_null(json_object_get(json_array_get(runs, 0), "key_metric"));
	json_decref(page.rows);
	q = (struct store_runs_query){.since_ms = T0 + 2000, .until_ms = T0 + 3000, .limit = 10};
	assert_int_equal(store_read_runs(st, &q, &page), 0);
	runs = page.rows;
	assert_int_equal(json_array_size(runs), 2);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(runs, 1), "id")), id[2]);
	json_decref(page.rows);
	q = (struct store_runs_query){.probe = "nope", .limit = 10};
	assert_int_equal(store_read_runs(st, &q, &page), 0);
	assert_int_equal(json_array_size(page.rows), 0);
	json_decref(page.rows);
	q.limit = 0;
	assert_int_equal(store_read_runs(st, &q, &page), -EINVAL);
	assert_null(page.rows);
	store_close(st);
}

/* ---- series, fingerprints --------------------------------------------------- */

static json_t *fingerprint(const char *kernel, long threads_max)
{
	json_t *fp =
	    json_pack("{s:s, s:s, s:s, s:s, s:s, s:{s:s, s:i, s:i, s:i, s:s, s:s, s:b},"
	              " s:s, s:i, s:{s:s}, s:{s:I}}",
	              "hostname", "box", "kernel", kernel, "kernel_version", "#1 SMP", "glibc",
	              "2.36", "arch", "x86_64", "cpu", "vendor", "GenuineIntel", "family", 6,
	              "model", 85, "stepping", 4, "microcode", "0x2006e05", "model_name", "Xeon",
	              "fsgsbase", 1, "virtualization", "kvm", "ncpus", 2, "vulnerabilities",
	              "meltdown", "Not affected", "limits", "threads_max", (json_int_t)threads_max);

	assert_non_null(fp);
	return fp;
}

static void test_fingerprint_only_on_change(void **state)
{
	struct fixture *f = *state;
	struct store *st = open_rw(f->path);
	json_t *a = fingerprint("6.1.0-18-amd64", 1000), *a2 = fingerprint("6.1.0-18-amd64", 2000);
	json_t *b = fingerprint("6.1.0-21-amd64", 2000), *host = NULL, *h;
	int changed = -1;

	assert_int_equal(store_read_host(st, &host), -ENOENT);
	assert_int_equal(store_fingerprint_record(st, a, T0, &changed), 0);
	assert_int_equal(changed, 1);
	assert_int_equal(store_fingerprint_record(st, a, T0 + 1000, &changed), 0);
	assert_int_equal(changed, 0);
	/* Limits are tuning, not identity. */
	assert_int_equal(store_fingerprint_record(st, a2, T0 + 2000, &changed), 0);
	assert_int_equal(changed, 0);
	assert_int_equal(store_fingerprint_record(st, b, T0 + 3000, &changed), 0);
	assert_int_equal(changed, 1);
	assert_int_equal(store_fingerprint_record(st, b, T0 + 4000, &changed), 0);
	assert_int_equal(changed, 0);

	assert_int_equal(store_read_host(st, &host), 0);
	h = json_object_get(host, "history");
	assert_int_equal(json_array_size(h), 2);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(h, 0), "first_seen_ms")),
	                 T0 + 3000);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(h, 0), "last_seen_ms")),
	                 T0 + 4000);
	assert_non_null(
	    strstr(json_string_value(json_object_get(json_array_get(h, 0), "diff")), "6.1.0-21"));
	assert_true(json_is_null(json_object_get(json_array_get(h, 1), "diff")));
	assert_int_equal(json_integer_value(json_object_get(json_array_get(h, 1), "last_seen_ms")),
	                 T0 + 2000);
	h = json_object_get(json_object_get(host, "current"), "fingerprint");
	assert_true(json_equal(h, b));
	json_decref(host);
	json_decref(a);
	json_decref(a2);
	json_decref(b);
	store_close(st);
}

/* A probed capability learned where the row had none updates that row;
 * one that changes afterwards is a new row, with the change named. */
static void test_fingerprint_learns_in_place(void **state)
{
	struct fixture *f = *state;
	struct store *st = open_rw(f->path);
	json_t *a = fingerprint("6.1.0-18-amd64", 1000), *host = NULL, *h;
	int changed = -1;

	static const char *const ldt[] = {NULL, "loads", "faults (SIGSEGV)"};

	/* unknown, then learned (no change), then changed */
	for (int i = 0; i < 3; i++) {
		json_object_set_new(a, "probed", json_pack("{s:s?}", "selector_ldt", ldt[i]));
		assert_int_equal(store_fingerprint_record(st, a, T0 + i * 1000, &changed), 0);
		assert_int_equal(changed, i != 1);
	}
	assert_int_equal(store_read_host(st, &host), 0);
	h = json_object_get(host, "history");
	assert_int_equal(json_array_size(h), 2);
	assert_string_equal(json_string_value(json_object_get(json_array_get(h, 0), "diff")),
	                    "LDT selector loads → faults (SIGSEGV)");
	json_decref(host);
	json_decref(a);
	store_close(st);
}

static void test_series_downsampling(void **state)
{
	struct fixture *f = *state;
	struct store *st = open_rw(f->path);
	/* Offsets in seconds from T0 and values; step 30 s from T0. */
	static const struct {
		int s;
		double v;
	} pts[] = {{0, 1}, {10, 3}, {29, 5}, {30, 10}, {65, 7}, {90, 100}};
	json_t *a = fingerprint("6.1.0-18-amd64", 1), *b = fingerprint("6.1.0-21-amd64", 1);
	json_t *out = NULL, *p, *m;
	int changed;

	for (size_t i = 0; i < sizeof(pts) / sizeof(pts[0]); i++)
		add_run(st, "probe", T0 + pts[i].s * 1000, pts[i].v);
	add_run(st, "other", T0 + 5000, 1e6); /* another metric stays out */
	assert_int_equal(store_fingerprint_record(st, a, T0 - 1000, &changed), 0);
	assert_int_equal(store_fingerprint_record(st, b, T0 + 40000, &changed), 0);

	assert_int_equal(store_read_series(st, "probe.v", T0, T0 + 90000, 30000, &out), 0);
	assert_string_equal(json_string_value(json_object_get(out, "unit")), "ns");
	p = json_object_get(out, "points");
	assert_int_equal(json_array_size(p), 3); /* t = T0 + 90 s is outside */
	/* [0, 30): 1, 3, 5, stamped at its newest sample (29 s) */
	assert_int_equal(json_integer_value(json_object_get(json_array_get(p, 0), "t")),
	                 T0 + 29000);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(p, 0), "bucket_ms")),
	                 T0);
	assert_float_equal(json_number_value(json_object_get(json_array_get(p, 0), "min")), 1, 0);
	assert_float_equal(json_number_value(json_object_get(json_array_get(p, 0), "avg")), 3, 0);
	assert_float_equal(json_number_value(json_object_get(json_array_get(p, 0), "max")), 5, 0);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(p, 0), "n")), 3);
	/* [30, 60): 10 */
	assert_int_equal(json_integer_value(json_object_get(json_array_get(p, 1), "t")),
	                 T0 + 30000);
	assert_float_equal(json_number_value(json_object_get(json_array_get(p, 1), "avg")), 10, 0);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(p, 1), "n")), 1);
	/* [60, 90): 7 at 65 s */
	assert_int_equal(json_integer_value(json_object_get(json_array_get(p, 2), "t")),
	                 T0 + 65000);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(p, 2), "bucket_ms")),
	                 T0 + 60000);
	assert_float_equal(json_number_value(json_object_get(json_array_get(p, 2), "max")), 7, 0);
	m = json_object_get(out, "markers");
	assert_int_equal(json_array_size(m), 1);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(m, 0), "t")),
	                 T0 + 40000);
	assert_non_null(
	    strstr(json_string_value(json_object_get(json_array_get(m, 0), "diff")), "6.1.0-21"));
	json_decref(out);

	/* One bucket for everything, shifted start: 10, 29 → [T0+10 s, T0+100 s). */
	assert_int_equal(store_read_series(st, "probe.v", T0 + 10000, T0 + 100000, 90000, &out), 0);
	p = json_object_get(out, "points");
	assert_int_equal(json_array_size(p), 1);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(p, 0), "n")), 5);
	assert_float_equal(json_number_value(json_object_get(json_array_get(p, 0), "avg")),
	                   (3 + 5 + 10 + 7 + 100) / 5.0, 1e-12);
	assert_float_equal(json_number_value(json_object_get(json_array_get(p, 0), "min")), 3, 0);
	assert_float_equal(json_number_value(json_object_get(json_array_get(p, 0), "max")), 100, 0);
	json_decref(out);

	/* Millisecond steps over a long range make most buckets empty: the
	 * grouping path, one sample per bucket, bucket starts on the 3 ms grid. */
	assert_int_equal(store_read_series(st, "probe.v", T0, T0 + 100000000, 3, &out), 0);
	p = json_object_get(out, "points");
	assert_int_equal(json_array_size(p), 6);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(p, 1), "t")),
	                 T0 + 10000);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(p, 1), "bucket_ms")),
	                 T0 + 10000 / 3 * 3);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(p, 1), "n")), 1);
	assert_float_equal(json_number_value(json_object_get(json_array_get(p, 5), "min")), 100, 0);
	assert_float_equal(json_number_value(json_object_get(json_array_get(p, 5), "max")), 100, 0);
	assert_int_equal(json_array_size(json_object_get(out, "markers")), 1);
	json_decref(out);

	assert_int_equal(store_read_series(st, "probe.nope", T0, T0 + 1, 1, &out), -ENOENT);
	assert_int_equal(store_read_series(st, "probe.v", T0, T0 + 1, 0, &out), -EINVAL);
	assert_int_equal(store_read_series(st, "probe.v", T0, T0, 10, &out), -EINVAL);
	json_decref(a);
	json_decref(b);
	store_close(st);
}

/* ---- cycles, recommendations, snapshot ----------------------------------------- */

static void test_cycles_and_snapshot(void **state)
{
	struct fixture *f = *state;
	struct store *st = open_rw(f->path);
	json_t *rec = json_pack("{s:s, s:s, s:s, s:[s], s:{s:f}}", "verdict", "high", "confidence",
	                        "strong", "sentence", "Use high stacks.", "reasons", "because",
	                        "figures", "switch_saving_ns", 1.5);
	json_t *inputs = json_pack("{s:{s:f}}", "ctxsw", "ratio", 1.01), *out = NULL, *p;
	json_t *hr = json_pack("{s:{s:i, s:i}}", "threads_max", "used", 10, "limit", 100);
	int64_t cycle = 0, ended = 0, ids[2];
	json_t *fp = fingerprint("6.1", 1);

	assert_int_equal(store_last_cycle(st, &ended), -ENOENT);
	assert_int_equal(store_fingerprint_record(st, fp, T0, NULL), 0);
	assert_int_equal(store_cycle_begin(st, T0, "interval", 12.5, &cycle), 0);
	ids[0] = add_run(st, "ctxsw", T0 + 100, 1.25);
	ids[1] = add_error_run(st, "ctxsw", T0 + 200, NULL);
	assert_int_equal(store_last_cycle(st, &ended), -ENOENT); /* still running */
	assert_int_equal(store_cycle_end(st, cycle, T0 + 4500, "ok"), 0);
	assert_int_equal(store_cycle_end(st, cycle + 1, T0, "ok"), -ENOENT);
	assert_int_equal(store_last_cycle(st, &ended), 0);
	assert_int_equal(ended, T0 + 4500);
	assert_int_equal(store_read_recommendation(st, &out), -ENOENT);
	assert_int_equal(store_recommendation_insert(st, T0 + 5000, inputs, rec, ids, 2), 0);
	assert_int_equal(store_headroom_record(st, T0 + 5000, hr), 0);

	assert_int_equal(store_read_recommendation(st, &out), 0);
	assert_string_equal(json_string_value(json_object_get(out, "verdict")), "high");
	assert_string_equal(json_string_value(json_object_get(out, "sentence")),
	                    "Use high stacks.");
	assert_true(json_equal(json_object_get(out, "inputs"), inputs));
	assert_int_equal(json_integer_value(json_object_get(out, "computed_ms")), T0 + 5000);
	assert_int_equal(json_array_size(json_object_get(out, "run_ids")), 2);
	assert_int_equal(json_integer_value(json_array_get(json_object_get(out, "run_ids"), 1)),
	                 ids[1]);
	json_decref(out);
	assert_int_equal(store_read_headroom(st, &out), 0);
	assert_true(json_equal(json_object_get(out, "headroom"), hr));
	assert_true(json_is_integer(json_object_get(out, "computed_ms")));
	assert_null(json_object_get(out, "computed_at")); /* the API formatter's */
	json_decref(out);

	assert_int_equal(store_read_snapshot(st, &out), 0);
	p = json_object_get(json_object_get(out, "probes"), "ctxsw");
	assert_string_equal(json_string_value(json_object_get(p, "last_status")), "error");
	assert_int_equal(json_integer_value(json_object_get(p, "last_run_id")), ids[1]);
	assert_int_equal(json_integer_value(json_object_get(p, "last_ok_run_id")), ids[0]);
	assert_int_equal(json_integer_value(json_object_get(p, "last_ok_ms")), T0 + 100);
	assert_float_equal(json_real_value(json_object_get(p, "last_duration_s")), 0.01, 1e-9);
	assert_float_equal(json_real_value(json_object_get(
	                       json_object_get(json_object_get(p, "scalars"), "v"), "value")),
	                   1.25, 0);
	p = json_object_get(json_object_get(out, "runs_total"), "ctxsw");
	assert_int_equal(json_integer_value(json_object_get(p, "ok")), 1);
	assert_int_equal(json_integer_value(json_object_get(p, "error")), 1);
	p = json_object_get(out, "recommendation");
	assert_string_equal(json_string_value(json_object_get(p, "confidence")), "strong");
	assert_float_equal(
	    json_real_value(json_object_get(json_object_get(p, "figures"), "switch_saving_ns")),
	    1.5, 0);
	p = json_object_get(out, "last_cycle");
	assert_string_equal(json_string_value(json_object_get(p, "trigger")), "interval");
	assert_float_equal(json_real_value(json_object_get(p, "duration_s")), 4.5, 1e-9);
	assert_float_equal(json_real_value(json_object_get(p, "waited_s")), 12.5, 0);
	assert_true(json_equal(json_object_get(json_object_get(out, "headroom"), "headroom"), hr));
	assert_int_equal(
	    json_integer_value(json_object_get(json_object_get(out, "fingerprint"), "id")), 1);
	json_decref(out);
	json_decref(rec);
	json_decref(inputs);
	json_decref(hr);
	json_decref(fp);
	store_close(st);
}

static void test_retention(void **state)
{
	struct fixture *f = *state;
	struct store *st = open_rw(f->path);
	const int64_t now = T0 + 100 * DAY;
	json_t *run = NULL, *hr = json_pack("{s:i}", "x", 1), *snap = NULL;
	int64_t old[3], mid[2], fresh, lone, cycle = 0;

	assert_int_equal(store_cycle_begin(st, T0 + 1 * DAY, "start", 0, &cycle), 0);
	assert_int_equal(store_cycle_end(st, cycle, T0 + 1 * DAY + 10, "ok"), 0);
	for (int i = 0; i < 3; i++)
		old[i] = add_run(st, "p", T0 + (1 + i) * DAY, i);
	lone = add_run(st, "lone", T0 + 2 * DAY, 42); /* its only ok run */
	for (int i = 0; i < 2; i++)
		mid[i] = add_run(st, "p", T0 + (50 + i) * DAY, 10 + i);
	fresh = add_run(st, "p", T0 + 99 * DAY, 20);
	assert_int_equal(store_headroom_record(st, T0 + 1 * DAY, hr), 0);
	assert_int_equal(store_headroom_record(st, T0 + 2 * DAY, hr), 0);
	assert_int_equal(store_headroom_record(st, T0 + 99 * DAY, hr), 0);
	assert_int_equal(store_cycle_begin(st, T0 + 99 * DAY, "interval", 0, &cycle), 0);

	/* Points and documents after 10 days, samples after 60; batches of 1. */
	assert_int_equal(store_retention(st, now, 10, 60, 1), 0);
	for (int i = 0; i < 3; i++)
		assert_int_equal(store_read_run(st, old[i], &run), -ENOENT);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(store_read_run(st, mid[i], &run), 0);
		assert_true(json_is_null(json_object_get(run, "doc")));
		assert_int_equal(json_object_size(json_object_get(run, "series")), 0);
		assert_int_equal(json_array_size(json_object_get(run, "samples")), 1);
		assert_int_equal(json_integer_value(json_object_get(run, "pruned_ms")), now);
		json_decref(run);
	}
	assert_int_equal(store_read_run(st, fresh, &run), 0);
	assert_false(json_is_null(json_object_get(run, "doc")));
	assert_int_equal(json_object_size(json_object_get(run, "series")), 1);
	json_decref(run);
	/* The latest ok run of a probe stays, whole, for the recommendation. */
	assert_int_equal(store_read_run(st, lone, &run), 0);
	assert_false(json_is_null(json_object_get(run, "doc")));
	json_decref(run);
	assert_int_equal(count_runs(st, NULL), 4);
	/* Counters do not go down; only the newest headroom is left of the old ones. */
	assert_int_equal(store_read_snapshot(st, &snap), 0);
	assert_int_equal(json_integer_value(json_object_get(
	                     json_object_get(json_object_get(snap, "runs_total"), "p"), "ok")),
	                 6);
	json_decref(snap);
	json_decref(hr);
	/* A second pass finds nothing more to do. */
	assert_int_equal(store_retention(st, now, 10, 60, 1000), 0);
	assert_int_equal(count_runs(st, NULL), 4);
	store_close(st);
}

/* ---- faults and hostile values ----------------------------------------------- */

/* In a child: fill the disk (RLIMIT_FSIZE), check the failure, read, then
 * write again once there is room. Returns the failing step or 0. */
static int disk_full_child(const char *path)
{
	struct store *st = NULL;
	struct rlimit rl;
	json_t *doc;
	char err[256], *blob;
	int64_t id;
	int r;

	signal(SIGXFSZ, SIG_IGN);
	if (store_open(path, 0, &st, err, sizeof(err)) < 0)
		return 1;
	if (getrlimit(RLIMIT_FSIZE, &rl) < 0)
		return 2;
	rl.rlim_cur = 64 * 1024;
	if (setrlimit(RLIMIT_FSIZE, &rl) < 0)
		return 2;
	doc = doc_new("big", T0 + 1000);
	blob = malloc(300000);
	memset(blob, 'b', 299999);
	blob[299999] = '\0';
	json_object_set_new(json_object_get(doc, "info"), "blob", json_string(blob));
	free(blob);
	r = insert_doc(st, doc, T0 + 1000, 0, &id);
	if (r != -ENOSPC) {
		fprintf(stderr, "insert on a full disk: %d %s\n", r, store_last_error());
		return 3;
	}
	if (!strstr(store_last_error(), "full"))
		return 4;
	if (count_runs(st, NULL) != 1) /* the old data still reads */
		return 5;
	rl.rlim_cur = rl.rlim_max;
	if (setrlimit(RLIMIT_FSIZE, &rl) < 0)
		return 6;
	if (insert_doc(st, doc, T0 + 2000, 0, &id) < 0) /* room again: writing resumes */
		return 7;
	if (count_runs(st, NULL) != 2)
		return 8;
	json_decref(doc);
	store_close(st);
	return 0;
}

/* A committed run survives the process being killed before it closes. */
static void test_survives_sigkill(void **state)
{
	struct fixture *f = *state;
	struct store *st;
	char err[256];
	int status;
	pid_t pid;

	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		st = NULL;
		if (store_open(f->path, 0, &st, err, sizeof(err)) < 0)
			_exit(1);
		for (int i = 0; i < 5; i++) {
			json_t *doc = doc_new("ctxsw", T0 + i);
			int64_t id;

			doc_scalar(doc, "ratio", i, "ratio");
			if (insert_doc(st, doc, T0 + i, 0, &id) < 0)
				_exit(2);
			json_decref(doc);
		}
		kill(getpid(), SIGKILL);
		_exit(3);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFSIGNALED(status));
	assert_true(exists(f->path, "-wal")); /* the commits live in the log */
	st = open_rw(f->path);
	assert_int_equal(count_runs(st, NULL), 5);
	assert_int_equal(store_check(st, err, sizeof(err)), 0);
	store_close(st);
}

static void test_disk_full(void **state)
{
	struct fixture *f = *state;
	struct store *st = open_rw(f->path);
	char err[256];
	int status;
	pid_t pid;

	add_run(st, "ctxsw", T0, 1);
	store_close(st);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(disk_full_child(f->path));
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	st = open_rw(f->path);
	assert_int_equal(store_check(st, err, sizeof(err)), 0);
	assert_int_equal(count_runs(st, NULL), 2);
	assert_int_equal(count_runs(st, "big"), 1);
	store_close(st);
}

static void test_values_that_look_like_sql(void **state)
{
	struct fixture *f = *state;
	struct store *st = open_rw(f->path);
	static const char probe[] = "it's'; DROP TABLE runs; --";
	static const char key[] = "k'); DELETE FROM state; --";
	json_t *doc = doc_new(probe, T0), *out = NULL, *names = NULL;
	char *v = NULL, err[64], metric[128];
	int64_t id = 0;

	doc_scalar(doc, "x'y\"z", 1, "ns");
	assert_int_equal(insert_doc(st, doc, T0, 0, &id), 0);
	assert_int_equal(store_state_set(st, key, "v'; --"), 0);
	assert_int_equal(store_state_get(st, key, &v), 0);
	assert_string_equal(v, "v'; --");
	free(v);
	assert_int_equal(store_state_get(st, "k", &v), -ENOENT);

	assert_int_equal(store_read_run(st, id, &out), 0);
	assert_string_equal(json_string_value(json_object_get(out, "probe")), probe);
	assert_true(json_equal(json_object_get(out, "doc"), doc));
	json_decref(out);
	assert_int_equal(count_runs(st, probe), 1);
	snprintf(metric, sizeof(metric), "%s.x'y\"z", probe);
	assert_int_equal(store_read_series(st, metric, T0, T0 + 1, 1, &out), 0);
	assert_int_equal(json_array_size(json_object_get(out, "points")), 1);
	json_decref(out);
	assert_int_equal(store_read_metric_names(st, &names), 0);
	assert_string_equal(json_string_value(json_object_get(json_array_get(names, 0), "name")),
	                    metric);
	json_decref(names);
	assert_int_equal(store_check(st, err, sizeof(err)), 0);
	json_decref(doc);
	store_close(st);
}

/* Several threads share one handle; every insert lands once. (No cmocka
 * asserts off the main thread: a thread counts its failures.) */
static void *writer_thread(void *arg)
{
	struct store *st = arg;
	intptr_t failures = 0;

	for (int i = 0; i < 25; i++) {
		json_t *doc = doc_new("t", T0 + i);
		int64_t id;

		doc_scalar(doc, "v", i, "ns");
		failures += insert_doc(st, doc, T0 + i, 0, &id) < 0;
		json_decref(doc);
	}
	return (void *)failures;
}

static void test_threads_share_a_handle(void **state)
{
	struct fixture *f = *state;
	struct store *st = open_rw(f->path);
	pthread_t th[4];

	for (int i = 0; i < 4; i++)
		assert_int_equal(pthread_create(&th[i], NULL, writer_thread, st), 0);
	for (int i = 0; i < 4; i++) {
		void *failures;

		pthread_join(th[i], &failures);
		assert_null(failures);
	}
	assert_int_equal(count_runs(st, "t"), 100);
	store_close(st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_create_and_reopen, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_readonly, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_second_writer_refused, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_newer_version_refused, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_missing_tables_refused, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_garbage_refused, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_truncated_refused, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_damaged_page_refused, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_insert_read_back, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_failed_insert_leaves_nothing, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_cursor_pagination, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_fingerprint_only_on_change, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_fingerprint_learns_in_place, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_series_downsampling, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_cycles_and_snapshot, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_retention, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_survives_sigkill, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_disk_full, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_values_that_look_like_sql, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_threads_share_a_handle, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
