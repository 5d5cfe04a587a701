/*
 * cli_fleet: `threadwatch fleet`, one table for many daemons. Asks every
 * daemon's JSON API at once (libcurl's multi interface; the requests of one
 * host go one after another over its connection, within the host's own time
 * budget) and prints host, kernel, glibc, verdict, switch-time ratio, knee,
 * age of the last cycle, headroom warnings and regression events, or why a
 * host could not be read. Exit 1 when any host could not be read.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <curl/curl.h>
#include <jansson.h>

#include "cli.h"
#include "clock.h"
#include "errbuf.h"
#include "opt.h"
#include "units.h"
#include "xmalloc.h"

#define FLEET_DEFAULT_TIMEOUT_S 5.0
#define FLEET_MAX_TIMEOUT_S 3600.0
#define FLEET_MIN_TIMEOUT_S 0.01
#define FLEET_MAX_BODY (16u << 20) /* bytes of one answer */
#define FLEET_POLL_MS 1000

/* What is asked of each host, in this order. */
enum fleet_step {
	STEP_STATUS,
	STEP_HOST,
	STEP_REC,
	STEP_HEADROOM,
	STEP_EVENTS,
	STEP_RUNS,
	STEP_RUN,
	STEP_DONE
};

static const struct fleet_endpoint {
	const char *path; /* NULL: the latest threads run found by STEP_RUNS */
	int optional;     /* 404 means "nothing yet" or "not in this version" */
} endpoints[STEP_DONE] = {
    [STEP_STATUS] = {"/api/v1/status", 0},
    [STEP_HOST] = {"/api/v1/host", 1},
    [STEP_REC] = {"/api/v1/recommendation", 1},
    [STEP_HEADROOM] = {"/api/v1/headroom", 1},
    [STEP_EVENTS] = {"/api/v1/events?limit=1", 1}, /* the newest and the total */
    [STEP_RUNS] = {"/api/v1/runs?probe=threads&status=ok&limit=1", 1},
    [STEP_RUN] = {NULL, 1},
};

/* The stack policies of the threads probe, for the knees. */
static const char *const policies[] = {"default", "low", "high"};
#define KNEE_POLICY "low" /* the one the table shows: the MAP_32BIT path */

struct fleet_args {
	int json, help;
	double timeout_s;
	char **urls;    /* as given */
	char **origins; /* "argument N" or "FILE:LINE", for messages */
	size_t n;
};

struct fleet_body {
	char *buf;
	size_t len;
	int overflow;
};

struct fleet_host {
	const char *url;
	char *base; /* scheme://host[:port][/prefix], no trailing '/' */
	CURL *easy;
	char errbuf[CURL_ERROR_SIZE];
	struct fleet_body body;
	enum fleet_step step;
	uint64_t deadline_ns;
	json_t *answer[STEP_DONE]; /* NULL: not asked, or 404 */
	long long run_id;          /* the latest ok threads run; 0: none */
	int reachable;             /* /api/v1/status answered */
	char *error;               /* why the host could not be read */
};

/* --- arguments ------------------------------------------------------------- */

static int set_timeout(void *ctx, const char *v, char *why, size_t wlen)
{
	struct fleet_args *a = ctx;

	(void)why, (void)wlen;
	if (units_parse_duration(v, &a->timeout_s) < 0 || a->timeout_s < FLEET_MIN_TIMEOUT_S ||
	    a->timeout_s > FLEET_MAX_TIMEOUT_S)
		return -EINVAL;
	return 0;
}

static void add_url(struct fleet_args *a, const char *url, const char *origin)
{
	a->urls = xreallocarray(a->urls, a->n + 1, sizeof(*a->urls));
	a->origins = xreallocarray(a->origins, a->n + 1, sizeof(*a->origins));
	a->urls[a->n] = xstrdup(url);
	a->origins[a->n] = xstrdup(origin);
	a->n++;
}

/* One URL per line; blank lines and # comments (at the start of a line or
 * after white space) are skipped. */
