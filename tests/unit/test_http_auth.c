/*
 * test_http_auth: daemon/http_auth.c: the bearer comparison and the read
 * cookie (a MAC of its expiry under read_token, with a lifetime,
 * never the token itself).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "http_auth.h"

#define SECRET "tw-read-token-0123456789abcdef"

static void test_bearer(void **state)
{
	(void)state;
	assert_true(http_auth_bearer("Bearer " SECRET, SECRET));
	assert_true(http_auth_bearer("bearer " SECRET, SECRET));
	assert_false(http_auth_bearer("Bearer " SECRET "x", SECRET));
	assert_false(http_auth_bearer("Basic " SECRET, SECRET));
	assert_false(http_auth_bearer(NULL, SECRET));
}

static void test_cookie(void **state)
{
	const int64_t now = 1796284316;
	char *c = http_auth_cookie(SECRET, now + HTTP_AUTH_COOKIE_S), hex[2 * sizeof(SECRET)];
	char *forged;

	(void)state;
	assert_non_null(c);
	/* "EXPIRES.MAC": 64 hex digits of HMAC-SHA256 */
	assert_int_equal(strlen(strchr(c, '.') + 1), 64);
	/* neither the token nor its hex (the 0.1 cookie) */
	for (size_t i = 0; i < sizeof(SECRET) - 1; i++)
		snprintf(hex + 2 * i, 3, "%02x", (unsigned char)SECRET[i]);
	assert_null(strstr(c, SECRET));
	assert_null(strstr(c, hex));
	assert_true(http_auth_cookie_ok(c, SECRET, now));
	assert_true(http_auth_cookie_ok(c, SECRET, now + HTTP_AUTH_COOKIE_S));
	/* expired; another token; no token set */
	assert_false(http_auth_cookie_ok(c, SECRET, now + HTTP_AUTH_COOKIE_S + 1));
	assert_false(http_auth_cookie_ok(c, SECRET "x", now));
	assert_false(http_auth_cookie_ok(c, "", now));
	/* a later expiry with the same MAC */
	forged = strdup(c);
	forged[strcspn(forged, ".") - 1]++;
	assert_false(http_auth_cookie_ok(forged, SECRET, now));
	free(forged);
	/* an expiry beyond the lifetime is refused even with its own MAC */
	free(c);
	c = http_auth_cookie(SECRET, now + 10 * HTTP_AUTH_COOKIE_S);
	assert_false(http_auth_cookie_ok(c, SECRET, now));
	free(c);
	assert_false(http_auth_cookie_ok("garbage", SECRET, now));
	assert_false(http_auth_cookie_ok("", SECRET, now));
	assert_false(http_auth_cookie_ok(NULL, SECRET, now));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_bearer),
	    cmocka_unit_test(test_cookie),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
