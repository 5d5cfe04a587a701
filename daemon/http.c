/*
 * http: the daemon's HTTP server over libmicrohttpd (see http.h). One
 * route table maps (method, path pattern) to a handler; everything a
 * handler needs from the request is parsed by api_parse_target(), and
 * every error goes out as {"error": {"status": N, "message": "..."}}.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <netdb.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>

#include "file_read.h"
#include "clock.h"
#include "api.h"
#include "http_asset.h"
#include "http_asset_cache.h"
#include "gzip.h"
#include "health.h"
#include "builtin.h"
#include "http_conns.h"
#include "errbuf.h"
#include "http.h"
#include "httpp.h"
#include "http_auth.h"
#include "http_host.h"
#include "tls.h"
#include "tls_creds.h"
#include "http_respcache.h"
#include "log.h"
#include "metrics.h"
#include "xmalloc.h"

const char *http_header(struct ctx *c, const char *name)
{
	return MHD_lookup_connection_value(c->conn, MHD_HEADER_KIND, name);
}

/* Adds the headers every response carries and queues it. */
static enum MHD_Result queue(struct ctx *c, unsigned status, struct MHD_Response *r)
{
	enum MHD_Result rc;

	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
	MHD_add_response_header(r, "X-Frame-Options", "DENY");
	MHD_add_response_header(r, "Referrer-Policy", "no-referrer");
	if (c->srv->tls)
		MHD_add_response_header(r, "Strict-Transport-Security", TLS_HSTS);
	/* The dashboard loads its own scripts and styles and asks only its
	 * own API: nothing inline, nothing from elsewhere. */
	MHD_add_response_header(
	    r, "Content-Security-Policy",
	    "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
	    "object-src 'none'; "
	    "base-uri 'none'; form-action 'self'; frame-ancestors 'none'");
	rc = MHD_queue_response(c->conn, status, r);
	MHD_destroy_response(r);
	return rc;
}

/* An extra response header, or {NULL, NULL}. */

/* Sends a malloc'd body (taken over), gzip-compressed when the client
 * accepts it and it is worth it. */
static enum MHD_Result send_body(struct ctx *c, unsigned status, const char *mime, char *body,
                                 size_t len, const char *cache, struct hdr extra)
{
	struct MHD_Response *r;
	unsigned char *gz = NULL;
	size_t gz_len = 0;

	if (len >= HTTP_ASSET_GZIP_MIN &&
	    http_asset_accepts_gzip(http_header(c, "Accept-Encoding")) &&
	    gzip_compress((const unsigned char *)body, len, 6, &gz, &gz_len) == 0 && gz_len < len) {
		free(body);
		r = MHD_create_response_from_buffer(gz_len, gz, MHD_RESPMEM_MUST_FREE);
		if (r)
			MHD_add_response_header(r, "Content-Encoding", "gzip");
	} else {
		free(gz);
		r = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
	}
	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, "Content-Type", mime);
	MHD_add_response_header(r, "Cache-Control", cache);
	MHD_add_response_header(r, "Vary", "Accept-Encoding");
	if (extra.name)
		MHD_add_response_header(r, extra.name, extra.value);
	return queue(c, status, r);
}

/* A JSON value as response text (reference taken over); NULL on failure. */
static char *http_json_text(json_t *v)
{
	/* 15 digits: measurements read as 1.003, not 1.0029999999999999. */
	char *text = json_dumps(v, JSON_COMPACT | JSON_ENSURE_ASCII | JSON_REAL_PRECISION(15));

	json_decref(v);
	return text;
}

/* Sends a JSON value (reference taken over) as `mime`. */
static enum MHD_Result send_json_as(struct ctx *c, unsigned status, const char *mime, json_t *v,
                                    struct hdr extra)
{
	char *text = http_json_text(v);

	if (!text)
		return MHD_NO;
	return send_body(c, status, mime, text, strlen(text), "no-store", extra);
}

static enum MHD_Result send_json_hdr(struct ctx *c, unsigned status, json_t *v, struct hdr extra)
{
	return send_json_as(c, status, "application/json", v, extra);
}

static enum MHD_Result send_json(struct ctx *c, unsigned status, json_t *v)
{
	return send_json_hdr(c, status, v, (struct hdr){NULL, NULL});
}

static enum MHD_Result send_api_error_hdr(struct ctx *c, const struct api_error *err,
                                          struct hdr extra)
{
	if (err->status >= 500 && !err->retry_after_s) {
		char method[32], path[160], msg[sizeof(err->message)];

		api_printable(method, sizeof(method), c->method);
		api_printable(path, sizeof(path), c->target.path ? c->target.path : "");
		api_printable(msg, sizeof(msg), err->message);
		log_warning("HTTP %s \"%s\": %u %s%s%s%s", method, path, err->status, msg,
		            err->detail[0] ? " (" : "", err->detail, err->detail[0] ? ")" : "");
	}
	return send_json_as(c, err->status, "application/problem+json", api_error_body(err), extra);
}

static enum MHD_Result send_api_error(struct ctx *c, const struct api_error *err)
{
	return send_api_error_hdr(c, err, (struct hdr){NULL, NULL});
}

