/*
 * cli_recommend: `threadwatch recommend`, the verdict on low thread stacks
 * computed from a recommendation-inputs document (doc/recommendation.md),
 * with the workload overridable from the command line.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli.h"
#include "recommend.h"

struct recommend_args {
	const char *input; /* a path, "-" for stdin, NULL: none */
	int json, help, quick;
	double threads, stack_bytes, switches; /* NAN: not given */
	int switches_unknown;
};

/* A whole number with an optional binary suffix (K, M, G, T, each optionally
 * followed by "iB" or "B"): 8M, 64K, 8388608. */
static int parse_size(const char *v, double max, double *out)
{
	static const struct {
		char c;
		double mult;
	} units[] = {{'K', 1024.0}, {'M', 1048576.0}, {'G', 1073741824.0}, {'T', 1099511627776.0}};
	unsigned long long n;
	double mult = 1;
	char *end;

	if (*v < '0' || *v > '9')
		return -EINVAL;
	errno = 0;
	n = strtoull(v, &end, 10);
	if (errno)
		return -EINVAL;
	for (size_t i = 0; *end && i < sizeof(units) / sizeof(units[0]); i++)
		if ((*end & ~0x20) == units[i].c) {
			mult = units[i].mult;
			end++;
			if (!strcmp(end, "iB") || !strcmp(end, "B"))
				end += strlen(end);
			break;
		}
	if (*end || (double)n * mult > max)
		return -EINVAL;
	*out = (double)n * mult;
	return 0;
}

static int set_input(struct recommend_args *a, const char *v)
{
	if (!*v)
		return -EINVAL;
	a->input = v;
	return 0;
}

static int set_threads(struct recommend_args *a, const char *v)
{
	char *end;

	if (*v < '0' || *v > '9')
		return -EINVAL;
	errno = 0;
	a->threads = (double)strtoull(v, &end, 10);
	return errno || *end || a->threads > REC_MAX_THREADS ? -EINVAL : 0;
}

static int set_stack_size(struct recommend_args *a, const char *v)
{
	if (parse_size(v, 1099511627776.0, &a->stack_bytes) < 0 || a->stack_bytes == 0)
		return -EINVAL;
	return 0;
}

static int set_switches(struct recommend_args *a, const char *v)
{
	char *end;

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

static int set_json(struct recommend_args *a, const char *v)
{
	(void)v;
	a->json = 1;
	return 0;
}

static int set_quick(struct recommend_args *a, const char *v)
{
	(void)v;
	a->quick = 1;
	return 0;
}

static int set_help(struct recommend_args *a, const char *v)
{
	(void)v;
	a->help = 1;
	return 0;
}

/* The options of `threadwatch recommend`; the parser and the usage text. */
static const struct recommend_opt {
	const char *name;
	const char *arg; /* NULL: a flag */
	const char *help;
	int (*set)(struct recommend_args *a, const char *v);
} recommend_opts[] = {
    {"input", "FILE|-",
     "the recommendation inputs (or `threadwatch run --json` output); "
     "without it the probes run now",
     set_input},
    {"threads", "N", "threads the workload expects (0..4194304; default 10000)", set_threads},
    {"stack-size", "S", "stack bytes per thread, suffixes K M G (default 8M)", set_stack_size},
    {"switches", "N", "context switches per thread, or \"unknown\" (the default)", set_switches},
    {"quick", NULL, "without --input: run the probes' short versions", set_quick},
    {"json", NULL, "print {inputs, result} as JSON instead of text", set_json},
    {"help", NULL, "show this help", set_help},
};

#define N_OPTS (sizeof(recommend_opts) / sizeof(recommend_opts[0]))

static void usage(FILE *f)
{
	fprintf(f,
	        "usage: threadwatch recommend [OPTIONS]\n\n"
	        "Says whether low (MAP_32BIT) thread stacks pay on a host, with the arithmetic.\n"
	        "The model and the inputs are described in doc/recommendation.md.\n\nOptions:\n");
	for (size_t i = 0; i < N_OPTS; i++) {
		char left[40];

		snprintf(left, sizeof(left), "--%s%s%s", recommend_opts[i].name,
		         recommend_opts[i].arg ? " " : "",
		         recommend_opts[i].arg ? recommend_opts[i].arg : "");
		fprintf(f, "  %-20s %s\n", left, recommend_opts[i].help);
	}
}

/* -EINVAL with a message on stderr for anything it does not know. */
static int parse_args(int argc, char **argv, struct recommend_args *a)
{
	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i], *val = NULL, *eq;
		size_t k, len;

		if (strncmp(arg, "--", 2) != 0) {
			fprintf(stderr, "threadwatch recommend: unexpected argument \"%s\"\n", arg);
			return -EINVAL;
		}
		arg += 2;
		eq = strchr(arg, '=');
		len = eq ? (size_t)(eq - arg) : strlen(arg);
		for (k = 0; k < N_OPTS; k++)
			if (strlen(recommend_opts[k].name) == len &&
			    !strncmp(recommend_opts[k].name, arg, len))
				break;
		if (k == N_OPTS) {
			fprintf(stderr, "threadwatch recommend: unknown option \"%s\"\n", argv[i]);
			return -EINVAL;
		}
		if (recommend_opts[k].arg) {
			val = eq ? eq + 1 : (i + 1 < argc ? argv[++i] : NULL);
			if (!val) {
				fprintf(stderr, "threadwatch recommend: --%s needs %s\n",
				        recommend_opts[k].name, recommend_opts[k].arg);
				return -EINVAL;
			}
		} else if (eq) {
			fprintf(stderr, "threadwatch recommend: --%s takes no value\n",
			        recommend_opts[k].name);
			return -EINVAL;
		}
		if (recommend_opts[k].set(a, val) < 0) {
			fprintf(stderr,
			        "threadwatch recommend: invalid value \"%s\" for --%s: %s\n", val,
			        recommend_opts[k].name, recommend_opts[k].help);
			return -EINVAL;
		}
	}
	return 0;
}

/* Reads the inputs; `threadwatch run --json` output is unwrapped to its
 * recommendation.inputs. NULL with a message on stderr. */
static json_t *inputs_read(const char *path)
{
	json_error_t je;
	json_t *doc, *inner;

	if (!strcmp(path, "-"))
		doc = json_loadf(stdin, 0, &je);
	else
		doc = json_load_file(path, 0, &je);
	if (!doc) {
		if (je.line > 0)
			fprintf(stderr, "threadwatch recommend: cannot read \"%s\": %s (line %d)\n",
			        strcmp(path, "-") ? path : "stdin", je.text, je.line);
		else
			fprintf(stderr, "threadwatch recommend: cannot read \"%s\": %s\n",
			        strcmp(path, "-") ? path : "stdin", je.text);
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

/* Applies --threads, --stack-size and --switches to inputs.workload. */
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
	struct recommend_args a = {.threads = NAN, .stack_bytes = NAN, .switches = NAN};
	json_t *inputs, *result;
	char err[256];
	int rc;

	if (parse_args(argc, argv, &a) < 0) {
		usage(stderr);
		return 2;
	}
	if (a.help) {
		usage(stdout);
		return 0;
	}
	if (a.input) {
		inputs = inputs_read(a.input);
		if (!inputs)
			return 2;
	} else {
		rc = cli_run_inputs(a.quick, &inputs);
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
	json_decref(result);
	json_decref(inputs);
	return rc;
}