static int set_file(void *ctx, const char *path, char *why, size_t wlen)
{
	struct fleet_args *a = ctx;
	FILE *f = fopen(path, "re");
	char *line = NULL, origin[64], *p, *end;
	size_t cap = 0, words;
	unsigned lineno = 0;
	int rc = 0;

	if (!f)
		return errbuf_set(why, wlen, -errno, "cannot read \"%s\": %s", path,
		                  strerror(errno));
	while (rc == 0 && getline(&line, &cap, f) >= 0) {
		lineno++;
		for (p = line; *p; p++)
			if (*p == '#' && (p == line || p[-1] == ' ' || p[-1] == '\t')) {
				*p = '\0';
				break;
			}
		p = line + strspn(line, " \t\r\n");
		end = p + strcspn(p, " \t\r\n");
		words = *p != '\0';
		if (end[strspn(end, " \t\r\n")] != '\0')
			words = 2;
		if (words == 0)
			continue;
		*end = '\0';
		snprintf(origin, sizeof(origin), "line %u", lineno);
		if (words > 1) {
			rc = errbuf_set(why, wlen, -EINVAL,
			                "\"%s\" %s: one URL per line, not several words", path,
			                origin);
		} else {
			add_url(a, p, origin);
		}
	}
	if (rc == 0 && ferror(f))
		rc = errbuf_set(why, wlen, -EIO, "cannot read \"%s\": %s", path, strerror(errno));
	free(line);
	fclose(f);
	return rc;
}

static const struct opt fleet_opts[] = {
    {"json", 0, NULL, "print one JSON document instead of the table", NULL,
     offsetof(struct fleet_args, json)},
    {"timeout", 0, "DURATION",
     "time each host may take for all its answers, such as 5s or 1m (default 5s; 10ms to 1h)",
     set_timeout, 0},
    {"file", 0, "PATH", "read the URLs from PATH: one a line, # starts a comment", set_file, 0},
    {"help", 'h', NULL, "show this help", NULL, offsetof(struct fleet_args, help)},
};

#define N_OPTS (sizeof(fleet_opts) / sizeof(fleet_opts[0]))

static void usage(FILE *f)
{
	fprintf(
	    f,
	    "usage: threadwatch fleet [--json] [--timeout DURATION] [--] URL... | --file PATH\n\n"
	    "Asks each threadwatchd's JSON API (all hosts at once) and prints one "
	    "table:\n"
	    "host, kernel, glibc, verdict, confidence, switch-time ratio, the "
	    "thread-create\n"
	    "knee with low stacks, age of the last cycle and headroom warnings, or "
	    "the error\n"
	    "for a host that could not be read. URL: http[s]://HOST[:PORT][/PREFIX], "
	    "or\n"
	    "HOST:PORT for plain HTTP. Exit status 1 when any host could not be "
	    "read.\n\n"
	    "Options:\n");
	opt_usage(f, fleet_opts, N_OPTS);
}

/* -EINVAL with a message on stderr for anything it does not know. */
static int parse_args(int argc, char **argv, struct fleet_args *a)
{
	char err[PATH_MAX + 128], origin[32];
	int first = opt_parse(argc, argv, fleet_opts, N_OPTS, a, err, sizeof(err));

	if (first < 0) {
		fprintf(stderr, "threadwatch fleet: %s\n", err);
		return -EINVAL;
	}
	for (int i = first; i < argc; i++) {
		snprintf(origin, sizeof(origin), "argument %d", i - first + 1);
		add_url(a, argv[i], origin);
	}
	return 0;
}

static void args_free(struct fleet_args *a)
{
	for (size_t i = 0; i < a->n; i++) {
		free(a->urls[i]);
		free(a->origins[i]);
	}
	free(a->urls);
	free(a->origins);
}

/* The base URL every API path is appended to, or NULL with why. A URL
 * without a scheme is plain HTTP. */
