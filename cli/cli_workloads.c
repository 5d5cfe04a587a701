/*
 * cli_workloads: `threadwatch workloads`, which services on this host pay
 * for threads and how much: the observer's window (lib/observe), priced at
 * the costs the probes measure here (their quick runs after the window,
 * or saved figures), as a table or JSON. It needs no daemon.
 */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli.h"
#include "observe.h"
#include "opt.h"

#define WORKLOADS_DEFAULT_S 10.0
#define WORKLOADS_MAX_S 86400.0
#define WORKLOADS_DEFAULT_TOP 20

struct workloads_args {
	double window_s;
	unsigned top;
	const char *costs, *proc;
	int by_process, no_costs, no_connector, no_bpf, no_event_filter, exact_switches, json, help;
	int read_all_threads;
};

static int set_by(void *ctx, const char *v, char *why, size_t wlen)
{
	struct workloads_args *a = ctx;

	(void)why, (void)wlen;
	if (!strcmp(v, "unit"))
		a->by_process = 0;
	else if (!strcmp(v, "process"))
		a->by_process = 1;
	else
		return -EINVAL;
	return 0;
}

static int set_for(void *ctx, const char *v, char *why, size_t wlen)
{
	double s;

	if (opt_set_duration(&s, v, why, wlen) < 0 || !(s > 0) || s > WORKLOADS_MAX_S)
		return -EINVAL;
	((struct workloads_args *)ctx)->window_s = s;
	return 0;
}

static int set_text(void *field, const char *v, char *why, size_t wlen)
{
	(void)why, (void)wlen;
	if (!*v)
		return -EINVAL;
	*(const char **)field = v;
	return 0;
}

static int set_costs(void *ctx, const char *v, char *why, size_t wlen)
{
	return set_text(&((struct workloads_args *)ctx)->costs, v, why, wlen);
}

static int set_proc(void *ctx, const char *v, char *why, size_t wlen)
{
	return set_text(&((struct workloads_args *)ctx)->proc, v, why, wlen);
}

static int set_top(void *ctx, const char *v, char *why, size_t wlen)
{
	return opt_set_uint(&((struct workloads_args *)ctx)->top, v, why, wlen);
}

static const struct opt workloads_opts[] = {
    {"for", 0, "DURATION", "how long to watch, such as 15s or 2m (default 10s, at most 1d)",
     set_for, 0},
    {"by", 0, "unit|process",
     "a workload is a unit, a cgroup of its own or an executable (unit, the default), or each "
     "process",
     set_by, 0},
    {"top", 0, "N", "the table's rows (default 20; 0: all); --json lists all", set_top, 0},
    {"costs", 0, "FILE|-",
     "price at saved figures (`threadwatch run --json` output or recommendation inputs) "
     "instead of running the quick probes after the window",
     set_costs, 0},
    {"no-costs", 0, NULL, "do not price: no probes run", NULL,
     offsetof(struct workloads_args, no_costs)},
    {"no-connector", 0, NULL,
     "count creates and exits with neither the BPF counter nor the proc connector (both unseen)",
     NULL, offsetof(struct workloads_args, no_connector)},
    {"no-bpf", 0, NULL, OBS_HELP_NO_BPF, NULL, offsetof(struct workloads_args, no_bpf)},
    {"no-event-filter", 0, NULL, OBS_HELP_NO_EVENT_FILTER, NULL,
     offsetof(struct workloads_args, no_event_filter)},
    {"read-all-threads", 0, NULL, OBS_HELP_READ_ALL_THREADS, NULL,
     offsetof(struct workloads_args, read_all_threads)},
    {"exact-switches", 0, NULL, OBS_HELP_EXACT_SWITCHES, NULL,
     offsetof(struct workloads_args, exact_switches)},
    {"proc", 0, "DIR", "the proc file system to read (default /proc)", set_proc, 0},
    {"json", 0, NULL, "print the document as JSON instead of a table", NULL,
     offsetof(struct workloads_args, json)},
    {"help", 'h', NULL, "show this help", NULL, offsetof(struct workloads_args, help)},
};

