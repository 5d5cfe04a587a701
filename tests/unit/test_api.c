/*
 * test_api: what the API handlers (daemon/api.c) build without a store:
 * the error body a client gets and the limits of a headroom record.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "api.h"

static void test_error_body(void **state)
{
	struct api_error err;
	json_t *body;

	(void)state;
	/* Bytes a client sent that are not printable ASCII (or not UTF-8). */
	assert_int_equal(api_fail(&err, 400, "bad \"%s\"", "\xff\n\xc3\xa9x"), 400);
	body = api_error_body(&err);
	assert_non_null(body);
	assert_string_equal(
	    json_string_value(json_object_get(json_object_get(body, "error"), "message")),
	    "bad \"\?\?\?\?x\"");
	json_decref(body);

	assert_int_equal(api_fail(&err, 404, "no run %d", 7), 404);
	body = api_error_body(&err);
	assert_int_equal(
	    json_integer_value(json_object_get(json_object_get(body, "error"), "status")), 404);
	assert_string_equal(
	    json_string_value(json_object_get(json_object_get(body, "error"), "message")),
	    "no run 7");
	json_decref(body);
}

static void test_headroom_limits(void **state)
{
	json_t *rec = json_pack("{s:{s:i,s:i},s:{s:i,s:n},s:{s:f,s:f},s:s}", "threads_max", "used",
	                        950, "limit", 1000, "pids_max", "used", 10, "limit",
	                        "max_map_count", "used", 100.0, "limit", 65530.0, "junk", "x");
	json_t *limits = api_headroom_limits(rec), *v;
	size_t i;
	int seen = 0;

	(void)state;
	assert_int_equal(json_array_size(limits), 3);
	json_array_foreach(limits, i, v)
	{
		const char *name = json_string_value(json_object_get(v, "name"));

		if (!strcmp(name, "threads_max")) {
			assert_true(json_real_value(json_object_get(v, "ratio")) > 0.949);
			assert_true(json_is_true(json_object_get(v, "warning")));
			seen++;
		} else if (!strcmp(name, "pids_max")) {
			assert_true(json_is_null(json_object_get(v, "ratio")));
			assert_true(json_is_false(json_object_get(v, "warning")));
			seen++;
		} else {
			assert_true(json_is_false(json_object_get(v, "warning")));
			seen++;
		}
	}
	assert_int_equal(seen, 3);
	json_decref(limits);
	json_decref(rec);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_error_body),
	    cmocka_unit_test(test_headroom_limits),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
