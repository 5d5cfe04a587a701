/* test_jpath: a value by a path of object keys (lib/jpath.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "jpath.h"

static void test_paths(void **state)
{
	json_t *doc =
	    json_loads("{\"a\": {\"b\": {\"c\": 7}, \"n\": null}, \"x\": [1, 2]}", 0, NULL);
	char long_key[200];

	(void)state;
	assert_non_null(doc);
	assert_int_equal(json_integer_value(jpath_get(doc, "a/b/c")), 7);
	assert_ptr_equal(jpath_get(doc, "a"), json_object_get(doc, "a"));
	/* the empty path is the value itself; a trailing '/' changes nothing */
	assert_ptr_equal(jpath_get(doc, ""), doc);
	assert_int_equal(json_integer_value(jpath_get(doc, "a/b/c/")), 7);
	/* a missing key, a step through a non-object, NULL in */
	assert_null(jpath_get(doc, "a/nope/c"));
	assert_null(jpath_get(doc, "x/0"));
	assert_null(jpath_get(doc, "a/n/c"));
	assert_null(jpath_get(NULL, "a"));
	/* a key too long for the walk is no key */
	memset(long_key, 'k', sizeof(long_key) - 1);
	long_key[sizeof(long_key) - 1] = '\0';
	assert_null(jpath_get(doc, long_key));
	json_decref(doc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_paths),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
