/*
 * test_http_server: starts the real HTTP server (daemon/http.c) on an ephemeral
 * port over a temporary store filled through the store API, and checks
 * every endpoint with libcurl: status codes, headers, JSON bodies, /metrics,
 * static files with ETag and gzip, the POST trigger, the textfile and a
 * failing store (test_http_access: sockets, TLS, tokens). Named for what it does: it drives
 * the http module in process (no threadwatchd binary, loopback only) and so
 * stays in the unit tier; tests/regress/40-http.sh covers the daemon.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <time.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <curl/curl.h>
#include <jansson.h>

#include "builtin.h"
#include "http.h"
#include "metrics.h"
#include "store.h"

#include "http_fixture.h"

/* --- tests ----------------------------------------------------------- */

static void test_health_and_host(void **state)
{
	struct fixture *f = *state;
	struct reply r;
	char buf[128];

	fetch(f, "/healthz", &r);
	assert_int_equal(r.status, 200);
	assert_string_equal(json_string_value(get(r.json, "status")), "ok");
	assert_string_equal(hdr(&r, "X-Content-Type-Options", buf, sizeof(buf)), "nosniff");
	reply_free(&r);

	fetch(f, "/api/v1/host", &r);
	assert_int_equal(r.status, 200);
	assert_string_equal(json_string_value(get(r.json, "current.fingerprint.hostname")),
	                    "testhost");
	assert_int_equal(json_array_size(get(r.json, "history")), 1);
	assert_string_equal(hdr(&r, "Cache-Control", buf, sizeof(buf)), "no-store");
	reply_free(&r);

	/* HEAD: the headers of a GET, no body. */
	struct opts head = {.method = "HEAD", .nobody = 1};
	fetch_opts(f, "/api/v1/host", &head, &r);
	assert_int_equal(r.status, 200);
	assert_int_equal(r.len, 0);
	reply_free(&r);

	fetch(f, "/api/v1/host?x=1", &r);
	expect_error(&r, 400, "'x'");
	reply_free(&r);
}

static void test_recommendation_status_headroom(void **state)
{
	struct fixture *f = *state;
	struct reply r;
	json_t *rec;

	fetch(f, "/api/v1/recommendation", &r);
	assert_int_equal(r.status, 200);
	assert_string_equal(json_string_value(get(r.json, "verdict")), "high");
	assert_string_equal(json_string_value(get(r.json, "confidence")), "strong");
	assert_true(json_number_value(get(r.json, "figures.break_even_switches")) == 1234.5);
	assert_int_equal(json_array_size(get(r.json, "run_ids")), 3);
	reply_free(&r);

	fetch(f, "/api/v1/status", &r);
	assert_int_equal(r.status, 200);
	assert_string_equal(json_string_value(get(r.json, "version")), TW_VERSION);
	assert_true(json_is_false(get(r.json, "cycle_running")));
	assert_true(json_is_true(get(r.json, "trigger_enabled")));
	assert_int_equal(json_integer_value(get(r.json, "next_cycle_ms")), 1796305916000LL);
	assert_int_equal(json_integer_value(get(r.json, "last_cycle_ms")), T0 + 12000);
	assert_string_equal(json_string_value(get(r.json, "last_cycle.trigger")), "start");
	/* a count: 0 is a value (a regular next cycle), not null */
	assert_true(json_is_integer(get(r.json, "next_cycle_retry")));
	assert_int_equal(json_integer_value(get(r.json, "next_cycle_retry")), 0);
	reply_free(&r);

	fetch(f, "/api/v1/headroom", &r);
	assert_int_equal(r.status, 200);
	assert_int_equal(json_array_size(get(r.json, "limits")), 3);
	assert_int_equal(json_array_size(get(r.json, "warnings")), 1);
	assert_string_equal(json_string_value(get(r.json, "warnings.0.limit")), "threads_max");
	assert_non_null(strstr(json_string_value(get(r.json, "warnings.0.message")), "95.0%"));
	reply_free(&r);

	/* A record as headroom_read() makes it holds its limits and warnings:
	 * the answer gives them once, at the top, not again inside it. */
	rec = json_pack("{s:i,s:[{s:s,s:i,s:i},{s:s,s:i,s:i},{s:s,s:i,s:n}],s:[s]}", "threads", 950,
	                "limits", "name", "threads_max", "used", 950, "limit", 1000, "name",
	                "max_map_count", "used", 1200, "limit", 65530, "name", "pids_max", "used",
	                950, "limit", "warnings", "threads_max: 950 of 1000 in use (95.0%)");
	assert_int_equal(store_headroom_record(f->rw, T0 + 13000, rec), 0);
	json_decref(rec);
	fetch(f, "/api/v1/headroom", &r);
	assert_int_equal(r.status, 200);
	assert_int_equal(json_array_size(get(r.json, "limits")), 3);
	assert_int_equal(json_array_size(get(r.json, "warnings")), 1);
	assert_int_equal(json_integer_value(get(r.json, "headroom.threads")), 950);
	assert_null(json_object_get(get(r.json, "headroom"), "limits"));
	assert_null(json_object_get(get(r.json, "headroom"), "warnings"));
	reply_free(&r);
}