enum MHD_Result http_send_error_hdr(struct ctx *c, unsigned status, struct hdr extra,
                                    const char *fmt, ...)
{
	struct api_error err = {.status = status};
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err.message, sizeof(err.message), fmt, ap);
	va_end(ap);
	return send_api_error_hdr(c, &err, extra);
}

/* A static file: 304 when the client has it, gzip when it accepts it. */
static enum MHD_Result send_asset(struct ctx *c, const struct http_asset *a, const char *cache,
                                  int copy)
{
	int gz = a->gz && http_asset_accepts_gzip(http_header(c, "Accept-Encoding"));
	const char *etag = gz ? a->gz_etag : a->etag;
	const void *data = gz ? a->gz : a->data;
	size_t size = gz ? a->gz_size : a->size;
	unsigned status = MHD_HTTP_OK;
	struct MHD_Response *r;

	if (http_asset_etag_matches(http_header(c, "If-None-Match"), etag)) {
		status = MHD_HTTP_NOT_MODIFIED;
		r = MHD_create_response_from_buffer(0, NULL, MHD_RESPMEM_PERSISTENT);
	} else {
		r = MHD_create_response_from_buffer(size, (void *)(uintptr_t)data,
		                                    copy ? MHD_RESPMEM_MUST_COPY
		                                         : MHD_RESPMEM_PERSISTENT);
		if (r && gz)
			MHD_add_response_header(r, "Content-Encoding", "gzip");
		if (r)
			MHD_add_response_header(r, "Content-Type", a->mime);
	}
	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, "ETag", etag);
	MHD_add_response_header(r, "Cache-Control", cache);
	if (a->gz)
		MHD_add_response_header(r, "Vary", "Accept-Encoding");
	return queue(c, status, r);
}

/* --- handlers -------------------------------------------------------- */

/* Whether this request may use the response cache, and at which data
 * version. The version is read before the answer is built, so an answer
 * built while data changed is filed under the older version. */
static int cache_usable(struct ctx *c, int64_t *version)
{
	if (c->route->cache == CACHE_NO || !c->srv->cache || !c->uri)
		return 0;
	if (c->route->cache == CACHE_UNTIL && !api_param_get(&c->target, "until"))
		return 0;
	if (store_data_version(c->srv->api.st, version) < 0)
		return 0;
	/* /metrics also shows the status in memory (daemon/health.c). */
	*version = (int64_t)((uint64_t)*version << 24 ^ (health_version() & 0xffffff));
	return 1;
}

/* 200 with Cache-Control: no-store: an answer from the response cache or
 * just made, which the client must not keep (the data change). */
static enum MHD_Result send_ok_no_store(struct ctx *c, const char *mime, char *text, size_t len)
{
	return send_body(c, MHD_HTTP_OK, mime, text, len, "no-store", (struct hdr){NULL, NULL});
}

static enum MHD_Result h_api(struct ctx *c)
{
	struct api_error err = {0};
	json_t *body = NULL;
	int64_t version = 0;
	int cached = cache_usable(c, &version);
	unsigned status;
	char *text;
	size_t len;

	if (cached && http_respcache_get(c->srv->cache, c->uri, version, &text, &len) == 0)
		return send_ok_no_store(c, "application/json", text, len);
	status = c->route->api(&c->srv->api, &c->target, c->cap, &body, &err);
	if (status != MHD_HTTP_OK && err.retry_after_s) {
		char retry[16];

		json_decref(body);
		snprintf(retry, sizeof(retry), "%u", err.retry_after_s);
		return send_api_error_hdr(c, &err, (struct hdr){"Retry-After", retry});
	}
	if (status != MHD_HTTP_OK) {
		json_decref(body);
		return send_api_error(c, &err);
	}
	text = http_json_text(body);
	if (!text)
		return MHD_NO;
	len = strlen(text);
	if (cached)
		http_respcache_put(c->srv->cache, c->uri, version, text, len);
	return send_ok_no_store(c, "application/json", text, len);
}

/* 503 for a failed store call; its own message goes to the log only. */
static enum MHD_Result send_store_error(struct ctx *c, int rc)
{
	struct api_error err = {.status = MHD_HTTP_SERVICE_UNAVAILABLE};

	snprintf(err.message, sizeof(err.message), "store unavailable: %s", strerror(-rc));
	snprintf(err.detail, sizeof(err.detail), "%s", store_last_error());
	return send_api_error(c, &err);
}

/* About the daemon itself: 200 while it serves and its store works,
 * whatever the probes did; 503 when the store cannot be written or is
 * corrupt. The cycle's state comes from memory (daemon/health.c), so a
 * store that stopped taking writes cannot freeze it. */
static enum MHD_Result h_healthz(struct ctx *c)
{
	struct health_cycle h;
	char *running = NULL, *last = NULL, why[256];
	int store_err = health_store_error(why, sizeof(why)), rc = 0;
	json_t *body;

