/*
 * fleet_ask: asks the daemons of `threadwatch fleet` over HTTP(S), with
 * libcurl's multi interface. At most conn->concurrency hosts are in flight;
 * the requests of one host go one after another over its connection
 * (keep-alive), all within the host's own time budget, which starts when
 * its first request does. TLS is verified against --cacert or the system's
 * CAs unless --insecure; --token is sent as "Authorization: Bearer", over
 * HTTPS only unless --token-over-http. Each answer is capped (256 KiB, a
 * run's 4 MiB) and its text freed once parsed.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "fleetp.h"
#include "xmalloc.h"

#define FLEET_MAX_BODY (256u << 10)   /* bytes of one answer */
#define FLEET_MAX_RUN_BODY (4u << 20) /* bytes of a run's answer (its series) */
#define FLEET_POLL_MS 1000
#define FLEET_CA_CACHE_S 600L /* the CA store is parsed once per run, not per host */

static const struct fleet_endpoint {
	const char *path; /* NULL: the latest threads run found by STEP_RUNS */
	/* 404 means "nothing yet" or "not in this version", as does a 503
	 * with Retry-After (a daemon in its first cycle) */
	int optional;
} endpoints[STEP_DONE] = {
    [STEP_STATUS] = {"/api/v1/status", 0},
    [STEP_HOST] = {"/api/v1/host", 1},
    [STEP_REC] = {"/api/v1/recommendation", 1},
    [STEP_HEADROOM] = {"/api/v1/headroom", 1},
    [STEP_EVENTS] = {"/api/v1/events?limit=1", 1}, /* the newest and the total */
    [STEP_RUNS] = {"/api/v1/runs?probe=threads&status=ok&limit=1", 1},
    [STEP_RUN] = {NULL, 1},
    [STEP_WORKLOADS] = {"/api/v1/workloads", 1},
};

struct fleet_run {
	CURLM *multi;
	struct curl_slist *headers;
	const struct fleet_conn *c;
	size_t active; /* hosts in flight */
};

static size_t on_data(char *p, size_t size, size_t n, void *ud)
{
	struct fleet_body *b = ud;
	size_t len = size * n;

	if (len > b->max || b->len > b->max - len) {
		b->overflow = 1;
		return 0; /* ends the transfer with CURLE_WRITE_ERROR */
	}
	b->buf = xrealloc(b->buf, b->len + len + 1);
	memcpy(b->buf + b->len, p, len);
	b->len += len;
	b->buf[b->len] = '\0';
	return len;
}

