/*
 * test_http_server: starts the real HTTP server (daemon/http.c) on an ephemeral
 * port over a temporary store filled through the store API, and checks
 * every endpoint with libcurl: status codes, headers, JSON bodies, /metrics,
 * static files with ETag and gzip, the POST trigger, TLS and a socket
 * handed over as by socket activation. Named for what it does: it drives
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

#define TOKEN "s3cret-token-0123456789abcdef"
#define READ_TOKEN "read-token-0123456789abcdef;\\\""
#define READ_TOKEN_Q "read-token-0123456789abcdef%3B%5C%22" /* in a query */
#define T0 1796284316000LL                                  /* 2026-12-03T07:51:56Z */

struct fixture {
	char dir[64];
	char db[128];
	char dyg[128];
	struct store *rw, *ro;
	struct http_server *srv;
	unsigned port;
	int64_t run_ids[4]; /* ctxsw, map32, threads, error */
	int triggers;
};

struct reply {
	long status;
	char *body;
	size_t len;
	char headers[8192];
	json_t *json;
};

/* --- seeding --------------------------------------------------------- */

static json_t *scalar(double v, const char *unit)
{
	return json_pack("{s:f,s:s}", "value", v, "unit", unit);
}

static json_t *doc_new(const char *probe, int64_t started_ms)
{
	return json_pack("{s:s,s:i,s:s,s:n,s:s,s:f,s:f,s:{s:b},s:{},s:{},s:{}}", "probe", probe,
	                 "protocol", 1, "status", "ok", "reason", "started_at",
	                 "2026-12-03T07:51:56.000Z", "started_unix", started_ms / 1000.0,
	                 "duration_s", 2.5, "params", "quick", 1, "scalars", "series", "info");
}

static void add_scalar(json_t *doc, const char *name, double v, const char *unit)
{
	json_object_set_new(json_object_get(doc, "scalars"), name, scalar(v, unit));
}

static void add_series(json_t *doc, const char *name, const char *xu, const char *yu, int n,
                       double y0, double dy)
{
	json_t *pts = json_array();

	for (int i = 0; i < n; i++)
		json_array_append_new(pts, json_pack("[f,f]", (double)(i * 64), y0 + dy * i));
	json_object_set_new(json_object_get(doc, "series"), name,
	                    json_pack("{s:s,s:s,s:o}", "x_unit", xu, "y_unit", yu, "points", pts));
}

static int64_t insert(struct store *st, const char *probe, int64_t cycle, int64_t start,
                      const json_t *doc, const char *status, const char *reason)
{
	struct store_run r = {.probe = probe,
	                      .cycle_id = cycle,
	                      .started_ms = start,
	                      .ended_ms = start + 2500,
	                      .status = status,
	                      .reason = reason,
	                      .doc = doc,
	                      .raw = doc ? NULL : "Segmentation fault",
	                      .loadavg1 = 0.25,
	                      .steal_pct = 0,
	                      .cpu_s = 2.0};
	int64_t id = 0;
	int rc = store_run_insert(st, &r, &id);

	if (rc < 0)
		fail_msg("store_run_insert(%s): %s", probe, store_last_error());
	assert_true(id > 0);
	return id;
}