static char *base_url(const char *in, char *why, size_t whylen)
{
	CURLU *u = curl_url();
	char *full, *scheme = NULL, *host = NULL, *query = NULL, *frag = NULL, *out = NULL;
	CURLUcode rc;
	size_t len;

	if (!u)
		abort(); /* out of memory */
	if (strstr(in, "://"))
		full = xstrdup(in);
	else
		xasprintf(&full, "http://%s", in);
	rc = curl_url_set(u, CURLUPART_URL, full, 0);
	if (rc != CURLUE_OK) {
		snprintf(why, whylen, "%s", curl_url_strerror(rc));
		goto out;
	}
	curl_url_get(u, CURLUPART_SCHEME, &scheme, 0);
	curl_url_get(u, CURLUPART_HOST, &host, 0);
	curl_url_get(u, CURLUPART_QUERY, &query, 0);
	curl_url_get(u, CURLUPART_FRAGMENT, &frag, 0);
	if (!scheme || (strcmp(scheme, "http") && strcmp(scheme, "https")))
		snprintf(why, whylen, "only http and https URLs are asked");
	else if (!host || !*host)
		snprintf(why, whylen, "no host name");
	else if (query || frag)
		snprintf(why, whylen, "a query or fragment has no place in a daemon's URL");
	else if (curl_url_get(u, CURLUPART_URL, &out, 0) != CURLUE_OK)
		snprintf(why, whylen, "cannot be put together again");
	if (out) {
		char *copy = xstrdup(out);

		curl_free(out);
		out = copy;
		len = strlen(out);
		while (len > 0 && out[len - 1] == '/')
			out[--len] = '\0';
	}
out:
	curl_free(scheme);
	curl_free(host);
	curl_free(query);
	curl_free(frag);
	curl_url_cleanup(u);
	free(full);
	return out;
}

/* --- asking the hosts ------------------------------------------------------ */

