/*
 * cli_status: `threadwatch status`, how one threadwatchd is now: its host
 * and version, its cycle (a probe running, a wait for a quiet host with
 * the figure against its limit, or when the next is due), how the last
 * cycle ended, its store, its latest observer window and its verdict in
 * plain words; with --json its /api/v1/status unchanged. It asks as
 * `fleet` asks each host (fleet_conn.c, fleet_ask.c), and every word of
 * the daemon's reaches the terminal through fleet_printable().
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "fleetp.h"
#include "jpath.h"
#include "opt.h"
#include "xmalloc.h"

/* The daemon's default listen address, as `make run` and the package
 * serve it. */
#define STATUS_DEFAULT_URL "http://" TW_DEFAULT_LISTEN_ADDRESS ":" FLEET_DEFAULT_PORT

/* The exit status of each way the daemon could not be read (threadwatch(1)
 * and the usage list them): 1 nothing to talk to, 4 it took the connection
 * and said nothing, 5 it said something that is not a threadwatchd's
 * status. */
#define STATUS_EXIT_UNREACHABLE 1
#define STATUS_EXIT_SILENT 4
#define STATUS_EXIT_BAD_ANSWER 5
static const int failure_exit[FLEET_N_FAILURES] = {
    [FLEET_READ] = 0,
    [FLEET_FAIL_ERROR] = STATUS_EXIT_BAD_ANSWER,
    [FLEET_FAIL_NOT_API] = STATUS_EXIT_BAD_ANSWER,
    [FLEET_FAIL_HTTP] = STATUS_EXIT_BAD_ANSWER,
    [FLEET_FAIL_TLS] = STATUS_EXIT_UNREACHABLE,
    [FLEET_FAIL_NOT_HTTP] = STATUS_EXIT_BAD_ANSWER,
    [FLEET_FAIL_SILENT] = STATUS_EXIT_SILENT,
    [FLEET_FAIL_UNREACHABLE] = STATUS_EXIT_UNREACHABLE,
};

struct status_args {
	int json, help;
	struct fleet_conn_args conn_args;
};

static const struct opt status_opts[] = {
    {"json", 0, NULL, "print the daemon's /api/v1/status document as it sent it", NULL,
     offsetof(struct status_args, json)},
    FLEET_CONN_OPTS(struct status_args, conn_args),
    {"help", 'h', NULL, "show this help", NULL, offsetof(struct status_args, help)},
};

#define N_OPTS (sizeof(status_opts) / sizeof(status_opts[0]))

static void usage(FILE *f)
{
	fprintf(
	    f, "usage: threadwatch status [OPTION]... [URL]\n\n" CLI_SUMMARY_STATUS "\n"
	       "It prints the daemon's host and version; its cycle: running (which probe),\n"
	       "waiting for a quiet host (the measure, its value against the limit, and when\n"
	       "the cycle runs anyway) or idle until the next; how the last cycle ended;\n"
	       "whether its database takes writes; its latest observer window; and its\n"
	       "verdict in plain words.\n\n"
	       "URL: http[s]://HOST[:PORT][/PREFIX], or HOST[:PORT] (http, port " FLEET_DEFAULT_PORT
	       ");\n"
	       "default " STATUS_DEFAULT_URL ", the daemon's default listen address.\n\n"
	       "Exit status: 0 the daemon answered; 1 unreachable (no connection, or its TLS\n"
	       "failed); 2 bad usage; 4 no answer (it took the connection, then said nothing\n"
	       "within --timeout); 5 a bad answer (an HTTP error, not a threadwatchd, not\n"
	       "JSON). The text says the daemon's state; a script reads --json.\n\n"
	       "Options:\n");
	opt_usage(f, status_opts, N_OPTS);
}

/* --- the text ----------------------------------------------------------------- */

/* What the text is made from: the daemon's answers, made printable. */
struct status_view {
	const char *url;
	const json_t *st, *host, *rec;
	int64_t now_ms; /* the daemon's clock: its times are read against it */
};

/* t_ms against the daemon's clock: "in 41s" or "3m ago"; -ENOENT (buf
 * untouched) when it is not a time. */
static int when(const struct status_view *v, const json_t *t_ms, char *buf, size_t len)
{
	double ago = fleet_age_s(v->now_ms, json_integer_value(t_ms));
	char age[32];

	if (!json_is_integer(t_ms))
		return -ENOENT;
	fleet_format_age(ago < 0 ? -ago : ago, age, sizeof(age));
	snprintf(buf, len, ago < 0 ? "in %s" : "%s ago", age);
	return 0;
}

