/*
 * probe: builds a probe's JSON document with jansson and prints it, and
 * parses the options all probes share.
 */
#include <errno.h>
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include <jansson.h>

#include "clock.h"
#include "opt.h"
#include "placement.h"
#include "probe.h"
#include "units.h"

struct probe_doc {
	json_t *root;
	json_t *params;
	json_t *scalars;
	json_t *series;
	json_t *info;
	uint64_t t0;
	enum probe_status status;
	char *reason;
	struct probe_series *handles; /* freed with the document */
};

/* The arms --skip-arm named, as "a,b" for the params of the document the
 * probe makes after parsing its options ("" when none). */
static char skipped_arms[PROBE_MAX_SKIP_ARMS * 65];

struct probe_series {
	json_t *points;
	struct probe_series *next;
};

static void *must(void *p)
{
	if (!p) {
		fputs("probe: out of memory\n", stderr);
		abort();
	}
	return p;
}

/* The scheduling policies by the names the runner's configuration uses. */
static const struct {
	int policy;
	const char *name;
} policies[] = {
    {SCHED_OTHER, "normal"}, {SCHED_IDLE, "idle"}, {SCHED_BATCH, "batch"},
    {SCHED_FIFO, "fifo"},    {SCHED_RR, "rr"},
};

/* The conditions every figure was measured under, as the runner set them:
 * a switch between SCHED_IDLE threads costs more than between normal ones,
 * so a figure is read with its policy, nice and CPUs. */
static void run_conditions(struct probe_doc *doc)
{
	int policy = sched_getscheduler(0) & ~SCHED_RESET_ON_FORK;
	const char *name = "unknown";
	char cpus[256];
	int niceness;

	for (size_t i = 0; i < sizeof(policies) / sizeof(policies[0]); i++)
		if (policies[i].policy == policy)
			name = policies[i].name;
	probe_info_str(doc, "sched_policy", name);
	errno = 0;
	niceness = getpriority(PRIO_PROCESS, 0);
	if (errno == 0)
		probe_info_num(doc, "nice", niceness);
	/* Where it ran: the runner pins a probe to one CPU by default. */
	if (place_allowed_list(cpus, sizeof(cpus)) == 0)
		probe_info_str(doc, "cpus_allowed", cpus);
}

struct probe_doc *probe_doc_new(const char *name)
{
	struct probe_doc *doc = must(calloc(1, sizeof(*doc)));
	char when[40];

	doc->t0 = clock_ns();
	int64_t wall = clock_wall_ns();
	clock_rfc3339(wall, when, sizeof(when));
	doc->root = must(json_object());
	doc->params = must(json_object());
	doc->scalars = must(json_object());
	doc->series = must(json_object());
	doc->info = must(json_object());
	json_object_set_new(doc->root, "probe", json_string(name));
	json_object_set_new(doc->root, "protocol", json_integer(PROBE_PROTOCOL_VERSION));
	json_object_set_new(doc->root, "started_at", json_string(when));
	json_object_set_new(doc->root, "started_unix", json_real((double)wall / 1e9));
	json_object_set(doc->root, "params", doc->params);
	if (skipped_arms[0])
		json_object_set_new(doc->params, "skip_arms", json_string(skipped_arms));
	json_object_set(doc->root, "scalars", doc->scalars);
	json_object_set(doc->root, "series", doc->series);
	json_object_set(doc->root, "info", doc->info);
	run_conditions(doc);
	return doc;
}

void probe_doc_free(struct probe_doc *doc)
{
	if (!doc)
		return;
	json_decref(doc->params);
	json_decref(doc->scalars);
	json_decref(doc->series);
	json_decref(doc->info);
	json_decref(doc->root);
	free(doc->reason);
	while (doc->handles) {
		struct probe_series *next = doc->handles->next;

		free(doc->handles);
		doc->handles = next;
	}
	free(doc);
}

void probe_param_int(struct probe_doc *doc, const char *name, int64_t v)
{
	json_object_set_new(doc->params, name, json_integer(v));
}

void probe_param_double(struct probe_doc *doc, const char *name, double v)
{
	json_object_set_new(doc->params, name, json_real(v));
}

void probe_param_bool(struct probe_doc *doc, const char *name, int v)
{
	json_object_set_new(doc->params, name, json_boolean(v));
}

void probe_scalar(struct probe_doc *doc, const char *name, double value, const char *unit)
{
	json_t *o;

	/* JSON has no NaN or infinity: a figure that could not be measured is
	 * left out rather than written as a made-up number. */
	if (!isfinite(value))
		return;
	o = must(json_pack("{s:f, s:s}", "value", value, "unit", unit));
	json_object_set_new(doc->scalars, name, o);
}