	if (health_get_cycle(&h) == 0) {
		running = xstrdup(h.running ? "1" : "0");
		last = xstrdup(cycle_status_name(h.last_status));
	} else {
		/* Before the scheduler published: what the store kept. */
		rc = store_state_get(c->srv->api.st, "cycle_running", &running);
		if (rc >= 0 || rc == -ENOENT) {
			int r2 = store_state_get(c->srv->api.st, "last_cycle_status", &last);

			rc = r2 == -ENOENT ? 0 : r2;
		}
	}
	if (rc < 0 || store_err < 0) {
		struct api_error err = {.status = MHD_HTTP_SERVICE_UNAVAILABLE};

		free(running);
		free(last);
		if (rc < 0)
			return send_store_error(c, rc);
		/* The store's own message (GET /api/v1/status, store_error) may
		 * name files: /healthz answers anyone, in words. */
		snprintf(err.message, sizeof(err.message), "the store cannot be used: %s",
		         health_failure_words(store_err));
		snprintf(err.detail, sizeof(err.detail), "%s", why);
		return send_api_error(c, &err);
	}
	body = json_pack("{s:s,s:b,s:s?}", "status", "ok", "cycle_running",
	                 running && strcmp(running, "0"), "last_cycle_status",
	                 last && last[0] ? last : NULL);
	free(running);
	free(last);
	return send_json(c, MHD_HTTP_OK, body);
}

/* Whether the request carries "Authorization: Bearer SECRET". */
static int bearer_ok(struct ctx *c, const char *secret)
{
	return http_auth_bearer(http_header(c, "Authorization"), secret);
}

static const char *cookie(struct ctx *c)
{
	return MHD_lookup_connection_value(c->conn, MHD_COOKIE_KIND, HTTP_AUTH_COOKIE);
}

static enum MHD_Result send_unauthorized(struct ctx *c)
{
	int given =
	    http_header(c, "Authorization") || cookie(c) || api_param_get(&c->target, "token");

	return http_send_error_hdr(c, MHD_HTTP_UNAUTHORIZED,
	                           (struct hdr){"WWW-Authenticate", "Bearer realm=\"threadwatch\""},
	                           "%s",
	                           given ? "wrong token" : "missing 'Authorization: Bearer TOKEN'");
}

/* Whether the request may use route r. */
static int authorized(struct ctx *c, const struct route *r)
{
	const struct http_server *s = c->srv;
	const char *ck = cookie(c);

	if (r->auth == AUTH_OPEN || r->auth == AUTH_SELF)
		return 1;
	if (r->auth == AUTH_METRICS && s->metrics_token)
		return bearer_ok(c, s->metrics_token);
	return !s->read_token || bearer_ok(c, s->read_token) ||
	       http_auth_cookie_ok(ck, s->read_token, (int64_t)time(NULL));
}

/* GET /?token=READ_TOKEN: the cookie for the dashboard, and back to / so
 * that the token leaves the address bar. */
static enum MHD_Result send_login(struct ctx *c, const char *token)
{
	struct MHD_Response *r;
	char *set;

	char *value;

	if (!http_auth_equal(token, c->srv->read_token))
		return send_unauthorized(c);
	value = http_auth_cookie(c->srv->read_token, (int64_t)time(NULL) + HTTP_AUTH_COOKIE_S);
	if (!value)
		return send_error(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "cannot make the read cookie");
	r = MHD_create_response_from_buffer(0, NULL, MHD_RESPMEM_PERSISTENT);
	if (!r) {
		free(value);
		return MHD_NO;
	}
	xasprintf(&set, "%s=%s; Path=/; Max-Age=%d; HttpOnly; SameSite=Strict%s", HTTP_AUTH_COOKIE,
	          value, HTTP_AUTH_COOKIE_S, c->srv->tls ? "; Secure" : "");
	MHD_add_response_header(r, "Set-Cookie", set);
	MHD_add_response_header(r, "Location", "/");
	MHD_add_response_header(r, "Cache-Control", "no-store");
	free(value);
	free(set);
	return queue(c, MHD_HTTP_SEE_OTHER, r);
}

/* Runs route r's handler when the request may use it. */
static enum MHD_Result guarded(struct ctx *c, const struct route *r)
{
	const char *token = api_param_get(&c->target, "token");

	if (r->auth == AUTH_PAGE && c->srv->read_token && token)
		return send_login(c, token);
	if (!authorized(c, r))
		return send_unauthorized(c);
	return r->handle(c);
}

static enum MHD_Result h_metrics(struct ctx *c)
{
	static const char mime[] = "text/plain; version=0.0.4; charset=utf-8";
	int64_t version = 0;
	int cached = cache_usable(c, &version), rc;
	char *text, *key;
	json_t *extra;
	size_t len;
	enum MHD_Result ret;

	/* A reloaded certificate changes the answer but not the store: the
	 * cache key carries extra's generation. */
	pthread_mutex_lock(&c->srv->extra_lock);
	extra = json_incref(c->srv->extra);
	xasprintf(&key, "%u %s", c->srv->extra_gen, c->uri ? c->uri : "");
	pthread_mutex_unlock(&c->srv->extra_lock);
	if (cached && http_respcache_get(c->srv->cache, key, version, &text, &len) == 0) {
		ret = send_ok_no_store(c, mime, text, len);
		goto out;
	}
	rc = metrics_render(c->srv->api.st, extra, &text, &len);
	if (rc < 0) {
		ret = send_store_error(c, rc);
		goto out;
	}
	if (cached)
		http_respcache_put(c->srv->cache, key, version, text, len);
	ret = send_ok_no_store(c, mime, text, len);
out:
	json_decref(extra);
	free(key);
	return ret;
}