static void test_runs(void **state)
{
	struct fixture *f = *state;
	struct reply r;
	char path[128];
	int64_t cursor;

	fetch(f, "/api/v1/runs", &r);
	assert_int_equal(r.status, 200);
	assert_int_equal(json_array_size(get(r.json, "runs")), 4);
	/* Newest first: the error run. */
	assert_int_equal(json_integer_value(get(r.json, "runs.0.id")), f->run_ids[3]);
	assert_string_equal(json_string_value(get(r.json, "runs.0.status")), "error");
	assert_non_null(strstr(json_string_value(get(r.json, "runs.0.reason")), "SIGSEGV"));
	assert_true(json_is_null(get(r.json, "next_cursor")));
	reply_free(&r);

	fetch(f, "/api/v1/runs?limit=3", &r);
	assert_int_equal(r.status, 200);
	assert_int_equal(json_array_size(get(r.json, "runs")), 3);
	cursor = json_integer_value(get(r.json, "next_cursor"));
	assert_true(cursor > 0);
	reply_free(&r);
	snprintf(path, sizeof(path), "/api/v1/runs?limit=3&cursor=%lld", (long long)cursor);
	fetch(f, path, &r);
	assert_int_equal(r.status, 200);
	assert_int_equal(json_array_size(get(r.json, "runs")), 1);
	assert_int_equal(json_integer_value(get(r.json, "runs.0.id")), f->run_ids[0]);
	reply_free(&r);

	fetch(f, "/api/v1/runs?probe=map32&status=ok", &r);
	assert_int_equal(r.status, 200);
	assert_int_equal(json_array_size(get(r.json, "runs")), 1);
	assert_string_equal(json_string_value(get(r.json, "runs.0.probe")), "map32");
	reply_free(&r);

	/* since/until in both notations select the map32 and threads runs. */
	fetch(f, "/api/v1/runs?since=1796284319&until=2026-12-03T07:52:02Z", &r);
	assert_int_equal(r.status, 200);
	assert_int_equal(json_array_size(get(r.json, "runs")), 2);
	reply_free(&r);

	fetch(f, "/api/v1/runs?limit=0", &r);
	expect_error(&r, 400, "'limit'");
	reply_free(&r);
	fetch(f, "/api/v1/runs?status=bad", &r);
	expect_error(&r, 400, "'status'");
	reply_free(&r);
	fetch(f, "/api/v1/runs?since=tomorrow", &r);
	expect_error(&r, 400, "'since'");
	reply_free(&r);
	fetch(f, "/api/v1/runs?limit=%zz", &r);
	expect_error(&r, 400, "'limit'");
	reply_free(&r);
}

