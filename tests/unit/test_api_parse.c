/*
 * test_api_parse: the API's pure parsers (daemon/api_parse.c): request
 * targets, route patterns, times, the /runs and /series parameters, and
 * that every rejection is a 400 naming the parameter.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "api_parse.h"

static void target_ok(const char *uri, struct api_target *t)
{
	struct api_error err = {0};

	assert_int_equal(api_parse_target(uri, t, &err), 0);
}

static void test_target_decodes(void **state)
{
	struct api_target t;

	(void)state;
	target_ok(
	    "/api/v1/runs?probe=ctxsw&limit=10&since=2026-01-01T00%3A00%3A00Z&x+y=a+b%21&flag", &t);
	assert_string_equal(t.path, "/api/v1/runs");
	assert_int_equal(t.n_params, 5);
	assert_string_equal(api_param_get(&t, "probe"), "ctxsw");
	assert_string_equal(api_param_get(&t, "limit"), "10");
	assert_string_equal(api_param_get(&t, "since"), "2026-01-01T00:00:00Z");
	assert_string_equal(api_param_get(&t, "x y"), "a b!");
	assert_string_equal(api_param_get(&t, "flag"), "");
	assert_null(api_param_get(&t, "cursor"));
	api_target_clear(&t);

	target_ok("/api/v1/runs/%31%32", &t);
	assert_string_equal(t.path, "/api/v1/runs/12");
	api_target_clear(&t);

	/* '+' is a space only in the query; empty pairs are skipped. */
	target_ok("/a+b?&&k=v&#frag", &t);
	assert_string_equal(t.path, "/a+b");
	assert_int_equal(t.n_params, 1);
	api_target_clear(&t);

	target_ok("http://example.org:8080/healthz?x=1", &t);
	assert_string_equal(t.path, "/healthz");
	assert_string_equal(api_param_get(&t, "x"), "1");
	api_target_clear(&t);
}

static void target_bad(const char *uri, const char *needle)
{
	struct api_error err = {0};
	struct api_target t;

	assert_int_equal(api_parse_target(uri, &t, &err), -EINVAL);
	assert_int_equal(err.status, 400);
	if (!strstr(err.message, needle))
		fail_msg("\"%s\": message \"%s\" lacks \"%s\"", uri, err.message, needle);
	api_target_clear(&t);
}

static void test_target_rejects(void **state)
{
	(void)state;
	target_bad("api/v1/host", "must start with '/'");
	target_bad("*", "must start with '/'");
	target_bad("http://host", "no path");
	target_bad("/a%2", "percent-encoding in the path");
	target_bad("/a%zz", "percent-encoding in the path");
	target_bad("/a%00b", "percent-encoding in the path");
	target_bad("/x?=1", "without a name");
	target_bad("/x?limit=%0", "'limit'");
	target_bad("/x?a=1&b=2&c=3&d=4&e=5&f=6&g=7&h=8&i=9&j=10&k=11&l=12&m=13&n=14&o=15&p=16&q=17",
	           "too many");
}

static void test_path_patterns(void **state)
{
	char cap[API_MAX_CAPTURE];
	char long_seg[API_MAX_CAPTURE + 20];

	(void)state;
	assert_true(api_parse_path("/api/v1/host", "/api/v1/host", cap));
	assert_string_equal(cap, "");
	assert_false(api_parse_path("/api/v1/host", "/api/v1/host/", cap));
	assert_false(api_parse_path("/api/v1/host", "/api/v1/hos", cap));
	assert_true(api_parse_path("/api/v1/runs/{id}", "/api/v1/runs/42", cap));
	assert_string_equal(cap, "42");
	assert_false(api_parse_path("/api/v1/runs/{id}", "/api/v1/runs/", cap));
	assert_false(api_parse_path("/api/v1/runs/{id}", "/api/v1/runs/4/2", cap));
	assert_false(api_parse_path("/api/v1/runs/{id}", "/api/v1/runs", cap));
	assert_true(api_parse_path("/dygraphs/*", "/dygraphs/dist/dygraph.min.js", cap));
	assert_string_equal(cap, "dist/dygraph.min.js");
	assert_false(api_parse_path("/dygraphs/*", "/dygraphs/", cap));
	assert_true(api_parse_path("/*", "/app.js", cap));
	assert_false(api_parse_path("/*", "/", cap));
	assert_true(api_parse_path("/", "/", cap));
	memset(long_seg, 'a', sizeof(long_seg) - 1);
	long_seg[0] = '/';
	long_seg[sizeof(long_seg) - 1] = '\0';
	assert_false(api_parse_path("/*", long_seg, cap));
}

