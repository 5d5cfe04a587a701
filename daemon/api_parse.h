/*
 * api_parse: the API's request parsing, pure functions that the fuzz
 * harness (tests/fuzz/fuzz_api.c) links alone: request targets, query
 * parameters, route patterns, numbers, times and the queries of /runs,
 * /series and /events, with a 400 that names what is wrong. No store, no
 * jansson, no HTTP library.
 */
#ifndef TW_API_PARSE_H
#define TW_API_PARSE_H

#include <stddef.h>
#include <stdint.h>

#include "store_query.h"

#define API_MAX_PARAMS 16
#define API_MAX_CAPTURE 256
#define API_DEFAULT_LIMIT 50
#define API_MAX_LIMIT 500
/* /series: the widest range one query may span and the most buckets. */
#define API_SERIES_MAX_RANGE_MS (20LL * 366 * 86400 * 1000)
#define API_SERIES_MAX_BUCKETS 5000
#define API_SERIES_AUTO_BUCKETS 1000

struct api_param {
	const char *name;
	const char *value; /* "" when the parameter has no "=" */
};

/* A request target ("/api/v1/runs?probe=ctxsw&limit=10"), percent-decoded.
 * path and the parameters point into buf. */
struct api_target {
	const char *path;
	struct api_param params[API_MAX_PARAMS];
	unsigned n_params;
	char *buf;
};

/* What went wrong, as the HTTP status and a message for a person that
 * names the offending parameter. */
struct api_error {
	unsigned status;
	char message[256];
	char detail[256]; /* for the log only (the store's own message), or "" */
	/* A 503 that says "not yet" rather than "broken": the seconds for
	 * Retry-After (0: none). Such an answer is expected, so not logged. */
	unsigned retry_after_s;
};

/* Parses a raw request target (origin or absolute form). 0, or -EINVAL
 * with err set to 400 and why. Clear the target afterwards either way. */
int api_parse_target(const char *uri, struct api_target *t, struct api_error *err);
void api_target_clear(struct api_target *t);
/* The value of a query parameter, or NULL when absent. */
const char *api_param_get(const struct api_target *t, const char *name);
/* -EINVAL with a 400 naming the parameter when one is not in `allowed`
 * (NULL-terminated) or is given twice. */
int api_check_params(const struct api_target *t, const char *const *allowed, struct api_error *err);

/* Matches a path against a route pattern made of literal segments, at
 * most one "{name}" (one non-empty segment) and an optional trailing "*"
 * (the non-empty rest). The captured text is copied to cap (at most
 * API_MAX_CAPTURE - 1 bytes; longer does not match). 1 on a match. */
int api_parse_path(const char *pattern, const char *path, char cap[API_MAX_CAPTURE]);

/* Strict decimal readers; 0 or -EINVAL (-ERANGE when outside min..max). */
int api_parse_int(const char *s, int64_t min, int64_t max, int64_t *out);
/* A positive run id. */
int api_parse_id(const char *s, int64_t *id);
/* RFC 3339 ("2026-12-03T07:51:56.123Z", "...+02:00"), Unix seconds
 * ("1796284316", "1796284316.5", up to 12 digits) or Unix milliseconds (13
 * digits or more, "1796284316123", as the answers' *_ms fields) to Unix
 * milliseconds. 0 or -EINVAL. */
int api_parse_time(const char *s, int64_t *ms);

/* /runs: probe, status, since, until, cursor, limit. A 'since' after
 * now_ms without an 'until' is refused, as a series' is. */
int api_parse_runs_query(const struct api_target *t, int64_t now_ms, struct store_runs_query *q,
                         struct api_error *err);

struct api_series_query {
	const char *metric; /* "probe.scalar" */
	int64_t since_ms, until_ms, step_ms;
	int since_given; /* 0: since defaulted to the widest range */
	int step_auto;
};
/* /series: metric (required), since, until (default now_ms), step
 * (seconds or "auto": the range / API_SERIES_AUTO_BUCKETS). */
int api_parse_series_query(const struct api_target *t, int64_t now_ms, struct api_series_query *q,
                           struct api_error *err);
/* The range of a series query alone (since, until, step, as above), into q
 * (whose metric the caller has checked; its other fields are set here):
 * for a series of another kind of metric, /workloads/{ref}/series. */
int api_parse_series_range(const struct api_target *t, int64_t now_ms, struct api_series_query *q,
                           struct api_error *err);

/* /events: metric, since, until (on when the change began), limit
 * (1..API_EVENTS_MAX_LIMIT, default API_EVENTS_DEFAULT_LIMIT); a 'since'
 * after now_ms without an 'until' is refused, as a series' is. */
#define API_EVENTS_DEFAULT_LIMIT 100
#define API_EVENTS_MAX_LIMIT 1000
int api_parse_events_query(const struct api_target *t, int64_t now_ms, struct store_events_query *q,
                           struct api_error *err);

/* Copies src with every byte outside printable ASCII replaced by '?', so
 * that what a client sent is safe in JSON and in the log. */
void api_printable(char *dst, size_t size, const char *src);

/* Fills err and returns status. */
unsigned api_fail(struct api_error *err, unsigned status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The authority of an absolute-form request target ("http://HOST[:PORT]/..."),
 * which RFC 9112 section 3.2.2 says wins over the Host header: 1 with it in
 * out, 0 for an origin-form target, -EINVAL when it is empty, carries
 * userinfo or does not fit. */
int api_target_authority(const char *uri, char *out, size_t len);

#endif