/* Whole seconds until another cycle may be started over HTTP; 0: now. */
static unsigned trigger_wait(const struct http_server *srv, double now)
{
	double left;

	if (srv->trigger_last < 0 || srv->trigger_min_s <= 0)
		return 0;
	left = srv->trigger_last + srv->trigger_min_s - now;
	return left > 0 ? (unsigned)ceil(left) : 0;
}

static enum MHD_Result send_too_soon(struct ctx *c, unsigned wait_s)
{
	char retry[16];

	snprintf(retry, sizeof(retry), "%u", wait_s);
	return http_send_error_hdr(c, MHD_HTTP_TOO_MANY_REQUESTS,
	                           (struct hdr){"Retry-After", retry},
	                           "the last cycle started over HTTP was less than "
	                           "trigger_min_interval (%g s) ago; retry in %u s",
	                           c->srv->trigger_min_s, wait_s);
}

/* Starts a cycle unless one started over HTTP too recently. */
static int trigger_spaced(struct http_server *srv, int64_t *cycle_id, unsigned *wait_s)
{
	double now = clock_mono_s();
	int rc;

	pthread_mutex_lock(&srv->trigger_lock);
	*wait_s = trigger_wait(srv, now);
	rc = *wait_s ? -EAGAIN : srv->hooks.trigger(srv->hooks.ctx, cycle_id);
	if (rc == 0)
		srv->trigger_last = now;
	pthread_mutex_unlock(&srv->trigger_lock);
	return rc;
}

static enum MHD_Result h_trigger(struct ctx *c)
{
	int64_t cycle_id = 0;
	unsigned wait_s = 0;
	int rc;

	if (!c->srv->token)
		return send_error(c, MHD_HTTP_FORBIDDEN,
		                  "starting a cycle over HTTP is off: no token is configured "
		                  "(set token or token_file in threadwatchd.conf, or --token)");
	if (!bearer_ok(c, c->srv->token))
		return send_unauthorized(c);
	if (!c->srv->hooks.trigger)
		return send_error(c, MHD_HTTP_SERVICE_UNAVAILABLE, "no scheduler is attached");
	rc = trigger_spaced(c->srv, &cycle_id, &wait_s);
	if (rc == -EAGAIN)
		return send_too_soon(c, wait_s);
	if (rc == -EBUSY)
		return send_error(c, MHD_HTTP_CONFLICT, "a cycle is already running");
	if (rc < 0)
		return http_send_error_hdr(
		    c, MHD_HTTP_SERVICE_UNAVAILABLE, (struct hdr){"Retry-After", "5"},
		    "the scheduler did not start a cycle: %s", strerror(-rc));
	return send_json(c, MHD_HTTP_ACCEPTED,
	                 json_pack("{s:I,s:s,s:s}", "cycle_id", (json_int_t)cycle_id, "status",
	                           "started", "status_url", "/api/v1/status"));
}

/* The embedded web/ file with this name, or NULL. */
static const struct http_asset *web_asset(const struct http_server *srv, const char *name)
{
	const struct builtin_file *f = builtin_find(name);

	return f ? srv->web[f - builtin_files] : NULL;
}

static int web_exists(const struct http_server *srv, const char *cap)
{
	char name[API_MAX_CAPTURE + 8];

	snprintf(name, sizeof(name), "web/%s", cap);
	return web_asset(srv, name) != NULL;
}

/* Embedded files are not versioned by name: revalidate every time. */
static enum MHD_Result send_web(struct ctx *c, const char *name)
{
	const struct http_asset *a = web_asset(c->srv, name);

	if (!a)
		return send_error(c, MHD_HTTP_NOT_FOUND, "\"%s\" is not in this build", name);
	return send_asset(c, a, "no-cache", 0);
}

static enum MHD_Result h_file(struct ctx *c)
{
	return send_web(c, c->route->file);
}

static enum MHD_Result h_web(struct ctx *c)
{
	char name[API_MAX_CAPTURE + 8];

	snprintf(name, sizeof(name), "web/%s", c->cap);
	return send_web(c, name);
}

struct dygraphs_send {
	struct ctx *c;
	enum MHD_Result ret;
};

/* Sends a cached asset; send_asset() copies it, so the cache's lock may
 * go once it returns. */
static int send_cached_asset(const struct http_asset *a, void *ctx)
{
	struct dygraphs_send *d = ctx;

	d->ret = send_asset(d->c, a, "public, max-age=86400", 1);
	return 0;
}

/* The chart library's files, read and compressed once (asset_cache). */
static enum MHD_Result h_dygraphs(struct ctx *c)
{
	struct dygraphs_send d = {c, MHD_NO};
	int rc;

