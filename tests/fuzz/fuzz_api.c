/*
 * fuzz_api: libFuzzer harness for the API's request-target and query
 * parsing (daemon/api_parse.c). The input is a raw request target as a
 * client would send it ("/api/v1/runs?limit=10"); the harness runs it
 * through every parser the HTTP side uses and aborts when a result breaks
 * its documented bounds. It includes only daemon/api_parse.h (and the
 * pure http_asset_path_ok()), so it links the parser without the store.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api_parse.h"
#include "http_asset.h"
#include "fuzz.h"

/* The route patterns of daemon/http.c. */
static const char *const patterns[] = {
    "/api/v1/host",
    "/api/v1/runs",
    "/api/v1/runs/{id}",
    "/api/v1/series",
    "/api/v1/metrics",
    "/api/v1/events",
    "/metrics",
    "/dygraphs/*",
    "/",
    "/*",
};

static void check(int ok)
{
	if (!ok)
		abort();
}

/* An error is a 400 with a non-empty, terminated message. */
static void check_error(const struct api_error *err)
{
	char msg[sizeof(err->message)];

	check(err->status == 400);
	check(memchr(err->message, '\0', sizeof(err->message)) != NULL);
	check(err->message[0] != '\0');
	/* What api_error_body() sends the client: the message whole, as
	 * printable ASCII (so always valid JSON text). */
	api_printable(msg, sizeof(msg), err->message);
	check(strlen(msg) == strlen(err->message));
	for (const char *p = msg; *p; p++)
		check(*p >= 0x20 && *p < 0x7f);
}

/* A path http_asset_path_ok() accepts cannot leave its directory: no segment
 * is empty, "." or "..", or hidden. */
static void check_safe_path(const char *p)
{
	check(!strchr(p, '\\'));
	for (;;) {
		size_t n = strcspn(p, "/");

		check(n > 0 && p[0] != '.');
		if (!p[n])
			break;
		p += n + 1;
	}
}

static void parse_values(const struct api_target *t)
{
	for (unsigned i = 0; i < t->n_params; i++) {
		const char *v = t->params[i].value;
		int64_t n;

		if (api_parse_time(v, &n) == 0)
			check(n >= 0 && n <= 253402300799999LL);
		if (api_parse_id(v, &n) == 0)
			check(n >= 1);
		if (api_parse_int(v, -5, 500, &n) == 0)
			check(n >= -5 && n <= 500);
	}
}

static void parse_queries(const struct api_target *t)
{
	struct api_error err = {0};
	struct store_runs_query rq;
	struct store_events_query eq;
	struct api_series_query sq;

	if (api_parse_runs_query(t, 1796284316000LL, &rq, &err) == 0) {
		check(rq.limit >= 1 && rq.limit <= API_MAX_LIMIT);
		check(rq.cursor >= 0 && rq.since_ms >= 0 && rq.until_ms >= 0);
		check(!rq.since_ms || !rq.until_ms || rq.since_ms <= rq.until_ms);
	} else {
		check_error(&err);
	}
	if (api_parse_events_query(t, 1796284316000LL, &eq, &err) == 0) {
		check(eq.limit >= 1 && eq.limit <= API_EVENTS_MAX_LIMIT);
		check(eq.since_ms >= 0 && eq.until_ms >= 0);
		check(!eq.since_ms || !eq.until_ms || eq.since_ms <= eq.until_ms);
		check(!eq.metric || strchr(eq.metric, '.'));
	} else {
		check_error(&err);
	}
	if (api_parse_series_query(t, 1796284316000LL, &sq, &err) == 0) {
		check(sq.metric && strchr(sq.metric, '.'));
		check(sq.since_ms < sq.until_ms);
		check(sq.until_ms - sq.since_ms <= API_SERIES_MAX_RANGE_MS);
		check(sq.step_ms >= 1000);
		check(sq.step_auto ||
		      (sq.until_ms - sq.since_ms) / sq.step_ms <= API_SERIES_MAX_BUCKETS);
	} else {
		check_error(&err);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct api_error err = {0};
	struct api_target t;
	char cap[API_MAX_CAPTURE];
	char *uri = malloc(size + 1);

	if (!uri)
		return 0;
	memcpy(uri, data, size);
	uri[size] = '\0';
	{
		char auth[256];
		int r = api_target_authority(uri, auth, sizeof(auth));

		/* an authority is never empty and never carries userinfo */
		if (r > 0 && (!auth[0] || strchr(auth, '@') || strchr(auth, '/')))
			abort();
	}
	if (api_parse_target(uri, &t, &err) < 0) {
		check_error(&err);
		api_target_clear(&t);
		free(uri);
		return 0;
	}
	check(t.path[0] == '/' && t.n_params <= API_MAX_PARAMS);
	for (size_t i = 0; i < sizeof(patterns) / sizeof(patterns[0]); i++) {
		int64_t id;

		if (!api_parse_path(patterns[i], t.path, cap))
			continue;
		check(strlen(cap) < API_MAX_CAPTURE);
		if (api_parse_id(cap, &id) == 0)
			check(id >= 1);
		if (http_asset_path_ok(cap))
			check_safe_path(cap);
	}
	parse_values(&t);
	parse_queries(&t);
	api_target_clear(&t);
	free(uri);
	return 0;
}
