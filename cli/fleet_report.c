/*
 * fleet_report: what `threadwatch fleet` prints. Each host becomes one JSON
 * object (the --json document's "hosts" entries: the daemon's figures,
 * the target's file_sd labels, how long the host took, or why it could
 * not be read); the table is made from those objects.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"
#include "jpath.h"
#include "failure.h"
#include "fleetp.h"
#include "xmalloc.h"

const char *const fleet_figures[FLEET_N_FIGURES] = {
    "ctxsw.high_ns",
    "ctxsw.ratio",
    "handoff.cross_ratio",
    "stackmem.glibc_bytes_per_thread",
    "createscale.nocache_2_efficiency",
};

const char *fleet_figure_key(size_t i)
{
	/* Made once from the catalogue (the CLI has one thread). */
	static char keys[FLEET_N_FIGURES][128];

	if (!keys[i][0]) {
		const struct catalog_metric *m = catalog_metric_find(fleet_figures[i]);

		snprintf(keys[i], sizeof(keys[i]), "%s_%s", m ? m->probe : "?",
		         m ? m->scalar : "?");
	}
	return keys[i];
}

const char *fleet_figure_unit(size_t i)
{
	const struct catalog_metric *m = catalog_metric_find(fleet_figures[i]);

	return m ? m->unit : "";
}

/* The stack policies of the threads probe, for the knees. */
static const char *const policies[] = {"default", "low", "high"};
#define KNEE_POLICY "low" /* the one the table shows: the MAP_32BIT path */

/* The value at a '/'-separated path of object keys, or NULL. */
/* A copy of v, or JSON null. */
static json_t *or_null(const json_t *v)
{
	return v ? json_deep_copy(v) : json_null();
}

/* A row's figures: each of fleet_figures from the recommendation's
 * inputs, null where the host has none. */
static json_t *row_figures(const json_t *rec)
{
	json_t *o = json_object();

	for (size_t i = 0; i < FLEET_N_FIGURES; i++) {
		const struct catalog_metric *m = catalog_metric_find(fleet_figures[i]);
		char path[160];

		snprintf(path, sizeof(path), "inputs/%s/%s", m ? m->probe : "?",
		         m ? m->scalar : "?");
		json_object_set_new(o, fleet_figure_key(i), or_null(jpath_get(rec, path)));
	}
	return o;
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
	return jpath_get(
	    json_object_get(json_object_get(json_object_get(run, "doc"), "scalars"), scalar),
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
	        ? json_real(fleet_age_s(json_integer_value(now), json_integer_value(t)))
	        : json_null(),
	    "message", or_null(json_object_get(e, "message")));
}

/* libcurl's results that mean the TLS handshake or its checks failed. */
static const CURLcode tls_codes[] = {
    CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CERTPROBLEM,
    CURLE_SSL_CIPHER,        CURLE_SSL_CACERT_BADFILE,       CURLE_SSL_ISSUER_ERROR,
    CURLE_SSL_CRL_BADFILE,   CURLE_SSL_PINNEDPUBKEYNOTMATCH, CURLE_SSL_INVALIDCERTSTATUS,
};

/* Results that mean something answered, but not in HTTP: over plain HTTP,
 * most likely an HTTPS port. */
static const CURLcode not_http_codes[] = {CURLE_GOT_NOTHING, CURLE_WEIRD_SERVER_REPLY,
                                          CURLE_UNSUPPORTED_PROTOCOL, CURLE_RECV_ERROR};

static int code_in(CURLcode c, const CURLcode *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (v[i] == c)
			return 1;
	return 0;
}

/* Each failure's words. */
static const char *const failure_names[FLEET_N_FAILURES] = {
    [FLEET_READ] = "none",
    [FLEET_FAIL_ERROR] = "error",
    [FLEET_FAIL_NOT_API] = "not a threadwatchd API",
    [FLEET_FAIL_HTTP] = "HTTP error",
    [FLEET_FAIL_TLS] = "TLS error",
    [FLEET_FAIL_NOT_HTTP] = "no HTTP answer (an HTTPS port? try --scheme https)",
    [FLEET_FAIL_SILENT] = "no answer (connected, then silent)",
    [FLEET_FAIL_UNREACHABLE] = "unreachable",
};

const char *fleet_failure_name(enum fleet_failure f)
{
	return f < FLEET_N_FAILURES ? failure_names[f] : "?";
}

