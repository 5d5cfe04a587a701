/*
 * probe: builds a probe's JSON document with jansson and prints it, and
 * parses the options all probes share.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "clock.h"
#include "probe.h"

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
	json_object_set(doc->root, "scalars", doc->scalars);
	json_object_set(doc->root, "series", doc->series);
	json_object_set(doc->root, "info", doc->info);
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
	static const char *const names[] = {"ok", "skipped", "error"};
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

static void probe_usage(const char *prog, const char *summary, const struct probe_opt_ext *ext,
                        size_t n_ext)
{
	fprintf(stderr, "usage: %s [--quick] [--seed N] [--cpu N] [--budget SECONDS]", prog);
	for (size_t i = 0; i < n_ext; i++)
		fprintf(stderr, " [--%s%s]", ext[i].name, ext[i].has_arg ? " ARG" : "");
	fprintf(stderr, "\n%s\n", summary);
	fprintf(stderr, "  --quick           a short run\n");
	fprintf(stderr, "  --seed N          bootstrap seed (default 1)\n");
	fprintf(stderr, "  --cpu N           CPU to pin to (default: first allowed)\n");
	fprintf(stderr, "  --budget SECONDS  time budget\n");
	for (size_t i = 0; i < n_ext; i++)
		fprintf(stderr, "  --%-16s %s\n", ext[i].name, ext[i].help);
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

int probe_parse_args(int argc, char **argv, const char *summary, struct probe_opts *opts,
                     const struct probe_opt_ext *ext, size_t n_ext)
{
	opts->quick = 0;
	opts->seed = 1;
	opts->cpu = -1;
	opts->budget_s = 0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *arg = NULL;
		double v;
		size_t k;

		if (strncmp(a, "--", 2) != 0)
			goto bad;
		a += 2;
		if (!strcmp(a, "quick")) {
			opts->quick = 1;
			continue;
		}
		if (!strcmp(a, "help")) {
			probe_usage(argv[0], summary, ext, n_ext);
			exit(0);
		}
		if (!strcmp(a, "seed") || !strcmp(a, "cpu") || !strcmp(a, "budget")) {
			if (i + 1 >= argc)
				goto bad;
			arg = argv[++i];
			if (!strcmp(a, "seed") && parse_num(arg, 0, 9007199254740992.0, &v) == 0)
				opts->seed = (uint64_t)v;
			else if (!strcmp(a, "cpu") && parse_num(arg, 0, 4095, &v) == 0)
				opts->cpu = (int)v;
			else if (!strcmp(a, "budget") && parse_num(arg, 0.01, 3600, &v) == 0)
				opts->budget_s = v;
			else
				goto bad;
			continue;
		}
		for (k = 0; k < n_ext; k++)
			if (!strcmp(a, ext[k].name))
				break;
		if (k == n_ext)
			goto bad;
		if (ext[k].has_arg) {
			if (i + 1 >= argc)
				goto bad;
			arg = argv[++i];
		}
		if (ext[k].set(arg, ext[k].ctx) < 0)
			goto bad;
	}
	return 0;
bad:
	probe_usage(argv[0], summary, ext, n_ext);
	return -EINVAL;
}