static void seed(struct fixture *f)
{
	json_t *fp = json_pack(
	    "{s:s,s:s,s:s,s:s,s:s,s:{s:s,s:i,s:i,s:i,s:s,s:s,s:b},s:s,s:i,s:{},"
	    "s:{s:i,s:i,s:i,s:i,s:n,s:i,s:i}}",
	    "hostname", "testhost", "kernel", "6.1.0-21-amd64", "kernel_version", "#1 SMP", "glibc",
	    "2.36", "arch", "x86_64", "cpu", "vendor", "GenuineIntel", "family", 6, "model", 167,
	    "stepping", 1, "microcode", "0x5e", "model_name", "Test CPU", "fsgsbase", 1,
	    "virtualization", "none", "ncpus", 2, "vulnerabilities", "limits", "threads_max", 1000,
	    "pid_max", 4194304, "nproc_soft", 1000, "stack_soft", 8388608, "pids_max",
	    "max_map_count", 65530, "overcommit_memory", 0);
	json_t *ctxsw = doc_new("ctxsw", T0), *map32 = doc_new("map32", T0 + 3000),
	       *threads = doc_new("threads", T0 + 6000);
	json_t *result =
	    json_pack("{s:s,s:s,s:s,s:[s],s:{s:f,s:f,s:n}}", "verdict", "high", "confidence",
	              "strong", "sentence", "Keep high stacks: low ones save nothing here.",
	              "reasons", "Switches cost the same.", "figures", "switch_saving_ns", 2.0,
	              "break_even_switches", 1234.5, "window_stacks");
	json_t *inputs = json_pack("{s:{s:f,s:f,s:f}}", "ctxsw", "low_ns", 760.0, "high_ns", 758.0,
	                           "ratio", 1.003);
	json_t *headroom = json_pack("{s:{s:i,s:i},s:{s:i,s:i},s:{s:i,s:n}}", "threads_max", "used",
	                             950, "limit", 1000, "max_map_count", "used", 1200, "limit",
	                             65530, "pids_max", "used", 950, "limit");
	int64_t cycle = 0;
	int changed = 0;

	add_scalar(ctxsw, "low_ns", 760, "ns");
	add_scalar(ctxsw, "high_ns", 758, "ns");
	add_scalar(ctxsw, "ratio", 1.003, "ratio");
	add_scalar(ctxsw, "ratio_ci_lo", 0.99, "ratio");
	add_scalar(ctxsw, "ratio_ci_hi", 1.02, "ratio");
	add_series(ctxsw, "pair_ratio", "count", "ratio", 5, 1.0, 0.001);
	add_scalar(map32, "window_bytes", 1073741824, "bytes");
	add_scalar(map32, "capacity_stacks", 127, "count");
	add_scalar(map32, "slope", 0.05, "slope");
	add_scalar(map32, "fail_ns_at_max", 1500, "ns");
	add_series(map32, "fail_median_ns", "vmas", "ns", 4, 1000, 100);
	add_scalar(threads, "low_first_rate", 50000, "per_s");
	add_scalar(threads, "low_knee", 4032, "threads");
	add_scalar(threads, "max_threads", 4096, "threads");
	add_series(threads, "low_rate", "threads", "per_s", 8, 50000, -100);

	assert_int_equal(store_fingerprint_record(f->rw, fp, T0 - 60000, &changed), 0);
	assert_int_equal(store_cycle_begin(f->rw, T0 - 1000, "start", 0, &cycle), 0);
	f->run_ids[0] = insert(f->rw, "ctxsw", cycle, T0, ctxsw, "ok", NULL);
	f->run_ids[1] = insert(f->rw, "map32", cycle, T0 + 3000, map32, "ok", NULL);
	f->run_ids[2] = insert(f->rw, "threads", cycle, T0 + 6000, threads, "ok", NULL);
	f->run_ids[3] = insert(f->rw, "crashy", cycle, T0 + 9000, NULL, "error",
	                       "killed by signal 11 (SIGSEGV)");
	assert_int_equal(store_cycle_end(f->rw, cycle, T0 + 12000, "ok"), 0);
	assert_int_equal(
	    store_recommendation_insert(f->rw, T0 + 12000, inputs, result, f->run_ids, 3), 0);
	assert_int_equal(store_headroom_record(f->rw, T0 + 12000, headroom), 0);
	assert_int_equal(store_state_set(f->rw, "next_cycle_ms", "1796305916000"), 0);
	assert_int_equal(store_state_set(f->rw, "cycle_running", "0"), 0);
	assert_int_equal(store_state_set(f->rw, "next_cycle_retry", "0"), 0);
	json_decref(fp);
	json_decref(ctxsw);
	json_decref(map32);
	json_decref(threads);
	json_decref(result);
	json_decref(inputs);
	json_decref(headroom);
}

/* --- the server ------------------------------------------------------ */

static int trigger(void *ctx, int64_t *cycle_id)
{
	struct fixture *f = ctx;

	if (f->triggers++)
		return -EBUSY;
	*cycle_id = 7;
	return 0;
}

static void write_file(const char *path, const char *data, size_t n)
{
	FILE *fp = fopen(path, "w");

	assert_non_null(fp);
	assert_int_equal(fwrite(data, 1, n, fp), n);
	assert_int_equal(fclose(fp), 0);
}