static void host_fail(struct fleet_host *h, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void host_fail(struct fleet_host *h, const char *fmt, ...)
{
	va_list ap;
	char msg[512];

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	free(h->error);
	h->error = xstrdup(msg);
	h->step = STEP_DONE;
}

/* The path of the current request, for messages (without the query). */
static void step_path(const struct fleet_host *h, char *buf, size_t len)
{
	if (h->step == STEP_RUN)
		snprintf(buf, len, "/api/v1/runs/%lld", h->run_id);
	else
		snprintf(buf, len, "%.*s", (int)strcspn(endpoints[h->step].path, "?"),
		         endpoints[h->step].path);
}

static int host_init(struct fleet_host *h, const struct fleet_run *r)
{
	const struct fleet_conn *c = r->c;

	h->easy = curl_easy_init();
	if (!h->easy)
		return -ENOMEM;
	curl_easy_setopt(h->easy, CURLOPT_PRIVATE, h);
	curl_easy_setopt(h->easy, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(h->easy, CURLOPT_WRITEDATA, &h->body);
	curl_easy_setopt(h->easy, CURLOPT_ERRORBUFFER, h->errbuf);
	curl_easy_setopt(h->easy, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h->easy, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(h->easy, CURLOPT_USERAGENT, "threadwatch-fleet/" TW_VERSION);
	curl_easy_setopt(h->easy, CURLOPT_HTTPHEADER, r->headers);
	curl_easy_setopt(h->easy, CURLOPT_CA_CACHE_TIMEOUT, FLEET_CA_CACHE_S);
	if (c->cacert)
		curl_easy_setopt(h->easy, CURLOPT_CAINFO, c->cacert);
	if (c->insecure) {
		curl_easy_setopt(h->easy, CURLOPT_SSL_VERIFYPEER, 0L);
		curl_easy_setopt(h->easy, CURLOPT_SSL_VERIFYHOST, 0L);
	}
	return 0;
}

/* Whether the token would go out unencrypted without the operator's say. */
static int token_refused(const struct fleet_host *h, const struct fleet_conn *c)
{
	return c->token && !c->token_over_http && strncmp(h->base, "https://", 8);
}

/* Starts the request of h->step within what is left of the host's time. */
static void host_request(struct fleet_host *h, CURLM *multi, const struct fleet_conn *c)
{
	double timeout_s = c->timeout_s;
	uint64_t now = clock_ns();
	char *url;
	long left_ms;

	if (now >= h->deadline_ns) {
		host_fail(h, "no answer within %g s", timeout_s);
		return;
	}
	if (token_refused(h, c)) {
		host_fail(h, "not sending the token over plain HTTP: use https, or "
		             "--token-over-http");
		return;
	}
	left_ms = (long)((h->deadline_ns - now + 999999) / 1000000);
	if (h->step == STEP_RUN)
		xasprintf(&url, "%s/api/v1/runs/%lld", h->base, h->run_id);
	else
		xasprintf(&url, "%s%s", h->base, endpoints[h->step].path);
	h->body.len = 0;
	h->body.max =
	    h->step == STEP_RUN || h->step == STEP_WORKLOADS ? FLEET_MAX_RUN_BODY : FLEET_MAX_BODY;
	h->body.overflow = 0;
	h->errbuf[0] = '\0';
	curl_easy_setopt(h->easy, CURLOPT_URL, url);
	curl_easy_setopt(h->easy, CURLOPT_TIMEOUT_MS, left_ms);
	curl_easy_setopt(h->easy, CURLOPT_CONNECTTIMEOUT_MS, left_ms);
	free(url);
	if (curl_multi_add_handle(multi, h->easy) != CURLM_OK)
		host_fail(h, "cannot start a request");
}

/* The "error.message" of a threadwatchd error body, or NULL. */
static const char *error_message(const json_t *doc)
{
	return json_string_value(json_object_get(json_object_get(doc, "error"), "message"));
}

/* Why the request failed at the transport level. */
static void transport_error(struct fleet_host *h, CURLcode res, const char *path, double timeout_s)
{
	curl_off_t connect_us = 0;

	h->curl_code = res;
	curl_easy_getinfo(h->easy, CURLINFO_CONNECT_TIME_T, &connect_us);
	h->connected = connect_us > 0;
	if (res == CURLE_OPERATION_TIMEDOUT)
		host_fail(h, "no answer within %g s (GET %s)", timeout_s, path);
	else if (res == CURLE_WRITE_ERROR && h->body.overflow)
		host_fail(h, "GET %s: the answer is larger than %zu KiB", path, h->body.max >> 10);
	else
		host_fail(h, "%s", h->errbuf[0] ? h->errbuf : curl_easy_strerror(res));
}

/* Keeps the answer to h->step; 0, or -EPROTO after host_fail(). */
static int keep_answer(struct fleet_host *h, const char *path)
{
	json_t *doc = json_loadb(h->body.buf ? h->body.buf : "", h->body.len, 0, NULL);
	const char *msg = error_message(doc);
	long code = 0;
	curl_off_t retry = 0;

	curl_easy_getinfo(h->easy, CURLINFO_RESPONSE_CODE, &code);
	curl_easy_getinfo(h->easy, CURLINFO_RETRY_AFTER, &retry);
	h->http_code = code;
	if ((code == 404 || (code == 503 && retry > 0)) && endpoints[h->step].optional) {
		json_decref(doc);
		return 0;
	}
	if (code != 200)
		host_fail(h, "GET %s: HTTP %ld%s%s", path, code, msg ? ": " : "", msg ? msg : "");
	else if (!json_is_object(doc))
		host_fail(h, "GET %s: the answer is not a JSON object; is this a threadwatchd?",
		          path);
	/* The text is parsed: its buffer goes now, not with the host. */
	free(h->body.buf);
	h->body = (struct fleet_body){0};
	if (code != 200 || !json_is_object(doc)) {
		json_decref(doc);
		return -EPROTO;
	}
	h->answer[h->step] = doc;
	h->reachable |= h->step == STEP_STATUS;
	return 0;
}

/* The steps fleet's table shows: all but the workloads, which --workloads
 * adds. */
#define FLEET_TABLE_STEPS ((FLEET_STEP(STEP_DONE) - 1) & ~FLEET_STEP(STEP_WORKLOADS))

/* Whether step s is asked of h: one of c->steps (the status always), and
 * the run only once STEP_RUNS found one. */
static int step_asked(const struct fleet_host *h, const struct fleet_conn *c, enum fleet_step s)
{
	unsigned steps = c->steps
	                     ? c->steps
	                     : FLEET_TABLE_STEPS | (c->workloads ? FLEET_STEP(STEP_WORKLOADS) : 0);

	return s == STEP_STATUS || ((steps & FLEET_STEP(s)) && (s != STEP_RUN || h->run_id > 0));
}

/* Takes the answer to h->step and moves on to the next request. */
static void host_answer(struct fleet_host *h, CURLcode res, CURLM *multi,
                        const struct fleet_conn *c)
{
	double timeout_s = c->timeout_s;
	const json_t *runs;
	char path[96];

	curl_multi_remove_handle(multi, h->easy);
	step_path(h, path, sizeof(path));
	if (res != CURLE_OK) {
		transport_error(h, res, path, timeout_s);
		return;
	}
	if (keep_answer(h, path) < 0)
		return;
	if (h->step == STEP_RUNS) {
		runs = json_object_get(h->answer[STEP_RUNS], "runs");
		h->run_id =
		    (long long)json_integer_value(json_object_get(json_array_get(runs, 0), "id"));
	}
	do
		h->step++;
	while (h->step < STEP_DONE && !step_asked(h, c, h->step));
	if (h->step < STEP_DONE)
		host_request(h, multi, c);
}

/* A host is done: its row is made and its answers and handle go (its
 * connection stays in the multi handle's cache, which CURLMOPT_MAXCONNECTS
 * keeps small). */
static void host_done(struct fleet_host *h, struct fleet_run *r)
{
	h->end_ns = clock_ns();
	h->row = fleet_host_row(h);
	if (r->c->workloads)
		h->workloads = json_incref(json_object_get(h->answer[STEP_WORKLOADS], "workloads"));
	for (int s = 0; s < STEP_DONE; s++) {
		if (r->c->keep & FLEET_STEP(s))
			h->kept[s] = json_incref(h->answer[s]);
		json_decref(h->answer[s]);
		h->answer[s] = NULL;
	}
	free(h->body.buf);
	h->body = (struct fleet_body){0};
	curl_easy_cleanup(h->easy);
	h->easy = NULL;
	r->active--;
}

/* Starts hosts from *next while fewer than the limit are in flight. */
static int fill(struct fleet_host *hosts, size_t n, size_t *next, struct fleet_run *r)
{
	while (*next < n && r->active < (size_t)r->c->concurrency) {
		struct fleet_host *h = &hosts[(*next)++];

		if (host_init(h, r) < 0)
			return -ENOMEM;
		h->start_ns = clock_ns();
		h->deadline_ns = h->start_ns + (uint64_t)(r->c->timeout_s * 1e9);
		r->active++;
		host_request(h, r->multi, r->c);
		if (h->step == STEP_DONE)
			host_done(h, r);
	}
	return 0;
}

/* Runs the transfers until every message so far is handled. */
static int pump(struct fleet_run *r)
{
	CURLMsg *m;
	int running, queued;

	if (curl_multi_perform(r->multi, &running) != CURLM_OK)
		return -EIO;
	while ((m = curl_multi_info_read(r->multi, &queued))) {
		struct fleet_host *h = NULL;

		if (m->msg != CURLMSG_DONE)
			continue;
		curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, (char **)&h);
		host_answer(h, m->data.result, r->multi, r->c);
		if (h->step == STEP_DONE)
			host_done(h, r);
	}
	return 0;
}

static struct curl_slist *request_headers(const char *token)
{
	struct curl_slist *l = curl_slist_append(NULL, "Accept: application/json"), *t;
	char *auth;

	if (!l || !token)
		return l;
	xasprintf(&auth, "Authorization: Bearer %s", token);
	t = curl_slist_append(l, auth);
	free(auth);
	if (!t)
		curl_slist_free_all(l);
	return t;
}

int fleet_ask(struct fleet_host *hosts, size_t n, const struct fleet_conn *c)
{
	struct fleet_run r = {
	    .c = c, .multi = curl_multi_init(), .headers = request_headers(c->token)};
	size_t next = 0;
	int rc = 0;

	if (!r.multi || !r.headers) {
		rc = -ENOMEM;
		goto out;
	}
	curl_multi_setopt(r.multi, CURLMOPT_MAXCONNECTS, c->concurrency);
	while (rc == 0 && (next < n || r.active > 0)) {
		rc = fill(hosts, n, &next, &r);
		if (rc == 0 && r.active > 0)
			rc = pump(&r);
		if (rc == 0 && r.active > 0 &&
		    curl_multi_poll(r.multi, NULL, 0, FLEET_POLL_MS, NULL) != CURLM_OK)
			rc = -EIO;
	}
out:
	for (size_t i = 0; i < n; i++) {
		if (hosts[i].easy && r.multi)
			curl_multi_remove_handle(r.multi, hosts[i].easy);
		curl_easy_cleanup(hosts[i].easy);
		hosts[i].easy = NULL;
	}
	curl_multi_cleanup(r.multi);
	curl_slist_free_all(r.headers);
	return rc;
}