static void test_int_and_id(void **state)
{
	int64_t v;

	(void)state;
	assert_int_equal(api_parse_int("500", 1, 500, &v), 0);
	assert_int_equal(v, 500);
	assert_int_equal(api_parse_int("501", 1, 500, &v), -ERANGE);
	assert_int_equal(api_parse_int("0", 1, 500, &v), -ERANGE);
	assert_int_equal(api_parse_int("-3", -5, 5, &v), 0);
	assert_int_equal(v, -3);
	assert_int_equal(api_parse_int("", 0, 5, &v), -EINVAL);
	assert_int_equal(api_parse_int("1x", 0, 5, &v), -EINVAL);
	assert_int_equal(api_parse_int(" 1", 0, 5, &v), -EINVAL);
	assert_int_equal(api_parse_int("+1", 0, 5, &v), -EINVAL);
	assert_int_equal(api_parse_int("99999999999999999999", 0, INT64_MAX, &v), -ERANGE);
	assert_int_equal(api_parse_int("9223372036854775807", 0, INT64_MAX, &v), 0);
	assert_true(v == INT64_MAX);
	assert_int_equal(api_parse_id("17", &v), 0);
	assert_int_equal(v, 17);
	assert_int_equal(api_parse_id("0", &v), -ERANGE);
	assert_int_equal(api_parse_id("-1", &v), -EINVAL);
	assert_int_equal(api_parse_id("abc", &v), -EINVAL);
}