static void test_run(void **state)
{
	struct fixture *f = *state;
	struct reply r;
	char path[64];

	snprintf(path, sizeof(path), "/api/v1/runs/%lld", (long long)f->run_ids[0]);
	fetch(f, path, &r);
	assert_int_equal(r.status, 200);
	assert_string_equal(json_string_value(get(r.json, "probe")), "ctxsw");
	assert_true(json_array_size(get(r.json, "samples")) >= 5);
	assert_int_equal(json_array_size(get(r.json, "series.pair_ratio.points")), 5);
	assert_string_equal(json_string_value(get(r.json, "doc.probe")), "ctxsw");
	reply_free(&r);

	snprintf(path, sizeof(path), "/api/v1/runs/%lld", (long long)f->run_ids[3]);
	fetch(f, path, &r);
	assert_int_equal(r.status, 200);
	assert_true(json_is_null(get(r.json, "doc")));
	assert_string_equal(json_string_value(get(r.json, "raw")), "Segmentation fault");
	reply_free(&r);

	fetch(f, "/api/v1/runs/999999", &r);
	expect_error(&r, 404, "999999");
	reply_free(&r);
	fetch(f, "/api/v1/runs/abc", &r);
	expect_error(&r, 400, "'id'");
	reply_free(&r);
	fetch(f, "/api/v1/runs/0", &r);
	expect_error(&r, 400, "'id'");
	reply_free(&r);
}

static void test_series_and_catalogue(void **state)
{
	struct fixture *f = *state;
	struct reply r;
	const json_t *m;
	size_t i;
	int found = 0;

	fetch(f, "/api/v1/series?metric=ctxsw.ratio", &r);
	assert_int_equal(r.status, 200);
	assert_string_equal(json_string_value(get(r.json, "metric")), "ctxsw.ratio");
	assert_int_equal(json_array_size(get(r.json, "points")), 1);
	assert_true(fabs(json_number_value(get(r.json, "points.0.avg")) - 1.003) < 1e-9);
	/* No since: the range starts at the data, not 20 years back. */
	assert_true(json_integer_value(get(r.json, "since_ms")) > T0 - 86400000LL * 30);
	reply_free(&r);

	fetch(f, "/api/v1/series?metric=ctxsw.low_ns&since=1796284000&until=1796285000&step=60",
	      &r);
	assert_int_equal(r.status, 200);
	assert_int_equal(json_integer_value(get(r.json, "step_ms")), 60000);
	assert_true(json_number_value(get(r.json, "points.0.max")) == 760);
	reply_free(&r);
	/* the same range in Unix milliseconds, as since_ms and until_ms give it */
	fetch(f,
	      "/api/v1/series?metric=ctxsw.low_ns&since=1796284000000&until=1796285000000&step=60",
	      &r);
	assert_int_equal(r.status, 200);
	assert_int_equal(json_integer_value(get(r.json, "since_ms")), 1796284000000LL);
	assert_int_equal(json_integer_value(get(r.json, "until_ms")), 1796285000000LL);
	assert_true(json_number_value(get(r.json, "points.0.max")) == 760);
	reply_free(&r);
	fetch(f, "/api/v1/runs?since=1796284000000&until=1796285000000", &r);
	assert_int_equal(r.status, 200);
	reply_free(&r);
	fetch(f, "/api/v1/events?since=1796284000000", &r);
	assert_int_equal(r.status, 200);
	reply_free(&r);

	fetch(f, "/api/v1/series?metric=nosuch.metric", &r);
	expect_error(&r, 404, "nosuch.metric");
	reply_free(&r);
	fetch(f, "/api/v1/series", &r);
	expect_error(&r, 400, "'metric'");
	reply_free(&r);
	fetch(f, "/api/v1/series?metric=ctxsw.ratio&step=0", &r);
	expect_error(&r, 400, "'step'");
	reply_free(&r);
	fetch(f, "/api/v1/series?metric=ctxsw.ratio&since=0&until=99999999999", &r);
	expect_error(&r, 400, "'since'");
	reply_free(&r);

	fetch(f, "/api/v1/metrics", &r);
	assert_int_equal(r.status, 200);
	json_array_foreach(get(r.json, "metrics"), i, m)
	{
		if (strcmp(json_string_value(json_object_get(m, "name")), "ctxsw.ratio"))
			continue;
		assert_true(json_is_true(json_object_get(m, "stored")));
		assert_string_equal(json_string_value(json_object_get(m, "unit")), "ratio");
		assert_non_null(json_string_value(json_object_get(m, "description")));
		found = 1;
	}
	assert_true(found);
	reply_free(&r);
}