static void text_daemon(const struct status_view *v, char *buf, size_t len)
{
	const char *version = json_string_value(json_object_get(v->st, "version"));
	const char *name = json_string_value(jpath_get(v->host, "current/fingerprint/hostname"));

	snprintf(buf, len, "threadwatchd %s on %s (%s)", version ? version : "?",
	         name ? name : "an unnamed host", v->url);
}

/* Running (which probe), waiting for a quiet host (for what), or idle. */
static void text_cycle(const struct status_view *v, char *buf, size_t len)
{
	const json_t *wait = json_object_get(v->st, "waiting_for_quiet_host");
	const json_t *next = json_object_get(v->st, "next_cycle_ms");
	const char *probe = json_string_value(json_object_get(v->st, "current_probe"));
	long long retry = json_integer_value(json_object_get(v->st, "next_cycle_retry"));
	char w[48];

	if (json_is_object(wait)) {
		const char *unit = json_string_value(json_object_get(wait, "unit"));
		const char *measure = json_string_value(json_object_get(wait, "measure"));

		if (when(v, json_object_get(wait, "until_ms"), w, sizeof(w)) < 0)
			snprintf(w, sizeof(w), "at a time it does not say");
		else if (strstr(w, " ago"))
			snprintf(w, sizeof(w), "now"); /* its wait is over */
		snprintf(
		    buf, len,
		    "waiting for a quiet host: %s is %.4g%s, above its limit %.4g%s; the cycle "
		    "runs anyway %s",
		    measure ? measure : "?", json_number_value(json_object_get(wait, "value")),
		    unit ? unit : "", json_number_value(json_object_get(wait, "limit")),
		    unit ? unit : "", w);
		return;
	}
	if (json_is_true(json_object_get(v->st, "cycle_running"))) {
		if (probe)
			snprintf(buf, len, "running: probe %s", probe);
		else
			snprintf(buf, len, "running, between probes");
		return;
	}
	if (when(v, next, w, sizeof(w)) < 0)
		snprintf(buf, len, "idle; no cycle is scheduled");
	else
		snprintf(buf, len, "idle; the next cycle %s%s", w,
		         retry > 0 ? " (a retry of a failed or interrupted one)" : "");
}

static void text_last(const struct status_view *v, char *buf, size_t len)
{
	const char *status = json_string_value(json_object_get(v->st, "last_cycle_status"));
	const json_t *ended = json_object_get(v->st, "last_cycle_ms");
	char w[48];

	if (when(v, ended, w, sizeof(w)) < 0)
		snprintf(buf, len, "none has ended yet");
	else
		snprintf(buf, len, "%s, ended %s", status ? status : "?", w);
}

static void text_store(const struct status_view *v, char *buf, size_t len)
{
	const char *err = json_string_value(json_object_get(v->st, "store_error"));

	if (err)
		snprintf(buf, len, "failing: %s", err);
	else
		snprintf(buf, len, "ok (the database takes writes)");
}

static void text_workloads(const struct status_view *v, char *buf, size_t len)
{
	const json_t *end = json_object_get(v->st, "workloads_window_end_ms");
	char w[48];

	if (!end)
		snprintf(buf, len, "not reported by this daemon");
	else if (when(v, end, w, sizeof(w)) < 0)
		snprintf(buf, len, "no observer window yet (threadwatch-observer)");
	else
		snprintf(buf, len, "the latest observer window ended %s", w);
}

static void text_verdict(const struct status_view *v, char *buf, size_t len)
{
	const char *verdict = json_string_value(json_object_get(v->rec, "verdict"));
	const char *conf = json_string_value(json_object_get(v->rec, "confidence"));
	const char *action = json_string_value(json_object_get(v->rec, "action"));

	if (!action)
		action = json_string_value(json_object_get(v->rec, "sentence"));
	if (!verdict) {
		snprintf(buf, len, "none yet (the first cycle's end brings it)");
		return;
	}
	snprintf(buf, len, "%s (confidence: %s): %s", verdict, conf ? conf : "?",
	         action ? action : "-");
}

/* The lines of the text, in order. */
static const struct status_line {
	const char *label;
	void (*text)(const struct status_view *v, char *buf, size_t len);
} lines[] = {
    {"daemon", text_daemon}, {"cycle", text_cycle},         {"last cycle", text_last},
    {"store", text_store},   {"workloads", text_workloads}, {"verdict", text_verdict},
};