/* "unreachable" only when nothing answered at all. */
enum fleet_failure fleet_failure(const struct fleet_host *h)
{
	if (!h->error)
		return FLEET_READ;
	if (h->reachable)
		return FLEET_FAIL_ERROR;
	if (h->http_code == 404)
		return FLEET_FAIL_NOT_API;
	if (h->http_code > 0)
		return FLEET_FAIL_HTTP;
	if (code_in(h->curl_code, tls_codes, sizeof(tls_codes) / sizeof(tls_codes[0])))
		return FLEET_FAIL_TLS;
	if (!strncmp(h->base, "http:", 5) &&
	    code_in(h->curl_code, not_http_codes,
	            sizeof(not_http_codes) / sizeof(not_http_codes[0])))
		return FLEET_FAIL_NOT_HTTP;
	/* it took the connection, then said nothing in time: up, but stuck */
	if (h->curl_code == CURLE_OPERATION_TIMEDOUT && h->connected)
		return FLEET_FAIL_SILENT;
	return FLEET_FAIL_UNREACHABLE;
}

/* One host as the JSON document's entry; the table is made from it. */
json_t *fleet_host_row(const struct fleet_host *h)
{
	const json_t *st = h->answer[STEP_STATUS], *rec = h->answer[STEP_REC];
	const json_t *fp = jpath_get(h->answer[STEP_HOST], "current/fingerprint");
	const json_t *last = json_object_get(st, "last_cycle_ms"), *warn;
	json_t *row =
	    json_pack("{s:s,s:O,s:b,s:f}", "url", h->target->url, "labels", h->target->labels,
	              "reachable", h->reachable, "elapsed_ms",
	              h->end_ns > h->start_ns ? (double)(h->end_ns - h->start_ns) / 1e6 : 0.0);

	if (h->error) {
		json_object_set_new(row, "error", json_string(h->error));
		json_object_set_new(row, "failure",
		                    json_string(fleet_failure_name(fleet_failure(h))));
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
	json_object_set_new(row, "failed_probes", or_null(json_object_get(rec, "failed_probes")));
	json_object_set_new(row, "disabled_probes",
	                    or_null(json_object_get(rec, "disabled_probes")));
	json_object_set_new(row, "ctxsw_ratio", or_null(jpath_get(rec, "inputs/ctxsw/ratio")));
	json_object_set_new(row, "fingerprint", or_null(fp));
	json_object_set_new(row, "applicable", or_null(json_object_get(rec, "applicable")));
	json_object_set_new(row, "figures", row_figures(rec));
	json_object_set_new(row, "ctxsw_ratio_ci95",
	                    or_null(jpath_get(rec, "inputs/ctxsw/ratio_ci95")));
	json_object_set_new(row, "threads_run_id",
	                    h->run_id > 0 ? json_integer(h->run_id) : json_null());
	json_object_set_new(row, "knee",
	                    h->answer[STEP_RUN] ? knees(h->answer[STEP_RUN]) : json_null());
	json_object_set_new(row, "last_cycle_ms", or_null(last));
	json_object_set_new(
	    row, "last_cycle_age_s",
	    json_is_integer(last) && json_is_integer(json_object_get(st, "now_ms"))
	        ? json_real(fleet_age_s(json_integer_value(json_object_get(st, "now_ms")),
	                                json_integer_value(last)))
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

enum col {
	COL_URL,
	COL_LABELS,
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
    "URL",        "LABELS", "HOST", "KERNEL",     "GLIBC",    "VERDICT",
    "CONFIDENCE", "RATIO",  "KNEE", "LAST CYCLE", "HEADROOM", "EVENTS",
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

/* ": ctxsw crashed (SIGSEGV), map32 timed out" for the failed probes, or "". */
static char *failed_text(const json_t *row)
{
	const json_t *f;
	char *s = xstrdup(""), *next, one[512];
	size_t i;

	json_array_foreach(json_object_get(row, "failed_probes"), i, f)
	{
		failure_short(f, one, sizeof(one));
		xasprintf(&next, "%s%s%s", s, i ? ", " : ": ", one);
		free(s);
		s = next;
	}
	return s;
}

/* "3m ago", or "3m ago (partial: ctxsw crashed (SIGSEGV))" when the cycle
 * was not ok or a probe the recommendation needs failed. */
static char *cell_age(const json_t *row)
{
	const json_t *age = json_object_get(row, "last_cycle_age_s");
	const char *status = json_string_value(json_object_get(row, "last_cycle_status"));
	char buf[32], *s, *failed = failed_text(row);
	int note = (status && strcmp(status, "ok")) || *failed;

	if (!json_is_number(age)) {
		free(failed);
		return xstrdup(json_is_true(json_object_get(row, "cycle_running")) ? "running"
		                                                                   : "never");
	}
	fleet_format_age(json_number_value(age), buf, sizeof(buf));
	xasprintf(&s, "%s ago%s%s%s%s", buf, note ? " (" : "", note ? (status ? status : "?") : "",
	          failed, note ? ")" : "");
	free(failed);
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
	fleet_format_age(json_number_value(age), buf, sizeof(buf));
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

static int by_name(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* "env=prod,team=db" (sorted by name, as Prometheus shows labels), or "-". */
static char *cell_labels(json_t *labels)
{
	size_t n = json_object_size(labels), i = 0;
	const char **names = xcalloc(n ? n : 1, sizeof(*names)), *key;
	char *s = NULL, *next;
	json_t *v;

	json_object_foreach(labels, key, v) names[i++] = key;
	qsort(names, n, sizeof(*names), by_name);
	for (i = 0; i < n; i++) {
		xasprintf(&next, "%s%s%s=%s", s ? s : "", s ? "," : "", names[i],
		          json_string_value(json_object_get(labels, names[i])));
		free(s);
		s = next;
	}
	free(names);
	return s ? s : xstrdup("-");
}

static char *cell(const json_t *row, enum col c)
{
	const json_t *v;
	char *s;

	switch (c) {
	case COL_URL:
		return xstrdup(json_string_value(json_object_get(row, "url")));
	case COL_LABELS:
		return cell_labels(json_object_get(row, "labels"));
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

/* Which columns the table has: LABELS when some target has labels, EVENTS
 * unless every daemon that answered lacks /api/v1/events (threadwatch 0.1);
 * a fleet where no host answered keeps the whole layout. */
static void columns_shown(const json_t *rows, int shown[N_COLS])
{
	const json_t *row;
	int answered = 0, events = 0;
	size_t i;

	for (int c = 0; c < N_COLS; c++)
		shown[c] = c != COL_LABELS && c != COL_EVENTS;
	json_array_foreach(rows, i, row)
	{
		shown[COL_LABELS] |= json_object_size(json_object_get(row, "labels")) > 0;
		events |= json_is_integer(json_object_get(row, "events"));
		answered |= json_is_true(json_object_get(row, "reachable"));
	}
	shown[COL_EVENTS] = events || !answered;
}

/* One line: the cells of the shown columns, padded but the last; a row
 * with an error has its URL and labels, then the error. */
static void print_line(char *const *cells, const size_t *width, const int *shown, const char *error)
{
	int last = N_COLS - 1, first = 1;

	while (!shown[last])
		last--;
	for (int c = 0; c < N_COLS; c++) {
		const char *s = cells[c];

		if (!shown[c] || (error && c > COL_LABELS))
			continue;
		printf("%s%s%*s", first ? "" : "  ", s,
		       c == last ? 0 : (int)(width[c] - text_width(s)), "");
		first = 0;
	}
	if (error)
		printf("  %s", error);
	printf("\n");
}

void fleet_print_table(const json_t *rows)
{
	size_t n = json_array_size(rows), width[N_COLS] = {0}, i;
	char **cells = xcalloc((n + 1) * N_COLS, sizeof(*cells)), *error;
	int shown[N_COLS];
	const json_t *row;

	columns_shown(rows, shown);
	for (int c = 0; c < N_COLS; c++) {
		cells[c] = xstrdup(col_titles[c]);
		width[c] = text_width(col_titles[c]);
	}
	json_array_foreach(rows, i, row)
	{
		int err = json_is_string(json_object_get(row, "error"));

		for (int c = 0; c < N_COLS; c++) {
			char **cp = &cells[(i + 1) * N_COLS + c];

			*cp = fleet_printable(err && c > COL_LABELS ? xstrdup("")
			                                            : cell(row, (enum col)c));
			if (text_width(*cp) > width[c])
				width[c] = text_width(*cp);
		}
	}
	print_line(cells, width, shown, NULL);
	json_array_foreach(rows, i, row)
	{
		const char *msg = json_string_value(json_object_get(row, "error"));

		error = NULL;
		if (msg)
			xasprintf(&error, "%s: %s",
			          json_string_value(json_object_get(row, "failure")) ?: "error",
			          msg);
		print_line(&cells[(i + 1) * N_COLS], width, shown, fleet_printable(error));
		free(error);
	}
	for (i = 0; i < (n + 1) * N_COLS; i++)
		free(cells[i]);
	free(cells);
}
