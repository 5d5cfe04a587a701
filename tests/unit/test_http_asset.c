/*
 * test_http_asset: the pure parts of the static files (daemon/http_asset.c): gzip in
 * Accept-Encoding, ETag matching, safe relative paths and MIME types.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "http_asset.h"

static void test_asset_headers(void **state)
{
	(void)state;
	assert_true(http_asset_accepts_gzip("gzip, deflate, br"));
	assert_true(http_asset_accepts_gzip("br;q=1.0, GZIP;q=0.5"));
	assert_true(http_asset_accepts_gzip("*"));
	assert_false(http_asset_accepts_gzip(NULL));
	assert_false(http_asset_accepts_gzip(""));
	assert_false(http_asset_accepts_gzip("deflate, br"));
	assert_false(http_asset_accepts_gzip("gzip;q=0"));
	assert_false(http_asset_accepts_gzip("gzip; q=0.000, br"));
	assert_false(http_asset_accepts_gzip("xgzip"));
	assert_true(http_asset_etag_matches("\"abc\"", "\"abc\""));
	assert_true(http_asset_etag_matches("\"x\", W/\"abc\"", "\"abc\""));
	assert_true(http_asset_etag_matches("*", "\"abc\""));
	assert_false(http_asset_etag_matches("\"abcd\"", "\"abc\""));
	assert_false(http_asset_etag_matches(NULL, "\"abc\""));
	assert_true(http_asset_path_ok("dygraph.min.js"));
	assert_true(http_asset_path_ok("extras/shapes.js"));
	assert_false(http_asset_path_ok("../etc/passwd"));
	assert_false(http_asset_path_ok("extras/../../x"));
	assert_false(http_asset_path_ok("extras//x"));
	assert_false(http_asset_path_ok(".hidden"));
	assert_false(http_asset_path_ok("/etc/passwd"));
	assert_false(http_asset_path_ok("a\\b"));
	assert_false(http_asset_path_ok(""));
	assert_string_equal(http_asset_mime("x/app.JS"), "text/javascript; charset=utf-8");
	assert_string_equal(http_asset_mime("openapi.json"), "application/json");
	assert_string_equal(http_asset_mime("README"), "application/octet-stream");
	assert_string_equal(http_asset_mime("dir.js/README"), "application/octet-stream");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_asset_headers),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
