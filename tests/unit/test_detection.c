/*
 * test_detection: regression detection against a real (temporary) store: a
 * history of cycles with a kernel change and a 10% step gives one event per
 * changed key figure, read from scalars and from series points, named after
 * the kernel change, whether judged after every cycle (the daemon) or all at
 * once (start-up over an old history); nothing is recorded twice, not even
 * after reopening; the API reads filter by metric and time; /metrics'
 * snapshot counts the events; a verdict flip is an event.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "detect.h"
#include "detection.h"
#include "stats.h"
#include "store.h"

#define T0 INT64_C(1767225600000) /* 2026-01-01 */
#define EVERY INT64_C(21600000)   /* 6 hours */
#define CYCLES 60
#define CHANGE 40 /* the first cycle on the new kernel, 10% dearer */

struct fixture {
	char dir[64];
	char path[2][96];
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	if (!f)
		return -1;
	snprintf(f->dir, sizeof(f->dir), "/tmp/tw-test-events.XXXXXX");
	if (!mkdtemp(f->dir))
		return -1;
	for (int i = 0; i < 2; i++)
		snprintf(f->path[i], sizeof(f->path[i]), "%s/tw%d.db", f->dir, i);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	static const char *const suffixes[] = {"", "-wal", "-shm", "-journal", ".lock"};
	char p[128];

	for (int i = 0; i < 2; i++)
		for (size_t j = 0; j < sizeof(suffixes) / sizeof(suffixes[0]); j++) {
			snprintf(p, sizeof(p), "%s%s", f->path[i], suffixes[j]);
			unlink(p);
		}
	rmdir(f->dir);
	free(f);
	return 0;
}

static struct store *open_rw(const char *path)
{
	struct store *st = NULL;
	char err[512] = "";

	assert_int_equal(store_open(path, 0, &st, err, sizeof(err)), 0);
	return st;
}

static json_t *fingerprint(const char *kernel)
{
	return json_pack("{s:s, s:s, s:s, s:s, s:{s:s, s:i, s:i, s:s}, s:s, s:i, s:{}, s:{}}",
	                 "hostname", "testhost", "kernel", kernel, "glibc", "2.36", "arch",
	                 "x86_64", "cpu", "vendor", "GenuineIntel", "family", 6, "model", 85,
	                 "microcode", "0x2b", "virtualization", "none", "ncpus", 4,
	                 "vulnerabilities", "limits");
}

static json_t *doc_new(const char *probe, int64_t t_ms)
{
	return json_pack("{s:s, s:i, s:s, s:n, s:s, s:f, s:f, s:{}, s:{}, s:{}, s:{}}", "probe",
	                 probe, "protocol", 1, "status", "ok", "reason", "started_at",
	                 "2026-01-01T00:00:00.000Z", "started_unix", (double)t_ms / 1e3,
	                 "duration_s", 1.0, "params", "scalars", "series", "info");
}

static void scalar(json_t *doc, const char *name, double v, const char *unit)
{
	json_object_set_new(json_object_get(doc, "scalars"), name,
	                    json_pack("{s:f, s:s}", "value", v, "unit", unit));
}

static int64_t insert(struct store *st, json_t *doc, int64_t t, int64_t cycle)
{
	struct store_run run = {
	    .probe = json_string_value(json_object_get(doc, "probe")),
	    .cycle_id = cycle,
	    .started_ms = t,
	    .ended_ms = t + 1000,
	    .status = "ok",
	    .doc = doc,
	    .loadavg1 = 0.1,
	    .steal_pct = 0,
	    .cpu_s = 1,
	};
	int64_t id = 0;

	assert_int_equal(store_run_insert(st, &run, &id), 0);
	json_decref(doc);
	return id;
}

static double noisy(struct stats_rng *r, double v)
{
	return v * (1 + 0.01 * ((double)stats_rng_below(r, 2001) / 1000.0 - 1.0));
}

/* One cycle: the fingerprint, a ctxsw run, a threads run whose low-stack
 * curve (buckets 64 wide, x at their lower end) is flat, a recommendation. */
