/*
 * api_parse: the pure half of the API: request targets, route patterns and
 * query parameters to typed values, with a 400 naming the bad parameter.
 * No I/O and no store access, so tests/fuzz/fuzz_api.c can drive it.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api_parse.h"
#include "units.h"
#include "xmalloc.h"

/* The latest instant accepted anywhere: 9999-12-31T23:59:59Z. */
#define MAX_UNIX_S 253402300799LL

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Percent-decodes [s, s + n) in place into dst (dst may equal s); '+' is a
 * space in the query. Returns the decoded length or -EINVAL. */
static long decode(char *dst, const char *s, size_t n, int plus_is_space)
{
	size_t o = 0;

	for (size_t i = 0; i < n; i++) {
		char c = s[i];

		if (c == '%') {
			int hi = i + 2 < n ? hexval(s[i + 1]) : -1;
			int lo = i + 2 < n ? hexval(s[i + 2]) : -1;

			if (hi < 0 || lo < 0 || (hi == 0 && lo == 0))
				return -EINVAL;
			c = (char)(hi << 4 | lo);
			i += 2;
		} else if (c == '+' && plus_is_space) {
			c = ' ';
		}
		dst[o++] = c;
	}
	dst[o] = '\0';
	return (long)o;
}

unsigned api_fail(struct api_error *err, unsigned status, const char *fmt, ...)
{
	va_list ap;

	err->status = status;
	err->detail[0] = '\0';
	va_start(ap, fmt);
	vsnprintf(err->message, sizeof(err->message), fmt, ap);
	va_end(ap);
	return status;
}

void api_printable(char *dst, size_t size, const char *src)
{
	size_t i = 0;

	for (; src[i] && i + 1 < size; i++)
		dst[i] = src[i] >= 0x20 && src[i] < 0x7f ? src[i] : '?';
	if (size)
		dst[i] = '\0';
}

void api_target_clear(struct api_target *t)
{
	if (!t)
		return;
	free(t->buf);
	memset(t, 0, sizeof(*t));
}

/* Splits "a=1&b&c=%20" into decoded parameters stored in t. */
static int parse_query(char *q, struct api_target *t, struct api_error *err)
{
	while (*q) {
		char *amp = strchr(q, '&');
		size_t len = amp ? (size_t)(amp - q) : strlen(q);
		char *eq = memchr(q, '=', len);
		size_t nlen = eq ? (size_t)(eq - q) : len;
		struct api_param *p;

		if (len == 0) {
			q++;
			continue;
		}
		if (nlen == 0) {
			api_fail(err, 400, "query parameter without a name");
			return -EINVAL;
		}
		if (t->n_params == API_MAX_PARAMS) {
			api_fail(err, 400, "too many query parameters (at most %d)",
			         API_MAX_PARAMS);
			return -EINVAL;
		}
		p = &t->params[t->n_params++];
		/* Decoding only shrinks, so names and values are decoded in
		 * place; the name is cut at '=' before the value is decoded. */
		if (decode(q, q, nlen, 1) < 0) {
			api_fail(err, 400, "bad percent-encoding in a query parameter name");
			return -EINVAL;
		}
		p->name = q;
		if (eq) {
			if (decode(eq + 1, eq + 1, len - nlen - 1, 1) < 0) {
				api_fail(err, 400, "bad percent-encoding in query parameter '%s'",
				         p->name);
				return -EINVAL;
			}
			p->value = eq + 1;
		} else {
			p->value = "";
		}
		if (!amp)
			break;
		q = amp + 1;
	}
	return 0;
}

