/*
 * recommend_parse: the recommendation's inputs validated into struct
 * rec_in (see recommendp.h): one table of scalar fields, the curves, the
 * CIs and the checks between fields, each refusal naming the field. The
 * model (recommend.c) and the costs, failed probes and architecture
 * (recommend_costs.c, recommend_failed.c, recommend_arch.c) use its
 * helpers; it uses none of theirs but the failed probes' own parser.
 */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errbuf.h"
#include "recommend.h"
#include "recommendp.h"
#include "xmalloc.h"

/* --- validated inputs -------------------------------------------------- */

/* Every scalar field of the inputs: one table drives parsing and checks. */
static const struct rec_field rec_fields[] = {
    {"workload", "threads", REC_F_WHOLE, REC_MAX_THREADS, offsetof(struct rec_in, threads)},
    {"workload", "stack_bytes", REC_F_POSITIVE, 0, offsetof(struct rec_in, stack_bytes)},
    {"workload", "switches_per_thread", REC_F_NULL, 0, offsetof(struct rec_in, spt)},
    {"workload", "creates_per_second", REC_F_NULL | REC_F_POSITIVE, 0,
     offsetof(struct rec_in, cps)},
    {"workload", "switches_per_second", REC_F_NULL, 0, offsetof(struct rec_in, sps)},
    {"ctxsw", "low_ns", REC_F_REQUIRED | REC_F_POSITIVE, 0, offsetof(struct rec_in, low_ns)},
    {"ctxsw", "high_ns", REC_F_REQUIRED | REC_F_POSITIVE, 0, offsetof(struct rec_in, high_ns)},
    {"ctxsw", "ratio", 0, 0, offsetof(struct rec_in, ratio)},
    {"ctxsw", "equivalence_margin", REC_F_POSITIVE, 0, offsetof(struct rec_in, margin)},
    {"ctxsw", "selector_ratio", REC_F_POSITIVE, 0, offsetof(struct rec_in, sel_ratio)},
    {"ctxsw", "selector_child_ratio", REC_F_POSITIVE, 0, offsetof(struct rec_in, sel_child_ratio)},
    {"map32", "window_bytes", 0, REC_MAX_WINDOW, offsetof(struct rec_in, window)},
    {"map32", "window_vmas", 0, 0, offsetof(struct rec_in, window_vmas)},
    {"map32", "outside_vmas", 0, 0, offsetof(struct rec_in, outside_vmas)},
    {"map32", "capacity_stacks", REC_F_WHOLE, 0, offsetof(struct rec_in, capacity_stacks)},
    {"map32", "stack_bytes", REC_F_POSITIVE, 0, offsetof(struct rec_in, capacity_stack_bytes)},
    {"cpu", "family", REC_F_NULL, 0, offsetof(struct rec_in, family)},
    {"cpu", "model", REC_F_NULL, 0, offsetof(struct rec_in, model)},
};

static const struct rec_curve_field {
	const char *section;
	const char *key;
	size_t offset;
} rec_curves[] = {
    {"map32", "fill_ns", offsetof(struct rec_in, fill)},
    {"map32", "fail_ns", offsetof(struct rec_in, fail)},
    {"map32", "retry_ns", offsetof(struct rec_in, retry)},
    {"map32", "plain_ns", offsetof(struct rec_in, plain)},
    {"threads", "low_create_ns", offsetof(struct rec_in, low_create)},
    {"threads", "high_create_ns", offsetof(struct rec_in, high_create)},
};

int rec_section_get(const json_t *in, const char *name, const json_t **out, char *err,
                    size_t errlen)
{
	const json_t *v = json_object_get(in, name);

	*out = NULL;
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_object(v))
		return errbuf_set(err, errlen, -EINVAL, "%s: must be an object", name);
	*out = v;
	return 0;
}

int rec_number_check(const json_t *v, const char *what, unsigned flags, double max, double *out,
                     char *err, size_t errlen)
{
	double d;

	if (!json_is_number(v))
		return errbuf_set(err, errlen, -EINVAL, "%s: must be a number", what);
	d = json_number_value(v);
	if (!isfinite(d))
		return errbuf_set(err, errlen, -EINVAL, "%s: must be a finite number", what);
	if (d < 0)
		return errbuf_set(err, errlen, -EINVAL, "%s: must not be negative", what);
	if ((flags & REC_F_POSITIVE) && d == 0)
		return errbuf_set(err, errlen, -EINVAL, "%s: must be positive", what);
	if ((flags & REC_F_WHOLE) && d != floor(d))
		return errbuf_set(err, errlen, -EINVAL, "%s: must be a whole number", what);
	if (max > 0 && d > max)
		return errbuf_set(err, errlen, -EINVAL, "%s: must be at most %.0f", what, max);
	*out = d;
	return 0;
}