static void cycle(struct store *st, int i, struct stats_rng *r, const char *verdict)
{
	const int64_t t = T0 + i * EVERY;
	const double f = i >= CHANGE ? 1.10 : 1.0;
	json_t *fp = fingerprint(i >= CHANGE ? "6.1.0-21-amd64" : "6.1.0-18-amd64");
	json_t *doc, *pts = json_array(), *res, *in;
	int64_t cycle_id, ids[2];
	int changed;

	assert_int_equal(store_fingerprint_record(st, fp, t, &changed), 0);
	json_decref(fp);
	assert_int_equal(store_cycle_begin(st, t, "interval", 0, &cycle_id), 0);
	doc = doc_new("ctxsw", t + 10);
	scalar(doc, "low_ns", noisy(r, 1500 * f), "ns");
	scalar(doc, "high_ns", noisy(r, 1500 * f), "ns");
	scalar(doc, "ratio", noisy(r, 1.0), "ratio");
	ids[0] = insert(st, doc, t + 10, cycle_id);
	doc = doc_new("threads", t + 20);
	for (int x = 0; x < 4096; x += 64)
		json_array_append_new(pts, json_pack("[i, f]", x, noisy(r, 20000 * f)));
	json_object_set_new(
	    json_object_get(doc, "series"), "low_median_ns",
	    json_pack("{s:s, s:s, s:o}", "x_unit", "threads", "y_unit", "ns", "points", pts));
	ids[1] = insert(st, doc, t + 20, cycle_id);
	res = json_pack("{s:s, s:s}", "verdict", verdict, "confidence", "strong");
	in = json_object();
	assert_int_equal(store_recommendation_insert(st, t + 30, in, res, ids, 2), 0);
	json_decref(res);
	json_decref(in);
	assert_int_equal(store_cycle_end(st, cycle_id, t + 40, "ok"), 0);
}

static const char *const changed_metrics[] = {
    "ctxsw.high_ns",
    "ctxsw.low_ns",
    "threads.low_median_ns_at_2048",
    "threads.low_median_ns_at_512",
    "threads.low_median_ns_at_64",
};
#define N_CHANGED (sizeof(changed_metrics) / sizeof(changed_metrics[0]))

/* The events found: one per changed figure, from the first cycle on the
 * new kernel, naming it; and the flip. */
static void check_found(const json_t *found, int64_t first_change_ms)
{
	size_t i, steps = 0, flips = 0;
	const json_t *e;

	json_array_foreach(found, i, e)
	{
		const char *kind = json_string_value(json_object_get(e, "kind"));
		const char *metric = json_string_value(json_object_get(e, "metric"));

		assert_true(json_integer_value(json_object_get(e, "id")) > 0);
		if (!strcmp(kind, "flip")) {
			flips++;
			assert_string_equal(metric, DETECT_VERDICT_METRIC);
			assert_string_equal(
			    json_string_value(json_object_get(e, "fingerprint_diff")),
			    "no fingerprint change");
			continue;
		}
		assert_string_equal(json_string_value(json_object_get(e, "fingerprint_diff")),
		                    "kernel 6.1.0-18-amd64 → 6.1.0-21-amd64");
		steps++;
		/* the ctxsw run, or the threads run 10 ms later */
		assert_in_range(json_integer_value(json_object_get(e, "t_ms")), first_change_ms,
		                first_change_ms + 10);
		assert_true(json_real_value(json_object_get(e, "change_pct")) > 7);
		assert_string_equal(json_string_value(json_object_get(e, "direction")), "up");
		int known = 0;
		for (size_t j = 0; j < N_CHANGED; j++)
			known += !strcmp(metric, changed_metrics[j]);
		assert_int_equal(known, 1);
	}
	assert_int_equal(steps, N_CHANGED);
	assert_int_equal(flips, 1);
}

