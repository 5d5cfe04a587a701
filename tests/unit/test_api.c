/*
 * test_api: what the API handlers (daemon/api.c) build without a store:
 * the error body a client gets. (The limits of a headroom record are
 * test_headroom's.)
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

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
	assert_string_equal(json_string_value(json_object_get(body, "type")), "about:blank");
	assert_string_equal(json_string_value(json_object_get(body, "title")), "Not Found");
	assert_int_equal(json_integer_value(json_object_get(body, "status")), 404);
	assert_string_equal(json_string_value(json_object_get(body, "detail")), "no run 7");
	assert_int_equal(
	    json_integer_value(json_object_get(json_object_get(body, "error"), "status")), 404);
	assert_string_equal(
	    json_string_value(json_object_get(json_object_get(body, "error"), "message")),
	    "no run 7");
	json_decref(body);
}

static void test_status_titles(void **state)
{
	(void)state;
	assert_string_equal(api_status_title(400), "Bad Request");
	assert_string_equal(api_status_title(503), "Service Unavailable");
	assert_string_equal(api_status_title(418), "Client Error");
	assert_string_equal(api_status_title(599), "Server Error");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_error_body),
	    cmocka_unit_test(test_status_titles),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