/* A JavaScript file large enough to be compressed. */
static char *fake_js(size_t *n)
{
	char *s = malloc(20000);
	size_t o = 0;

	assert_non_null(s);
	for (int i = 0; o + 64 < 20000; i++)
		o += (size_t)snprintf(s + o, 20000 - o, "var dygraph_%d = %d * 2;\n", i, i);
	*n = o;
	return s;
}

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	struct http_hooks hooks = {.trigger = trigger, .ctx = f};
	struct http_config cfg = {.address = "127.0.0.1",
	                          .listen_fd = -1,
	                          .max_connections = 32,
	                          .per_ip_limit = 16,
	                          .timeout_s = 10,
	                          .memory_limit = 65536,
	                          .threads = 2,
	                          .token = TOKEN};
	char err[256], path[256];
	size_t n;
	char *js;

	assert_non_null(f);
	strcpy(f->dir, "/tmp/tw-test-http.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->db, sizeof(f->db), "%s/tw.db", f->dir);
	snprintf(f->dyg, sizeof(f->dyg), "%s/dygraphs", f->dir);
	assert_int_equal(mkdir(f->dyg, 0755), 0);
	snprintf(path, sizeof(path), "%s/sub", f->dyg);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/dygraph.min.js", f->dyg);
	js = fake_js(&n);
	write_file(path, js, n);
	free(js);
	snprintf(path, sizeof(path), "%s/secret.txt", f->dir);
	write_file(path, "secret", 6);

	if (store_open(f->db, 0, &f->rw, err, sizeof(err)) < 0)
		fail_msg("store_open: %s", err);
	seed(f);
	if (store_open(f->db, STORE_READONLY, &f->ro, err, sizeof(err)) < 0)
		fail_msg("store_open read-only: %s", err);
	cfg.dygraphs_dir = f->dyg;
	assert_int_equal(http_start(&cfg, f->ro, &hooks, &f->srv), 0);
	f->port = http_port(f->srv);
	assert_true(f->port > 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	char cmd[160];

	if (!f)
		return 0;
	http_stop(f->srv);
	store_close(f->ro);
	store_close(f->rw);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
	assert_int_equal(system(cmd), 0);
	free(f);
	return 0;
}

/* --- the client ------------------------------------------------------ */

static size_t on_body(char *p, size_t size, size_t n, void *ud)
{
	struct reply *r = ud;

	r->body = realloc(r->body, r->len + size * n + 1);
	assert_non_null(r->body);
	memcpy(r->body + r->len, p, size * n);
	r->len += size * n;
	r->body[r->len] = '\0';
	return size * n;
}

static size_t on_header(char *p, size_t size, size_t n, void *ud)
{
	struct reply *r = ud;
	size_t used = strlen(r->headers);

	if (used + size * n < sizeof(r->headers))
		memcpy(r->headers + used, p, size * n);
	return size * n;
}

/* The value of a response header (case-insensitive name), or NULL. */
static const char *hdr(const struct reply *r, const char *name, char *buf, size_t len)
{
	const char *p = r->headers;
	size_t n = strlen(name);

	while ((p = strchr(p, '\n'))) {
		p++;
		if (!strncasecmp(p, name, n) && p[n] == ':') {
			size_t vlen = strcspn(p + n + 2, "\r\n");

			snprintf(buf, len, "%.*s", (int)vlen, p + n + 2);
			return buf;
		}
	}
	return NULL;
}

struct opts {
	const char *method;
	const char *body;
	size_t body_len;
	const char *headers[4];
	int gzip;   /* let curl ask for and decode gzip */
	int nobody; /* HEAD */
	const char *scheme;
	const char *cainfo;
	const char *host; /* default 127.0.0.1 */
};

static void fetch_opts(const struct fixture *f, const char *path, const struct opts *o,
                       struct reply *r)
{
	CURL *c = curl_easy_init();
	struct curl_slist *h = NULL;
	char url[2048];
	CURLcode rc;

	memset(r, 0, sizeof(*r));
	snprintf(url, sizeof(url), "%s://%s:%u%s", o->scheme ? o->scheme : "http",
	         o->host ? o->host : "127.0.0.1", f->port, path);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_PATH_AS_IS, 1L);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, r);
	curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(c, CURLOPT_HEADERDATA, r);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, 20L);
	if (o->method)
		curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, o->method);
	if (o->nobody)
		curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
	if (o->body) {
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, o->body);
		curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, (long)o->body_len);
	}
	if (o->gzip)
		curl_easy_setopt(c, CURLOPT_ACCEPT_ENCODING, "gzip");
	if (o->cainfo)
		curl_easy_setopt(c, CURLOPT_CAINFO, o->cainfo);
	h = curl_slist_append(h, "Expect:");
	for (int i = 0; i < 4 && o->headers[i]; i++)
		h = curl_slist_append(h, o->headers[i]);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	rc = curl_easy_perform(c);
	if (rc != CURLE_OK)
		fail_msg("%s %s: %s", o->method ? o->method : "GET", path, curl_easy_strerror(rc));
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r->status);
	curl_slist_free_all(h);
	curl_easy_cleanup(c);
	if (r->body)
		r->json = json_loadb(r->body, r->len, 0, NULL);
}