	if (!c->srv->dygraphs)
		return send_error(c, MHD_HTTP_NOT_FOUND, "no dygraphs directory is configured");
	rc = http_asset_cache_with(c->srv->dygraphs, c->cap, send_cached_asset, &d);
	if (rc == -ENOENT || rc == -EACCES)
		return send_error(c, MHD_HTTP_NOT_FOUND, "no file \"%s\" under /dygraphs", c->cap);
	if (rc == -EFBIG)
		return send_error(c, MHD_HTTP_FORBIDDEN, "\"%s\" is too large to serve", c->cap);
	if (rc < 0)
		return send_error(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "cannot read \"%s\": %s",
		                  c->cap, strerror(-rc));
	return d.ret;
}

/* Specific paths first. The catch-all for web files only matches files
 * that exist, so that any other path is a 404 rather than a 405. GET
 * routes answer HEAD too. */
static const struct route routes[] = {
    {"GET", "/api/v1/host", h_api, api_host, NULL, NULL, CACHE_DATA, AUTH_READ},
    {"GET", "/api/v1/recommendation", h_api, api_recommendation, NULL, NULL, CACHE_DATA, AUTH_READ},
    {"GET", "/api/v1/runs", h_api, api_runs, NULL, NULL, CACHE_DATA, AUTH_READ},
    {"POST", "/api/v1/runs", h_trigger, NULL, NULL, NULL, CACHE_NO, AUTH_SELF},
    {"GET", "/api/v1/runs/{id}", h_api, api_run, NULL, NULL, CACHE_DATA, AUTH_READ},
    {"GET", "/api/v1/series", h_api, api_series, NULL, NULL, CACHE_UNTIL, AUTH_READ},
    {"GET", "/api/v1/metrics", h_api, api_metrics, NULL, NULL, CACHE_DATA, AUTH_READ},
    {"GET", "/api/v1/catalog", h_api, api_catalog, NULL, NULL, CACHE_NO, AUTH_READ},
    {"GET", "/api/v1/headroom", h_api, api_headroom, NULL, NULL, CACHE_DATA, AUTH_READ},
    {"GET", "/api/v1/status", h_api, api_status, NULL, NULL, CACHE_NO, AUTH_READ},
    {"GET", "/api/v1/events", h_api, api_events, NULL, NULL, CACHE_DATA, AUTH_READ},
    {"GET", "/api/v1/workloads", h_api, api_workloads, NULL, NULL, CACHE_DATA, AUTH_READ},
    {"GET", "/api/v1/workloads/{ref}/series", h_api, api_workload_series, NULL, NULL, CACHE_UNTIL,
     AUTH_READ},
    {"GET", "/api/v1/openapi.json", h_file, NULL, "web/openapi.json", NULL, CACHE_NO, AUTH_READ},
    {"GET", "/metrics", h_metrics, NULL, NULL, NULL, CACHE_DATA, AUTH_METRICS},
    {"GET", "/healthz", h_healthz, NULL, NULL, NULL, CACHE_NO, AUTH_OPEN},
    {"GET", "/dygraphs/*", h_dygraphs, NULL, NULL, NULL, CACHE_NO, AUTH_READ},
    {"GET", "/", h_file, NULL, "web/index.html", NULL, CACHE_NO, AUTH_PAGE},
    {"GET", "/*", h_web, NULL, NULL, web_exists, CACHE_NO, AUTH_READ},
};

static int method_is(const struct route *r, const char *method)
{
	return !strcmp(r->method, method) || (!strcmp(method, "HEAD") && !strcmp(r->method, "GET"));
}

/* Appends a method to an Allow list once. */
static void allow_add(char *allow, size_t size, const char *method)
{
	size_t n = strlen(allow), m = strlen(method);
	const char *p = allow;

	while ((p = strstr(p, method))) {
		if ((p == allow || p[-1] == ' ') && (p[m] == ',' || p[m] == '\0'))
			return;
		p += m;
	}
	snprintf(allow + n, size - n, "%s%s", n ? ", " : "", method);
}

static enum MHD_Result dispatch(struct ctx *c)
{
	char allow[64] = "";

	for (size_t i = 0; i < sizeof(routes) / sizeof(routes[0]); i++) {
		const struct route *r = &routes[i];

		if (!api_parse_path(r->pattern, c->target.path, c->cap) ||
		    (r->exists && !r->exists(c->srv, c->cap)))
			continue;
		if (method_is(r, c->method)) {
			c->route = r;
			return guarded(c, r);
		}
		allow_add(allow, sizeof(allow), r->method);
		if (!strcmp(r->method, "GET"))
			allow_add(allow, sizeof(allow), "HEAD");
	}
	if (!allow[0])
		return send_error(c, MHD_HTTP_NOT_FOUND, "no such path: \"%.128s\"",
		                  c->target.path);
	return http_send_error_hdr(c, MHD_HTTP_METHOD_NOT_ALLOWED, (struct hdr){"Allow", allow},
	                           "method %.16s is not allowed here; allowed: %s", c->method,
	                           allow);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version, const char *upload,
                                  size_t *upload_size, void **con_cls)
{
	struct request *rq = *con_cls;
	struct ctx c = {.srv = cls, .conn = conn, .method = method, .version = version};
	struct api_error err = {0};
	enum MHD_Result ret;

	(void)upload;
	if (!rq || rq->refused) /* the URI log callback always runs first */
		return MHD_NO;
	if (!rq->started) {
		int body;

		rq->started = 1;
		c.target.path = url;
		c.uri = rq->uri;
		ret = http_check_headers(&c, &body);
		/* A body has the headers' deadline, and a peer that closes
		 * before it came is dropped at once. */
		if (body)
			http_conns_body(c.srv->conns, rq);
		else
			http_conns_headers(c.srv->conns, rq, 1);
		return ret;
	}
	if (*upload_size) {
		/* A chunked body over the limit: close rather than read on. */
		rq->body += *upload_size;
		*upload_size = 0;
		return rq->body > HTTP_MAX_BODY ? MHD_NO : MHD_YES;
	}
	http_conns_headers(c.srv->conns, rq, 1);
	c.uri = rq->uri;
	if (api_parse_target(rq->uri, &c.target, &err) < 0) {
		ret = send_api_error(&c, &err);
	} else {
		ret = dispatch(&c);
	}
	api_target_clear(&c.target);
	return ret;
}

