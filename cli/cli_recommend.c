/*
 * cli_recommend: `threadwatch recommend`, the verdict on low thread stacks
 * computed from a recommendation-inputs document (doc/recommendation.md),
 * with the workload overridable from the command line.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli.h"
#include "defaults.h"
#include "opt.h"
#include "recommend.h"
#include "units.h"

struct recommend_args {
	const char *input; /* a path, "-" for stdin, NULL: none */
	const char *from;  /* a threadwatchd's URL, NULL: none */
	int json, help, quick;
	double threads, stack_bytes, switches; /* NAN: not given */
	int switches_unknown;
	double creates_ps, switches_ps; /* thread churn; NAN: not given */
};

static int set_input(void *ctx, const char *v, char *why, size_t wlen)
{
	(void)why, (void)wlen;
	if (!*v)
		return -EINVAL;
	((struct recommend_args *)ctx)->input = v;
	return 0;
}

static int set_from(void *ctx, const char *v, char *why, size_t wlen)
{
	(void)why, (void)wlen;
	if (!*v)
		return -EINVAL;
	((struct recommend_args *)ctx)->from = v;
	return 0;
}

static int set_threads(void *ctx, const char *v, char *why, size_t wlen)
{
	struct recommend_args *a = ctx;
	char *end;

	(void)why, (void)wlen;
	if (*v < '0' || *v > '9')
		return -EINVAL;
	errno = 0;
	a->threads = (double)strtoull(v, &end, 10);
	return errno || *end || a->threads > REC_MAX_THREADS ? -EINVAL : 0;
}

static int set_stack_size(void *ctx, const char *v, char *why, size_t wlen)
{
	uint64_t bytes;

	(void)why, (void)wlen;
	/* 1T: far beyond any stack, and exact as a double */
	if (units_parse_size(v, &bytes) < 0 || bytes == 0 || bytes > (1ULL << 40))
		return -EINVAL;
	((struct recommend_args *)ctx)->stack_bytes = (double)bytes;
	return 0;
}

static int set_switches(void *ctx, const char *v, char *why, size_t wlen)
{
	struct recommend_args *a = ctx;
	char *end;

	(void)why, (void)wlen;
	if (!strcmp(v, "unknown")) {
		a->switches_unknown = 1;
		a->switches = NAN;
		return 0;
	}
	if (*v < '0' || *v > '9')
		return -EINVAL;
	errno = 0;
	a->switches = strtod(v, &end);
	a->switches_unknown = 0;
	return errno || *end || !isfinite(a->switches) ? -EINVAL : 0;
}

/* A rate per second: a finite number >= 0 (> 0 when `positive`). */
static int parse_rate(const char *v, int positive, double *out)
{
	char *end;

	if (*v < '0' || *v > '9')
		return -EINVAL;
	errno = 0;
	*out = strtod(v, &end);
	if (errno || *end || !isfinite(*out) || (positive && *out == 0))
		return -EINVAL;
	return 0;
}

static int set_creates_ps(void *ctx, const char *v, char *why, size_t wlen)
{
	(void)why, (void)wlen;
	return parse_rate(v, 1, &((struct recommend_args *)ctx)->creates_ps);
}

static int set_switches_ps(void *ctx, const char *v, char *why, size_t wlen)
{
	(void)why, (void)wlen;
	return parse_rate(v, 0, &((struct recommend_args *)ctx)->switches_ps);
}

/* How long --from waits for a daemon's answers. */
#define FROM_TIMEOUT_S 10.0

/* The options of `threadwatch recommend`; the parser and the usage text. */
static const struct opt recommend_opts[] = {
    {"input", 0, "FILE|-",
     "the recommendation inputs (or `threadwatch run --json` output); "
     "without it the probes run now",
     set_input, 0},
    {"from", 0, "URL",
     "take the inputs of a threadwatchd's latest recommendation (URL or HOST:PORT) rather "
     "than measure again; the workload options below still apply",
     set_from, 0},
    {"threads", 0, "N",
     "threads the workload expects (0..4194304; default " TW_STR(TW_DEFAULT_THREADS) ")",
     set_threads, 0},
    {"stack-size", 0, "SIZE", "stack bytes per thread, such as 8M or 256K, up to 1T (default 8M)",
     set_stack_size, 0},
    {"switches", 0, "N", "context switches per thread, or \"unknown\" (the default)", set_switches,
     0},
    {"creates-per-second", 0, "N",
     "thread churn: threads the workload creates per second (default none)", set_creates_ps, 0},
    {"switches-per-second", 0, "N",
     "with --creates-per-second: the workload's context switches per second", set_switches_ps, 0},
    {"quick", 0, NULL, "without --input: run the probes' short versions", NULL,
     offsetof(struct recommend_args, quick)},
    {"json", 0, NULL, "print {inputs, result} as JSON instead of text", NULL,
     offsetof(struct recommend_args, json)},
    {"help", 'h', NULL, "show this help", NULL, offsetof(struct recommend_args, help)},
};

#define N_OPTS (sizeof(recommend_opts) / sizeof(recommend_opts[0]))

static void usage(FILE *f)
{
	fprintf(f,
	        "usage: threadwatch recommend [OPTIONS]\n\n" CLI_SUMMARY_RECOMMEND "\n"
	        "The model and the inputs are described in doc/recommendation.md.\n\n"
	        "Without --input or --from it measures this host first (the probes, about 25 s;\n"
	        "--quick for about 3 s), saying so on standard error.\n\n"
	        "Exit status: 0 the verdict; 1 the probes could not run or gave no figures;\n"
	        "2 bad usage or bad inputs; 3 the verdict, but a probe it rests on failed in its\n"
	        "latest run (it names the probe and why).\n\nOptions:\n");
	opt_usage(f, recommend_opts, N_OPTS);
}

