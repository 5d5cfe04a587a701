/*
 * test_api_format: the API's formatter (daemon/api_format.c) on rows made
 * by hand as the store reads them: the "*_at" strings beside the times,
 * a run's duration and key figure object, and the envelopes of the runs
 * and events pages.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "api_format.h"

#define T0 1796284316123LL /* 2026-12-03T07:51:56.123Z */

static json_t *run_row(int64_t id, int key)
{
	json_t *r =
	    json_pack("{s:I, s:s, s:s, s:n, s:n, s:I, s:I, s:n, s:n}", "id", (json_int_t)id,
	              "probe", "ctxsw", "status", "ok", "reason", "cycle_id", "started_ms",
	              (json_int_t)T0, "ended_ms", (json_int_t)(T0 + 1500), "failure", "signal");

	if (key) {
		json_object_set_new(r, "key_metric", json_string("ctxsw.ratio"));
		json_object_set_new(r, "key_value", json_real(1.5));
		json_object_set_new(r, "key_unit", json_string("ratio"));
	}
	return r;
}

static void test_times(void **state)
{
	json_t *o =
	    json_pack("{s:I, s:I, s:s, s:I}", "computed_ms", (json_int_t)T0, "first_seen_ms",
	              (json_int_t)0, "other_ms", "x", "t_ms", (json_int_t)T0);

	(void)state;
	api_format_times(o);
	assert_string_equal(json_string_value(json_object_get(o, "computed_at")),
	                    "2026-12-03T07:51:56.123Z");
	assert_string_equal(json_string_value(json_object_get(o, "first_seen_at")),
	                    "1970-01-01T00:00:00.000Z");
	/* only the times of the table, and only integers */
	assert_null(json_object_get(o, "t_at"));
	assert_null(json_object_get(o, "other_at"));
	assert_null(json_object_get(o, "last_seen_at"));
	/* a time no calendar holds is null, not a wrong date */
	json_object_set_new(o, "started_ms", json_integer(INT64_MAX));
	api_format_times(o);
	assert_true(json_is_null(json_object_get(o, "started_at")));
	api_format_times(NULL);
	json_decref(o);
}

static void test_host(void **state)
{
	json_t *h =
	    json_pack("{s:{s:I, s:I}, s:[{s:I, s:I}, {s:I, s:I}]}", "current", "first_seen_ms",
	              (json_int_t)T0, "last_seen_ms", (json_int_t)T0, "history", "first_seen_ms",
	              (json_int_t)T0, "last_seen_ms", (json_int_t)T0, "first_seen_ms",
	              (json_int_t)0, "last_seen_ms", (json_int_t)1);

	(void)state;
	api_format_host(h);
	assert_non_null(
	    json_string_value(json_object_get(json_object_get(h, "current"), "last_seen_at")));
	assert_string_equal(json_string_value(json_object_get(
	                        json_array_get(json_object_get(h, "history"), 1), "last_seen_at")),
	                    "1970-01-01T00:00:00.001Z");
	json_decref(h);
}

static void test_run(void **state)
{
	json_t *r = run_row(7, 1), *k;

	(void)state;
	api_format_run(r);
	assert_string_equal(json_string_value(json_object_get(r, "started_at")),
	                    "2026-12-03T07:51:56.123Z");
	assert_float_equal(json_number_value(json_object_get(r, "duration_s")), 1.5, 1e-12);
	k = json_object_get(r, "key_figure");
	assert_string_equal(json_string_value(json_object_get(k, "metric")), "ctxsw.ratio");
	assert_float_equal(json_number_value(json_object_get(k, "value")), 1.5, 0);
	assert_string_equal(json_string_value(json_object_get(k, "unit")), "ratio");
	assert_null(json_object_get(r, "key_metric"));
	assert_null(json_object_get(r, "key_value"));
	assert_null(json_object_get(r, "key_unit"));
	json_decref(r);

	/* No key figure recorded; a clock that stepped back: duration 0. */
	r = run_row(8, 0);
	json_object_set_new(r, "ended_ms", json_integer(T0 - 10));
	api_format_run(r);
	assert_true(json_is_null(json_object_get(r, "key_figure")));
	assert_float_equal(json_number_value(json_object_get(r, "duration_s")), 0, 0);
	json_decref(r);
}

static void test_pages(void **state)
{
	struct store_page p = {.rows = json_pack("[o, o]", run_row(9, 1), run_row(8, 0)),
	                       .more = 1,
	                       .last_id = 8,
	                       .total = -1};
	json_t *body = api_format_runs(&p), *runs = json_object_get(body, "runs");

	(void)state;
	assert_int_equal(json_array_size(runs), 2);
	assert_non_null(json_object_get(json_array_get(runs, 0), "key_figure"));
	assert_int_equal(json_integer_value(json_object_get(body, "next_cursor")), 8);
	json_decref(body);

	p = (struct store_page){.rows = json_array(), .more = 0, .last_id = 3};
	body = api_format_runs(&p);
	assert_true(json_is_null(json_object_get(body, "next_cursor")));
	assert_int_equal(json_array_size(json_object_get(body, "runs")), 0);
	json_decref(body);

	p = (struct store_page){
	    .rows = json_pack("[{s:I}]", "id", (json_int_t)4), .more = 1, .total = 12};
	body = api_format_events(&p);
	assert_int_equal(json_array_size(json_object_get(body, "events")), 1);
	assert_true(json_is_true(json_object_get(body, "more")));
	assert_int_equal(json_integer_value(json_object_get(body, "total")), 12);
	json_decref(body);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_times),
	    cmocka_unit_test(test_host),
	    cmocka_unit_test(test_run),
	    cmocka_unit_test(test_pages),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
