/*
 * cli_fleet: `threadwatch fleet`, one table for many daemons. Reads the
 * targets (URLs as arguments, or --file with a URL list or Prometheus
 * file_sd JSON/YAML), asks every daemon's JSON API (fleet_ask.c: at most
 * --concurrency hosts at once, each within --timeout, over TLS with
 * --cacert or --insecure, with --token) and prints host, labels, kernel,
 * glibc, verdict, switch-time ratio, knee, age of the last cycle, headroom
 * warnings and regression events, or why a host could not be read
 * (fleet_report.c). Exit 0 when every host was read, 1 when any could not
 * be, 2 for bad usage or a bad file.
 */
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "clock.h"
#include "cli.h"
#include "errbuf.h"
#include "fleetp.h"
#include "opt.h"
#include "xmalloc.h"

#define FLEET_DEFAULT_CONCURRENCY 64
#define FLEET_MAX_CONCURRENCY 4096
/* The rows of `fleet --workloads`'s table (--json has them all). */
#define FLEET_WORKLOADS_SHOWN 30

struct fleet_args {
	int json, help;
	const char *by, *where; /* --by FIELD, --where FIELD=VALUE */
	const char *scheme;     /* of targets without one */
	int scheme_given;       /* --scheme: it also overrides __scheme__ */
	struct fleet_conn conn;
	struct fleet_conn_args conn_args; /* --timeout, --cacert, --token... */
	struct fleet_targets targets;
};

/* --- arguments ------------------------------------------------------------- */

static int set_concurrency(void *ctx, const char *v, char *why, size_t wlen)
{
	struct fleet_args *a = ctx;
	char *end;

	errno = 0;
	a->conn.concurrency = strtol(v, &end, 10);
	if (errno || end == v || *end || a->conn.concurrency < 1 ||
	    a->conn.concurrency > FLEET_MAX_CONCURRENCY)
		return errbuf_set(why, wlen, -EINVAL,
		                  "--concurrency \"%s\": a number of hosts from 1 to %d", v,
		                  FLEET_MAX_CONCURRENCY);
	return 0;
}

static int set_scheme(void *ctx, const char *v, char *why, size_t wlen)
{
	struct fleet_args *a = ctx;

	if (strcmp(v, "http") && strcmp(v, "https"))
		return errbuf_set(why, wlen, -EINVAL, "--scheme \"%s\": http or https", v);
	a->scheme = strcmp(v, "http") ? "https" : "http";
	a->scheme_given = 1;
	return 0;
}

static int set_file(void *ctx, const char *path, char *why, size_t wlen)
{
	return fleet_file_read(path, &((struct fleet_args *)ctx)->targets, why, wlen);
}

static int set_by(void *ctx, const char *v, char *why, size_t wlen)
{
	int r = fleet_field_check(v, why, wlen);

	if (r < 0)
		return r;
	((struct fleet_args *)ctx)->by = v;
	return 0;
}

static int set_where(void *ctx, const char *v, char *why, size_t wlen)
{
	const char *eq = strchr(v, '=');

	char field[128];

	if (!eq || eq == v)
		return errbuf_set(why, wlen, -EINVAL, "--where \"%s\": FIELD=VALUE, such as cpu=%s",
		                  v, "\"AMD EPYC 7B12\"");
	snprintf(field, sizeof(field), "%.*s", (int)(eq - v), v);
	if (fleet_field_check(field, why, wlen) < 0)
		return -EINVAL;
	((struct fleet_args *)ctx)->where = v;
	return 0;
}

static const struct opt fleet_opts[] = {
    {"json", 0, NULL, "print one JSON document instead of the table", NULL,
     offsetof(struct fleet_args, json)},
    {"file", 0, "FILE",
     "read targets from FILE: one URL a line (# comments), or Prometheus file_sd JSON or YAML",
     set_file, 0},
    {"concurrency", 0, "N", "ask at most N hosts at once (default 64; 1 to 4096)", set_concurrency,
     0},
    {"scheme", 0, "SCHEME",
     "http or https for targets given as HOST:PORT (default http, else a file_sd group's "
     "__scheme__ label; given, it overrides that label)",
     set_scheme, 0},
    FLEET_CONN_OPTS(struct fleet_args, conn_args),
    {"by", 0, "FIELD",
     "group the hosts into cohorts by a fingerprint field: kernel, cpu, virt, mitigations, "
     "arch, glibc, vendor or a path such as cpu/family",
     set_by, 0},
    {"where", 0, "FIELD=VALUE", "keep only the hosts whose fingerprint FIELD is VALUE", set_where,
     0},
    {"workloads", 0, NULL,
     "list the fleet's workloads that pay most for threads (each host's latest observer "
     "window), with their hosts, instead of the hosts; with --by, each with its cohort",
     NULL, offsetof(struct fleet_args, conn.workloads)},
    {"help", 'h', NULL, "show this help", NULL, offsetof(struct fleet_args, help)},
};