#define N_OPTS (sizeof(workloads_opts) / sizeof(workloads_opts[0]))

static void usage(FILE *f)
{
	fprintf(f,
	        "usage: threadwatch workloads [OPTIONS]\n\n" CLI_SUMMARY_WORKLOADS "\n"
	        "For each workload over the window: live threads, thread creates and exits per\n"
	        "second (the proc connector), context switches and migrations per second summed\n"
	        "over every thread, and thread stacks with those on huge pages; then each priced\n"
	        "at this host's measured costs, with findings, their cause and fix. The JSON's\n"
	        "`mechanisms` says how each figure was obtained and what could not be seen.\n\n"
	        "Exit status: 0 the table or document; 1 nothing could be observed or priced;\n"
	        "2 bad usage or bad figures.\n\nOptions:\n");
	opt_usage(f, workloads_opts, N_OPTS);
}

static volatile int stop_flag;

static void on_signal(int sig)
{
	(void)sig;
	stop_flag = 1;
}

/* The saved figures of --costs: an object, or NULL with one message. */
static json_t *costs_read(const char *path)
{
	json_t *in = cli_inputs_read(path, "threadwatch workloads");

	if (in && !json_is_object(in)) {
		fprintf(stderr, "threadwatch workloads: \"%s\" is not a JSON object\n", path);
		json_decref(in);
		return NULL;
	}
	return in;
}

static int print_doc(const json_t *doc, const struct workloads_args *a)
{
	if (a->json) {
		json_dumpf(doc, stdout, JSON_INDENT(2));
		fputc('\n', stdout);
	} else {
		char *text = obs_text(doc, a->top);

		if (text)
			fputs(text, stdout);
		free(text);
	}
	return fflush(stdout) == 0 ? 0 : 1;
}

int cli_workloads(int argc, char **argv)
{
	struct workloads_args a = {.window_s = WORKLOADS_DEFAULT_S, .top = WORKLOADS_DEFAULT_TOP};
	struct obs_options o = {0};
	struct sigaction sa = {.sa_handler = on_signal};
	json_t *doc, *inputs = NULL;
	char err[256];
	int first, rc;

	first = opt_parse(argc, argv, workloads_opts, N_OPTS, &a, err, sizeof(err));
	if (first < 0 || first < argc) {
		if (first >= 0)
			snprintf(err, sizeof(err), "unexpected argument \"%.200s\"", argv[first]);
		fprintf(stderr, "threadwatch workloads: %s\n", err);
		opt_try_help(stderr, "threadwatch workloads");
		return 2;
	}
	if (a.help) {
		usage(stdout);
		return 0;
	}
	if (a.costs && !a.no_costs && !(inputs = costs_read(a.costs)))
		return 2;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	o.window_s = a.window_s;
	o.by_process = a.by_process;
	o.proc = a.proc;
	o.no_connector = a.no_connector;
	o.no_bpf = a.no_bpf;
	o.cn_filter_len = a.no_event_filter ? 0 : obs_cn_filter_len();
	o.exact_switches = a.exact_switches;
	o.read_all_threads = a.read_all_threads;
	o.stop = &stop_flag;
	fprintf(stderr, "threadwatch workloads: watching for %g s\n", a.window_s);
	doc = obs_observe(&o, err, sizeof(err));
	if (!doc) {
		fprintf(stderr, "threadwatch workloads: %s\n", err);
		json_decref(inputs);
		return 1;
	}
	if (!a.no_costs && !inputs && !stop_flag) {
		fprintf(stderr,
		        "threadwatch workloads: measuring this host's costs (the quick probes; "
		        "--costs FILE reads saved figures)\n");
		if (cli_run_inputs(1, "threadwatch workloads", &inputs) < 0)
			inputs = NULL; /* priced as unmeasured, and said so */
	}
	obs_price(doc, inputs);
	rc = print_doc(doc, &a);
	json_decref(doc);
	json_decref(inputs);
	return rc;
}