static void test_time(void **state)
{
	int64_t ms;

	(void)state;
	/* Reference values computed with `date -u -d ... +%s`. */
	assert_int_equal(api_parse_time("2026-12-03T07:51:56Z", &ms), 0);
	assert_int_equal(ms, 1796284316000LL);
	assert_int_equal(api_parse_time("2026-12-03T07:51:56.123Z", &ms), 0);
	assert_int_equal(ms, 1796284316123LL);
	assert_int_equal(api_parse_time("2026-12-03t09:51:56.1+02:00", &ms), 0);
	assert_int_equal(ms, 1796284316100LL);
	assert_int_equal(api_parse_time("2026-12-03 02:21:56-05:30", &ms), 0);
	assert_int_equal(ms, 1796284316000LL);
	assert_int_equal(api_parse_time("1970-01-01T00:00:00Z", &ms), 0);
	assert_int_equal(ms, 0);
	assert_int_equal(api_parse_time("2000-02-29T12:00:00Z", &ms), 0);
	assert_int_equal(ms, 951825600000LL);
	assert_int_equal(api_parse_time("2016-12-31T23:59:60Z", &ms), 0);
	assert_int_equal(ms, 1483228799000LL);
	assert_int_equal(api_parse_time("1796284316", &ms), 0);
	assert_int_equal(ms, 1796284316000LL);
	assert_int_equal(api_parse_time("1796284316.5", &ms), 0);
	assert_int_equal(ms, 1796284316500LL);
	assert_int_equal(api_parse_time("0", &ms), 0);
	assert_int_equal(ms, 0);
	/* 13 digits or more: Unix milliseconds, as the answers' *_ms fields */
	assert_int_equal(api_parse_time("1796284316123", &ms), 0);
	assert_int_equal(ms, 1796284316123LL);
	assert_int_equal(api_parse_time("9999999999999", &ms), 0);
	assert_int_equal(ms, 9999999999999LL);
	assert_int_equal(api_parse_time("253402300799999", &ms), 0);

	static const char *const bad[] = {
	    "",
	    "now",
	    "-1",
	    "1.",
	    ".5",
	    "1e9",
	    "1796284316.1234567890",
	    "1796284316123.5",
	    "253402300800000",
	    "9999999999999999",
	    "2026-13-01T00:00:00Z",
	    "2026-02-29T00:00:00Z",
	    "1900-02-29T00:00:00Z",
	    "2026-12-03T24:00:00Z",
	    "2026-12-03T07:60:00Z",
	    "2026-12-03T07:51:61Z",
	    "2026-12-03T07:51:56",
	    "2026-12-03",
	    "2026-12-03T07:51Z",
	    "2026-12-03T07:51:56+2:00",
	    "2026-12-03T07:51:56+24:00",
	    "2026-12-03T07:51:56ZZ",
	    "1969-12-31T23:59:59Z",
	    "1970-01-01T00:00:00+00:01",
	    "2026-12-03T07:51:56.Z",
	    "10000-01-01T00:00:00Z",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (api_parse_time(bad[i], &ms) != -EINVAL)
			fail_msg("\"%s\" was accepted as %lld", bad[i], (long long)ms);
}

/* "now" for the parsers that compare a time with it: 2026-12-03T07:51:56Z. */
#define NOW_MS 1796284316000LL

/* One parser of a list or range query, with the query it fills kept here. */
static int parse_runs(const struct api_target *t, struct api_error *err)
{
	struct store_runs_query q;

	return api_parse_runs_query(t, NOW_MS, &q, err);
}

static int parse_events(const struct api_target *t, struct api_error *err)
{
	struct store_events_query q;

	return api_parse_events_query(t, NOW_MS, &q, err);
}

static int parse_series(const struct api_target *t, struct api_error *err)
{
	struct api_series_query q;

	return api_parse_series_query(t, NOW_MS, &q, err);
}

/* Parses uri with `parse` and expects a 400 naming `param`. */
static void query_bad(int (*parse)(const struct api_target *, struct api_error *), const char *uri,
                      const char *param)
{
	struct api_error err = {0};
	struct api_target t;

	target_ok(uri, &t);
	assert_int_equal(parse(&t, &err), -EINVAL);
	assert_int_equal(err.status, 400);
	if (!strstr(err.message, param))
		fail_msg("\"%s\": message \"%s\" does not name %s", uri, err.message, param);
	api_target_clear(&t);
}

#define runs_bad(uri, param) query_bad(parse_runs, uri, param)
#define events_bad(uri, param) query_bad(parse_events, uri, param)
#define series_bad(uri, param) query_bad(parse_series, uri, param)

static void test_runs_query(void **state)
{
	struct api_error err = {0};
	struct store_runs_query q;
	struct api_target t;

	(void)state;
	target_ok("/api/v1/runs", &t);
	assert_int_equal(api_parse_runs_query(&t, NOW_MS, &q, &err), 0);
	assert_null(q.probe);
	assert_null(q.status);
	assert_int_equal(q.limit, API_DEFAULT_LIMIT);
	assert_int_equal(q.cursor, 0);
	assert_int_equal(q.since_ms, 0);
	assert_int_equal(q.until_ms, 0);
	api_target_clear(&t);

	target_ok("/api/v1/runs?probe=map32&status=error&since=1000&until=2026-01-01T00:00:00Z"
	          "&cursor=99&limit=500",
	          &t);
	assert_int_equal(api_parse_runs_query(&t, NOW_MS, &q, &err), 0);
	assert_string_equal(q.probe, "map32");
	assert_string_equal(q.status, "error");
	assert_int_equal(q.since_ms, 1000000);
	assert_int_equal(q.until_ms, 1767225600000LL);
	assert_int_equal(q.cursor, 99);
	assert_int_equal(q.limit, 500);
	api_target_clear(&t);

	runs_bad("/api/v1/runs?limit=0", "'limit'");
	runs_bad("/api/v1/runs?limit=501", "'limit'");
	runs_bad("/api/v1/runs?limit=ten", "'limit'");
	runs_bad("/api/v1/runs?limit=", "'limit'");
	runs_bad("/api/v1/runs?cursor=-4", "'cursor'");
	runs_bad("/api/v1/runs?status=fine", "'status'");
	runs_bad("/api/v1/runs?probe=Ctxsw", "'probe'");
	runs_bad("/api/v1/runs?probe=", "'probe'");
	runs_bad("/api/v1/runs?since=yesterday", "'since'");
	runs_bad("/api/v1/runs?until=2026-02-30T00:00:00Z", "'until'");
	runs_bad("/api/v1/runs?since=2000&until=1000", "'since'");
	runs_bad("/api/v1/runs?colour=red", "'colour'");
	runs_bad("/api/v1/runs?limit=1&limit=2", "'limit'");
	/* a future 'since' without 'until': the 400 a series gives, which
	 * names the 'until' as the default it was */
	runs_bad("/api/v1/runs?since=1796284317",
	         "'since' is in the future ('until' defaults to now)");
	runs_bad("/api/v1/runs?since=2027-01-01T00:00:00Z&limit=5",
	         "'since' is in the future ('until' defaults to now)");
}

/* A 'since' up to now, or any 'since' with an 'until' after it, is a range
 * that may hold runs. */
static void test_runs_since(void **state)
{
	static const char *const good[] = {
	    "/api/v1/runs?since=1796284315",
	    "/api/v1/runs?since=1796284317&until=1796284318",
	};
	struct api_error err = {0};
	struct store_runs_query q;
	struct api_target t;

	(void)state;
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		target_ok(good[i], &t);
		if (api_parse_runs_query(&t, NOW_MS, &q, &err) != 0)
			fail_msg("\"%s\" refused: %s", good[i], err.message);
		api_target_clear(&t);
	}
}