static size_t on_data(char *p, size_t size, size_t n, void *ud)
{
	struct fleet_body *b = ud;
	size_t len = size * n;

	if (b->len + len > FLEET_MAX_BODY) {
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

static int host_init(struct fleet_host *h, const struct curl_slist *headers)
{
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
	curl_easy_setopt(h->easy, CURLOPT_HTTPHEADER, headers);
	return 0;
}

/* Starts the request of h->step within what is left of the host's time. */
static void host_request(struct fleet_host *h, CURLM *multi, double timeout_s)
{
	uint64_t now = clock_ns();
	char *url;
	long left_ms;

	if (now >= h->deadline_ns) {
		host_fail(h, "no answer within %g s", timeout_s);
		return;
	}
	left_ms = (long)((h->deadline_ns - now + 999999) / 1000000);
	if (h->step == STEP_RUN)
		xasprintf(&url, "%s/api/v1/runs/%lld", h->base, h->run_id);
	else
		xasprintf(&url, "%s%s", h->base, endpoints[h->step].path);
	h->body.len = 0;
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
	if (res == CURLE_OPERATION_TIMEDOUT)
		host_fail(h, "no answer within %g s (GET %s)", timeout_s, path);
	else if (res == CURLE_WRITE_ERROR && h->body.overflow)
		host_fail(h, "GET %s: the answer is larger than %u MiB", path,
		          FLEET_MAX_BODY >> 20);
	else
		host_fail(h, "%s", h->errbuf[0] ? h->errbuf : curl_easy_strerror(res));
}

/* Keeps the answer to h->step; 0, or -EPROTO after host_fail(). */
static int keep_answer(struct fleet_host *h, const char *path)
{
	json_t *doc = json_loadb(h->body.buf ? h->body.buf : "", h->body.len, 0, NULL);
	const char *msg = error_message(doc);
	long code = 0;

	curl_easy_getinfo(h->easy, CURLINFO_RESPONSE_CODE, &code);
	if (code == 404 && endpoints[h->step].optional) {
		json_decref(doc);
		return 0;
	}
	if (code != 200)
		host_fail(h, "GET %s: HTTP %ld%s%s", path, code, msg ? ": " : "", msg ? msg : "");
	else if (!json_is_object(doc))
		host_fail(h, "GET %s: the answer is not a JSON object; is this a threadwatchd?",
		          path);
	if (code != 200 || !json_is_object(doc)) {
		json_decref(doc);
		return -EPROTO;
	}
	h->answer[h->step] = doc;
	h->reachable |= h->step == STEP_STATUS;
	return 0;
}

/* Takes the answer to h->step and moves on to the next request. */
static void host_answer(struct fleet_host *h, CURLcode res, CURLM *multi, double timeout_s)
{
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
	h->step++;
	if (h->step == STEP_RUN && h->run_id <= 0)
		h->step++;
	if (h->step < STEP_DONE)
		host_request(h, multi, timeout_s);
}

static int hosts_busy(const struct fleet_host *hosts, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (hosts[i].step < STEP_DONE)
			return 1;
	return 0;
}

/* Asks every host until each has its answers or an error. */
static int fleet_ask(struct fleet_host *hosts, size_t n, double timeout_s)
{
	struct curl_slist *headers = curl_slist_append(NULL, "Accept: application/json");
	CURLM *multi = curl_multi_init();
	uint64_t start = clock_ns();
	int rc = 0, running;

	if (!multi || !headers) {
		rc = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		hosts[i].deadline_ns = start + (uint64_t)(timeout_s * 1e9);
		if (host_init(&hosts[i], headers) < 0) {
			rc = -ENOMEM;
			goto out;
		}
		host_request(&hosts[i], multi, timeout_s);
	}
	while (hosts_busy(hosts, n)) {
		CURLMsg *m;
		int queued;

		if (curl_multi_perform(multi, &running) != CURLM_OK) {
			rc = -EIO;
			break;
		}
		while ((m = curl_multi_info_read(multi, &queued))) {
			struct fleet_host *h = NULL;

			if (m->msg != CURLMSG_DONE)
				continue;
			curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, (char **)&h);
			host_answer(h, m->data.result, multi, timeout_s);
		}
		if (hosts_busy(hosts, n) && curl_multi_poll(multi, NULL, 0, FLEET_POLL_MS, NULL))
			rc = -EIO;
		if (rc < 0)
			break;
	}
out:
	for (size_t i = 0; i < n; i++) {
		if (hosts[i].easy && multi)
			curl_multi_remove_handle(multi, hosts[i].easy);
		curl_easy_cleanup(hosts[i].easy);
		hosts[i].easy = NULL;
	}
	curl_multi_cleanup(multi);
	curl_slist_free_all(headers);
	return rc;
}

/* --- the report ------------------------------------------------------------ */

/* The value at a '/'-separated path of object keys, or NULL. */
static json_t *at(const json_t *v, const char *path)
{
	char key[64];

	while (v && *path) {
		size_t len = strcspn(path, "/");

		if (len >= sizeof(key))
			return NULL;
		memcpy(key, path, len);
		key[len] = '\0';
		v = json_object_get(v, key);
		path += len + (path[len] == '/');
	}
	return (json_t *)(uintptr_t)v;
}

/* A copy of v, or JSON null. */
static json_t *or_null(const json_t *v)
{
	return v ? json_deep_copy(v) : json_null();
}

/* A threads scalar of the latest ok threads run, or NULL. */
static json_t *threads_scalar(const json_t *run, const char *scalar)
{
	json_t *samples = json_object_get(run, "samples"), *s;
	char name[64];
	size_t i;

	snprintf(name, sizeof(name), "threads.%s", scalar);
	json_array_foreach(samples, i, s)
	{
		const char *metric = json_string_value(json_object_get(s, "metric"));

		if (metric && (!strcmp(metric, name) || !strcmp(metric, scalar)))
			return json_object_get(s, "value");
	}
	return at(json_object_get(json_object_get(json_object_get(run, "doc"), "scalars"), scalar),
	          "value");
}

static json_t *knees(const json_t *run)
{
	json_t *out = json_object();

	for (size_t i = 0; i < sizeof(policies) / sizeof(policies[0]); i++) {
		char scalar[32];

		snprintf(scalar, sizeof(scalar), "%s_knee", policies[i]);
		json_object_set_new(out, policies[i], or_null(threads_scalar(run, scalar)));
	}
	return out;
}

/* The events the daemon answered with, or NULL when it has no such
 * endpoint. */
static json_t *event_count(const json_t *events)
{
	const json_t *list = json_is_array(events) ? events : json_object_get(events, "events");

	if (!events)
		return json_null();
	if (json_is_integer(json_object_get(events, "total")))
		return json_deep_copy(json_object_get(events, "total"));
	return json_is_array(list) ? json_integer((json_int_t)json_array_size(list)) : json_null();
}

/* The newest regression event as {"metric", "t_ms", "age_s", "message"},
 * or null. */
static json_t *last_event(const json_t *events, const json_t *status)
{
	const json_t *e = json_array_get(json_object_get(events, "events"), 0);
	const json_t *t = json_object_get(e, "t_ms"), *now = json_object_get(status, "now_ms");

	if (!json_is_object(e))
		return json_null();
	return json_pack(
	    "{s:o, s:o, s:o, s:o}", "metric", or_null(json_object_get(e, "metric")), "t_ms",
	    or_null(t), "age_s",
	    json_is_integer(t) && json_is_integer(now)
	        ? json_real((double)(json_integer_value(now) - json_integer_value(t)) / 1e3)
	        : json_null(),
	    "message", or_null(json_object_get(e, "message")));
}

/* One host as the JSON document's entry; the table is made from it. */
static json_t *host_row(const struct fleet_host *h)
{
	const json_t *st = h->answer[STEP_STATUS], *rec = h->answer[STEP_REC];
	const json_t *fp = at(h->answer[STEP_HOST], "current/fingerprint");
	const json_t *last = json_object_get(st, "last_cycle_ms"), *warn;
	json_t *row = json_pack("{s:s,s:b}", "url", h->url, "reachable", h->reachable);

	if (h->error) {
		json_object_set_new(row, "error", json_string(h->error));
		return row;
	}
	json_object_set_new(row, "error", json_null());
	json_object_set_new(row, "hostname", or_null(json_object_get(fp, "hostname")));
	json_object_set_new(row, "kernel", or_null(json_object_get(fp, "kernel")));
	json_object_set_new(row, "glibc", or_null(json_object_get(fp, "glibc")));
	json_object_set_new(row, "version", or_null(json_object_get(st, "version")));
	json_object_set_new(row, "verdict", or_null(json_object_get(rec, "verdict")));
	json_object_set_new(row, "confidence", or_null(json_object_get(rec, "confidence")));
	json_object_set_new(row, "sentence", or_null(json_object_get(rec, "sentence")));
	json_object_set_new(row, "ctxsw_ratio", or_null(at(rec, "inputs/ctxsw/ratio")));
	json_object_set_new(row, "ctxsw_ratio_ci95", or_null(at(rec, "inputs/ctxsw/ratio_ci95")));
	json_object_set_new(row, "threads_run_id",
	                    h->run_id > 0 ? json_integer(h->run_id) : json_null());
	json_object_set_new(row, "knee",
	                    h->answer[STEP_RUN] ? knees(h->answer[STEP_RUN]) : json_null());
	json_object_set_new(row, "last_cycle_ms", or_null(last));
	json_object_set_new(
	    row, "last_cycle_age_s",
	    json_is_integer(last) && json_is_integer(json_object_get(st, "now_ms"))
	        ? json_real((double)(json_integer_value(json_object_get(st, "now_ms")) -
	                             json_integer_value(last)) /
	                    1e3)
	        : json_null());
	json_object_set_new(row, "last_cycle_status",
	                    or_null(json_object_get(st, "last_cycle_status")));
	json_object_set_new(row, "cycle_running", or_null(json_object_get(st, "cycle_running")));
	warn = json_object_get(h->answer[STEP_HEADROOM], "warnings");
	json_object_set_new(row, "headroom_warnings",
	                    h->answer[STEP_HEADROOM] ? or_null(warn) : json_null());
	json_object_set_new(row, "events", event_count(h->answer[STEP_EVENTS]));
	json_object_set_new(row, "last_event", last_event(h->answer[STEP_EVENTS], st));
	return row;
}

static void format_age(double s, char *buf, size_t len)
{
	long long t = s < 0 ? 0 : llround(s);

	if (t < 60)
		snprintf(buf, len, "%llds", t);
	else if (t < 3600)
		snprintf(buf, len, "%lldm", t / 60);
	else if (t < 86400)
		snprintf(buf, len, "%lldh%02lldm", t / 3600, t % 3600 / 60);
	else
		snprintf(buf, len, "%lldd%02lldh", t / 86400, t % 86400 / 3600);
}

enum col {
	COL_URL,
	COL_HOST,
	COL_KERNEL,
	COL_GLIBC,
	COL_VERDICT,
	COL_CONF,
	COL_RATIO,
	COL_KNEE,
	COL_AGE,
	COL_HEADROOM,
	COL_EVENTS,
	N_COLS
};

static const char *const col_titles[N_COLS] = {
    "URL",   "HOST", "KERNEL",     "GLIBC",    "VERDICT", "CONFIDENCE",
    "RATIO", "KNEE", "LAST CYCLE", "HEADROOM", "EVENTS",
};

static char *str_or_dash(const json_t *v)
{
	return xstrdup(json_is_string(v) && *json_string_value(v) ? json_string_value(v) : "-");
}

static char *cell_knee(const json_t *row)
{
	const json_t *knee = json_object_get(row, "knee");
	const json_t *v = json_object_get(knee, KNEE_POLICY);
	char *s;

	if (!json_is_object(knee))
		return xstrdup("-");
	if (!json_is_number(v))
		return xstrdup("none");
	xasprintf(&s, "%.0f", json_number_value(v));
	return s;
}

static char *cell_age(const json_t *row)
{
	const json_t *age = json_object_get(row, "last_cycle_age_s");
	const char *status = json_string_value(json_object_get(row, "last_cycle_status"));
	char buf[32], *s;

	if (!json_is_number(age))
		return xstrdup(json_is_true(json_object_get(row, "cycle_running")) ? "running"
		                                                                   : "never");
	format_age(json_number_value(age), buf, sizeof(buf));
	xasprintf(&s, "%s ago%s%s%s", buf, status && strcmp(status, "ok") ? " (" : "",
	          status && strcmp(status, "ok") ? status : "",
	          status && strcmp(status, "ok") ? ")" : "");
	return s;
}

/* "0", or "3, last 2d ago" (the newest change). */
static char *cell_events(const json_t *row)
{
	const json_t *n = json_object_get(row, "events");
	const json_t *age = json_object_get(json_object_get(row, "last_event"), "age_s");
	char buf[32], *s;

	if (!json_is_integer(n))
		return xstrdup("-");
	if (json_integer_value(n) == 0 || !json_is_number(age)) {
		xasprintf(&s, "%lld", (long long)json_integer_value(n));
		return s;
	}
	format_age(json_number_value(age), buf, sizeof(buf));
	xasprintf(&s, "%lld, last %s ago", (long long)json_integer_value(n), buf);
	return s;
}

static char *cell_headroom(const json_t *row)
{
	const json_t *warn = json_object_get(row, "headroom_warnings"), *w;
	char *s = NULL, *next;
	size_t i;

	if (!json_is_array(warn))
		return xstrdup("-");
	if (json_array_size(warn) == 0)
		return xstrdup("ok");
	json_array_foreach(warn, i, w)
	{
		const char *name = json_string_value(json_object_get(w, "limit"));

		xasprintf(&next, "%s%s%s", s ? s : "", s ? "," : "", name ? name : "?");
		free(s);
		s = next;
	}
	return s;
}

static char *cell(const json_t *row, enum col c)
{
	const json_t *v;
	char *s;

	switch (c) {
	case COL_URL:
		return xstrdup(json_string_value(json_object_get(row, "url")));
	case COL_HOST:
		return str_or_dash(json_object_get(row, "hostname"));
	case COL_KERNEL:
		return str_or_dash(json_object_get(row, "kernel"));
	case COL_GLIBC:
		return str_or_dash(json_object_get(row, "glibc"));
	case COL_VERDICT:
		return str_or_dash(json_object_get(row, "verdict"));
	case COL_CONF:
		return str_or_dash(json_object_get(row, "confidence"));
	case COL_RATIO:
		v = json_object_get(row, "ctxsw_ratio");
		if (!json_is_number(v))
			return xstrdup("-");
		xasprintf(&s, "%.3f", json_number_value(v));
		return s;
	case COL_KNEE:
		return cell_knee(row);
	case COL_AGE:
		return cell_age(row);
	case COL_HEADROOM:
		return cell_headroom(row);
	case COL_EVENTS:
		return cell_events(row);
	case N_COLS:
		break;
	}
	return xstrdup("");
}

/* Column widths in characters (UTF-8 continuation bytes do not count). */
static size_t text_width(const char *s)
{
	size_t w = 0;

	for (; *s; s++)
		w += ((unsigned char)*s & 0xc0) != 0x80;
	return w;
}

static void print_table(const json_t *rows)
{
	size_t n = json_array_size(rows), width[N_COLS] = {0}, i;
	int show_events = 0;
	char **cells = xcalloc(n * N_COLS, sizeof(*cells));
	const json_t *row;

	json_array_foreach(rows, i, row) show_events |=
	    json_is_integer(json_object_get(row, "events"));
	for (int c = 0; c < N_COLS; c++)
		width[c] = text_width(col_titles[c]);
	json_array_foreach(rows, i, row)
	{
		for (int c = 0; c < N_COLS; c++) {
			int err = json_is_string(json_object_get(row, "error"));

			if (err && c != COL_URL)
				continue;
			cells[i * N_COLS + c] = cell(row, (enum col)c);
			if (text_width(cells[i * N_COLS + c]) > width[c])
				width[c] = text_width(cells[i * N_COLS + c]);
		}
	}
	for (int c = 0; c < N_COLS - !show_events; c++)
		printf("%s%-*s", c ? "  " : "", c == N_COLS - 1 - !show_events ? 0 : (int)width[c],
		       col_titles[c]);
	printf("\n");
	json_array_foreach(rows, i, row)
	{
		if (json_is_string(json_object_get(row, "error"))) {
			printf("%-*s  %s: %s\n", (int)width[COL_URL], cells[i * N_COLS + COL_URL],
			       json_is_true(json_object_get(row, "reachable")) ? "error"
			                                                       : "unreachable",
			       json_string_value(json_object_get(row, "error")));
			continue;
		}
		for (int c = 0; c < N_COLS - !show_events; c++) {
			const char *s = cells[i * N_COLS + c];
			int pad =
			    c == N_COLS - 1 - !show_events ? 0 : (int)(width[c] - text_width(s));

			printf("%s%s%*s", c ? "  " : "", s, pad, "");
		}
		printf("\n");
	}
	for (i = 0; i < n * N_COLS; i++)
		free(cells[i]);
	free(cells);
}

static void print_json(json_t *rows, double timeout_s, size_t unreachable, size_t failed)
{
	char when[32];
	time_t now = time(NULL);
	struct tm tm;
	json_t *doc;

	gmtime_r(&now, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	doc = json_pack("{s:s,s:f,s:I,s:I,s:I,s:O}", "generated_at", when, "timeout_s", timeout_s,
	                "hosts_total", (json_int_t)json_array_size(rows), "hosts_unreachable",
	                (json_int_t)unreachable, "hosts_failed", (json_int_t)failed, "hosts", rows);
	json_dumpf(doc, stdout, JSON_INDENT(2));
	fputc('\n', stdout);
	json_decref(doc);
}

/* --- the command ----------------------------------------------------------- */

static int fleet_report(struct fleet_host *hosts, size_t n, const struct fleet_args *a)
{
	json_t *rows = json_array();
	size_t failed = 0, unreachable = 0;

	for (size_t i = 0; i < n; i++) {
		json_array_append_new(rows, host_row(&hosts[i]));
		failed += hosts[i].error != NULL;
		unreachable += !hosts[i].reachable;
	}
	if (a->json)
		print_json(rows, a->timeout_s, unreachable, failed);
	else
		print_table(rows);
	json_decref(rows);
	if (fflush(stdout) != 0) {
		fprintf(stderr, "threadwatch fleet: cannot write the report: %s\n",
		        strerror(errno));
		return 1;
	}
	return failed ? 1 : 0;
}

int cli_fleet(int argc, char **argv)
{
	struct fleet_args a = {.timeout_s = FLEET_DEFAULT_TIMEOUT_S};
	struct fleet_host *hosts = NULL;
	char why[160];
	int rc = 2;

	if (parse_args(argc, argv, &a) < 0) {
		usage(stderr);
		goto out;
	}
	if (a.help) {
		usage(stdout);
		rc = 0;
		goto out;
	}
	if (a.n == 0) {
		fprintf(stderr, "threadwatch fleet: no hosts: name URLs or --file PATH\n");
		usage(stderr);
		goto out;
	}
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		fprintf(stderr, "threadwatch fleet: cannot initialise libcurl\n");
		rc = 1;
		goto out;
	}
	hosts = xcalloc(a.n, sizeof(*hosts));
	for (size_t i = 0; i < a.n; i++) {
		hosts[i].url = a.urls[i];
		hosts[i].base = base_url(a.urls[i], why, sizeof(why));
		if (!hosts[i].base) {
			fprintf(stderr, "threadwatch fleet: bad URL \"%s\" (%s): %s\n", a.urls[i],
			        a.origins[i], why);
			goto out_curl;
		}
	}
	if (fleet_ask(hosts, a.n, a.timeout_s) < 0) {
		fprintf(stderr, "threadwatch fleet: libcurl failed\n");
		rc = 1;
		goto out_curl;
	}
	rc = fleet_report(hosts, a.n, &a);
out_curl:
	for (size_t i = 0; hosts && i < a.n; i++) {
		free(hosts[i].base);
		free(hosts[i].body.buf);
		free(hosts[i].error);
		for (int s = 0; s < STEP_DONE; s++)
			json_decref(hosts[i].answer[s]);
	}
	free(hosts);
	curl_global_cleanup();
out:
	args_free(&a);
	return rc;
}
