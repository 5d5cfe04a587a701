/*
 * test_http_respcache: the HTTP response cache answers only for the same key at
 * the same data version, and keeps only bodies it may.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "http_respcache.h"

static void test_hit_and_miss(void **state)
{
	struct http_respcache *rc = http_respcache_new(8, 1024);
	char *body = NULL;
	size_t len = 0;

	(void)state;
	assert_int_equal(http_respcache_get(rc, "/api/v1/host", 1, &body, &len), -ENOENT);
	http_respcache_put(rc, "/api/v1/host", 1, "{\"a\":1}", 7);
	assert_int_equal(http_respcache_get(rc, "/api/v1/host", 1, &body, &len), 0);
	assert_int_equal(len, 7);
	assert_string_equal(body, "{\"a\":1}");
	free(body);
	/* New data: the old body must not be served. */
	assert_int_equal(http_respcache_get(rc, "/api/v1/host", 2, &body, &len), -ENOENT);
	/* Another target never shares a body. */
	assert_int_equal(http_respcache_get(rc, "/api/v1/host?x", 1, &body, &len), -ENOENT);
	http_respcache_free(rc);
}

static void test_replace_and_limits(void **state)
{
	struct http_respcache *rc = http_respcache_new(1, 4);
	char *body = NULL;
	size_t len = 0;

	(void)state;
	http_respcache_put(rc, "/a", 1, "1234", 4);
	http_respcache_put(rc, "/b", 1, "5678", 4); /* one slot: replaces /a */
	assert_int_equal(http_respcache_get(rc, "/a", 1, &body, &len), -ENOENT);
	assert_int_equal(http_respcache_get(rc, "/b", 1, &body, &len), 0);
	assert_memory_equal(body, "5678", 4);
	free(body);
	http_respcache_put(rc, "/c", 1, "too long", 8); /* over max_body: not kept */
	assert_int_equal(http_respcache_get(rc, "/c", 1, &body, &len), -ENOENT);
	assert_int_equal(http_respcache_get(rc, "/b", 1, &body, &len), 0);
	free(body);
	http_respcache_free(rc);
	http_respcache_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_hit_and_miss),
	    cmocka_unit_test(test_replace_and_limits),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