static void request_reset(struct request *rq)
{
	if (!rq)
		return;
	free(rq->uri);
	*rq = (struct request){0};
}

/* A new connection goes into the tracker; one over the per-address limit
 * is shut down at once (libmicrohttpd then closes it). */
static void track(struct http_server *srv, struct MHD_Connection *conn, struct request *rq)
{
	const union MHD_ConnectionInfo *fd =
	    MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
	const union MHD_ConnectionInfo *peer =
	    MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);

	if (fd &&
	    http_conns_add(srv->conns, rq, fd->connect_fd, peer ? peer->client_addr : NULL) < 0)
		shutdown(fd->connect_fd, SHUT_RDWR);
}

static void on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
                          enum MHD_ConnectionNotificationCode toe)
{
	struct http_server *srv = cls;

	if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
		*socket_context = xcalloc(1, sizeof(struct request));
		track(srv, conn, *socket_context);
	} else if (toe == MHD_CONNECTION_NOTIFY_CLOSED) {
		http_conns_remove(srv->conns, *socket_context);
		request_reset(*socket_context);
		free(*socket_context);
		*socket_context = NULL;
	}
}

static void *on_uri(void *cls, const char *uri, struct MHD_Connection *conn)
{
	const union MHD_ConnectionInfo *ci =
	    MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	struct request *rq = ci ? ci->socket_context : NULL;

	if (!rq)
		return NULL;
	request_reset(rq);
	rq->uri = xstrdup(uri);
	if (strlen(uri) > HTTP_MAX_TARGET || http_target_params(uri) > HTTP_MAX_PARAMS) {
		rq->refused = 1;
		http_refuse_target(cls, conn, strlen(uri), http_target_params(uri));
	}
	return rq;
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
	struct http_server *srv = cls;

	(void)conn;
	(void)toe;
	if (*con_cls) /* the next request's headers are due within the deadline */
		http_conns_headers(srv->conns, *con_cls, 0);
	request_reset(*con_cls);
	*con_cls = NULL;
}

static void on_mhd_log(void *cls, const char *fmt, va_list ap)
{
	char *msg;

	(void)cls;
	if (vasprintf(&msg, fmt, ap) < 0)
		return;
	msg[strcspn(msg, "\n")] = '\0';
	log_debug("libmicrohttpd: %s", msg);
	free(msg);
}

/* --- start and stop -------------------------------------------------- */

/* A PEM file: a regular, non-empty file of at most HTTP_MAX_PEM bytes. */
static int read_pem(const char *path, char **out)
{
	struct stat sb;
	size_t len;
	int rc;

	if (stat(path, &sb) < 0)
		return -errno;
	if (!S_ISREG(sb.st_mode))
		return -EINVAL;
	rc = file_read_all(path, HTTP_MAX_PEM, out, &len);
	if (rc == -EFBIG || (rc == 0 && len == 0)) {
		if (rc == 0)
			free(*out);
		*out = NULL;
		return -EINVAL;
	}
	return rc;
}

/* Binds and listens on address:port; the socket goes to libmicrohttpd. */
static int bind_listen(const char *address, unsigned port, int *fd_out)
{
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM,
	                         .ai_flags = AI_PASSIVE | AI_NUMERICSERV};
	struct addrinfo *res;
	char service[8];
	int fd, one = 1, rc;

	if (port > 65535)
		return -EINVAL;
	snprintf(service, sizeof(service), "%u", port);
	rc = getaddrinfo(address, service, &hints, &res);
	if (rc)
		return rc == EAI_SYSTEM ? -errno : -EADDRNOTAVAIL;
	fd = socket(res->ai_family, res->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK,
	            res->ai_protocol);
	if (fd < 0) {
		rc = -errno;
		goto out;
	}
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(fd, res->ai_addr, res->ai_addrlen) < 0 || listen(fd, 128) < 0) {
		rc = -errno;
		close(fd);
		goto out;
	}
	*fd_out = fd;
	rc = 0;
out:
	freeaddrinfo(res);
	return rc;
}

static void load_web(struct http_server *srv)
{
	srv->web = xcalloc(builtin_count ? builtin_count : 1, sizeof(*srv->web));
	for (unsigned i = 0; i < builtin_count; i++)
		if (!strncmp(builtin_files[i].name, "web/", 4))
			srv->web[i] = http_asset_from_memory(
			    builtin_files[i].name, builtin_files[i].data, builtin_files[i].size);
}