/* The text from the answers; st, host and rec (NULL: not answered) are
 * copied and made printable first. */
static void print_text(const char *url, const json_t *st, const json_t *host, const json_t *rec)
{
	json_t *docs[3] = {json_deep_copy(st), json_deep_copy(host), json_deep_copy(rec)};
	char *u = fleet_printable(xstrdup(url));
	char buf[1024];
	struct status_view v;

	for (size_t i = 0; i < 3; i++)
		fleet_printable_json(docs[i]);
	v = (struct status_view){.url = u,
	                         .st = docs[0],
	                         .host = docs[1],
	                         .rec = docs[2],
	                         .now_ms = json_integer_value(json_object_get(docs[0], "now_ms"))};
	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		lines[i].text(&v, buf, sizeof(buf));
		printf("%-11s %s\n", lines[i].label, buf);
	}
	free(u);
	for (size_t i = 0; i < 3; i++)
		json_decref(docs[i]);
}

/* --- the command ---------------------------------------------------------------- */

/* -EINVAL with a message on stderr for anything it does not know; *url is
 * the one operand, or the default. */
static int parse_args(int argc, char **argv, struct status_args *a, struct fleet_conn *c,
                      const char **url)
{
	char err[512];
	int first = opt_parse(argc, argv, status_opts, N_OPTS, a, err, sizeof(err));

	if (first < 0 || fleet_conn_args_apply(&a->conn_args, c, err, sizeof(err)) < 0) {
		fprintf(stderr, "threadwatch status: %s\n", err);
		return -EINVAL;
	}
	if (argc - first > 1) {
		fprintf(stderr,
		        "threadwatch status: one daemon at a time (\"%s\" and \"%s\"); "
		        "threadwatch fleet asks many\n",
		        argv[first], argv[first + 1]);
		return -EINVAL;
	}
	*url = first < argc ? argv[first] : STATUS_DEFAULT_URL;
	return 0;
}

int cli_status(int argc, char **argv)
{
	struct status_args a = {.conn_args = {.timeout_s = FLEET_DEFAULT_TIMEOUT_S}};
	struct fleet_conn c = {.concurrency = 1};
	const struct fleet_host *h;
	struct fleet_one o;
	enum fleet_failure fail;
	const char *url = NULL;
	char why[256];
	int r, rc = 2;

	if (parse_args(argc, argv, &a, &c, &url) < 0) {
		opt_try_help(stderr, "threadwatch status");
		goto out;
	}
	if (a.help) {
		usage(stdout);
		rc = 0;
		goto out;
	}
	/* --json is the status alone; the text names the host and the verdict */
	c.steps = a.json ? FLEET_STEP(STEP_STATUS)
	                 : FLEET_STEP(STEP_STATUS) | FLEET_STEP(STEP_HOST) | FLEET_STEP(STEP_REC);
	c.keep = c.steps;
	r = fleet_one_ask(&o, url, "URL", &c, why, sizeof(why));
	h = &o.h;
	if (r < 0) {
		fprintf(stderr, "threadwatch status: %s: %s\n", url, why);
		if (r == -EINVAL)
			opt_try_help(stderr, "threadwatch status");
		rc = r == -EINVAL ? 2 : 1;
		goto out_one;
	}
	fail = fleet_failure(h);
	rc = failure_exit[fail];
	/* Whatever came after it, a status that answered is shown. */
	if (h->kept[STEP_STATUS]) {
		if (a.json) {
			/* the document as sent; non-ASCII escaped, so that no
			 * byte of it reaches the terminal raw */
			json_dumpf(h->kept[STEP_STATUS], stdout,
			           JSON_INDENT(2) | JSON_ENSURE_ASCII);
			fputc('\n', stdout);
		} else {
			print_text(h->base, h->kept[STEP_STATUS], h->kept[STEP_HOST],
			           h->kept[STEP_REC]);
		}
	}
	if (h->error) {
		char *err = fleet_printable(xstrdup(h->error));

		fprintf(stderr, "threadwatch status: %s: %s: %s\n", h->base,
		        fleet_failure_name(fail), err);
		free(err);
	}
	if (fflush(stdout) != 0) {
		fprintf(stderr, "threadwatch status: cannot write: %s\n", strerror(errno));
		rc = 1;
	}
out_one:
	fleet_one_free(&o);
out:
	fleet_conn_args_free(&a.conn_args);
	return rc;
}
