/*
 * store_fixture: what the store's unit tests share: a temporary database
 * file per test, documents shaped as the probes print them, and runs
 * inserted and counted through the store's own API.
 */
#ifndef TW_STORE_FIXTURE_H
#define TW_STORE_FIXTURE_H

#include <dirent.h>
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "store.h"

#define DAY INT64_C(86400000)
#define T0 INT64_C(1796284316123) /* 2026-12-03T07:51:56.123Z */

struct fixture {
	char dir[64];
	char path[96];
};

static inline int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	if (!f)
		return -1;
	snprintf(f->dir, sizeof(f->dir), "/tmp/tw-test-store.XXXXXX");
	if (!mkdtemp(f->dir))
		return -1;
	snprintf(f->path, sizeof(f->path), "%s/tw.db", f->dir);
	*state = f;
	return 0;
}

/* Removes the directory and whatever the test left in it: the database with
 * its -wal, -shm and .lock, and a migration's backups (tw.db.bak-v2 and its
 * own -wal and -shm), so that no run leaves a directory in /tmp. */
static inline int teardown(void **state)
{
	struct fixture *f = *state;
	DIR *d = opendir(f->dir);
	struct dirent *e;
	char p[384];

	while (d && (e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		snprintf(p, sizeof(p), "%s/%s", f->dir, e->d_name);
		unlink(p);
	}
	if (d)
		closedir(d);
	rmdir(f->dir);
	free(f);
	return 0;
}

static inline struct store *open_rw(const char *path)
{
	struct store *st = NULL;
	char err[512] = "";
	int r = store_open(path, 0, &st, err, sizeof(err));

	if (r < 0)
		print_error("store_open: %s\n", err);
	assert_int_equal(r, 0);
	assert_non_null(st);
	return st;
}

/* A probe document shaped as probes/lib/probe.c prints it. */
static inline json_t *doc_new(const char *probe, int64_t t_ms)
{
	json_t *d = json_pack("{s:s, s:i, s:s, s:n, s:s, s:f, s:f, s:{s:b}, s:{}, s:{}, s:{}}",
	                      "probe", probe, "protocol", 1, "status", "ok", "reason", "started_at",
	                      "2026-12-03T07:51:56.123Z", "started_unix", (double)t_ms / 1e3,
	                      "duration_s", 1.5, "params", "quick", 1, "scalars", "series", "info");

	assert_non_null(d);
	return d;
}

static inline void doc_scalar(json_t *doc, const char *name, double v, const char *unit)
{
	json_object_set_new(json_object_get(doc, "scalars"), name,
	                    json_pack("{s:f, s:s}", "value", v, "unit", unit));
}

static inline void doc_series(json_t *doc, const char *name, const double *xy, size_t n)
{
	json_t *pts = json_array();

	for (size_t i = 0; i < n; i++)
		json_array_append_new(pts, json_pack("[f, f]", xy[2 * i], xy[2 * i + 1]));
	json_object_set_new(
	    json_object_get(doc, "series"), name,
	    json_pack("{s:s, s:s, s:o}", "x_unit", "count", "y_unit", "ratio", "points", pts));
}

static inline int insert_doc(struct store *st, json_t *doc, int64_t t_ms, int64_t cycle_id,
                             int64_t *id)
{
	const char *status = json_string_value(json_object_get(doc, "status"));
	struct store_run run = {
	    .probe = json_string_value(json_object_get(doc, "probe")),
	    .cycle_id = cycle_id,
	    .started_ms = t_ms,
	    .ended_ms = t_ms + 1500,
	    .status = status,
	    .reason = strcmp(status, "ok") ? "a reason" : NULL,
	    .doc = doc,
	    .loadavg1 = 0.25,
	    .steal_pct = NAN,
	    .cpu_s = 1.25,
	};

	return store_run_insert(st, &run, id);
}

/* Inserts an ok run of `probe` with one scalar "v"; returns its id. */
static inline int64_t add_run(struct store *st, const char *probe, int64_t t_ms, double v)
{
	json_t *doc = doc_new(probe, t_ms);
	const double xy[] = {0, v, 1, v + 1};
	int64_t id = 0;

	doc_scalar(doc, "v", v, "ns");
	doc_series(doc, "curve", xy, 2);
	assert_int_equal(insert_doc(st, doc, t_ms, 0, &id), 0);
	json_decref(doc);
	assert_true(id > 0);
	return id;
}

static inline int64_t add_error_run(struct store *st, const char *probe, int64_t t_ms,
                                    const char *raw)
{
	struct store_run run = {
	    .probe = probe,
	    .started_ms = t_ms,
	    .ended_ms = t_ms + 10,
	    .status = "error",
	    .reason = "killed by SIGSEGV",
	    .raw = raw,
	    .loadavg1 = NAN,
	    .steal_pct = NAN,
	    .cpu_s = NAN,
	};
	int64_t id = 0;

	assert_int_equal(store_run_insert(st, &run, &id), 0);
	return id;
}

static inline size_t count_runs(struct store *st, const char *probe)
{
	struct store_runs_query q = {.probe = probe, .limit = 500};
	struct store_page page;
	size_t n;

	assert_int_equal(store_read_runs(st, &q, &page), 0);
	n = json_array_size(page.rows);
	json_decref(page.rows);
	return n;
}

static inline uint32_t header_u32(const char *path, off_t off)
{
	unsigned char b[4];
	int fd = open(path, O_RDONLY);

	assert_true(fd >= 0);
	assert_int_equal(pread(fd, b, 4, off), 4);
	close(fd);
	return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
}

#endif