int api_parse_target(const char *uri, struct api_target *t, struct api_error *err)
{
	const char *p = uri, *qm;
	size_t plen;
	char *buf;

	memset(t, 0, sizeof(*t));
	/* Absolute form ("http://host/path") is allowed by HTTP/1.1; its
	 * authority is checked with the Host header (api_target_authority). */
	if (!strncmp(p, "http://", 7) || !strncmp(p, "https://", 8)) {
		p = strchr(p + (p[4] == 's' ? 8 : 7), '/');
		if (!p) {
			api_fail(err, 400, "request target has no path");
			return -EINVAL;
		}
	}
	if (p[0] != '/') {
		api_fail(err, 400, "request target must start with '/'");
		return -EINVAL;
	}
	t->buf = buf = xstrdup(p);
	buf[strcspn(buf, "#")] = '\0';
	qm = strchr(buf, '?');
	plen = qm ? (size_t)(qm - buf) : strlen(buf);
	if (decode(buf, buf, plen, 0) < 0) {
		api_fail(err, 400, "bad percent-encoding in the path");
		return -EINVAL;
	}
	t->path = buf;
	if (qm)
		return parse_query(buf + plen + 1, t, err);
	return 0;
}

const char *api_param_get(const struct api_target *t, const char *name)
{
	for (unsigned i = 0; i < t->n_params; i++)
		if (!strcmp(t->params[i].name, name))
			return t->params[i].value;
	return NULL;
}

int api_check_params(const struct api_target *t, const char *const *allowed, struct api_error *err)
{
	for (unsigned i = 0; i < t->n_params; i++) {
		const char *name = t->params[i].name;
		size_t k = 0;

		while (allowed[k] && strcmp(allowed[k], name))
			k++;
		if (!allowed[k]) {
			api_fail(err, 400, "unknown parameter '%.64s'", name);
			return -EINVAL;
		}
		for (unsigned j = 0; j < i; j++)
			if (!strcmp(t->params[j].name, name)) {
				api_fail(err, 400, "parameter '%s' given more than once", name);
				return -EINVAL;
			}
	}
	return 0;
}

int api_parse_path(const char *pattern, const char *path, char cap[API_MAX_CAPTURE])
{
	cap[0] = '\0';
	while (*pattern) {
		if (pattern[0] == '*' && pattern[1] == '\0') {
			size_t n = strlen(path);

			if (n == 0 || n >= API_MAX_CAPTURE)
				return 0;
			memcpy(cap, path, n + 1);
			return 1;
		}
		if (pattern[0] == '{') {
			const char *close = strchr(pattern, '}');
			size_t n = strcspn(path, "/");

			if (!close || n == 0 || n >= API_MAX_CAPTURE)
				return 0;
			memcpy(cap, path, n);
			cap[n] = '\0';
			pattern = close + 1;
			path += n;
			continue;
		}
		if (*pattern != *path)
			return 0;
		pattern++;
		path++;
	}
	return *path == '\0';
}

