/*
 * fleetp: what the parts of `threadwatch fleet` share (private to cli/):
 * the targets and where they came from (fleet_targets.c, fleet_sd_json.c,
 * fleet_sd_yaml.c), asking the hosts (fleet_ask.c) and the report
 * (fleet_report.c). cli_fleet.c is the command that ties them together.
 */
#ifndef TW_FLEETP_H
#define TW_FLEETP_H

#include <stddef.h>
#include <stdint.h>

#include <curl/curl.h>
#include <jansson.h>

#include "defaults.h"

/* One host to ask, as named on the command line or in --file. */
struct fleet_target {
	char *url;      /* as given: a URL or HOST:PORT */
	char *origin;   /* "argument N" or "FILE:LINE", for messages */
	char *scheme;   /* a file_sd group's __scheme__ label, or NULL */
	json_t *labels; /* the group's labels without __* ones (an object) */
};

struct fleet_targets {
	struct fleet_target *v;
	size_t n;
};

/* Appends a target; takes over labels (NULL: none). */
void fleet_targets_add(struct fleet_targets *t, const char *url, const char *origin,
                       json_t *labels);
void fleet_targets_free(struct fleet_targets *t);

/* Reads --file PATH: one URL a line, or Prometheus file_sd as JSON or
 * YAML, told apart by the content. 0, or -errno with "PATH:LINE: why". */
int fleet_file_read(const char *path, struct fleet_targets *t, char *why, size_t wlen);

/* Adds the targets of one file_sd group (targets: a JSON array, labels: a
 * JSON object or NULL), checking them; origin is "PATH:LINE" of the group.
 * Both parsers call it, so that JSON and YAML obey the same rules. */
int fleet_sd_group(struct fleet_targets *t, json_t *targets, json_t *labels, const char *origin,
                   char *why, size_t wlen);

/* The file_sd parsers: buf holds the whole file (NUL-terminated). */
int fleet_sd_json(const char *path, const char *buf, size_t len, struct fleet_targets *t, char *why,
                  size_t wlen);
int fleet_sd_yaml(const char *path, char *buf, struct fleet_targets *t, char *why, size_t wlen);

/* What is asked of each host, in this order. */
enum fleet_step {
	STEP_STATUS, /* always asked, first: it says the host is a threadwatchd */
	STEP_HOST,
	STEP_REC,
	STEP_HEADROOM,
	STEP_EVENTS,
	STEP_RUNS,
	STEP_RUN,
	STEP_WORKLOADS, /* only under fleet --workloads */
	STEP_DONE
};

/* A set of steps, for fleet_conn's steps and keep. */
#define FLEET_STEP(s) (1u << (s))

/* How the hosts are asked. */
struct fleet_conn {
	double timeout_s; /* each host's budget for all its answers */
	long concurrency; /* hosts in flight at once */
	const char *cacert;
	int insecure;
	const char *token;   /* NULL: no Authorization header */
	int token_over_http; /* the token may go to http:// URLs too */
	unsigned steps;      /* the steps asked (0: all that fleet's table shows) */
	unsigned keep;       /* the steps whose answers each host keeps (kept[]) */
	int workloads;       /* ask /api/v1/workloads too (fleet --workloads) */
};

/* The options that say how daemons are asked, as `fleet` and `status`
 * take them (fleet_conn.c): FLEET_CONN_OPTS(TYPE, MEMBER) are their rows
 * of an opt table whose context TYPE holds them in MEMBER. */
struct fleet_conn_args {
	double timeout_s;
	int insecure, token_over_http;
	char *cacert, *token; /* owned */
};

#define FLEET_DEFAULT_TIMEOUT_S 5.0
/* The daemon's default port (threadwatchd's `port`), for a target named
 * by its host alone. */
#define FLEET_DEFAULT_PORT TW_STR(TW_DEFAULT_PORT)
int fleet_set_timeout(void *ctx, const char *v, char *why, size_t wlen);
int fleet_set_cacert(void *ctx, const char *path, char *why, size_t wlen);
int fleet_set_token(void *ctx, const char *path, char *why, size_t wlen);
/* clang-format off */
#define FLEET_CONN_OPTS(type, m)                                                          \
	{"timeout", 0, "DURATION",                                                        \
	 "time each daemon may take for all its answers, such as 5s or 1m "               \
	 "(default 5s; 10ms to 1h)",                                                      \
	 fleet_set_timeout, offsetof(type, m)},                                           \
	{"cacert", 0, "FILE", "verify the daemons' TLS certificates against the CAs in FILE", \
	 fleet_set_cacert, offsetof(type, m)},                                            \
	{"insecure", 0, NULL, "do not verify TLS certificates (self-signed daemons)",     \
	 NULL, offsetof(type, m.insecure)},                                               \
	{"token", 0, "FILE",                                                              \
	 "send the first line of FILE as \"Authorization: Bearer\" (not readable by "    \
	 "others), to https:// URLs only",                                                \
	 fleet_set_token, offsetof(type, m)},                                             \
	{"token-over-http", 0, NULL,                                                      \
	 "send the --token to http:// URLs too (it travels in clear)",                    \
	 NULL, offsetof(type, m.token_over_http)}
/* clang-format on */
/* The parsed options into c (which then points into a); 0, or -EINVAL
 * with why when they contradict each other. */
int fleet_conn_args_apply(const struct fleet_conn_args *a, struct fleet_conn *c, char *why,
                          size_t wlen);
void fleet_conn_args_free(struct fleet_conn_args *a);

/* The base URL every API path is appended to (malloc'd), or NULL with
 * why: a URL, or HOST[:PORT] with scheme_default and the daemon's port. */