static void fetch(const struct fixture *f, const char *path, struct reply *r)
{
	struct opts o = {0};

	fetch_opts(f, path, &o, r);
}

static void reply_free(struct reply *r)
{
	free(r->body);
	json_decref(r->json);
	memset(r, 0, sizeof(*r));
}

/* Expects status and, for errors, an RFC 9457 problem whose detail names
 * `needle` (and the 0.1 "error" member saying the same). */
static void expect_error(const struct reply *r, long status, const char *needle)
{
	const json_t *e = json_object_get(r->json, "error");
	const char *msg = json_string_value(json_object_get(e, "message"));
	const char *detail = json_string_value(json_object_get(r->json, "detail"));
	char ct[128];

	if (r->status != status)
		fail_msg("status %ld, expected %ld; body %s", r->status, status,
		         r->body ? r->body : "(none)");
	assert_string_equal(json_string_value(json_object_get(r->json, "type")), "about:blank");
	assert_non_null(json_string_value(json_object_get(r->json, "title")));
	assert_int_equal(json_integer_value(json_object_get(r->json, "status")), status);
	assert_non_null(detail);
	if (needle && !strstr(detail, needle))
		fail_msg("detail \"%s\" lacks \"%s\"", detail, needle);
	assert_non_null(e);
	assert_int_equal(json_integer_value(json_object_get(e, "status")), status);
	assert_string_equal(msg, detail);
	assert_non_null(hdr(r, "Content-Type", ct, sizeof(ct)));
	assert_string_equal(ct, "application/problem+json");
}

static const json_t *get(const json_t *v, const char *path)
{
	char key[64];

	while (v && *path) {
		size_t n = strcspn(path, ".");

		snprintf(key, sizeof(key), "%.*s", (int)n, path);
		v = json_is_array(v) ? json_array_get(v, (size_t)atoi(key))
		                     : json_object_get(v, key);
		path += n + (path[n] == '.');
	}
	return v;
}

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

/* Socket activation: the server uses the socket it is given and leaves it
 * open when it stops. */
static void test_listen_fd(void **state)
{
	struct fixture *f = *state;
	struct http_config cfg = {.listen_fd = -1, .threads = 1};
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof(sa);
	struct http_server *srv;
	struct fixture other = *f;
	struct reply r;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(fd, 16), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &len), 0);
	cfg.listen_fd = fd;
	assert_int_equal(http_start(&cfg, f->ro, NULL, &srv), 0);
	assert_int_equal(http_port(srv), ntohs(sa.sin_port));
	other.port = http_port(srv);
	fetch(&other, "/healthz", &r);
	assert_int_equal(r.status, 200);
	reply_free(&r);
	/* No token: POST is off. */
	struct opts post = {.method = "POST", .headers = {"Authorization: Bearer " TOKEN}};
	fetch_opts(&other, "/api/v1/runs", &post, &r);
	expect_error(&r, 403, "no token");
	reply_free(&r);
	fetch(&other, "/api/v1/status", &r);
	assert_true(json_is_false(get(r.json, "trigger_enabled")));
	reply_free(&r);
	http_stop(srv);
	assert_true(fcntl(fd, F_GETFD) >= 0);
	close(fd);
}