static int start_mhd(struct http_server *srv, const struct http_config *cfg, int fd)
{
	unsigned flags =
	    MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ITC | MHD_USE_ERROR_LOG;
	struct MHD_OptionItem o[16];
	size_t n = 0;

#define OPT(opt, val, ptr) (o[n++] = (struct MHD_OptionItem){opt, (intptr_t)(val), ptr})
	OPT(MHD_OPTION_LISTEN_SOCKET, fd, NULL);
	OPT(MHD_OPTION_CONNECTION_LIMIT, cfg->max_connections ? cfg->max_connections : 256, NULL);
	/* per_ip_limit is kept by daemon/http_conns.c, which leaves loopback out. */
	OPT(MHD_OPTION_STRICT_FOR_CLIENT, 1, NULL);
	OPT(MHD_OPTION_CONNECTION_TIMEOUT, cfg->timeout_s ? cfg->timeout_s : 30, NULL);
	OPT(MHD_OPTION_CONNECTION_MEMORY_LIMIT, cfg->memory_limit ? cfg->memory_limit : 65536,
	    NULL);
	OPT(MHD_OPTION_URI_LOG_CALLBACK, (intptr_t)on_uri, srv);
	OPT(MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)on_completed, srv);
	OPT(MHD_OPTION_NOTIFY_CONNECTION, (intptr_t)on_connection, srv);
	OPT(MHD_OPTION_EXTERNAL_LOGGER, (intptr_t)on_mhd_log, srv);
	if (cfg->threads > 1)
		OPT(MHD_OPTION_THREAD_POOL_SIZE, cfg->threads, NULL);
	if (srv->tls) {
		/* Each handshake asks tls_creds for the pair served now, so a
		 * reload needs no new daemon. The pointer goes in both fields:
		 * the option is a single pointer. */
		flags |= MHD_USE_TLS;
		OPT(MHD_OPTION_HTTPS_CERT_CALLBACK, (intptr_t)tls_creds_retrieve,
		    (void *)tls_creds_retrieve);
		OPT(MHD_OPTION_HTTPS_PRIORITIES, 0, srv->tls_priorities);
	}
	OPT(MHD_OPTION_END, 0, NULL);
#undef OPT
	srv->mhd = MHD_start_daemon(flags, 0, NULL, NULL, on_request, srv, MHD_OPTION_ARRAY, o,
	                            MHD_OPTION_END);
	return srv->mhd ? 0 : -(errno ? errno : EINVAL);
}

/* The Host allow-list, with the address the socket is bound to. */
static int hosts_init(struct http_server *srv, const struct http_config *cfg, int fd)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	if (getsockname(fd, (struct sockaddr *)&ss, &len) < 0)
		return -errno;
	srv->beyond_loopback = !http_addr_loopback((struct sockaddr *)&ss);
	return http_hosts_new(cfg->allowed_hosts, (struct sockaddr *)&ss, &srv->hosts);
}

/* The served certificate's expiry, for /metrics. */
static void set_extra(struct http_server *srv, int64_t not_after)
{
	json_t *v = json_pack("{s:{s:I}}", "tls", "cert_expiry_s", (json_int_t)not_after), *old;

	pthread_mutex_lock(&srv->extra_lock);
	old = srv->extra;
	srv->extra = v;
	srv->extra_gen++;
	pthread_mutex_unlock(&srv->extra_lock);
	json_decref(old);
}

/* Reads and parses the pair in tls_cert and tls_key; the key's text is
 * wiped once parsed. */
static int load_pair(const struct http_server *srv, struct tls_creds **out, char *err,
                     size_t errlen)
{
	char *cert = NULL, *key = NULL;
	int rc;

	if ((rc = read_pem(srv->tls_cert, &cert)) < 0)
		errbuf_set(err, errlen, rc, "tls_cert \"%s\": %s", srv->tls_cert, strerror(-rc));
	else if ((rc = read_pem(srv->tls_key, &key)) < 0)
		errbuf_set(err, errlen, rc, "tls_key \"%s\": %s", srv->tls_key, strerror(-rc));
	else
		rc = tls_creds_new(cert, key, out, err, errlen);
	if (key)
		explicit_bzero(key, strlen(key));
	free(key);
	free(cert);
	return rc;
}

/* The first pair; one HTTPS server per process (tls_creds.h). */
static int tls_init(struct http_server *srv, const struct http_config *cfg)
{
	struct tls_creds *creds;
	int rc;

	if (!MHD_is_feature_supported(MHD_FEATURE_TLS) ||
	    !MHD_is_feature_supported(MHD_FEATURE_HTTPS_CERT_CALLBACK))
		return -ENOTSUP;
	if (tls_creds_serving())
		return -EBUSY;
	srv->tls_cert = xstrdup(cfg->tls_cert);
	srv->tls_key = xstrdup(cfg->tls_key);
	/* A handshake is over within the header deadline (http_conns shuts the
	 * connection down then): twice that, and a sweep's slack. */
	srv->tls_grace_s = 2.0 * (cfg->header_timeout_s > 0 ? cfg->header_timeout_s : 10) + 1;
	if ((rc = load_pair(srv, &creds, NULL, 0)) < 0)
		return rc;
	tls_creds_serve(creds, srv->tls_grace_s);
	srv->tls = 1;
	set_extra(srv, tls_creds_not_after(creds));
	return 0;
}