#define N_OPTS (sizeof(fleet_opts) / sizeof(fleet_opts[0]))

static void usage(FILE *f)
{
	fprintf(f,
	        "usage: threadwatch fleet [OPTION]... [--] URL...\n"
	        "       threadwatch fleet [OPTION]... --file FILE\n\n" CLI_SUMMARY_FLEET "\n"
	        "Each answers on its JSON API; a row gives: host, labels, kernel,\n"
	        "glibc, verdict, confidence, switch-time ratio, the thread-create knee with low\n"
	        "stacks, age of the last cycle, headroom warnings and regression events, or the\n"
	        "error for a host that could not be read. With --workloads, a row per workload\n"
	        "instead: the services across the fleet that pay most for threads.\n\n"
	        "URL: http[s]://HOST[:PORT][/PREFIX], or HOST[:PORT] with the scheme of --scheme\n"
	        "(default http) or of its file_sd group's __scheme__ label, and "
	        "port " FLEET_DEFAULT_PORT " (the\n"
	        "daemon's) when none is given.\n\n"
	        "Exit status: 0 every host was read; 1 some host was unreachable or failed;\n"
	        "2 bad usage or a bad --file (its messages name FILE:LINE); 3 every host was\n"
	        "read, but one has a probe that failed in its latest run.\n\n"
	        "Options:\n");
	opt_usage(f, fleet_opts, N_OPTS);
}

/* -EINVAL with a message on stderr for anything it does not know. */
static int parse_args(int argc, char **argv, struct fleet_args *a)
{
	char err[PATH_MAX + 256], origin[32];
	int first = opt_parse(argc, argv, fleet_opts, N_OPTS, a, err, sizeof(err));

	if (first < 0) {
		fprintf(stderr, "threadwatch fleet: %s\n", err);
		return -EINVAL;
	}
	for (int i = first; i < argc; i++) {
		snprintf(origin, sizeof(origin), "argument %d", i - first + 1);
		fleet_targets_add(&a->targets, argv[i], origin, NULL);
	}
	if (fleet_conn_args_apply(&a->conn_args, &a->conn, err, sizeof(err)) < 0) {
		fprintf(stderr, "threadwatch fleet: %s\n", err);
		return -EINVAL;
	}
	return 0;
}

static void args_free(struct fleet_args *a)
{
	fleet_targets_free(&a->targets);
	fleet_conn_args_free(&a->conn_args);
}

/* Room for every connection in flight and in the cache (best effort: a
 * lower limit shows up as host errors, not as a crash). */