static void test_bind_errors(void **state)
{
	struct fixture *f = *state;
	struct http_config cfg = {.address = "127.0.0.1", .port = f->port, .listen_fd = -1};
	struct http_server *srv = NULL;

	assert_int_equal(http_start(&cfg, f->ro, NULL, &srv), -EADDRINUSE);
	cfg.port = 0;
	cfg.address = "not an address";
	assert_true(http_start(&cfg, f->ro, NULL, &srv) < 0);
	cfg.address = "127.0.0.1";
	cfg.tls_cert = "/nonexistent/cert.pem";
	cfg.tls_key = "/nonexistent/key.pem";
	assert_int_equal(http_start(&cfg, f->ro, NULL, &srv), -ENOENT);
	cfg.tls_key = NULL;
	assert_int_equal(http_start(&cfg, f->ro, NULL, &srv), -EINVAL);
	http_stop(NULL);
}

/* An IPv6 listen address, where the host has IPv6. */
static void test_ipv6(void **state)
{
	struct fixture *f = *state;
	struct http_config cfg = {.address = "::1", .listen_fd = -1, .threads = 1};
	struct opts v6 = {.host = "[::1]"};
	struct http_server *srv;
	struct fixture other = *f;
	struct reply r;
	int rc = http_start(&cfg, f->ro, NULL, &srv);

	if (rc == -EADDRNOTAVAIL || rc == -EAFNOSUPPORT) {
		print_message("no IPv6 loopback here; not tested\n");
		skip();
	}
	assert_int_equal(rc, 0);
	other.port = http_port(srv);
	fetch_opts(&other, "/healthz", &v6, &r);
	assert_int_equal(r.status, 200);
	reply_free(&r);
	http_stop(srv);
}

static void test_tls(void **state)
{
	struct fixture *f = *state;
	struct http_config cfg = {.address = "127.0.0.1", .listen_fd = -1, .threads = 1};
	struct http_server *srv;
	struct fixture other = *f;
	char cert[160], key[160], cmd[768];
	struct reply r;

	snprintf(cert, sizeof(cert), "%s/cert.pem", f->dir);
	snprintf(key, sizeof(key), "%s/key.pem", f->dir);
	snprintf(cmd, sizeof(cmd),
	         "openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=127.0.0.1 "
	         "-addext subjectAltName=IP:127.0.0.1 -keyout '%s' -out '%s' >/dev/null 2>&1",
	         key, cert);
	if (system(cmd) != 0) {
		print_message("openssl is not available; TLS not tested\n");
		skip();
	}
	cfg.tls_cert = cert;
	cfg.tls_key = key;
	assert_int_equal(http_start(&cfg, f->ro, NULL, &srv), 0);
	other.port = http_port(srv);
	struct opts tls = {.scheme = "https", .cainfo = cert};
	fetch_opts(&other, "/api/v1/host", &tls, &r);
	assert_int_equal(r.status, 200);
	assert_string_equal(json_string_value(get(r.json, "current.fingerprint.hostname")),
	                    "testhost");
	reply_free(&r);
	/* The certificate's notAfter: about two days from now. */
	fetch_opts(&other, "/metrics", &tls, &r);
	assert_int_equal(r.status, 200);
	const char *m = strstr(r.body, "\nthreadwatch_tls_cert_expiry_timestamp_seconds ");
	assert_non_null(m);
	double expiry =
	    strtod(m + strlen("\nthreadwatch_tls_cert_expiry_timestamp_seconds "), NULL);
	assert_true(fabs(expiry - ((double)time(NULL) + 2 * 86400)) < 3600);
	reply_free(&r);
	http_stop(srv);
}

/* read_token: every route but /healthz needs the token, as a bearer or as
 * the cookie that GET /?token= sets; a wrong one is 401 problem+json. */