static void test_daemon_and_startup(void **state)
{
	struct fixture *f = *state;
	struct detect_config c;
	struct stats_rng r[2];
	struct store *st[2];
	json_t *found, *all = json_array(), *snap;
	struct store_page page;
	struct store_events_query q = {.limit = 100};

	detect_config_default(&c);
	for (int k = 0; k < 2; k++) {
		st[k] = open_rw(f->path[k]);
		stats_rng_seed(&r[k], 42);
	}
	/* st[0] is judged after every cycle, st[1] once at the end. */
	for (int i = 0; i < CYCLES; i++) {
		const char *verdict = i >= CHANGE + 5 ? "low" : "high";

		cycle(st[0], i, &r[0], verdict);
		cycle(st[1], i, &r[1], verdict);
		assert_int_equal(detection_run(st[0], &c, T0 + i * EVERY + 50, &found), 0);
		json_array_extend(all, found);
		json_decref(found);
	}
	check_found(all, T0 + CHANGE * EVERY + 10);
	assert_int_equal(detection_run(st[1], &c, T0 + CYCLES * EVERY, &found), 0);
	check_found(found, T0 + CHANGE * EVERY + 10);
	json_decref(found);

	/* Judged already: nothing new, not even after reopening. */
	assert_int_equal(detection_run(st[0], &c, T0 + CYCLES * EVERY, &found), 0);
	assert_int_equal(json_array_size(found), 0);
	json_decref(found);
	store_close(st[0]);
	st[0] = open_rw(f->path[0]);
	assert_int_equal(detection_run(st[0], &c, T0 + CYCLES * EVERY, &found), 0);
	assert_int_equal(json_array_size(found), 0);
	json_decref(found);

	/* The API's reads. */
	assert_int_equal(store_read_events(st[0], &q, &page), 0);
	assert_int_equal(json_array_size(page.rows), N_CHANGED + 1);
	assert_false(page.more);
	json_decref(page.rows);
	q.metric = "ctxsw.high_ns";
	assert_int_equal(store_read_events(st[0], &q, &page), 0);
	assert_int_equal(json_array_size(page.rows), 1);
	json_decref(page.rows);
	q.metric = NULL;
	q.until_ms = T0 + CHANGE * EVERY; /* before the change */
	assert_int_equal(store_read_events(st[0], &q, &page), 0);
	assert_int_equal(json_array_size(page.rows), 0);
	json_decref(page.rows);
	q.until_ms = 0;
	q.since_ms = T0 + (CHANGE + 1) * EVERY; /* only the flip, 5 cycles later */
	assert_int_equal(store_read_events(st[0], &q, &page), 0);
	assert_int_equal(json_array_size(page.rows), 1);
	json_decref(page.rows);
	q.since_ms = 0;
	q.limit = 2;
	assert_int_equal(store_read_events(st[0], &q, &page), 0);
	assert_int_equal(json_array_size(page.rows), 2);
	assert_true(page.more);
	assert_int_equal(page.total, N_CHANGED + 1);
	/* newest change first: the flip */
	assert_string_equal(
	    json_string_value(json_object_get(json_array_get(page.rows, 0), "kind")), "flip");
	json_decref(page.rows);
	q.limit = 0;
	assert_int_equal(store_read_events(st[0], &q, &page), -EINVAL);

	assert_int_equal(store_read_snapshot(st[0], &snap), 0);
	assert_int_equal(
	    json_integer_value(json_object_get(
	        json_object_get(json_object_get(snap, "events"), "total"), "ctxsw.high_ns")),
	    1);
	assert_int_equal(json_integer_value(
	                     json_object_get(json_object_get(snap, "events"), "last_detected_ms")),
	                 T0 + (CHANGE + 5) * EVERY + 30);
	json_decref(snap);
	json_decref(all);
	store_close(st[0]);
	store_close(st[1]);
}

/* The store refuses malformed events and keeps the first of two equal ones. */
static void test_event_insert(void **state)
{
	struct fixture *f = *state;
	struct store *st = open_rw(f->path[0]);
	json_t *ev =
	    json_pack("{s:s, s:s, s:i, s:i, s:i, s:s}", "kind", "step", "metric", "ctxsw.ratio",
	              "t_ms", 1000, "detected_ms", 2000, "run_id", 7, "message", "first");
	struct store_page page;
	int64_t id, id2, ref;
	struct store_events_query q = {.limit = 10, .metric = "ctxsw.ratio"};

	assert_int_equal(store_event_insert(st, 5, ev, &id), 0);
	assert_true(id > 0);
	json_object_set_new(ev, "message", json_string("second"));
	assert_int_equal(store_event_insert(st, 6, ev, &id2), 0);
	assert_int_equal(id2, 0);
	assert_int_equal(store_event_last_ref(st, "ctxsw.ratio", &ref), 0);
	assert_int_equal(ref, 7);
	assert_int_equal(store_event_last_ref(st, "ctxsw.low_ns", &ref), 0);
	assert_int_equal(ref, 0);
	assert_int_equal(store_read_events(st, &q, &page), 0);
	assert_string_equal(
	    json_string_value(json_object_get(json_array_get(page.rows, 0), "message")), "first");
	json_decref(page.rows);
	json_object_set_new(ev, "kind", json_string("boom"));
	assert_int_equal(store_event_insert(st, 5, ev, &id), -EINVAL);
	assert_non_null(strstr(store_last_error(), "kind"));
	json_object_set_new(ev, "kind", json_string("flip")); /* a flip needs recommendation_id */
	assert_int_equal(store_event_insert(st, 5, ev, &id), -EINVAL);
	assert_non_null(strstr(store_last_error(), "recommendation_id"));
	json_decref(ev);
	store_close(st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_daemon_and_startup, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_event_insert, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