static void test_events_query(void **state)
{
	struct api_error err = {0};
	struct store_events_query q;
	struct api_target t;

	(void)state;
	target_ok("/api/v1/events?metric=ctxsw.high_ns&since=1796284315&limit=7", &t);
	assert_int_equal(api_parse_events_query(&t, NOW_MS, &q, &err), 0);
	assert_string_equal(q.metric, "ctxsw.high_ns");
	assert_int_equal(q.since_ms, 1796284315000LL);
	assert_int_equal(q.until_ms, 0);
	assert_int_equal(q.limit, 7);
	api_target_clear(&t);

	events_bad("/api/v1/events?metric=ratio", "'metric'");
	events_bad("/api/v1/events?since=x", "'since'");
	events_bad("/api/v1/events?since=2000&until=1000", "'since'");
	events_bad("/api/v1/events?limit=1001", "'limit'");
	events_bad("/api/v1/events?since=1796284317",
	           "'since' is in the future ('until' defaults to now)");
}

static void test_series_query(void **state)
{
	const int64_t now = 1796284316000LL;
	struct api_error err = {0};
	struct api_series_query q;
	struct api_target t;

	(void)state;
	target_ok("/api/v1/series?metric=ctxsw.ratio&since=1796197916&step=auto", &t);
	assert_int_equal(api_parse_series_query(&t, now, &q, &err), 0);
	assert_string_equal(q.metric, "ctxsw.ratio");
	assert_int_equal(q.until_ms, now);
	assert_int_equal(q.since_ms, now - 86400000LL);
	assert_true(q.since_given);
	assert_true(q.step_auto);
	assert_int_equal(q.step_ms, 86400); /* a day in 1000 buckets */
	api_target_clear(&t);

	target_ok("/api/v1/series?metric=threads.low_knee&since=0&until=3600&step=60", &t);
	assert_int_equal(api_parse_series_query(&t, now, &q, &err), 0);
	assert_int_equal(q.since_ms, 0);
	assert_int_equal(q.until_ms, 3600000);
	assert_int_equal(q.step_ms, 60000);
	assert_false(q.step_auto);
	api_target_clear(&t);

	/* No since: the widest range, to be narrowed to the data. */
	target_ok("/api/v1/series?metric=map32.slope", &t);
	assert_int_equal(api_parse_series_query(&t, now, &q, &err), 0);
	assert_false(q.since_given);
	assert_int_equal(q.since_ms, now - API_SERIES_MAX_RANGE_MS);
	api_target_clear(&t);

	/* No since and an explicit step: the latest API_SERIES_MAX_BUCKETS. */
	target_ok("/api/v1/series?metric=ctxsw.ratio&step=3600", &t);
	assert_int_equal(api_parse_series_query(&t, now, &q, &err), 0);
	assert_int_equal(q.step_ms, 3600000);
	assert_int_equal(q.since_ms, now - 3600000LL * API_SERIES_MAX_BUCKETS);
	api_target_clear(&t);

	/* The durations the config and the CLI take: 1h, 1h30m. */
	target_ok("/api/v1/series?metric=ctxsw.ratio&step=1h", &t);
	assert_int_equal(api_parse_series_query(&t, now, &q, &err), 0);
	assert_int_equal(q.step_ms, 3600000);
	api_target_clear(&t);
	target_ok("/api/v1/series?metric=ctxsw.ratio&step=1h30m", &t);
	assert_int_equal(api_parse_series_query(&t, now, &q, &err), 0);
	assert_int_equal(q.step_ms, 5400000);
	api_target_clear(&t);

	/* Short ranges still get whole-second buckets. */
	target_ok("/api/v1/series?metric=ctxsw.ratio&since=1000&until=1010", &t);
	assert_int_equal(api_parse_series_query(&t, now, &q, &err), 0);
	assert_int_equal(q.step_ms, 1000);
	api_target_clear(&t);

	series_bad("/api/v1/series", "'metric'");
	series_bad("/api/v1/series?metric=", "'metric'");
	series_bad("/api/v1/series?metric=ratio", "'metric'");
	series_bad("/api/v1/series?metric=.ratio", "'metric'");
	series_bad("/api/v1/series?metric=ctxsw.", "'metric'");
	series_bad("/api/v1/series?metric=ctx%20sw.ratio", "'metric'");
	/* a /metrics family's name (api.c then names the API's, 40-http) */
	series_bad("/api/v1/series?metric=threadwatch_ctxsw_ratio", "'metric' must look like");
	/* a future 'since' without 'until' names no 'until' it was not given */
	series_bad("/api/v1/series?metric=ctxsw.ratio&since=1796284317",
	           "is in the future ('until' defaults to now)");
	series_bad("/api/v1/series?metric=ctxsw.ratio&since=x", "'since'");
	series_bad("/api/v1/series?metric=ctxsw.ratio&until=x", "'until'");
	series_bad("/api/v1/series?metric=ctxsw.ratio&since=100&until=100", "'since'");
	series_bad("/api/v1/series?metric=ctxsw.ratio&since=0&until=1796284316", "'since'");
	series_bad("/api/v1/series?metric=ctxsw.ratio&step=0", "'step'");
	series_bad("/api/v1/series?metric=ctxsw.ratio&step=-5", "'step'");
	series_bad("/api/v1/series?metric=ctxsw.ratio&step=1.5", "'step'");
	series_bad("/api/v1/series?metric=ctxsw.ratio&step=1500ms", "'step'");
	series_bad("/api/v1/series?metric=ctxsw.ratio&step=1x", "'step'");
	series_bad("/api/v1/series?metric=ctxsw.ratio&since=0&until=86400&step=1", "'step'");
	series_bad("/api/v1/series?metric=ctxsw.ratio&limit=3", "'limit'");
}