static void test_read_token(void **state)
{
	struct fixture *f = *state;
	struct http_config cfg = {.address = "127.0.0.1",
	                          .listen_fd = -1,
	                          .threads = 1,
	                          .token = TOKEN,
	                          .read_token = READ_TOKEN};
	static const char *const closed[] = {"/api/v1/host", "/api/v1/runs",        "/metrics", "/",
	                                     "/app.js",      "/api/v1/openapi.json"};
	struct opts bearer = {.headers = {"Authorization: Bearer " READ_TOKEN}},
	            wrong = {.headers = {"Authorization: Bearer " READ_TOKEN "x"}},
	            post = {.method = "POST", .headers = {"Authorization: Bearer " TOKEN}};
	struct http_server *srv;
	struct fixture other = *f;
	char cookie[256], buf[256];
	struct reply r;

	assert_int_equal(http_start(&cfg, f->ro, NULL, &srv), 0);
	other.port = http_port(srv);
	fetch(&other, "/healthz", &r);
	assert_int_equal(r.status, 200);
	reply_free(&r);
	for (size_t i = 0; i < sizeof(closed) / sizeof(closed[0]); i++) {
		fetch(&other, closed[i], &r);
		expect_error(&r, 401, "Authorization");
		assert_non_null(hdr(&r, "WWW-Authenticate", buf, sizeof(buf)));
		reply_free(&r);
		fetch_opts(&other, closed[i], &wrong, &r);
		expect_error(&r, 401, "wrong token");
		reply_free(&r);
		fetch_opts(&other, closed[i], &bearer, &r);
		assert_int_equal(r.status, 200);
		reply_free(&r);
	}
	/* POST keeps its own token. */
	fetch_opts(&other, "/api/v1/runs", &post, &r);
	assert_int_not_equal(r.status, 401);
	reply_free(&r);
	/* The dashboard's way in: a cookie for the browser, then a redirect. */
	fetch(&other, "/?token=" READ_TOKEN_Q "x", &r);
	expect_error(&r, 401, "wrong token");
	reply_free(&r);
	fetch(&other, "/?token=" READ_TOKEN_Q, &r);
	assert_int_equal(r.status, 303);
	assert_string_equal(hdr(&r, "Location", buf, sizeof(buf)), "/");
	assert_non_null(hdr(&r, "Set-Cookie", buf, sizeof(buf)));
	assert_non_null(strstr(buf, "HttpOnly"));
	assert_non_null(strstr(buf, "SameSite=Strict"));
	assert_null(strstr(buf, READ_TOKEN));
	snprintf(cookie, sizeof(cookie), "Cookie: %.*s", (int)strcspn(buf, ";"), buf);
	reply_free(&r);
	struct opts with_cookie = {.headers = {cookie}};
	fetch_opts(&other, "/api/v1/status", &with_cookie, &r);
	assert_int_equal(r.status, 200);
	reply_free(&r);
	struct opts bad_cookie = {.headers = {"Cookie: tw_read=00ff"}};
	fetch_opts(&other, "/api/v1/status", &bad_cookie, &r);
	expect_error(&r, 401, "wrong token");
	reply_free(&r);
	http_stop(srv);
}

static int trigger_always(void *ctx, int64_t *cycle_id)
{
	(void)ctx;
	*cycle_id = 9;
	return 0;
}

/* trigger_min_interval: a second cycle started sooner is 429 with a
 * Retry-After of the seconds left. */
static void test_trigger_spacing(void **state)
{
	struct fixture *f = *state;
	struct http_hooks hooks = {.trigger = trigger_always};
	struct http_config cfg = {.address = "127.0.0.1",
	                          .listen_fd = -1,
	                          .threads = 2,
	                          .token = TOKEN,
	                          .trigger_min_interval_s = 3600};
	struct opts right = {.method = "POST", .headers = {"Authorization: Bearer " TOKEN}};
	struct http_server *srv;
	struct fixture other = *f;
	struct reply r;
	char buf[64];

	assert_int_equal(http_start(&cfg, f->ro, &hooks, &srv), 0);
	other.port = http_port(srv);
	fetch_opts(&other, "/api/v1/runs", &right, &r);
	assert_int_equal(r.status, 202);
	reply_free(&r);
	fetch_opts(&other, "/api/v1/runs", &right, &r);
	expect_error(&r, 429, "trigger_min_interval");
	assert_non_null(hdr(&r, "Retry-After", buf, sizeof(buf)));
	assert_true(atoi(buf) > 3500 && atoi(buf) <= 3600);
	reply_free(&r);
	http_stop(srv);
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
	    cmocka_unit_test(test_listen_fd),
	    cmocka_unit_test(test_bind_errors),
	    cmocka_unit_test(test_ipv6),
	    cmocka_unit_test(test_tls),
	    cmocka_unit_test(test_read_token),
	    cmocka_unit_test(test_trigger_spacing),
	    cmocka_unit_test(test_textfile),
	    cmocka_unit_test(test_store_failure),
	};
	int rc;

	curl_global_init(CURL_GLOBAL_DEFAULT);
	rc = cmocka_run_group_tests(tests, setup, teardown);
	curl_global_cleanup();
	return rc;
}