static int field_parse(const json_t *sect, const struct rec_field *f, void *base, char *err,
                       size_t errlen)
{
	struct rec_num *num = (struct rec_num *)((char *)base + f->offset);
	const json_t *v = json_object_get(sect, f->key);
	char what[128];

	snprintf(what, sizeof(what), "%s.%s", f->section, f->key);
	if (!v || ((f->flags & REC_F_NULL) && json_is_null(v))) {
		if (!v && (f->flags & REC_F_REQUIRED))
			return errbuf_set(err, errlen, -EINVAL, "%s: missing", what);
		return 0;
	}
	if (rec_number_check(v, what, f->flags, f->max, &num->v, err, errlen) < 0)
		return -EINVAL;
	num->set = 1;
	return 0;
}

int rec_fields_parse(const json_t *inputs, const struct rec_field *f, size_t n, void *base,
                     char *err, size_t errlen)
{
	const json_t *sect;

	for (size_t i = 0; i < n; i++) {
		if (rec_section_get(inputs, f[i].section, &sect, err, errlen) < 0)
			return -EINVAL;
		if (sect && field_parse(sect, &f[i], base, err, errlen) < 0)
			return -EINVAL;
	}
	return 0;
}

static int curve_parse(const json_t *arr, const char *what, struct rec_curve *c, char *err,
                       size_t errlen)
{
	double prev = -1, xy[2];
	size_t i;
	char at[160];

	if (!json_is_array(arr))
		return errbuf_set(err, errlen, -EINVAL, "%s: must be an array of [x, y] points",
		                  what);
	c->points = json_array_size(arr);
	if (c->points > REC_MAX_POINTS)
		return errbuf_set(err, errlen, -EINVAL, "%s: more than %d points", what,
		                  REC_MAX_POINTS);
	c->x = xcalloc(c->points + 1, sizeof(double));
	c->y = xcalloc(c->points + 1, sizeof(double));
	for (i = 0; i < c->points; i++) {
		const json_t *p = json_array_get(arr, i);

		if (!json_is_array(p) || json_array_size(p) != 2)
			return errbuf_set(err, errlen, -EINVAL, "%s[%zu]: must be an [x, y] pair",
			                  what, i);
		for (int k = 0; k < 2; k++) {
			snprintf(at, sizeof(at), "%s[%zu]: %c", what, i, k ? 'y' : 'x');
			if (rec_number_check(json_array_get(p, k), at, 0, 0, &xy[k], err, errlen) <
			    0)
				return -EINVAL;
		}
		if (xy[0] <= prev)
			return errbuf_set(err, errlen, -EINVAL, "%s[%zu]: x must increase", what,
			                  i);
		prev = xy[0];
		/* Log axes take only positive values; a point too close to the
		 * previous one to tell apart in log space adds nothing. */
		if (xy[0] > 0 && xy[1] > 0 && (!c->n || log(xy[0] / c->x[c->n - 1]) > 0)) {
			c->x[c->n] = xy[0];
			c->y[c->n] = xy[1];
			c->n++;
		}
	}
	return 0;
}

/* ctxsw.KEY: absent, null, or [lo, hi] with 0 <= lo <= hi. */
int rec_ci_parse(const json_t *sect, const char *section, const char *key, int *have, double *lo,
                 double *hi, char *err, size_t errlen)
{
	const json_t *ci = json_object_get(sect, key);
	double b[2];

	if (!ci || json_is_null(ci))
		return 0;
	if (!json_is_array(ci) || json_array_size(ci) != 2)
		return errbuf_set(err, errlen, -EINVAL, "%s.%s: must be an array [lo, hi]", section,
		                  key);
	for (int k = 0; k < 2; k++) {
		char what[128];

		snprintf(what, sizeof(what), "%s.%s[%d]", section, key, k);
		if (rec_number_check(json_array_get(ci, k), what, 0, 0, &b[k], err, errlen) < 0)
			return -EINVAL;
	}
	if (b[0] > b[1])
		return errbuf_set(err, errlen, -EINVAL, "%s.%s: lo must not exceed hi", section,
		                  key);
	*have = 1;
	*lo = b[0];
	*hi = b[1];
	return 0;
}