/* -EINVAL with a message on stderr for anything it does not know. */
static int parse_args(int argc, char **argv, struct recommend_args *a)
{
	char err[256];
	int first = opt_parse(argc, argv, recommend_opts, N_OPTS, a, err, sizeof(err));

	if (first < 0) {
		fprintf(stderr, "threadwatch recommend: %s\n", err);
		return -EINVAL;
	}
	if (first < argc) {
		fprintf(stderr, "threadwatch recommend: unexpected argument \"%s\"\n", argv[first]);
		return -EINVAL;
	}
	return 0;
}

json_t *cli_inputs_read(const char *path, const char *cmd)
{
	const char *name = strcmp(path, "-") ? path : "stdin";
	FILE *f = strcmp(path, "-") ? fopen(path, "r") : stdin;
	json_error_t je;
	json_t *doc, *inner;

	if (!f) {
		fprintf(stderr, "%s: cannot read \"%s\": %s\n", cmd, name, strerror(errno));
		return NULL;
	}
	doc = json_loadf(f, 0, &je);
	if (f != stdin)
		fclose(f);
	if (!doc) {
		fprintf(stderr, "%s: cannot read \"%s\": not JSON: %s (line %d)\n", cmd, name,
		        je.text, je.line);
		return NULL;
	}
	inner = json_object_get(json_object_get(doc, "recommendation"), "inputs");
	if (json_is_object(inner)) {
		json_incref(inner);
		json_decref(doc);
		return inner;
	}
	return doc;
}

/* Applies --threads, --stack-size, --switches and the churn rates to
 * inputs.workload. */
static void workload_override(json_t *inputs, const struct recommend_args *a)
{
	json_t *w = json_object_get(inputs, "workload");

	if (!json_is_object(inputs))
		return;
	if (!w || json_is_null(w)) {
		w = json_object();
		json_object_set_new(inputs, "workload", w);
	}
	if (!json_is_object(w))
		return; /* rec_compute names it */
	if (!isnan(a->threads))
		json_object_set_new(w, "threads", json_integer((json_int_t)a->threads));
	if (!isnan(a->stack_bytes))
		json_object_set_new(w, "stack_bytes", json_integer((json_int_t)a->stack_bytes));
	if (a->switches_unknown)
		json_object_set_new(w, "switches_per_thread", json_null());
	else if (!isnan(a->switches))
		json_object_set_new(w, "switches_per_thread", json_real(a->switches));
	if (!isnan(a->creates_ps))
		json_object_set_new(w, "creates_per_second", json_real(a->creates_ps));
	if (!isnan(a->switches_ps))
		json_object_set_new(w, "switches_per_second", json_real(a->switches_ps));
}

static int print_result(json_t *inputs, json_t *result, int as_json)
{
	if (as_json) {
		json_t *out = json_pack("{s:O s:O}", "inputs", inputs, "result", result);

		json_dumpf(out, stdout, JSON_INDENT(2));
		fputc('\n', stdout);
		json_decref(out);
	} else {
		char *text = rec_text(result);

		fputs(text, stdout);
		free(text);
	}
	return fflush(stdout) == 0 ? 0 : 1;
}

int cli_recommend(int argc, char **argv)
{
	struct recommend_args a = {.threads = NAN,
	                           .stack_bytes = NAN,
	                           .switches = NAN,
	                           .creates_ps = NAN,
	                           .switches_ps = NAN};
	json_t *inputs, *result;
	char err[256];
	int rc;

	if (parse_args(argc, argv, &a) < 0) {
		opt_try_help(stderr, "threadwatch recommend");
		return 2;
	}
	if (a.help) {
		usage(stdout);
		return 0;
	}
	if (a.input && a.from) {
		fprintf(stderr, "threadwatch recommend: --input and --from both name the inputs: "
		                "give one\n");
		opt_try_help(stderr, "threadwatch recommend");
		return 2;
	}
	if (a.from) {
		json_t *rec = NULL;

		rc = fleet_recommendation(a.from, NULL, FROM_TIMEOUT_S, &rec, err, sizeof(err));
		if (rc < 0) {
			fprintf(stderr, "threadwatch recommend: --from %s: %s\n", a.from, err);
			return 1;
		}
		/* a copy: the daemon's strings (a failed probe's reason) reach
		 * the text only without control characters */
		inputs = json_deep_copy(json_object_get(rec, "inputs"));
		fleet_printable_json(inputs);
		json_decref(rec);
		if (!json_is_object(inputs)) {
			fprintf(stderr,
			        "threadwatch recommend: --from %s: its recommendation carries "
			        "no inputs\n",
			        a.from);
			json_decref(inputs);
			return 1;
		}
	} else if (a.input) {
		inputs = cli_inputs_read(a.input, "threadwatch recommend");
		if (!inputs)
			return 2;
	} else {
		/* The probes take a while: say so, on stderr (stdout stays the
		 * verdict or its JSON). */
		fprintf(stderr,
		        "threadwatch recommend: measuring this host first (--input FILE reads "
		        "saved figures instead)\n");
		rc = cli_run_inputs(a.quick, "threadwatch recommend", &inputs);
		if (rc < 0)
			return 1;
	}
	workload_override(inputs, &a);
	result = rec_compute(inputs, err, sizeof(err));
	if (!result) {
		fprintf(stderr, "threadwatch recommend: bad input: %s\n", err);
		json_decref(inputs);
		return 2;
	}
	rc = print_result(inputs, result, a.json);
	if (rc == 0 && json_array_size(json_object_get(result, "failed_probes")))
		rc = CLI_EXIT_PROBE_FAILED;
	json_decref(result);
	json_decref(inputs);
	return rc;
}