int http_tls_reload(struct http_server *srv, int64_t *not_after, char *err, size_t errlen)
{
	struct tls_creds *creds;
	int rc;

	if (!srv || !srv->tls)
		return 0;
	if ((rc = load_pair(srv, &creds, err, errlen)) < 0)
		return rc;
	*not_after = tls_creds_not_after(creds);
	if (tls_creds_same(creds, tls_creds_serving())) {
		tls_creds_free(creds);
		return 0;
	}
	tls_creds_serve(creds, srv->tls_grace_s);
	set_extra(srv, *not_after);
	return 1;
}

static int nonempty(const char *s)
{
	return s && s[0];
}

int http_start(const struct http_config *cfg, struct store *st, const struct http_hooks *hooks,
               struct http_server **out)
{
	struct http_server *srv = xcalloc(1, sizeof(*srv));
	int fd = cfg->listen_fd, rc;

	srv->api.st = st;
	srv->external_fd = cfg->listen_fd;
	pthread_mutex_init(&srv->trigger_lock, NULL);
	pthread_mutex_init(&srv->extra_lock, NULL);
	srv->trigger_min_s = cfg->trigger_min_interval_s;
	srv->trigger_last = -1;
	if (hooks)
		srv->hooks = *hooks;
	if (cfg->token && cfg->token[0]) {
		srv->token = xstrdup(cfg->token);
		srv->api.trigger_configured = 1;
	}
	if (cfg->metrics_token && cfg->metrics_token[0])
		srv->metrics_token = xstrdup(cfg->metrics_token);
	if (cfg->read_token && cfg->read_token[0]) {
		srv->read_token = xstrdup(cfg->read_token);
	}
	if (cfg->dygraphs_dir && cfg->dygraphs_dir[0])
		srv->dygraphs = http_asset_cache_new(cfg->dygraphs_dir, HTTP_DYGRAPHS_FILES);
	if (nonempty(cfg->tls_cert) || nonempty(cfg->tls_key)) {
		if (!nonempty(cfg->tls_cert) || !nonempty(cfg->tls_key)) {
			rc = -EINVAL;
			goto fail;
		}
		if ((rc = tls_init(srv, cfg)) < 0)
			goto fail;
		srv->tls_priorities = xstrdup(
		    nonempty(cfg->tls_priorities) ? cfg->tls_priorities : TLS_PRIORITIES_DEFAULT);
	}
	load_web(srv);
	srv->cache = http_respcache_new(HTTP_CACHE_SLOTS, HTTP_CACHE_MAX_BODY);
	if (fd < 0 &&
	    (rc = bind_listen(cfg->address ? cfg->address : "127.0.0.1", cfg->port, &fd)) < 0)
		goto fail;
	if ((rc = hosts_init(srv, cfg, fd)) < 0 ||
	    (rc = http_conns_new(
	         cfg->max_connections ? cfg->max_connections : 256, cfg->per_ip_limit,
	         cfg->header_timeout_s > 0 ? cfg->header_timeout_s : 10, &srv->conns)) < 0) {
		if (cfg->listen_fd < 0)
			close(fd);
		goto fail;
	}
	errno = 0;
	rc = start_mhd(srv, cfg, fd);
	if (rc < 0) {
		if (cfg->listen_fd < 0)
			close(fd);
		goto fail;
	}
	*out = srv;
	return 0;
fail:
	http_stop(srv);
	return rc;
}

unsigned http_port(const struct http_server *srv)
{
	const union MHD_DaemonInfo *info;

	if (!srv || !srv->mhd)
		return 0;
	info = MHD_get_daemon_info(srv->mhd, MHD_DAEMON_INFO_BIND_PORT);
	return info ? info->port : 0;
}

int http_beyond_loopback(const struct http_server *srv)
{
	return srv && srv->beyond_loopback;
}

void http_stop(struct http_server *srv)
{
	if (!srv)
		return;
	if (srv->mhd) {
		/* A socket from socket activation stays open for the caller. */
		if (srv->external_fd >= 0)
			MHD_quiesce_daemon(srv->mhd);
		MHD_stop_daemon(srv->mhd);
	}
	http_conns_free(srv->conns);
	http_hosts_free(srv->hosts);
	http_respcache_free(srv->cache);
	if (srv->web)
		for (unsigned i = 0; i < builtin_count; i++)
			http_asset_free(srv->web[i]);
	free(srv->web);
	free(srv->token);
	free(srv->metrics_token);
	free(srv->read_token);
	json_decref(srv->extra);
	pthread_mutex_destroy(&srv->extra_lock);
	pthread_mutex_destroy(&srv->trigger_lock);
	http_asset_cache_free(srv->dygraphs);
	/* No handshake is left to use the pairs once libmicrohttpd stopped. */
	if (srv->tls)
		tls_creds_unserve();
	free(srv->tls_cert);
	free(srv->tls_key);
	free(srv->tls_priorities);
	free(srv);
}