struct probe_series *probe_series_new(struct probe_doc *doc, const char *name, const char *x_unit,
                                      const char *y_unit)
{
	struct probe_series *s = must(calloc(1, sizeof(*s)));
	json_t *o;

	s->points = must(json_array());
	o = must(
	    json_pack("{s:s, s:s, s:O}", "x_unit", x_unit, "y_unit", y_unit, "points", s->points));
	json_object_set_new(doc->series, name, o);
	/* The document owns the points; the handle lives as long as the
	 * document. */
	json_decref(s->points);
	s->next = doc->handles;
	doc->handles = s;
	return s;
}

void probe_series_add(struct probe_series *s, double x, double y)
{
	if (!isfinite(x) || !isfinite(y))
		return;
	json_array_append_new(s->points, must(json_pack("[f, f]", x, y)));
}

void probe_info_str(struct probe_doc *doc, const char *name, const char *v)
{
	json_object_set_new(doc->info, name, v ? json_string(v) : json_null());
}

void probe_info_num(struct probe_doc *doc, const char *name, double v)
{
	json_object_set_new(doc->info, name, isfinite(v) ? json_real(v) : json_null());
}

void probe_info_bool(struct probe_doc *doc, const char *name, int v)
{
	json_object_set_new(doc->info, name, json_boolean(v));
}

void probe_status(struct probe_doc *doc, enum probe_status st, const char *fmt, ...)
{
	va_list ap;

	doc->status = st;
	free(doc->reason);
	doc->reason = NULL;
	if (!fmt)
		return;
	va_start(ap, fmt);
	if (vasprintf(&doc->reason, fmt, ap) < 0)
		doc->reason = NULL;
	va_end(ap);
}

int probe_emit(struct probe_doc *doc)
{
	static const char *const names[] = {[PROBE_OK] = "ok",
	                                    [PROBE_SKIPPED] = "skipped",
	                                    [PROBE_ERROR] = "error",
	                                    [PROBE_NOT_APPLICABLE] = "not_applicable"};
	char *text;

	json_object_set_new(doc->root, "status", json_string(names[doc->status]));
	json_object_set_new(doc->root, "reason",
	                    doc->reason ? json_string(doc->reason) : json_null());
	json_object_set_new(doc->root, "duration_s",
	                    json_real((double)(clock_ns() - doc->t0) / 1e9));
	text = must(json_dumps(doc->root, JSON_COMPACT | JSON_REAL_PRECISION(17)));
	puts(text);
	fflush(stdout);
	free(text);
	return doc->status == PROBE_ERROR ? 1 : 0;
}

static int parse_num(const char *s, double lo, double hi, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !(v >= lo && v <= hi))
		return -EINVAL;
	*out = v;
	return 0;
}

static int set_quick(struct probe_opts *o, const char *arg)
{
	(void)arg;
	o->quick = 1;
	return 0;
}

static int set_seed(struct probe_opts *o, const char *arg)
{
	double v;

	if (parse_num(arg, 0, 9007199254740992.0, &v) < 0)
		return -EINVAL;
	o->seed = (uint64_t)v;
	return 0;
}

static int set_cpu(struct probe_opts *o, const char *arg)
{
	double v;

	if (parse_num(arg, 0, 4095, &v) < 0)
		return -EINVAL;
	o->cpu = (int)v;
	return 0;
}

static int set_budget(struct probe_opts *o, const char *arg)
{
	double v;

	if (units_parse_duration(arg, &v) < 0 || v < 0.01 || v > 3600)
		return -EINVAL;
	o->budget_s = v;
	return 0;
}

/* --skip-arm NAME: an arm name ([a-z0-9_-], 1 to 64 characters). */
static int set_skip_arm(struct probe_opts *o, const char *arg)
{
	size_t n = strlen(arg), used = strlen(skipped_arms);

	if (n < 1 || n > 64 || strspn(arg, "abcdefghijklmnopqrstuvwxyz0123456789_-") != n ||
	    o->n_skip_arms == PROBE_MAX_SKIP_ARMS)
		return -EINVAL;
	o->skip_arms[o->n_skip_arms++] = arg;
	snprintf(skipped_arms + used, sizeof(skipped_arms) - used, "%s%s", used ? "," : "", arg);
	return 0;
}

int probe_skips_arm(const struct probe_opts *opts, const char *arm)
{
	for (size_t i = 0; i < opts->n_skip_arms; i++)
		if (!strcmp(opts->skip_arms[i], arm))
			return 1;
	return 0;
}

/* The options every probe takes (their vals are COMMON_VAL + row); --help
 * has no setter. */
#define COMMON_VAL 256
#define EXT_VAL 512
#define MAX_EXT 16