char *fleet_base_url(const char *in, const char *scheme_default, char *why, size_t wlen);

struct fleet_body {
	char *buf;
	size_t len, max; /* max: the largest answer taken for this request */
	int overflow;
};

struct fleet_host {
	const struct fleet_target *target;
	char *base; /* scheme://host[:port][/prefix], no trailing '/' */
	CURL *easy;
	char errbuf[CURL_ERROR_SIZE];
	struct fleet_body body;
	enum fleet_step step;
	uint64_t start_ns, end_ns, deadline_ns;
	json_t *answer[STEP_DONE]; /* NULL: not asked, or 404 */
	long long run_id;          /* the latest ok threads run; 0: none */
	int reachable;             /* /api/v1/status answered */
	CURLcode curl_code;        /* the last transfer's result */
	int connected;             /* ... whose connection was made (TCP, and TLS) */
	long http_code;            /* the last answer's HTTP status; 0: none */
	char *error;               /* why the host could not be read */
	json_t *row;               /* fleet_host_row(), made when the host is done */
	json_t *kept[STEP_DONE];   /* the answers of conn->keep's steps (NULL: none) */
	json_t *workloads;         /* its latest window's workloads, under --workloads */
};

/* Asks every host until each has its answers or an error, and makes each
 * host's row as soon as it is done (freeing its answers but those of
 * c->keep, so that memory stays small with thousands of hosts); 0 or
 * -errno (libcurl failed). */
int fleet_ask(struct fleet_host *hosts, size_t n, const struct fleet_conn *c);
void fleet_hosts_free(struct fleet_host *hosts, size_t n);

/* One daemon asked alone, as fleet asks each (recommend --from, status):
 * the target and its host. */
struct fleet_one {
	struct fleet_targets t;
	struct fleet_host h;
};
/* Asks url (a URL or HOST[:PORT]; origin names it in messages) the steps
 * of c; 0 with the host's answers, or its error, in o->h; -EINVAL (a bad
 * URL) or -ENOMEM/-EIO (libcurl failed) with why. fleet_one_free() in
 * every case. */
int fleet_one_ask(struct fleet_one *o, const char *url, const char *origin,
                  const struct fleet_conn *c, char *why, size_t wlen);
void fleet_one_free(struct fleet_one *o);

/* Why a host could not be read, from what its requests met. */
enum fleet_failure {
	FLEET_READ,             /* it could be read */
	FLEET_FAIL_ERROR,       /* its status answered, a later request failed */
	FLEET_FAIL_NOT_API,     /* /api/v1/status is 404 */
	FLEET_FAIL_HTTP,        /* another HTTP error, or not a JSON object */
	FLEET_FAIL_TLS,         /* the TLS handshake or its checks */
	FLEET_FAIL_NOT_HTTP,    /* something answered over http://, not in HTTP */
	FLEET_FAIL_SILENT,      /* connected, then no answer in time */
	FLEET_FAIL_UNREACHABLE, /* no connection */
	FLEET_N_FAILURES
};
enum fleet_failure fleet_failure(const struct fleet_host *h);
/* Its words in a row's "failure" and the table ("unreachable"). */
const char *fleet_failure_name(enum fleet_failure f);

/* The report: one JSON object per host, then a table or a document. */
json_t *fleet_host_row(const struct fleet_host *h);
/* The figures a fleet compares (a row's "figures", the cohorts): key
 * figures of the catalogue, each read from a host's recommendation inputs
 * at inputs/PROBE/SCALAR and named PROBE_SCALAR (fleet_report.c). */
#define FLEET_N_FIGURES 5
extern const char *const fleet_figures[FLEET_N_FIGURES];
/* The row key of fleet_figures[i] ("ctxsw_high_ns"), made once. */
const char *fleet_figure_key(size_t i);
/* The catalogue unit of fleet_figures[i]. */
const char *fleet_figure_unit(size_t i);
void fleet_print_table(const json_t *rows);
/* Cohorts (fleet_cohort.c): the value of a fingerprint field (an alias
 * such as cpu, or a path such as cpu/vendor) of a row, as text ("-" when
 * absent; malloc'd); whether a row passes --where FIELD=VALUE (NULL:
 * all); the rows grouped by a field with each cohort's figures, and the
 * table of them. */
char *fleet_field_value(const json_t *row, const char *name);
/* 0 when `name` is a short name or a path under a fingerprint field;
 * -EINVAL with why naming the fields otherwise. */
int fleet_field_check(const char *name, char *why, size_t wlen);
int fleet_where_match(const json_t *row, const char *where);
json_t *fleet_cohorts(const json_t *rows, const char *by);
void fleet_print_cohorts(const json_t *doc);

/* fleet --workloads (fleet_workloads.c): every host's kept workloads but
 * "other" as rows {"url", "hostname", "cohort" (under --by), "name",
 * "kind", "ref", "figures", "findings": [kind, ...]}, dearest first (by
 * figures.cpu_share, then stack_thp_bytes), and the table of the first
 * `top` of them. */
json_t *fleet_workload_rows(const struct fleet_host *hosts, size_t n, const char *by,
                            const char *where);
void fleet_print_workloads(const json_t *rows, size_t top);

/* Replaces C0, C1 and DEL characters in s (in place) with '?'; returns s
 * (NULL: NULL). Every cell printed from a daemon's answer goes through it. */
char *fleet_printable(char *s);
/* now_ms - t_ms in seconds, without overflow whatever the integers. */
double fleet_age_s(int64_t now_ms, int64_t t_ms);
/* s seconds, short: "41s", "3m", "1h05m", "2d03h" (nonsense: "0s"). */
void fleet_format_age(double s, char *buf, size_t len);

#endif