static void test_prometheus(void **state)
{
	struct fixture *f = *state;
	struct reply r;
	char ct[128];

	fetch(f, "/metrics", &r);
	assert_int_equal(r.status, 200);
	assert_string_equal(hdr(&r, "Content-Type", ct, sizeof(ct)),
	                    "text/plain; version=0.0.4; charset=utf-8");
	static const char *const want[] = {
	    "# TYPE threadwatch_build_info gauge\nthreadwatch_build_info{version=\"" TW_VERSION
	    "\"} 1\n",
	    "threadwatch_ctxsw_ratio 1.003\n",
	    "threadwatch_ctxsw_switch_seconds{stack=\"low\"} 7.6e-07\n",
	    "threadwatch_probe_runs_total{probe=\"crashy\"} 1\n",
	    "threadwatch_probe_failures_total{probe=\"crashy\"} 1\n",
	    "# TYPE threadwatch_probe_runs_total counter\n",
	    "threadwatch_probe_last_run_timestamp_seconds{probe=\"map32\"} 1796284319\n",
	    "threadwatch_probe_last_run_success{probe=\"crashy\"} 0\n",
	    "threadwatch_map32_window_bytes 1073741824\n",
	    "threadwatch_threads_knee{policy=\"low\"} 4032\n",
	    "threadwatch_recommendation_low_stacks 0\n",
	    "threadwatch_recommendation_break_even_switches 1234.5\n",
	    "threadwatch_recommendation_info{verdict=\"high\",confidence=\"strong\"} 1\n",
	    "threadwatch_headroom_ratio{limit=\"threads_max\"} 0.95\n",
	    "threadwatch_headroom_warning{limit=\"threads_max\"} 1\n",
	    "threadwatch_headroom_warning{limit=\"max_map_count\"} 0\n",
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		if (!strstr(r.body, want[i]))
			fail_msg("/metrics lacks \"%s\":\n%s", want[i], r.body);
	/* No knee for the default policy: no sample, rather than NaN or a
	 * made-up number. */
	assert_null(strstr(r.body, "threadwatch_threads_knee{policy=\"default\"}"));
	assert_null(strstr(r.body, "NaN"));
	/* The daemon's own process figures. */
	assert_non_null(strstr(r.body, "# TYPE process_cpu_seconds_total counter\n"));
	assert_non_null(strstr(r.body, "\nprocess_open_fds "));
	assert_non_null(strstr(r.body, "\nprocess_start_time_seconds "));
	assert_non_null(strstr(r.body, "\nprocess_resident_memory_bytes "));
	reply_free(&r);
}

static void test_errors(void **state)
{
	struct fixture *f = *state;
	struct reply r;
	char allow[64];
	char *big = malloc(10000);
	struct opts del = {.method = "DELETE"}, put = {.method = "PUT"},
	            get_body = {.method = "GET", .body = "x=1", .body_len = 3},
	            huge = {.method = "POST", .body = big, .body_len = 10000};

	assert_non_null(big);
	memset(big, 'a', 10000);
	fetch(f, "/nope", &r);
	expect_error(&r, 404, "/nope");
	reply_free(&r);
	fetch(f, "/api/v1/nope", &r);
	expect_error(&r, 404, NULL);
	reply_free(&r);
	fetch(f, "/api/v1/host/", &r);
	expect_error(&r, 404, NULL);
	reply_free(&r);

	fetch_opts(f, "/api/v1/host", &del, &r);
	expect_error(&r, 405, "DELETE");
	assert_string_equal(hdr(&r, "Allow", allow, sizeof(allow)), "GET, HEAD");
	reply_free(&r);
	fetch_opts(f, "/api/v1/runs", &put, &r);
	expect_error(&r, 405, NULL);
	assert_string_equal(hdr(&r, "Allow", allow, sizeof(allow)), "GET, HEAD, POST");
	reply_free(&r);

	fetch_opts(f, "/api/v1/host", &get_body, &r);
	expect_error(&r, 400, "body");
	reply_free(&r);
	fetch_opts(f, "/api/v1/runs", &huge, &r);
	expect_error(&r, 413, "limit");
	reply_free(&r);
	fetch(f, "/api/v1/h%zzost", &r);
	expect_error(&r, 400, "percent-encoding");
	reply_free(&r);
	/* What the client sent is quoted in the message, made printable. */
	fetch(f, "/%FF%FE%0A", &r);
	expect_error(&r, 404, "\"/\?\?\?\"");
	reply_free(&r);
	fetch(f, "/api/v1/runs?%C3%A9t%C3%A9=1", &r);
	expect_error(&r, 400, "unknown parameter '\?\?t\?\?'");
	reply_free(&r);
	free(big);
}

static void test_trigger(void **state)
{
	struct fixture *f = *state;
	struct reply r;
	char buf[128];
	struct opts none = {.method = "POST"},
	            wrong = {.method = "POST", .headers = {"Authorization: Bearer " TOKEN "x"}},
	            shorter = {.method = "POST", .headers = {"Authorization: Bearer s3cret"}},
	            right = {.method = "POST", .headers = {"Authorization: Bearer " TOKEN}};

	fetch_opts(f, "/api/v1/runs", &none, &r);
	expect_error(&r, 401, "Authorization");
	assert_non_null(hdr(&r, "WWW-Authenticate", buf, sizeof(buf)));
	reply_free(&r);
	fetch_opts(f, "/api/v1/runs", &wrong, &r);
	expect_error(&r, 401, "wrong token");
	reply_free(&r);
	fetch_opts(f, "/api/v1/runs", &shorter, &r);
	expect_error(&r, 401, "wrong token");
	reply_free(&r);
	assert_int_equal(f->triggers, 0);

	fetch_opts(f, "/api/v1/runs", &right, &r);
	assert_int_equal(r.status, 202);
	assert_int_equal(json_integer_value(get(r.json, "cycle_id")), 7);
	reply_free(&r);
	fetch_opts(f, "/api/v1/runs", &right, &r);
	expect_error(&r, 409, "already running");
	reply_free(&r);
	assert_int_equal(f->triggers, 2);
}

/* A static file: 200 with the exact bytes and an ETag, 304 on a match,
 * and gzip that decodes to the same bytes. */
static void check_static(const struct fixture *f, const char *path, const void *data, size_t size,
                         const char *mime)
{
	struct reply r, z;
	char etag[64], ct[128], inm[96], enc[32];
	struct opts cond = {.headers = {inm}}, gz = {.gzip = 1};

	fetch(f, path, &r);
	assert_int_equal(r.status, 200);
	assert_int_equal(r.len, size);
	assert_memory_equal(r.body, data, size);
	assert_string_equal(hdr(&r, "Content-Type", ct, sizeof(ct)), mime);
	assert_non_null(hdr(&r, "ETag", etag, sizeof(etag)));
	assert_non_null(hdr(&r, "Cache-Control", ct, sizeof(ct)));
	snprintf(inm, sizeof(inm), "If-None-Match: %s", etag);
	reply_free(&r);

	fetch_opts(f, path, &cond, &r);
	assert_int_equal(r.status, 304);
	assert_int_equal(r.len, 0);
	reply_free(&r);

	fetch_opts(f, path, &gz, &z);
	assert_int_equal(z.status, 200);
	if (size >= 1024) {
		assert_string_equal(hdr(&z, "Content-Encoding", enc, sizeof(enc)), "gzip");
		assert_non_null(hdr(&z, "ETag", ct, sizeof(ct)));
		assert_string_not_equal(ct, etag);
	}
	assert_int_equal(z.len, size);
	assert_memory_equal(z.body, data, size);
	reply_free(&z);
}

static void test_static(void **state)
{
	struct fixture *f = *state;
	const struct builtin_file *index = builtin_find("web/index.html");
	const struct builtin_file *spec = builtin_find("web/openapi.json");
	struct reply r;
	char path[256];
	size_t n;
	char *js = fake_js(&n);

	if (index) {
		check_static(f, "/", index->data, index->size, "text/html; charset=utf-8");
		check_static(f, "/index.html", index->data, index->size,
		             "text/html; charset=utf-8");
	} else {
		fetch(f, "/", &r);
		expect_error(&r, 404, "web/index.html");
		reply_free(&r);
	}
	assert_non_null(spec);
	check_static(f, "/api/v1/openapi.json", spec->data, spec->size, "application/json");
	fetch(f, "/api/v1/openapi.json", &r);
	assert_string_equal(json_string_value(get(r.json, "openapi")), "3.0.3");
	reply_free(&r);

	check_static(f, "/dygraphs/dygraph.min.js", js, n, "text/javascript; charset=utf-8");
	free(js);

	/* Nothing outside the directory, no directories, no hidden files. */
	static const char *const denied[] = {"/dygraphs/../secret.txt",
	                                     "/dygraphs/%2e%2e/secret.txt",
	                                     "/dygraphs/sub/..%2f..%2fsecret.txt",
	                                     "/dygraphs/sub",
	                                     "/dygraphs/.hidden",
	                                     "/dygraphs/nosuch.js",
	                                     "/dygraphs//etc/passwd"};
	for (size_t i = 0; i < sizeof(denied) / sizeof(denied[0]); i++) {
		fetch(f, denied[i], &r);
		if (r.status != 404)
			fail_msg("%s: status %ld", denied[i], r.status);
		assert_null(strstr(r.body, "secret\""));
		reply_free(&r);
	}
	snprintf(path, sizeof(path), "/dygraphs/dygraph.min.js?v=1");
	fetch(f, path, &r);
	assert_int_equal(r.status, 200);
	reply_free(&r);
}

static void test_json_gzip(void **state)
{
	struct fixture *f = *state;
	struct reply plain, z;
	struct opts gz = {.gzip = 1};
	char enc[32];
	char path[64];

	snprintf(path, sizeof(path), "/api/v1/runs/%lld", (long long)f->run_ids[2]);
	fetch(f, path, &plain);
	fetch_opts(f, path, &gz, &z);
	assert_int_equal(z.status, 200);
	assert_true(plain.len >= 1024);
	assert_string_equal(hdr(&z, "Content-Encoding", enc, sizeof(enc)), "gzip");
	assert_int_equal(z.len, plain.len);
	assert_memory_equal(z.body, plain.body, plain.len);
	reply_free(&plain);
	reply_free(&z);
}

/* A store that fails under the server gives 503 with a JSON error: the
 * server's read-only handle loses its tables to another writer. */
static void test_store_failure(void **state)
{
	struct fixture *f = *state;
	struct http_config cfg = {.address = "127.0.0.1", .listen_fd = -1, .threads = 1};
	struct http_server *srv;
	struct store *st;
	struct fixture other = *f;
	char db[160], err[256], cmd[512];
	struct reply r;

	snprintf(db, sizeof(db), "%s/broken.db", f->dir);
	if (store_open(db, 0, &st, err, sizeof(err)) < 0)
		fail_msg("store_open: %s", err);
	store_close(st);
	if (store_open(db, STORE_READONLY, &st, err, sizeof(err)) < 0)
		fail_msg("store_open read-only: %s", err);
	assert_int_equal(http_start(&cfg, st, NULL, &srv), 0);
	other.port = http_port(srv);
	fetch(&other, "/api/v1/host", &r);
	expect_error(&r, 404, "no host");
	reply_free(&r);
	fetch(&other, "/api/v1/runs", &r);
	assert_int_equal(r.status, 200);
	assert_int_equal(json_array_size(get(r.json, "runs")), 0);
	reply_free(&r);

	snprintf(cmd, sizeof(cmd),
	         "sqlite3 '%s' 'DROP TABLE samples; DROP TABLE points; DROP TABLE series; "
	         "DROP TABLE recommendation_runs; DROP TABLE runs; DROP TABLE state;' 2>&1",
	         db);
	if (system(cmd) != 0) {
		http_stop(srv);
		store_close(st);
		print_message("the sqlite3 shell is not available; 503 not tested\n");
		skip();
	}
	fetch(&other, "/api/v1/runs", &r);
	expect_error(&r, 503, "store");
	reply_free(&r);
	fetch(&other, "/metrics", &r);
	expect_error(&r, 503, "store");
	reply_free(&r);
	fetch(&other, "/healthz", &r);
	expect_error(&r, 503, "store");
	reply_free(&r);
	http_stop(srv);
	store_close(st);
}

/* The textfile-collector file: the same text as /metrics, written whole
 * (no temporary file left behind), and an error for a missing directory. */
static void test_textfile(void **state)
{
	struct fixture *f = *state;
	char path[160], bad[160], cmd[320];
	struct reply r;
	FILE *fp;
	char *text;
	long n;

	snprintf(path, sizeof(path), "%s/prom/threadwatch.prom", f->dir);
	snprintf(bad, sizeof(bad), "%s/nosuch/threadwatch.prom", f->dir);
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s/prom'", f->dir);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(metrics_write_file(f->ro, path), 0);
	assert_int_equal(metrics_write_file(f->ro, path), 0); /* replaces */
	assert_int_equal(metrics_write_file(f->ro, bad), -ENOENT);
	fp = fopen(path, "r");
	assert_non_null(fp);
	fseek(fp, 0, SEEK_END);
	n = ftell(fp);
	rewind(fp);
	text = malloc((size_t)n + 1);
	assert_int_equal(fread(text, 1, (size_t)n, fp), (size_t)n);
	text[n] = '\0';
	fclose(fp);
	/* The file is /metrics without the process_* families, which
	 * node_exporter has of its own. */
	fetch(f, "/metrics", &r);
	assert_non_null(strstr(r.body, "\n# HELP process_"));
	strstr(r.body, "\n# HELP process_")[1] = '\0';
	assert_string_equal(text, r.body);
	assert_null(strstr(text, "process_"));
	reply_free(&r);
	free(text);
	snprintf(cmd, sizeof(cmd), "test \"$(ls -A '%s/prom')\" = threadwatch.prom", f->dir);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_health_and_host),
	    cmocka_unit_test(test_recommendation_status_headroom),
	    cmocka_unit_test(test_runs),
	    cmocka_unit_test(test_run),
	    cmocka_unit_test(test_series_and_catalogue),
	    cmocka_unit_test(test_prometheus),
	    cmocka_unit_test(test_errors),
	    cmocka_unit_test(test_trigger),
	    cmocka_unit_test(test_static),
	    cmocka_unit_test(test_json_gzip),
	    cmocka_unit_test(test_textfile),
	    cmocka_unit_test(test_store_failure),
	};
	int rc;

	curl_global_init(CURL_GLOBAL_DEFAULT);
	rc = cmocka_run_group_tests(tests, setup, teardown);
	curl_global_cleanup();
	return rc;
}
