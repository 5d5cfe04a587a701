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

/* How the hosts are asked. */
struct fleet_conn {
	double timeout_s; /* each host's budget for all its answers */
	long concurrency; /* hosts in flight at once */
	const char *cacert;
	int insecure;
	const char *token;       /* NULL: no Authorization header */
	int token_over_http;     /* the token may go to http:// URLs too */
	int keep_recommendation; /* each host keeps its whole recommendation */
	int workloads;           /* ask /api/v1/workloads too (fleet --workloads) */
};

/* What is asked of each host, in this order. */
enum fleet_step {
	STEP_STATUS,
	STEP_HOST,
	STEP_REC,
	STEP_HEADROOM,
	STEP_EVENTS,
	STEP_RUNS,
	STEP_RUN,
	STEP_WORKLOADS, /* only under fleet --workloads */
	STEP_DONE
};

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
	json_t *recommendation;    /* kept under keep_recommendation, or NULL */
	json_t *workloads;         /* its latest window's workloads, under --workloads */
};

/* Asks every host until each has its answers or an error, and makes each
 * host's row as soon as it is done (freeing its answers, so that memory
 * stays small with thousands of hosts); 0 or -errno (libcurl failed). */
int fleet_ask(struct fleet_host *hosts, size_t n, const struct fleet_conn *c);

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

#endif
