/*
 * http_fixture: what the HTTP server's unit tests share: a temporary
 * store seeded through the store API, the real server (daemon/http.c) on
 * an ephemeral loopback port, and a libcurl client with its checks.
 */
#ifndef TW_HTTP_FIXTURE_H
#define TW_HTTP_FIXTURE_H

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

static inline json_t *scalar(double v, const char *unit)
{
	return json_pack("{s:f,s:s}", "value", v, "unit", unit);
}

static inline json_t *doc_new(const char *probe, int64_t started_ms)
{
	return json_pack("{s:s,s:i,s:s,s:n,s:s,s:f,s:f,s:{s:b},s:{},s:{},s:{}}", "probe", probe,
	                 "protocol", 1, "status", "ok", "reason", "started_at",
	                 "2026-12-03T07:51:56.000Z", "started_unix", started_ms / 1000.0,
	                 "duration_s", 2.5, "params", "quick", 1, "scalars", "series", "info");
}

static inline void add_scalar(json_t *doc, const char *name, double v, const char *unit)
{
	json_object_set_new(json_object_get(doc, "scalars"), name, scalar(v, unit));
}

static inline void add_series(json_t *doc, const char *name, const char *xu, const char *yu, int n,
                              double y0, double dy)
{
	json_t *pts = json_array();

	for (int i = 0; i < n; i++)
		json_array_append_new(pts, json_pack("[f,f]", (double)(i * 64), y0 + dy * i));
	json_object_set_new(json_object_get(doc, "series"), name,
	                    json_pack("{s:s,s:s,s:o}", "x_unit", xu, "y_unit", yu, "points", pts));
}

static inline int64_t insert(struct store *st, const char *probe, int64_t cycle, int64_t start,
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

static inline void seed(struct fixture *f)
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

static inline int trigger(void *ctx, int64_t *cycle_id)
{
	struct fixture *f = ctx;

	if (f->triggers++)
		return -EBUSY;
	*cycle_id = 7;
	return 0;
}

static inline void write_file(const char *path, const char *data, size_t n)
{
	FILE *fp = fopen(path, "w");

	assert_non_null(fp);
	assert_int_equal(fwrite(data, 1, n, fp), n);
	assert_int_equal(fclose(fp), 0);
}

/* A JavaScript file large enough to be compressed. */
static inline char *fake_js(size_t *n)
{
	char *s = malloc(20000);
	size_t o = 0;

	assert_non_null(s);
	for (int i = 0; o + 64 < 20000; i++)
		o += (size_t)snprintf(s + o, 20000 - o, "var dygraph_%d = %d * 2;\n", i, i);
	*n = o;
	return s;
}

static inline int setup(void **state)
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

static inline int teardown(void **state)
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

static inline size_t on_body(char *p, size_t size, size_t n, void *ud)
{
	struct reply *r = ud;

	r->body = realloc(r->body, r->len + size * n + 1);
	assert_non_null(r->body);
	memcpy(r->body + r->len, p, size * n);
	r->len += size * n;
	r->body[r->len] = '\0';
	return size * n;
}

static inline size_t on_header(char *p, size_t size, size_t n, void *ud)
{
	struct reply *r = ud;
	size_t used = strlen(r->headers);

	if (used + size * n < sizeof(r->headers))
		memcpy(r->headers + used, p, size * n);
	return size * n;
}

/* The value of a response header (case-insensitive name), or NULL. */
static inline const char *hdr(const struct reply *r, const char *name, char *buf, size_t len)
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

static inline void fetch_opts(const struct fixture *f, const char *path, const struct opts *o,
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

static inline void fetch(const struct fixture *f, const char *path, struct reply *r)
{
	struct opts o = {0};

	fetch_opts(f, path, &o, r);
}

static inline void reply_free(struct reply *r)
{
	free(r->body);
	json_decref(r->json);
	memset(r, 0, sizeof(*r));
}

/* Expects status and, for errors, an RFC 9457 problem whose detail names
 * `needle` (and the 0.1 "error" member saying the same). */
static inline void expect_error(const struct reply *r, long status, const char *needle)
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

static inline const json_t *get(const json_t *v, const char *path)
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

#endif