static void test_check_params(void **state)
{
	static const char *const allowed[] = {"a", "b", NULL};
	struct api_error err = {0};
	struct api_target t;

	(void)state;
	target_ok("/x?a=1&b=2", &t);
	assert_int_equal(api_check_params(&t, allowed, &err), 0);
	api_target_clear(&t);
	target_ok("/x?a=1&c=2", &t);
	assert_int_equal(api_check_params(&t, allowed, &err), -EINVAL);
	assert_non_null(strstr(err.message, "unknown parameter 'c'"));
	api_target_clear(&t);
}

static void test_fail_printable(void **state)
{
	struct api_error err;
	char buf[8];

	(void)state;
	assert_int_equal(api_fail(&err, 400, "bad \"%s\"", "\xff\n\xc3\xa9x"), 400);
	assert_int_equal(err.status, 400);
	assert_string_equal(err.detail, "");
	/* Bytes a client sent that are not printable ASCII (or not UTF-8). */
	api_printable(buf, sizeof(buf), err.message + 4);
	assert_string_equal(buf, "\"\?\?\?\?x\"");
	api_printable(buf, sizeof(buf), "abcdefghij");
	assert_string_equal(buf, "abcdefg");
	assert_int_equal(api_fail(&err, 404, "no run %d", 7), 404);
	assert_string_equal(err.message, "no run 7");
}

/* An absolute-form target's authority, which the server checks against
 * allowed_hosts like Host (RFC 9112 section 3.2.2). */
static void test_target_authority(void **state)
{
	static const struct {
		const char *uri, *want;
		int r;
	} cases[] = {
	    {"/api/v1/host", NULL, 0},
	    {"http://evil.example/api/v1/host", "evil.example", 1},
	    {"https://localhost:8437/healthz?x=1", "localhost:8437", 1},
	    {"http://[::1]:8437/", "[::1]:8437", 1},
	    {"http://h?x", "h", 1},
	    {"http:///api", NULL, -EINVAL},
	    {"http://user@localhost/", NULL, -EINVAL},
	    {"ftp://localhost/", NULL, 0},
	};
	char out[64];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int r = api_target_authority(cases[i].uri, out, sizeof(out));

		if (r != cases[i].r)
			fail_msg("%s: %d, not %d", cases[i].uri, r, cases[i].r);
		if (r > 0)
			assert_string_equal(out, cases[i].want);
	}
	assert_int_equal(api_target_authority("http://a-host-name-longer-than-eight/", out, 8),
	                 -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_target_decodes),   cmocka_unit_test(test_target_rejects),
	    cmocka_unit_test(test_target_authority), cmocka_unit_test(test_path_patterns),
	    cmocka_unit_test(test_int_and_id),       cmocka_unit_test(test_time),
	    cmocka_unit_test(test_runs_query),       cmocka_unit_test(test_runs_since),
	    cmocka_unit_test(test_events_query),     cmocka_unit_test(test_series_query),
	    cmocka_unit_test(test_check_params),     cmocka_unit_test(test_fail_printable),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