static int ctxsw_ci_parse(const json_t *ctxsw, struct rec_in *in, char *err, size_t errlen)
{
	if (rec_ci_parse(ctxsw, "ctxsw", "ratio_ci95", &in->have_ci, &in->ci_lo, &in->ci_hi, err,
	                 errlen) < 0 ||
	    rec_ci_parse(ctxsw, "ctxsw", "ratio_ci90", &in->have_ci90, &in->ci90_lo, &in->ci90_hi,
	                 err, errlen) < 0 ||
	    rec_ci_parse(ctxsw, "ctxsw", "selector_ratio_ci95", &in->have_sel_ci, &in->sel_lo,
	                 &in->sel_hi, err, errlen) < 0 ||
	    rec_ci_parse(ctxsw, "ctxsw", "selector_child_ratio_ci95", &in->have_selc_ci,
	                 &in->selc_lo, &in->selc_hi, err, errlen) < 0 ||
	    rec_ci_parse(ctxsw, "ctxsw", "aa_ratio_ci95", &in->have_aa_ci, &in->aa_lo, &in->aa_hi,
	                 err, errlen) < 0)
		return -EINVAL;
	if (in->margin.set && in->margin.v >= 0.5)
		return errbuf_set(err, errlen, -EINVAL,
		                  "ctxsw.equivalence_margin: must be below 0.5 (a fraction of 1)");
	return 0;
}

static int cpu_parse(const json_t *cpu, struct rec_in *in, char *err, size_t errlen)
{
	const json_t *v = json_object_get(cpu, "vendor");
	const json_t *fs = json_object_get(cpu, "fsgsbase");

	if (v && !json_is_null(v) && !json_is_string(v))
		return errbuf_set(err, errlen, -EINVAL, "cpu.vendor: must be a string");
	if (fs && !json_is_null(fs) && !json_is_boolean(fs) && !json_is_number(fs))
		return errbuf_set(err, errlen, -EINVAL, "cpu.fsgsbase: must be a boolean");
	in->fsgsbase = json_is_true(fs) || (json_is_number(fs) && json_number_value(fs) != 0);
	return 0;
}

void rec_in_free(struct rec_in *in)
{
	for (size_t i = 0; i < sizeof(rec_curves) / sizeof(rec_curves[0]); i++) {
		struct rec_curve *c = (struct rec_curve *)((char *)in + rec_curves[i].offset);

		free(c->x);
		free(c->y);
	}
	rec_failed_clear(&in->failed);
}

int rec_in_parse(const json_t *inputs, struct rec_in *in, char *err, size_t errlen)
{
	const json_t *sect;
	size_t i;

	memset(in, 0, sizeof(*in));
	if (!json_is_object(inputs))
		return errbuf_set(err, errlen, -EINVAL, "inputs: must be a JSON object");
	if (rec_fields_parse(inputs, rec_fields, sizeof(rec_fields) / sizeof(rec_fields[0]), in,
	                     err, errlen) < 0)
		return -EINVAL;
	for (i = 0; i < sizeof(rec_curves) / sizeof(rec_curves[0]); i++) {
		const struct rec_curve_field *f = &rec_curves[i];
		struct rec_curve *c = (struct rec_curve *)((char *)in + f->offset);
		const json_t *arr;
		char what[128];

		if (rec_section_get(inputs, f->section, &sect, err, errlen) < 0)
			return -EINVAL;
		arr = sect ? json_object_get(sect, f->key) : NULL;
		if (!arr || json_is_null(arr))
			continue;
		snprintf(what, sizeof(what), "%s.%s", f->section, f->key);
		if (curve_parse(arr, what, c, err, errlen) < 0)
			return -EINVAL;
	}
	if (rec_section_get(inputs, "workload", &sect, err, errlen) < 0)
		return -EINVAL;
	if (in->sps.set && !in->cps.set)
		return errbuf_set(err, errlen, -EINVAL,
		                  "workload.switches_per_second: needs workload.creates_per_second "
		                  "(a rate of switches against a one-off create cost has no "
		                  "break-even)");
	if (rec_section_get(inputs, "cpu", &sect, err, errlen) < 0 ||
	    (sect && cpu_parse(sect, in, err, errlen) < 0))
		return -EINVAL;
	if (rec_section_get(inputs, "ctxsw", &sect, err, errlen) < 0)
		return -EINVAL;
	in->have_ctxsw = sect != NULL;
	if (sect && ctxsw_ci_parse(sect, in, err, errlen) < 0)
		return -EINVAL;
	if (rec_failed_parse(inputs, &in->failed, err, errlen) < 0)
		return -EINVAL;
	if (!in->have_ctxsw)
		in->ctxsw_why = rec_failed_why(&in->failed, "ctxsw", in->ctxsw_why_buf,
		                               sizeof(in->ctxsw_why_buf));
	return 0;
}
