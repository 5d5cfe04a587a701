/*
 * test_store_workloads: what threadwatchd keeps of the observer's windows
 * (daemon/workload_keep.c) and how the store keeps them
 * (daemon/store_workloads.c): the dearest `top` and "other" summing the
 * rest, a workload with a finding kept however cheap, one row per kept
 * workload keyed by its key (a restarted service keeps its history), the
 * latest window whole, a figure's series in buckets, retention.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "store.h"
#include "store_fixture.h"
#include "workload_key.h"
#include "workload_keep.h"

/* A workload as the observer and the pricing shape it. */
static json_t *workload(const char *key, const char *comm, double share, int thp_bytes, int finding)
{
	return json_pack("{s:s s:s s:s s:n s:i s:f s:{s:f} s:{s:i s:i} s:{s:f} s:o}", "key", key,
	                 "kind", "process", "comm", comm, "unit", "threads", 4, "creates_per_s",
	                 1.5, "switches_per_s", "total", 10.0, "stacks", "resident_bytes", 32768,
	                 "thp_bytes", thp_bytes, "costs", "cpu_share", share, "findings",
	                 finding ? json_pack("[{s:s}]", "kind", "thp_stacks") : json_array());
}

static json_t *window(void)
{
	/* dearest first, as obs_price() sorts them */
	return json_pack("{s:f s:{} s:[o o o o o]}", "window_s", 60.0, "mechanisms", "workloads",
	                 workload("process:/bin/a\na", "a", 0.04, 0, 0),
	                 workload("process:/bin/b\nb", "b", 0.03, 0, 0),
	                 workload("process:/bin/c\nc", "c", 0.02, 0, 0),
	                 workload("process:/bin/d\nd", "d", 0.01, 0, 0),
	                 workload("process:/bin/java\njava", "java", 0.0, 4194304, 1));
}

static const json_t *row(const json_t *k, size_t i)
{
	return json_array_get(json_object_get(k, "workloads"), i);
}

static const char *str(const json_t *o, const char *name)
{
	return json_string_value(json_object_get(o, name));
}

/* top 2 of 5: the one with a finding and the dearest, in cost order, then
 * "other" summing the three left out */
static void test_trim(void **state)
{
	json_t *w = window(), *k = wkeep_trim(w, 2);
	const json_t *o = row(k, 2), *f = json_object_get(o, "figures");
	char ref[WKEY_REF_LEN];

	(void)state;
	assert_int_equal(json_integer_value(json_object_get(k, "seen")), 5);
	assert_int_equal(json_array_size(json_object_get(k, "workloads")), 3);
	assert_string_equal(str(row(k, 0), "name"), "a");
	assert_string_equal(str(row(k, 1), "name"), "java");
	assert_string_equal(str(o, "kind"), "other");
	assert_int_equal(json_integer_value(json_object_get(o, "workloads")), 3);
	assert_int_equal(json_integer_value(json_object_get(f, "threads")), 12);
	assert_true(json_number_value(json_object_get(f, "cpu_share")) > 0.0599 &&
	            json_number_value(json_object_get(f, "cpu_share")) < 0.0601);
	/* the figures by the catalogue's paths */
	f = json_object_get(row(k, 1), "figures");
	assert_int_equal(json_integer_value(json_object_get(f, "stack_thp_bytes")), 4194304);
	assert_true(json_number_value(json_object_get(f, "switches_per_second")) == 10.0);
	wkey_ref("process:/bin/java\njava", ref);
	assert_string_equal(str(row(k, 1), "ref"), ref);
	assert_true(wkey_ref_ok(ref));
	assert_false(wkey_ref_ok("0123"));
	assert_false(wkey_ref_ok("0123456789ABCDEF"));
	json_decref(k);
	/* the workloads with a finding take no more than half the places:
	 * the dearest half first (a), then the dearest with a finding (c),
	 * not b, dearer but without one */
	for (size_t i = 2; i < 4; i++)
		json_object_set_new(json_array_get(json_object_get(w, "workloads"), i), "findings",
		                    json_pack("[{s:s}]", "kind", "creates"));
	k = wkeep_trim(w, 2);
	assert_string_equal(str(row(k, 0), "name"), "a");
	assert_string_equal(str(row(k, 1), "name"), "c");
	/* a kind the observer does not name is summed into "other" */
	json_object_set_new(json_array_get(json_object_get(w, "workloads"), 0), "kind",
	                    json_string("made-up"));
	json_decref(k);
	k = wkeep_trim(w, 20);
	assert_int_equal(json_array_size(json_object_get(k, "workloads")), 5);
	assert_string_equal(str(row(k, 4), "kind"), "other");
	json_decref(k);
	json_decref(w);
	w = window();
	/* every one kept: no "other" */
	k = wkeep_trim(w, 20);
	assert_int_equal(json_array_size(json_object_get(k, "workloads")), 5);
	assert_string_equal(str(row(k, 4), "name"), "java");
	json_decref(k);
	json_decref(w);
}