static void raise_nofile(long concurrency)
{
	struct rlimit rl;
	rlim_t want = (rlim_t)concurrency * 2 + 64;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < want) {
		rl.rlim_cur = rl.rlim_max < want ? rl.rlim_max : want;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

/* --- the command ----------------------------------------------------------- */

static void print_json(json_t *rows, const struct fleet_args *a, size_t unreachable, size_t failed,
                       size_t probe_failed)
{
	char when[32];
	json_t *doc;

	clock_rfc3339_ms(clock_wall_ms(), when, sizeof(when));
	doc = json_pack("{s:s,s:f,s:I,s:I,s:I,s:I,s:I,s:O}", "generated_at", when, "timeout_s",
	                a->conn.timeout_s, "concurrency", (json_int_t)a->conn.concurrency,
	                "hosts_total", (json_int_t)json_array_size(rows), "hosts_unreachable",
	                (json_int_t)unreachable, "hosts_failed", (json_int_t)failed,
	                "hosts_probe_failed", (json_int_t)probe_failed, "hosts", rows);
	if (a->by)
		json_object_set_new(doc, "cohorts", fleet_cohorts(rows, a->by));
	json_dumpf(doc, stdout, JSON_INDENT(2));
	fputc('\n', stdout);
	json_decref(doc);
}

/* Under the workloads' table: each host that could not be read, and why. */
static void print_host_errors(const json_t *rows)
{
	const json_t *r;
	size_t i;

	json_array_foreach(rows, i, r)
	{
		char *url = xstrdup(json_string_value(json_object_get(r, "url")) ?: "");
		char *err = xstrdup(json_string_value(json_object_get(r, "error")) ?: "");

		if (err[0])
			printf("%s: %s\n", fleet_printable(url), fleet_printable(err));
		free(url);
		free(err);
	}
}

static int fleet_report(struct fleet_host *hosts, size_t n, const struct fleet_args *a)
{
	json_t *rows = json_array();
	size_t failed = 0, unreachable = 0, probe_failed = 0;

	for (size_t i = 0; i < n; i++) {
		if (!fleet_where_match(hosts[i].row, a->where))
			continue;
		json_array_append(rows, hosts[i].row);
		failed += hosts[i].error != NULL;
		unreachable += !hosts[i].reachable;
		probe_failed += json_array_size(json_object_get(hosts[i].row, "failed_probes")) > 0;
	}
	if (a->conn.workloads) {
		json_t *wl = fleet_workload_rows(hosts, n, a->by, a->where);

		if (a->json) {
			json_t *doc = json_pack("{s:O s:O}", "workloads", wl, "hosts", rows);

			json_dumpf(doc, stdout, JSON_INDENT(2));
			fputc('\n', stdout);
			json_decref(doc);
		} else {
			fleet_print_workloads(wl, FLEET_WORKLOADS_SHOWN);
			print_host_errors(rows);
		}
		json_decref(wl);
	} else if (a->json) {
		print_json(rows, a, unreachable, failed, probe_failed);
	} else if (a->by) {
		json_t *doc = fleet_cohorts(rows, a->by);

		fleet_print_cohorts(doc);
		json_decref(doc);
	} else {
		fleet_print_table(rows);
	}
	json_decref(rows);
	if (fflush(stdout) != 0) {
		fprintf(stderr, "threadwatch fleet: cannot write the report: %s\n",
		        strerror(errno));
		return 1;
	}
	return failed ? 1 : probe_failed ? CLI_EXIT_PROBE_FAILED : 0;
}

/* Every target's base URL; 0, or -EINVAL after a message. As in
 * Prometheus, a target's scheme is its group's __scheme__ label, else the
 * job's; an explicit --scheme overrides the label (a file cannot downgrade
 * https); --cacert and --insecure only say how TLS is checked. */
static int hosts_make(struct fleet_host *hosts, const struct fleet_args *a)
{
	char why[160];

	for (size_t i = 0; i < a->targets.n; i++) {
		const struct fleet_target *t = &a->targets.v[i];

		hosts[i].target = t;
		const char *scheme = t->scheme && !a->scheme_given ? t->scheme : a->scheme;

		if (t->scheme && !a->scheme_given && strstr(t->url, "://")) {
			fprintf(stderr,
			        "threadwatch fleet: %s: target \"%s\" has a scheme and "
			        "__scheme__ says %s: give one\n",
			        t->origin, t->url, t->scheme);
			return -EINVAL;
		}
		hosts[i].base = fleet_base_url(t->url, scheme, why, sizeof(why));
		if (!hosts[i].base) {
			fprintf(stderr, "threadwatch fleet: bad URL \"%s\" (%s): %s\n", t->url,
			        t->origin, why);
			return -EINVAL;
		}
	}
	return 0;
}

int cli_fleet(int argc, char **argv)
{
	struct fleet_args a = {.scheme = "http",
	                       .conn = {.concurrency = FLEET_DEFAULT_CONCURRENCY},
	                       .conn_args = {.timeout_s = FLEET_DEFAULT_TIMEOUT_S}};
	struct fleet_host *hosts = NULL;
	int rc = 2;

	if (parse_args(argc, argv, &a) < 0) {
		opt_try_help(stderr, "threadwatch fleet");
		goto out;
	}
	if (a.help) {
		usage(stdout);
		rc = 0;
		goto out;
	}
	if (a.targets.n == 0) {
		fprintf(stderr, "threadwatch fleet: no hosts: name URLs or --file FILE\n");
		opt_try_help(stderr, "threadwatch fleet");
		goto out;
	}
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		fprintf(stderr, "threadwatch fleet: cannot initialise libcurl\n");
		rc = 1;
		goto out;
	}
	hosts = xcalloc(a.targets.n, sizeof(*hosts));
	if (hosts_make(hosts, &a) < 0)
		goto out_curl;
	raise_nofile(a.conn.concurrency);
	if (fleet_ask(hosts, a.targets.n, &a.conn) < 0) {
		fprintf(stderr, "threadwatch fleet: libcurl failed\n");
		rc = 1;
		goto out_curl;
	}
	rc = fleet_report(hosts, a.targets.n, &a);
out_curl:
	fleet_hosts_free(hosts, a.targets.n);
	curl_global_cleanup();
out:
	args_free(&a);
	return rc;
}