int api_parse_int(const char *s, int64_t min, int64_t max, int64_t *out)
{
	int64_t v = 0;
	int neg = 0;

	if (*s == '-') {
		neg = 1;
		s++;
	}
	if (*s < '0' || *s > '9')
		return -EINVAL;
	for (; *s >= '0' && *s <= '9'; s++) {
		int d = *s - '0';

		if (v > (INT64_MAX - d) / 10)
			return -ERANGE;
		v = v * 10 + d;
	}
	if (*s)
		return -EINVAL;
	if (neg)
		v = -v;
	if (v < min || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

int api_parse_id(const char *s, int64_t *id)
{
	if (*s == '-')
		return -EINVAL;
	return api_parse_int(s, 1, INT64_MAX, id);
}

/* Reads exactly n digits. */
static int digits(const char **s, int n, int *out)
{
	int v = 0;

	for (int i = 0; i < n; i++) {
		char c = (*s)[i];

		if (c < '0' || c > '9')
			return -EINVAL;
		v = v * 10 + (c - '0');
	}
	*s += n;
	*out = v;
	return 0;
}

/* Reads ".ddd..." (1..9 digits) as milliseconds, truncated. */
static int fraction_ms(const char **s, int *ms)
{
	const char *p = *s;
	int n = 0, v = 0;

	*ms = 0;
	if (*p != '.')
		return 0;
	p++;
	while (*p >= '0' && *p <= '9') {
		if (n == 9)
			return -EINVAL;
		if (n < 3)
			v = v * 10 + (*p - '0');
		n++;
		p++;
	}
	if (n == 0)
		return -EINVAL;
	while (n < 3) {
		v *= 10;
		n++;
	}
	*ms = v;
	*s = p;
	return 0;
}

/* Days from 1970-01-01 to a proleptic Gregorian date. */
static int64_t days_from_civil(int y, int m, int d)
{
	int64_t era, yoe, doy, doe;

	y -= m <= 2;
	era = y / 400;
	yoe = y - era * 400;
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

static int month_days(int y, int m)
{
	static const int len[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
	int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;

	return len[m - 1] + (m == 2 && leap);
}

static int parse_rfc3339(const char *s, int64_t *ms)
{
	int y, mo, d, h, mi, sec, frac, oh = 0, om = 0, sign = 0;
	int64_t t;

	if (digits(&s, 4, &y) || *s++ != '-' || digits(&s, 2, &mo) || *s++ != '-' ||
	    digits(&s, 2, &d))
		return -EINVAL;
	if (*s != 'T' && *s != 't' && *s != ' ')
		return -EINVAL;
	s++;
	if (digits(&s, 2, &h) || *s++ != ':' || digits(&s, 2, &mi) || *s++ != ':' ||
	    digits(&s, 2, &sec) || fraction_ms(&s, &frac))
		return -EINVAL;
	if (*s == 'Z' || *s == 'z') {
		s++;
	} else if (*s == '+' || *s == '-') {
		sign = *s++ == '-' ? -1 : 1;
		if (digits(&s, 2, &oh) || *s++ != ':' || digits(&s, 2, &om) || oh > 23 || om > 59)
			return -EINVAL;
	} else {
		return -EINVAL;
	}
	if (*s || y < 1970 || mo < 1 || mo > 12 || d < 1 || d > month_days(y, mo) || h > 23 ||
	    mi > 59 || sec > 60)
		return -EINVAL;
	if (sec == 60) /* a leap second reads as the last second of its minute */
		sec = 59;
	t = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec;
	t -= sign * (oh * 3600 + om * 60);
	if (t < 0 || t > MAX_UNIX_S)
		return -EINVAL;
	*ms = t * 1000 + frac;
	return 0;
}

/* Digits that make Unix milliseconds rather than seconds: seconds have at
 * most 12 (MAX_UNIX_S), today's milliseconds 13. */
#define MS_DIGITS 13

int api_parse_time(const char *s, int64_t *ms)
{
	const char *p = s;
	int64_t v = 0;
	int frac, n = 0;

	if (strlen(s) > 4 && s[4] == '-')
		return parse_rfc3339(s, ms);
	while (*p >= '0' && *p <= '9') {
		if (++n > MS_DIGITS + 2)
			return -EINVAL;
		v = v * 10 + (*p++ - '0');
	}
	if (n >= MS_DIGITS) {
		if (*p || v > MAX_UNIX_S * 1000 + 999)
			return -EINVAL;
		*ms = v;
		return 0;
	}
	if (n == 0 || fraction_ms(&p, &frac) || *p || v > MAX_UNIX_S)
		return -EINVAL;
	*ms = v * 1000 + frac;
	return 0;
}

/* A probe name: [a-z0-9_-], 1..64 characters. */
static int probe_name_ok(const char *s)
{
	size_t n = strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789_-");

	return n > 0 && n <= 64 && s[n] == '\0';
}

/* A metric name: "probe.scalar" with the scalar in [A-Za-z0-9_.-]. */
static int metric_name_ok(const char *s)
{
	const char *dot = strchr(s, '.');
	size_t n;

	if (!dot || dot == s || dot - s > 64)
		return 0;
	for (const char *p = s; p < dot; p++)
		if (!strchr("abcdefghijklmnopqrstuvwxyz0123456789_-", *p))
			return 0;
	n = strspn(dot + 1, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-");
	return n > 0 && n <= 64 && dot[1 + n] == '\0';
}

static int time_param(const struct api_target *t, const char *name, int64_t *ms, int *given,
                      struct api_error *err)
{
	const char *v = api_param_get(t, name);

	*given = v != NULL;
	if (v && api_parse_time(v, ms) < 0) {
		api_fail(
		    err, 400,
		    "parameter '%s' must be an RFC 3339 time, Unix seconds or Unix milliseconds, "
		    "not \"%.40s\"",
		    name, v);
		return -EINVAL;
	}
	return 0;
}

/* A 'since' that was given, with 'until' left to its default (now), must
 * lie before now: a range that starts in the future holds nothing, and the
 * 400 names the 'until' the client did not give as what it defaulted to.
 * Every range of the API (runs, events, series) answers it alike. */
static int since_not_future(int64_t since, int since_given, int until_given, int64_t now_ms,
                            struct api_error *err)
{
	if (since_given && !until_given && since >= now_ms) {
		api_fail(err, 400, "parameter 'since' is in the future ('until' defaults to now)");
		return -EINVAL;
	}
	return 0;
}

/* Optional 'since' and 'until' (absolute times); since must not be after
 * until, nor in the future without an until. Absent ones stay 0. */
static int range_params(const struct api_target *t, int64_t now_ms, int64_t *since, int64_t *until,
                        struct api_error *err)
{
	int since_given, until_given;

	if (time_param(t, "since", since, &since_given, err) < 0 ||
	    time_param(t, "until", until, &until_given, err) < 0 ||
	    since_not_future(*since, since_given, until_given, now_ms, err) < 0)
		return -EINVAL;
	if (*since && *until && *since > *until) {
		api_fail(err, 400, "parameter 'since' is after 'until'");
		return -EINVAL;
	}
	return 0;
}

/* Optional 'limit' from 1 to max; *limit keeps its default when absent. */
static int limit_param(const struct api_target *t, int max, int *limit, struct api_error *err)
{
	const char *v = api_param_get(t, "limit");
	int64_t n;

	if (!v)
		return 0;
	if (api_parse_int(v, 1, max, &n) < 0) {
		api_fail(err, 400, "parameter 'limit' must be an integer from 1 to %d", max);
		return -EINVAL;
	}
	*limit = (int)n;
	return 0;
}

static const char *const events_params[] = {"metric", "since", "until", "limit", NULL};

int api_parse_events_query(const struct api_target *t, int64_t now_ms, struct store_events_query *q,
                           struct api_error *err)
{
	const char *v;

	memset(q, 0, sizeof(*q));
	q->limit = API_EVENTS_DEFAULT_LIMIT;
	if (api_check_params(t, events_params, err) < 0)
		return -EINVAL;
	v = api_param_get(t, "metric");
	if (v && !metric_name_ok(v)) {
		api_fail(err, 400, "parameter 'metric' must look like \"ctxsw.ratio\"");
		return -EINVAL;
	}
	q->metric = v;
	if (range_params(t, now_ms, &q->since_ms, &q->until_ms, err) < 0)
		return -EINVAL;
	return limit_param(t, API_EVENTS_MAX_LIMIT, &q->limit, err);
}

static const char *const runs_params[] = {"probe",  "status", "since", "until",
                                          "cursor", "limit",  NULL};

int api_parse_runs_query(const struct api_target *t, int64_t now_ms, struct store_runs_query *q,
                         struct api_error *err)
{
	const char *v;

	memset(q, 0, sizeof(*q));
	q->limit = API_DEFAULT_LIMIT;
	if (api_check_params(t, runs_params, err) < 0)
		return -EINVAL;
	v = api_param_get(t, "probe");
	if (v && !probe_name_ok(v))
		goto bad_probe;
	q->probe = v;
	v = api_param_get(t, "status");
	if (v && strcmp(v, "ok") && strcmp(v, "skipped") && strcmp(v, "error") &&
	    strcmp(v, "not_applicable")) {
		api_fail(err, 400,
		         "parameter 'status' must be ok, skipped, not_applicable or error");
		return -EINVAL;
	}
	q->status = v;
	if (range_params(t, now_ms, &q->since_ms, &q->until_ms, err) < 0)
		return -EINVAL;
	v = api_param_get(t, "cursor");
	if (v && api_parse_id(v, &q->cursor) < 0) {
		api_fail(err, 400, "parameter 'cursor' must be a run id from next_cursor");
		return -EINVAL;
	}
	return limit_param(t, API_MAX_LIMIT, &q->limit, err);

bad_probe:
	api_fail(err, 400, "parameter 'probe' must be a probe name ([a-z0-9_-], 1 to 64)");
	return -EINVAL;
}

static const char *const series_params[] = {"metric", "since", "until", "step", NULL};

int api_parse_series_query(const struct api_target *t, int64_t now_ms, struct api_series_query *q,
                           struct api_error *err)
{
	memset(q, 0, sizeof(*q));
	if (api_check_params(t, series_params, err) < 0)
		return -EINVAL;
	q->metric = api_param_get(t, "metric");
	if (!q->metric) {
		api_fail(err, 400, "parameter 'metric' is required (see /api/v1/metrics)");
		return -EINVAL;
	}
	if (!metric_name_ok(q->metric)) {
		api_fail(err, 400, "parameter 'metric' must look like \"ctxsw.ratio\"");
		return -EINVAL;
	}
	return api_parse_series_range(t, now_ms, q, err);
}

int api_parse_series_range(const struct api_target *t, int64_t now_ms, struct api_series_query *q,
                           struct api_error *err)
{
	const char *v;
	int64_t range, step_s;
	double step_d;
	int given;

	q->until_ms = now_ms;
	if (time_param(t, "until", &q->until_ms, &given, err) < 0 ||
	    time_param(t, "since", &q->since_ms, &q->since_given, err) < 0)
		return -EINVAL;
	if (!q->since_given)
		q->since_ms = q->until_ms > API_SERIES_MAX_RANGE_MS
		                  ? q->until_ms - API_SERIES_MAX_RANGE_MS
		                  : 0;
	if (since_not_future(q->since_ms, q->since_given, given, now_ms, err) < 0)
		return -EINVAL;
	if (q->since_ms >= q->until_ms) {
		api_fail(err, 400, "parameter 'since' must be before 'until'");
		return -EINVAL;
	}
	range = q->until_ms - q->since_ms;
	if (range > API_SERIES_MAX_RANGE_MS) {
		api_fail(err, 400, "parameter 'since' is more than %lld days before 'until'",
		         API_SERIES_MAX_RANGE_MS / 86400000);
		return -EINVAL;
	}
	v = api_param_get(t, "step");
	if (!v || !strcmp(v, "auto")) {
		q->step_auto = 1;
		q->step_ms = (range + API_SERIES_AUTO_BUCKETS - 1) / API_SERIES_AUTO_BUCKETS;
		if (q->step_ms < 1000)
			q->step_ms = 1000;
		return 0;
	}
	/* The durations the config and the CLI take ("3600", "1h", "1h30m"),
	 * in whole seconds. */
	if (units_parse_duration(v, &step_d) < 0 || !(step_d >= 1) ||
	    step_d > (double)(API_SERIES_MAX_RANGE_MS / 1000) || step_d != floor(step_d)) {
		api_fail(err, 400,
		         "parameter 'step' must be a duration of whole seconds, 1 s or more "
		         "(3600, 1h, 1h30m), or \"auto\"");
		return -EINVAL;
	}
	step_s = (int64_t)step_d;
	q->step_ms = step_s * 1000;
	/* Without 'since', an explicit step covers the latest buckets it can. */
	if (!q->since_given && range / q->step_ms > API_SERIES_MAX_BUCKETS)
		q->since_ms = q->until_ms - q->step_ms * API_SERIES_MAX_BUCKETS;
	else if (range / q->step_ms > API_SERIES_MAX_BUCKETS) {
		api_fail(err, 400, "parameter 'step' is too small: at most %d buckets per query",
		         API_SERIES_MAX_BUCKETS);
		return -EINVAL;
	}
	return 0;
}

int api_target_authority(const char *uri, char *out, size_t len)
{
	size_t skip, n;

	if (!strncmp(uri, "http://", 7))
		skip = 7;
	else if (!strncmp(uri, "https://", 8))
		skip = 8;
	else
		return 0;
	uri += skip;
	n = strcspn(uri, "/?#");
	if (!n || n >= len || memchr(uri, '@', n))
		return -EINVAL;
	memcpy(out, uri, n);
	out[n] = '\0';
	return 1;
}