/* Names by kind: a unit under a user's manager, a cgroup, a process's comm. */
static void test_names(void **state)
{
	static const struct {
		const char *json, *name;
	} cases[] = {
	    {"{\"kind\": \"unit\", \"unit\": \"app.service\", \"manager\": \"user@1000.service\"}",
	     "user@1000.service/app.service"},
	    {"{\"kind\": \"unit\", \"unit\": \"nginx.service\", \"manager\": null}",
	     "nginx.service"},
	    {"{\"kind\": \"cgroup\", \"cgroup\": \"/machine/x\", \"comm\": \"sh\"}", "/machine/x"},
	    {"{\"kind\": \"process\", \"cgroup\": \"/\", \"comm\": \"<i id=x>\"}", "<i id=x>"},
	    {"{\"kind\": \"weird\", \"key\": \"weird:x\"}", "weird:x"},
	    {"{\"kind\": \"process\", \"key\": \"process:/x\\n\", \"comm\": \"\"}", "process:/x\n"},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		json_t *w = json_loads(cases[i].json, 0, NULL);
		char *n = wkey_name(w);

		assert_string_equal(n, cases[i].name);
		free(n);
		json_decref(w);
	}
}

static json_t *series(struct store *st, const char *ref, const char *metric, int64_t since,
                      int64_t until, int64_t step)
{
	struct store_workload_series q = {ref, metric, since, until, step};
	json_t *out = NULL;

	assert_int_equal(store_workloads_series(st, &q, &out), 0);
	return out;
}

/* Windows stored, the latest whole, series in buckets, bad asks refused,
 * retention with its orphans. */
static void test_store(void **state)
{
	struct fixture *f = *state;
	struct store *st = open_rw(f->path);
	struct store_workload_series bad = {"0123456789abcdef", "threads", T0, T0 + DAY, 1000};
	json_t *w = window(), *k = wkeep_trim(w, 2), *got = NULL, *s;
	const char *java = str(row(k, 1), "ref");

	assert_int_equal(store_workloads_latest(st, &got), -ENOENT);
	for (int i = 0; i < 10; i++)
		assert_int_equal(store_workloads_record(st, T0 + i * 60000, k), 0);
	assert_int_equal(store_workloads_latest(st, &got), 0);
	assert_int_equal(json_integer_value(json_object_get(got, "window_end_ms")), T0 + 9 * 60000);
	assert_int_equal(json_array_size(json_object_get(got, "workloads")), 3);
	json_decref(got);
	/* ten windows in buckets of five minutes: 5 and 5 */
	s = series(st, java, "stack_thp_bytes", T0, T0 + 600000, 300000);
	assert_int_equal(json_array_size(json_object_get(s, "points")), 2);
	assert_int_equal(json_integer_value(
	                     json_object_get(json_array_get(json_object_get(s, "points"), 0), "n")),
	                 5);
	assert_true(json_number_value(json_object_get(
	                json_array_get(json_object_get(s, "points"), 1), "max")) == 4194304.0);
	assert_string_equal(str(s, "name"), "java");
	json_decref(s);
	/* a figure the window did not have: no point */
	s = series(st, java, "cpu_share", T0, T0 + 600000, 300000);
	assert_int_equal(json_array_size(json_object_get(s, "points")), 2);
	json_decref(s);
	assert_int_equal(store_workloads_series(st, &bad, &got), -ENOENT);
	bad.ref = java;
	bad.metric = "bogus";
	assert_int_equal(store_workloads_series(st, &bad, &got), -EINVAL);
	/* a window without a workload's key is refused whole */
	json_object_del(json_array_get(json_object_get(k, "workloads"), 0), "key");
	assert_int_equal(store_workloads_record(st, T0 + DAY, k), -EINVAL);
	/* retention: 20 days on, a 14-day limit leaves the latest window only */
	json_object_set_new(json_array_get(json_object_get(k, "workloads"), 0), "key",
	                    json_string("process:/bin/a\na"));
	assert_int_equal(store_workloads_retention(st, T0 + 20 * DAY, 14, 3), 0);
	s = series(st, java, "threads", T0, T0 + DAY, 60000);
	assert_int_equal(json_array_size(json_object_get(s, "points")), 1);
	json_decref(s);
	assert_int_equal(store_workloads_latest(st, &got), 0);
	json_decref(got);
	json_decref(k);
	json_decref(w);
	store_close(st);
}

/* A key whose ref another key holds already (FNV-1a is easy to collide,
 * and a user names their own process) is stored under another ref; the
 * window is not refused, and the first key keeps its ref. */
static void test_ref_clash(void **state)
{
	struct fixture *f = *state;
	struct store *st = open_rw(f->path);
	json_t *w = window(), *k = wkeep_trim(w, 20), *got = NULL;
	json_t *evil = json_array_get(json_object_get(k, "workloads"), 1);
	char java_ref[WKEY_REF_LEN];

	snprintf(java_ref, sizeof(java_ref), "%s", str(row(k, 4), "ref"));
	assert_int_equal(store_workloads_record(st, T0, k), 0);
	/* b's ref forged to java's */
	json_object_set_new(evil, "key", json_string("process:/home/evil\nb"));
	json_object_set_new(evil, "ref", json_string(java_ref));
	assert_int_equal(store_workloads_record(st, T0 + 60000, k), 0);
	assert_int_equal(store_workloads_latest(st, &got), 0);
	assert_string_equal(str(row(got, 4), "ref"), java_ref);
	assert_string_not_equal(str(row(got, 1), "ref"), java_ref);
	assert_true(wkey_ref_ok(str(row(got, 1), "ref")));
	json_decref(got);
	json_decref(k);
	json_decref(w);
	store_close(st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_trim),
	    cmocka_unit_test(test_names),
	    cmocka_unit_test_setup_teardown(test_store, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_ref_clash, setup, teardown),
	};

	return cmocka_run_group_tests_name("store_workloads", tests, NULL, NULL);
}