static const struct {
	const char *name, *arg, *help;
	int (*set)(struct probe_opts *o, const char *arg);
} common_opts[] = {
    {"quick", NULL, "a short run", set_quick},
    {"seed", "N", "bootstrap seed (default 1)", set_seed},
    {"cpu", "N", "CPU to pin to (default: first allowed)", set_cpu},
    {"budget", "DURATION", "time budget, such as 30s or 2m (10ms to 1h)", set_budget},
    {"skip-arm", "NAME", "do not measure this arm (repeatable)", set_skip_arm},
    {"help", NULL, "show this help", NULL},
};

#define N_COMMON (sizeof(common_opts) / sizeof(common_opts[0]))

static void probe_usage(FILE *f, const char *prog, const char *summary,
                        const struct probe_opt_ext *ext, size_t n_ext)
{
	fprintf(f, "usage: %s [--quick] [--seed N] [--cpu N] [--budget DURATION] [--skip-arm NAME]",
	        prog);
	for (size_t i = 0; i < n_ext; i++)
		fprintf(f, " [--%s%s]", ext[i].name, ext[i].has_arg ? " ARG" : "");
	fprintf(f, "\n%s\n", summary);
	for (size_t i = 0; i < N_COMMON; i++) {
		char left[40];

		snprintf(left, sizeof(left), "--%s%s%s", common_opts[i].name,
		         common_opts[i].arg ? " " : "",
		         common_opts[i].arg ? common_opts[i].arg : "");
		fprintf(f, "  %-20s %s\n", left, common_opts[i].help);
	}
	for (size_t i = 0; i < n_ext; i++) {
		char left[40];

		snprintf(left, sizeof(left), "--%s%s", ext[i].name, ext[i].has_arg ? " ARG" : "");
		fprintf(f, "  %-20s %s\n", left, ext[i].help);
	}
}

/* The getopt_long(3) table: the common options, then the probe's own. */
static void build_longopts(const struct probe_opt_ext *ext, size_t n_ext, struct option *lo)
{
	size_t n = 0;

	for (size_t i = 0; i < N_COMMON; i++)
		lo[n++] = (struct option){common_opts[i].name,
		                          common_opts[i].arg ? required_argument : no_argument,
		                          NULL, COMMON_VAL + (int)i};
	for (size_t i = 0; i < n_ext; i++)
		lo[n++] =
		    (struct option){ext[i].name, ext[i].has_arg ? required_argument : no_argument,
		                    NULL, EXT_VAL + (int)i};
	lo[n] = (struct option){0};
}

int probe_cpu_param(const struct probe_opts *opts)
{
	cpu_set_t set;

	if (opts->cpu >= 0)
		return opts->cpu;
	if (sched_getaffinity(0, sizeof(set), &set) < 0 || CPU_COUNT(&set) != 1)
		return -1;
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &set))
			return c;
	return -1;
}

int probe_parse_args(int argc, char **argv, const char *summary, struct probe_opts *opts,
                     const struct probe_opt_ext *ext, size_t n_ext)
{
	struct option lo[N_COMMON + MAX_EXT + 1];
	char err[256];
	int c;

	opts->quick = 0;
	opts->seed = 1;
	opts->cpu = -1;
	opts->budget_s = 0;
	opts->n_skip_arms = 0;
	skipped_arms[0] = '\0';
	if (n_ext > MAX_EXT)
		abort(); /* a probe's own table: a programming error */
	build_longopts(ext, n_ext, lo);
	optind = 0;
	while ((c = opt_next(argc, argv, ":h", lo, err, sizeof(err))) != -1) {
		const char *name;
		int r;

		if (c == '?' || c == ':')
			goto bad;
		if (c == 'h' || (c < EXT_VAL && !common_opts[c - COMMON_VAL].set)) {
			probe_usage(stdout, argv[0], summary, ext, n_ext);
			exit(0);
		}
		if (c >= EXT_VAL) {
			name = ext[c - EXT_VAL].name;
			r = ext[c - EXT_VAL].set(optarg, ext[c - EXT_VAL].ctx);
		} else {
			name = common_opts[c - COMMON_VAL].name;
			r = common_opts[c - COMMON_VAL].set(opts, optarg);
		}
		if (r < 0) {
			snprintf(err, sizeof(err), "invalid value \"%s\" for --%s",
			         optarg ? optarg : "", name);
			goto bad;
		}
	}
	if (optind < argc) {
		snprintf(err, sizeof(err), "unexpected argument \"%s\"", argv[optind]);
		goto bad;
	}
	return 0;
bad:
	fprintf(stderr, "%s: %s\n", argv[0], err);
	probe_usage(stderr, argv[0], summary, ext, n_ext);
	return -EINVAL;
}
