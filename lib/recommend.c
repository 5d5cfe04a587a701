/*
 * recommend: the verdict on low (MAP_32BIT) thread stacks. Validates the
 * recommendation inputs, applies the model of doc/recommendation.md and
 * returns the verdict with every number behind it in "figures" and told in
 * "reasons". Pure: no I/O, no clock, no global state.
 */
#include <assert.h>
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "protocol.h"
#include "errbuf.h"
#include "defaults.h"
#include "recommend.h"
#include "recommendp.h"
#include "stats.h"
#include "xmalloc.h"

/* --- validated inputs -------------------------------------------------- */

struct rec_num {
	double v;
	int set;
};

struct rec_in {
	struct rec_num threads, stack_bytes, spt;
	struct rec_num cps, sps; /* churn: creates and switches per second */
	int have_ctxsw;
	struct rec_num low_ns, high_ns, ratio;
	int have_ci, have_ci90;
	double ci_lo, ci_hi, ci90_lo, ci90_hi; /* 95% CI; 90% CI for equivalence (TOST) */
	/* issue 14: equivalence, the segment path, the A/A control */
	struct rec_num margin, sel_ratio;
	int have_sel_ci, have_aa_ci;
	double sel_lo, sel_hi, aa_lo, aa_hi;
	struct rec_num window, window_vmas, outside_vmas;
	/* what map32 measured the window to hold, and at which stack size */
	struct rec_num capacity_stacks, capacity_stack_bytes;
	struct rec_curve fill, fail, retry, plain, low_create, high_create;
	struct rec_num family, model;
	/* probes whose last run failed or that are disabled */
	struct rec_failed failed;
	const char *ctxsw_why; /* why there are no ctxsw figures, or NULL */
	char ctxsw_why_buf[1024];
	int fsgsbase; /* the CPU has FSGSBASE: the switch writes FS with wrfsbase */
};

enum {
	F_REQUIRED = 1 << 0, /* must be present when its section is */
	F_POSITIVE = 1 << 1, /* > 0 (all numbers must be >= 0) */
	F_WHOLE = 1 << 2,    /* a whole number */
	F_NULL = 1 << 3,     /* null means unknown */
};

/* Every scalar field of the inputs: one table drives parsing and checks. */
static const struct rec_field {
	const char *section;
	const char *key;
	unsigned flags;
	double max; /* 0: no upper bound */
	size_t offset;
} rec_fields[] = {
    {"workload", "threads", F_WHOLE, REC_MAX_THREADS, offsetof(struct rec_in, threads)},
    {"workload", "stack_bytes", F_POSITIVE, 0, offsetof(struct rec_in, stack_bytes)},
    {"workload", "switches_per_thread", F_NULL, 0, offsetof(struct rec_in, spt)},
    {"workload", "creates_per_second", F_NULL | F_POSITIVE, 0, offsetof(struct rec_in, cps)},
    {"workload", "switches_per_second", F_NULL, 0, offsetof(struct rec_in, sps)},
    {"ctxsw", "low_ns", F_REQUIRED | F_POSITIVE, 0, offsetof(struct rec_in, low_ns)},
    {"ctxsw", "high_ns", F_REQUIRED | F_POSITIVE, 0, offsetof(struct rec_in, high_ns)},
    {"ctxsw", "ratio", 0, 0, offsetof(struct rec_in, ratio)},
    {"ctxsw", "equivalence_margin", F_POSITIVE, 0, offsetof(struct rec_in, margin)},
    {"ctxsw", "selector_ratio", F_POSITIVE, 0, offsetof(struct rec_in, sel_ratio)},
    {"map32", "window_bytes", 0, REC_MAX_WINDOW, offsetof(struct rec_in, window)},
    {"map32", "window_vmas", 0, 0, offsetof(struct rec_in, window_vmas)},
    {"map32", "outside_vmas", 0, 0, offsetof(struct rec_in, outside_vmas)},
    {"map32", "capacity_stacks", F_WHOLE, 0, offsetof(struct rec_in, capacity_stacks)},
    {"map32", "stack_bytes", F_POSITIVE, 0, offsetof(struct rec_in, capacity_stack_bytes)},
    {"cpu", "family", F_NULL, 0, offsetof(struct rec_in, family)},
    {"cpu", "model", F_NULL, 0, offsetof(struct rec_in, model)},
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

/* A section: absent or null is "missing" (NULL), anything else must be an object. */
static int section_get(const json_t *in, const char *name, const json_t **out, char *err,
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

static int number_check(const json_t *v, const char *what, unsigned flags, double max, double *out,
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
	if ((flags & F_POSITIVE) && d == 0)
		return errbuf_set(err, errlen, -EINVAL, "%s: must be positive", what);
	if ((flags & F_WHOLE) && d != floor(d))
		return errbuf_set(err, errlen, -EINVAL, "%s: must be a whole number", what);
	if (max > 0 && d > max)
		return errbuf_set(err, errlen, -EINVAL, "%s: must be at most %.0f", what, max);
	*out = d;
	return 0;
}

static int field_parse(const json_t *sect, const struct rec_field *f, struct rec_in *in, char *err,
                       size_t errlen)
{
	struct rec_num *num = (struct rec_num *)((char *)in + f->offset);
	const json_t *v = json_object_get(sect, f->key);
	char what[128];

	snprintf(what, sizeof(what), "%s.%s", f->section, f->key);
	if (!v || ((f->flags & F_NULL) && json_is_null(v))) {
		if (!v && (f->flags & F_REQUIRED))
			return errbuf_set(err, errlen, -EINVAL, "%s: missing", what);
		return 0;
	}
	if (number_check(v, what, f->flags, f->max, &num->v, err, errlen) < 0)
		return -EINVAL;
	num->set = 1;
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
			if (number_check(json_array_get(p, k), at, 0, 0, &xy[k], err, errlen) < 0)
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
static int ci_parse(const json_t *ctxsw, const char *key, int *have, double *lo, double *hi,
                    char *err, size_t errlen)
{
	const json_t *ci = json_object_get(ctxsw, key);
	double b[2];

	if (!ci || json_is_null(ci))
		return 0;
	if (!json_is_array(ci) || json_array_size(ci) != 2)
		return errbuf_set(err, errlen, -EINVAL, "ctxsw.%s: must be an array [lo, hi]", key);
	for (int k = 0; k < 2; k++) {
		char what[64];

		snprintf(what, sizeof(what), "ctxsw.%s[%d]", key, k);
		if (number_check(json_array_get(ci, k), what, 0, 0, &b[k], err, errlen) < 0)
			return -EINVAL;
	}
	if (b[0] > b[1])
		return errbuf_set(err, errlen, -EINVAL, "ctxsw.%s: lo must not exceed hi", key);
	*have = 1;
	*lo = b[0];
	*hi = b[1];
	return 0;
}

static int ctxsw_ci_parse(const json_t *ctxsw, struct rec_in *in, char *err, size_t errlen)
{
	if (ci_parse(ctxsw, "ratio_ci95", &in->have_ci, &in->ci_lo, &in->ci_hi, err, errlen) < 0 ||
	    ci_parse(ctxsw, "ratio_ci90", &in->have_ci90, &in->ci90_lo, &in->ci90_hi, err, errlen) <
	        0 ||
	    ci_parse(ctxsw, "selector_ratio_ci95", &in->have_sel_ci, &in->sel_lo, &in->sel_hi, err,
	             errlen) < 0 ||
	    ci_parse(ctxsw, "aa_ratio_ci95", &in->have_aa_ci, &in->aa_lo, &in->aa_hi, err, errlen) <
	        0)
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

static void rec_in_free(struct rec_in *in)
{
	for (size_t i = 0; i < sizeof(rec_curves) / sizeof(rec_curves[0]); i++) {
		struct rec_curve *c = (struct rec_curve *)((char *)in + rec_curves[i].offset);

		free(c->x);
		free(c->y);
	}
	rec_failed_clear(&in->failed);
}

static int rec_in_parse(const json_t *inputs, struct rec_in *in, char *err, size_t errlen)
{
	const json_t *sect;
	size_t i;

	memset(in, 0, sizeof(*in));
	if (!json_is_object(inputs))
		return errbuf_set(err, errlen, -EINVAL, "inputs: must be a JSON object");
	for (i = 0; i < sizeof(rec_fields) / sizeof(rec_fields[0]); i++) {
		if (section_get(inputs, rec_fields[i].section, &sect, err, errlen) < 0)
			return -EINVAL;
		if (sect && field_parse(sect, &rec_fields[i], in, err, errlen) < 0)
			return -EINVAL;
	}
	for (i = 0; i < sizeof(rec_curves) / sizeof(rec_curves[0]); i++) {
		const struct rec_curve_field *f = &rec_curves[i];
		struct rec_curve *c = (struct rec_curve *)((char *)in + f->offset);
		const json_t *arr;
		char what[128];

		if (section_get(inputs, f->section, &sect, err, errlen) < 0)
			return -EINVAL;
		arr = sect ? json_object_get(sect, f->key) : NULL;
		if (!arr || json_is_null(arr))
			continue;
		snprintf(what, sizeof(what), "%s.%s", f->section, f->key);
		if (curve_parse(arr, what, c, err, errlen) < 0)
			return -EINVAL;
	}
	if (section_get(inputs, "workload", &sect, err, errlen) < 0)
		return -EINVAL;
	if (in->sps.set && !in->cps.set)
		return errbuf_set(err, errlen, -EINVAL,
		                  "workload.switches_per_second: needs workload.creates_per_second "
		                  "(a rate of switches against a one-off create cost has no "
		                  "break-even)");
	if (section_get(inputs, "cpu", &sect, err, errlen) < 0 ||
	    (sect && cpu_parse(sect, in, err, errlen) < 0))
		return -EINVAL;
	if (section_get(inputs, "ctxsw", &sect, err, errlen) < 0)
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

/* --- the model ---------------------------------------------------------- */

/* The rule that decided, in the order they are tried. */
enum rec_rule {
	RULE_NO_CTXSW,       /* no switch figures: high, confidence none */
	RULE_NO_WINDOW,      /* no stack fits the window: high */
	RULE_NO_THREADS,     /* a workload without threads: high */
	RULE_NO_BENEFIT,     /* no significant switch benefit: high */
	RULE_FITS,           /* benefit, every thread fits: low */
	RULE_COST_UNKNOWN,   /* outgrows the window, extra cost unknown: high */
	RULE_SWITCH_UNKNOWN, /* outgrows the window, switches unknown: high */
	RULE_BREAK_EVEN,     /* outgrows the window: the break-even decides */
};

struct rec_model {
	const struct rec_in *in;
	enum rec_rule rule;
	double n, stack, spt; /* spt: switches per thread life, given or sps / cps */
	int spt_known;
	double cps, sps; /* churn: creates and switches per second (NAN: none) */
	double low_ns, high_ns, ratio, ci_lo, ci_hi;
	int have_ci, significant;
	double margin;  /* equivalence margin m */
	int equivalent; /* the ratio's 90% CI lies inside [1 - m, 1 + m] */
	int have_ci90;  /* eq_lo, eq_hi: the 90% CI (else the 95% one) */
	double eq_lo, eq_hi;
	double sel_ratio, sel_lo, sel_hi; /* the segment path against high */
	int have_sel_ci, aa_biased;
	double s, s_lo, s_hi;     /* per-switch saving and its CI, ns */
	double window, slot, cap; /* bytes, bytes per stack + guard, stacks */
	double cap_computed;      /* floor(window / slot) */
	int cap_measured;         /* cap is what map32 measured at this stack size */
	int window_assumed;
	double missing;       /* threads beyond the window */
	struct rec_create cm; /* what the create costs are computed from */
	/* E: the extra cost of the marginal create, with e_at threads alive
	 * (the workload's count, or C when all fit: the first miss). */
	const char *e_source; /* "map32", "threads" or NULL (unknown) */
	double e_at;
	struct rec_create_term et; /* E (extra) and its terms */
	/* The sum over the workload's creates: below C (the ramp) and from C. */
	double ramp_total, beyond_total, extra_mean;
	int x_extrapolated; /* a term of the sum was read beyond a curve's end */
	double cost_rate, benefit_rate, be_rate; /* with churn, per second */
	/* The threads probe's own extra cost at the workload's count, when it
	 * measured that far (a cross-check of the map32 terms). */
	double e_measured;
	double extra_total, benefit_total;
	double be, be_lo, be_hi; /* break-even switches per low-stack thread */
	double flip_threads, flip_spt;
	int verdict_low;
	const char *confidence;
};

/* low - high create cost at n from the threads curves, when both reach n
 * (NAN otherwise). */
static double extra_measured(const struct rec_in *in, double n)
{
	int x1 = 0, x2 = 0;
	double lo, hi;

	if (!in->low_create.n || !in->high_create.n)
		return NAN;
	lo = rec_curve_eval(&in->low_create, n, &x1);
	hi = rec_curve_eval(&in->high_create, n, &x2);
	if (x1 || x2 || isnan(lo - hi))
		return NAN;
	return lo > hi ? lo - hi : 0;
}

static double safe_div(double a, double b)
{
	if (b > 0)
		return a / b;
	return a > 0 ? INFINITY : 0;
}

/* The extra cost of the creates k = 0 .. n - 1 (NAN when unknown). */
static double extra_sum(const struct rec_model *m, double n, int *extrapolated)
{
	double x;

	return rec_create_sum(&m->cm, 0, n, &x, extrapolated) < 0 ? NAN : x;
}

/* Whether low stacks win at `n` threads, the other inputs unchanged: the
 * min(n, C) low-stack threads' switches repay what the n creates cost
 * more; every thread fitting at no extra cost is a win outright. */
static int low_wins(const struct rec_model *m, double n)
{
	int ex = 0;
	double x;

	if (!m->significant || m->cap < 1 || n < 1)
		return 0;
	x = extra_sum(m, n, &ex);
	if (n <= m->cap && !(x > 0))
		return 1;
	if (isnan(x) || !m->spt_known)
		return 0;
	return fmin(n, m->cap) * m->spt * m->s > x;
}

/* The nearest thread count on the other side of the verdict, by bisection
 * between a count known to give one verdict and one known to give the
 * other (exact when the extra cost does not fall as threads grow). */
static double flip_threads(const struct rec_model *m)
{
	double lo, hi, mid;

	if (!m->significant || m->cap < 1)
		return NAN;
	if (m->verdict_low) {
		lo = m->n;
		hi = REC_MAX_THREADS;
		if (low_wins(m, hi))
			return NAN;
	} else if (m->n < 1) {
		return 1;
	} else {
		/* the ramp can make even a full window a loss */
		lo = low_wins(m, m->cap) ? m->cap : 1;
		hi = m->n;
		if (!low_wins(m, lo))
			return NAN;
	}
	while (hi - lo > 1) {
		mid = floor(lo + (hi - lo) / 2);
		if (low_wins(m, mid))
			lo = mid;
		else
			hi = mid;
	}
	return m->verdict_low ? hi : lo;
}

static void model_inputs(struct rec_model *m, const struct rec_in *in)
{
	struct rec_workload w;

	rec_workload_default(&w);
	memset(m, 0, sizeof(*m));
	m->in = in;
	m->n = in->threads.set ? in->threads.v : w.threads;
	m->stack = in->stack_bytes.set ? in->stack_bytes.v : w.stack_bytes;
	m->spt_known = in->spt.set;
	m->spt = in->spt.set ? in->spt.v : NAN;
	m->cps = in->cps.set ? in->cps.v : NAN;
	m->sps = in->sps.set ? in->sps.v : NAN;
	if (in->cps.set && in->sps.set) {
		/* churn: per second, creates_per_second x X / n against
		 * switches_per_second x min(n, C) / n x s; divided through by
		 * creates_per_second / n, the switches of one thread's life */
		m->spt = m->sps / m->cps;
		m->spt_known = 1;
	}
	if (in->have_ctxsw) {
		m->low_ns = in->low_ns.v;
		m->high_ns = in->high_ns.v;
		m->ratio = in->ratio.set ? in->ratio.v : in->low_ns.v / in->high_ns.v;
		m->have_ci = in->have_ci;
		m->ci_lo = in->have_ci ? in->ci_lo : m->ratio;
		m->ci_hi = in->have_ci ? in->ci_hi : m->ratio;
	} else {
		m->low_ns = m->high_ns = m->ratio = m->ci_lo = m->ci_hi = NAN;
	}
	m->margin = in->margin.set ? in->margin.v : REC_DEFAULT_MARGIN;
	/* TOST at alpha = 0.05 is the 90% CI inside [1 - m, 1 + m]; without
	 * one the wider 95% CI stands in (conservative). */
	m->have_ci90 = m->have_ci && in->have_ci90;
	m->eq_lo = m->have_ci90 ? in->ci90_lo : m->ci_lo;
	m->eq_hi = m->have_ci90 ? in->ci90_hi : m->ci_hi;
	m->equivalent = m->have_ci && stats_ci_equivalent(m->eq_lo, m->eq_hi, m->margin);
	m->sel_ratio = in->sel_ratio.set ? in->sel_ratio.v : NAN;
	m->have_sel_ci = in->have_sel_ci && in->sel_ratio.set;
	m->sel_lo = m->have_sel_ci ? in->sel_lo : NAN;
	m->sel_hi = m->have_sel_ci ? in->sel_hi : NAN;
	m->aa_biased = in->have_aa_ci && !(in->aa_lo <= 1 && 1 <= in->aa_hi);
	m->window_assumed = !in->window.set;
	m->window = in->window.set ? in->window.v : REC_DEFAULT_WINDOW;
	m->extra_total = m->benefit_total = NAN;
	m->be = m->be_lo = m->be_hi = NAN;
	m->e_at = m->e_measured = NAN;
	rec_create_term_unknown(&m->et);
	m->ramp_total = m->beyond_total = m->extra_mean = NAN;
	m->cost_rate = m->benefit_rate = m->be_rate = NAN;
	m->flip_threads = m->flip_spt = NAN;
}

/* The create-cost model's inputs: map32's window VMAs default to 2 C (its
 * stacks the workload's size), the VMAs outside the window to 0. */
static void model_create(struct rec_model *m)
{
	const struct rec_in *in = m->in;

	m->cm = (struct rec_create){.fill = &in->fill,
	                            .fail = &in->fail,
	                            .retry = &in->retry,
	                            .plain = &in->plain,
	                            .low = &in->low_create,
	                            .high = &in->high_create,
	                            .cap = m->cap,
	                            .window = in->window_vmas.set ? in->window_vmas.v
	                                                          : REC_VMAS_PER_THREAD * m->cap,
	                            .others = in->outside_vmas.set ? in->outside_vmas.v : 0};
}

/* E, the marginal create at e_at threads, with its terms. */
static void model_marginal(struct rec_model *m)
{
	m->e_at = m->n > m->cap ? m->n : m->cap;
	m->e_source = rec_create_source(&m->cm);
	if (rec_create_at(&m->cm, m->e_at, &m->et) < 0)
		return;
	if (!strcmp(m->e_source, "map32"))
		m->e_measured = extra_measured(m->in, m->e_at);
}

/* X, the sum over the n creates, its mean, and the break-even. */
static void model_total(struct rec_model *m)
{
	double low_threads = fmin(m->n, m->cap);

	if (!m->e_source)
		return;
	rec_create_sum(&m->cm, 0, low_threads, &m->ramp_total, &m->x_extrapolated);
	rec_create_sum(&m->cm, m->cap, m->n, &m->beyond_total, &m->x_extrapolated);
	m->extra_total = m->ramp_total + m->beyond_total;
	m->extra_mean = m->n >= 1 ? m->extra_total / m->n : NAN;
	/* No break-even without a benefit: a saving that is not significant
	 * would repay the creates only by chance (issue 34). */
	if (!(m->missing > 0 || m->extra_total > 0) || m->cap < 1 || !(m->s > 0) || !m->significant)
		return;
	m->be = safe_div(m->extra_total, low_threads * m->s);
	m->be_lo = safe_div(m->extra_total, low_threads * m->s_hi);
	m->be_hi = safe_div(m->extra_total, low_threads * m->s_lo);
}

/* With churn, the same comparison per second. */
static void model_churn(struct rec_model *m)
{
	if (isnan(m->cps) || m->n < 1)
		return;
	m->cost_rate = m->cps * m->extra_mean;
	if (m->spt_known)
		m->benefit_rate = m->cps * m->spt * fmin(m->n, m->cap) / m->n * m->s;
	m->be_rate = m->cps * m->be;
}

/* Everything but the verdict: saving, capacity, extra cost, break-even. */
static void model_figures(struct rec_model *m)
{
	/* From the ratio like its CI, so the point lies inside it; it is
	 * high_ns - low_ns when the ratio is low_ns / high_ns. */
	m->s = m->high_ns * (1 - m->ratio);
	m->s_lo = m->high_ns * (1 - m->ci_hi);
	m->s_hi = m->high_ns * (1 - m->ci_lo);
	/* A saving counts only when even the CI's worst case saves at least
	 * the margin; switches shown equivalent never make a saving. */
	m->significant = m->ci_hi < 1 - m->margin && m->s > 0 && !m->equivalent;
	m->slot = m->stack + REC_GUARD_BYTES;
	m->cap = m->cap_computed = floor(m->window / m->slot);
	/* What map32 filled the window with at the workload's stack size wins:
	 * the window's free space may come in pieces (issue 34: 126 measured
	 * against 127 computed). */
	if (m->in->capacity_stacks.set && m->in->capacity_stack_bytes.set &&
	    m->in->capacity_stack_bytes.v == m->stack && m->in->capacity_stacks.v <= m->cap) {
		m->cap = m->in->capacity_stacks.v;
		m->cap_measured = 1;
	}
	m->missing = m->n > m->cap ? m->n - m->cap : 0;
	model_create(m);
	model_marginal(m);
	model_total(m);
	if (m->spt_known && m->cap >= 1)
		m->benefit_total = fmin(m->n, m->cap) * m->spt * m->s;
	model_churn(m);
}

/* The rules, in order; each sets the verdict and its confidence. A
 * confidence is never strong when the ratio came without a CI, the window
 * was assumed, or the extra cost was extrapolated beyond the measurements. */
static void model_verdict(struct rec_model *m)
{
	int solid = m->have_ci && !m->window_assumed && !m->x_extrapolated;

	m->verdict_low = low_wins(m, m->n);
	m->confidence = "weak";
	if (!m->in->have_ctxsw) {
		m->rule = RULE_NO_CTXSW;
		m->confidence = "none";
	} else if (m->cap < 1) {
		m->rule = RULE_NO_WINDOW;
		m->confidence = "strong";
	} else if (m->n < 1) {
		m->rule = RULE_NO_THREADS;
	} else if (!m->significant) {
		m->rule = RULE_NO_BENEFIT;
		if (m->have_ci && m->ci_lo >= REC_STRONG_RATIO)
			m->confidence = "strong";
	} else if (m->n <= m->cap && !(m->extra_total > 0)) {
		m->rule = RULE_FITS;
		if (m->have_ci && !m->window_assumed && m->ratio <= REC_STRONG_RATIO)
			m->confidence = "strong";
	} else if (!m->e_source) {
		m->rule = RULE_COST_UNKNOWN; /* only past C: below it, fits */
	} else if (!m->spt_known) {
		m->rule = RULE_SWITCH_UNKNOWN;
	} else {
		m->rule = RULE_BREAK_EVEN;
		if (solid && (m->verdict_low ? m->spt > m->be_hi : m->spt < m->be_lo))
			m->confidence = "strong";
	}
	if (m->aa_biased && !strcmp(m->confidence, "strong"))
		m->confidence = "weak";
	m->flip_threads = flip_threads(m);
	if (m->significant && !isnan(m->be))
		m->flip_spt = m->be;
}

/* --- the result --------------------------------------------------------- */

json_t *rec_jnum(double v)
{
	if (!isfinite(v))
		return json_null();
	if (v == floor(v) && fabs(v) < 9007199254740992.0)
		return json_integer((json_int_t)v);
	return json_real(v);
}

static json_t *jpair(double a, double b)
{
	if (!isfinite(a) && !isfinite(b))
		return json_null();
	return json_pack("[oo]", rec_jnum(a), rec_jnum(b));
}

/* A number for a sentence: grouped digits from 1000 up, else 3 digits;
 * the one format of every figure the recommendation prints. */
const char *rec_fmt_num(char *buf, size_t len, double v)
{
	char digits[64];
	size_t n, o = 0, i;

	if (isnan(v))
		return "unknown";
	if (isinf(v))
		return "infinitely many";
	if (fabs(v) < 999.5 || fabs(v) >= 1e18) {
		snprintf(buf, len, "%.3g", v);
		return buf;
	}
	snprintf(digits, sizeof(digits), "%.0f", fabs(v));
	n = strlen(digits);
	if (v < 0 && o + 1 < len)
		buf[o++] = '-';
	for (i = 0; i < n && o + 2 < len; i++) {
		if (i && (n - i) % 3 == 0)
			buf[o++] = ',';
		buf[o++] = digits[i];
	}
	buf[o] = '\0';
	return buf;
}

/* A duration in ns, in the unit that reads best. */
static const char *fmt_dur(char *buf, size_t len, double ns)
{
	static const struct {
		double scale;
		const char *unit;
	} units[] = {{1e9, "s"}, {1e6, "ms"}, {1e3, "µs"}, {1, "ns"}};
	size_t i;

	if (!isfinite(ns))
		return rec_fmt_num(buf, len, ns);
	for (i = 0; i < sizeof(units) / sizeof(units[0]) - 1; i++)
		if (fabs(ns) >= units[i].scale)
			break;
	snprintf(buf, len, "%.3g %s", ns / units[i].scale, units[i].unit);
	return buf;
}

#define NUM(v) rec_fmt_num((char[48]){0}, 48, (v))
#define DUR(v) fmt_dur((char[48]){0}, 48, (v))

/* " (8.32 ms)" after a count of ns from 1 µs up, else "". */
static const char *fmt_dur_paren(char *buf, size_t len, double ns)
{
	char d[48];

	if (!isfinite(ns) || fabs(ns) < 1000)
		return "";
	snprintf(buf, len, " (%s)", fmt_dur(d, sizeof(d), ns));
	return buf;
}

#define DURP(v) fmt_dur_paren((char[56]){0}, 56, (v))

static void add_reason(json_t *reasons, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add_reason(json_t *reasons, const char *fmt, ...)
{
	va_list ap;
	char *s;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	assert(n >= 0);
	s = xmalloc((size_t)n + 1);
	va_start(ap, fmt);
	vsnprintf(s, (size_t)n + 1, fmt, ap);
	va_end(ap);
	json_array_append_new(reasons, json_string(s));
	free(s);
}

static const char *interp_word(const struct rec_curve *c, int extrapolated)
{
	if (c->n == 1)
		return "taken as flat from its single usable point";
	return extrapolated ? "extrapolated" : "interpolated";
}

/* Whether the switch figures show a saving, in words: a saving counts only
 * when the CI lies below 1 - m, so that even its worst case saves m. */
static const char *switch_significance(const struct rec_model *m, char *buf, size_t len)
{
	if (m->significant && m->have_ci)
		snprintf(buf, len,
		         "a significant benefit of at least the ±%.0f%% margin (the CI lies below "
		         "%.3f)",
		         100 * m->margin, 1 - m->margin);
	else if (m->significant)
		snprintf(buf, len, "a benefit on the point estimate alone");
	else if (m->s <= 0 && m->ci_hi < 1)
		snprintf(buf, len, "no benefit, since the ratio itself is not below 1.0");
	else if (m->ci_lo > 1)
		snprintf(buf, len, "%s",
		         m->have_ci ? "a significant loss (the CI lies above 1.0)" : "a loss");
	else if (m->equivalent)
		snprintf(buf, len, "no benefit: equivalent within ±%.0f%%", 100 * m->margin);
	else if (m->ci_hi < 1)
		snprintf(buf, len,
		         "no benefit that counts: %s not below %.3f, so the saving may be smaller "
		         "than the ±%.0f%% margin",
		         m->have_ci ? "the CI's upper bound is" : "the ratio is", 1 - m->margin,
		         100 * m->margin);
	else
		snprintf(buf, len, "%s",
		         m->have_ci ? "not significant (the CI includes 1.0)"
		                    : "no benefit (the ratio is not below 1.0)");
	return buf;
}

static void reason_switch(const struct rec_model *m, json_t *r)
{
	char ci[160], sig[200];

	if (m->have_ci)
		snprintf(ci, sizeof(ci), "95%% CI %.3f to %.3f, so %s to %s ns", m->ci_lo, m->ci_hi,
		         NUM(m->s_lo), NUM(m->s_hi));
	else
		snprintf(ci, sizeof(ci), "no CI given");
	add_reason(r,
	           "A context switch takes %s ns with a low stack and %s ns with a high one "
	           "(medians); the paired ratio low/high is %.3f, so low stacks %s %s ns per "
	           "switch, %s × (1 - %.3f), a %.1f%% %s (%s): %s.",
	           NUM(m->low_ns), NUM(m->high_ns), m->ratio, m->s >= 0 ? "save" : "lose",
	           NUM(fabs(m->s)), NUM(m->high_ns), m->ratio, 100 * fabs(1 - m->ratio),
	           m->s >= 0 ? "benefit" : "loss", ci, switch_significance(m, sig, sizeof(sig)));
}

/* Equivalence at the margin, the segment path and the A/A control. */
static void reason_mechanism(const struct rec_model *m, json_t *r)
{
	const struct rec_in *in = m->in;

	if (m->have_ci)
		add_reason(r,
		           "At an equivalence margin of ±%.0f%%, low and high stacks are %s: the "
		           "ratio's %s CI, %.3f to %.3f, %s [%.3f, %.3f].",
		           100 * m->margin, m->equivalent ? "equivalent" : "not shown equivalent",
		           m->have_ci90 ? "90% (a TOST at alpha 0.05)" : "95%", m->eq_lo, m->eq_hi,
		           m->equivalent ? "lies inside" : "does not lie inside", 1 - m->margin,
		           1 + m->margin);
	if (!isnan(m->sel_ratio)) {
		char ci[96];

		if (m->have_sel_ci)
			snprintf(ci, sizeof(ci), "95%% CI %.3f to %.3f", m->sel_lo, m->sel_hi);
		else
			snprintf(ci, sizeof(ci), "no CI given");
		add_reason(
		    r,
		    "Threads whose FS is loaded from a 32-bit segment selector, the path "
		    "kernels before 4.7 took for bases below 4 GiB, switch at %.3f times the "
		    "high-stack time (%s)%s; today's kernels write every FS base with "
		    "wrfsbase or wrmsr instead, so low stacks cannot get this path.",
		    m->sel_ratio, ci,
		    m->in->fsgsbase ? ", but with FSGSBASE on the kernel loads the selector and "
		                      "then runs wrfsbase, so this is selector load + wrfsbase "
		                      "against wrfsbase alone"
		                    : "");
	}
	if (in->have_aa_ci)
		add_reason(
		    r, "The A/A control (high against high) has a 95%% CI of %.3f to %.3f: %s.",
		    in->aa_lo, in->aa_hi,
		    m->aa_biased ? "the A/A CI excludes 1.0: a bias of this size is possible, "
		                   "or a 1-in-20 chance, so no confidence is strong"
		                 : "it holds 1.0, so the design shows no bias");
}

static void reason_window(const struct rec_model *m, json_t *r)
{
	char fit[96];

	if (m->window == 0) {
		add_reason(r, "The MAP_32BIT window is 0 bytes: MAP_32BIT is unavailable here, so "
		              "no thread can get a low stack.");
		return;
	}
	if (m->cap < 1)
		snprintf(fit, sizeof(fit), "not one fits");
	else if (m->n <= m->cap)
		snprintf(fit, sizeof(fit), "all fit");
	else
		snprintf(fit, sizeof(fit), "%s miss it", NUM(m->missing));
	if (m->cap_measured)
		add_reason(
		    r,
		    "The MAP_32BIT window of %s bytes held %s stacks of %s bytes with their "
		    "guard page when map32 filled it (floor(%s / (%s + %.0f)) = %s would fit "
		    "were its free space one piece); the workload expects %s threads, so %s.",
		    NUM(m->window), NUM(m->cap), NUM(m->stack), NUM(m->window), NUM(m->stack),
		    REC_GUARD_BYTES, NUM(m->cap_computed), NUM(m->n), fit);
	else
		add_reason(r,
		           "%s %s bytes holds floor(%s / (%s + %.0f)) = %s stacks of %s bytes with "
		           "their guard page; the workload expects %s threads, so %s.",
		           m->window_assumed
		               ? "Assuming (no map32 figures) the x86-64 MAP_32BIT window, its"
		               : "The MAP_32BIT window of",
		           NUM(m->window), NUM(m->window), NUM(m->stack), REC_GUARD_BYTES,
		           NUM(m->cap), NUM(m->stack), NUM(m->n), fit);
}

/* " (map32.NAME, measured from X to Y VMAs)" or " (map32.NAME not measured:
 * counted as 0)". */
static const char *term_src(char *buf, size_t len, const struct rec_curve *c, const char *name)
{
	char a[48], b[48];

	if (!c->n)
		snprintf(buf, len, " (map32.%s not measured: counted as 0)", name);
	else if (c->n == 1)
		snprintf(buf, len, " (map32.%s, taken as flat from its single usable point)", name);
	else
		snprintf(buf, len, " (map32.%s, measured from %s to %s VMAs)", name,
		         rec_fmt_num(a, sizeof(a), c->x[0]),
		         rec_fmt_num(b, sizeof(b), c->x[c->n - 1]));
	return buf;
}

#define SRC(c, name) term_src((char[160]){0}, 160, (c), (name))

static void reason_extra_map32(const struct rec_model *m, json_t *r, const char *lead)
{
	const struct rec_in *in = m->in;

	add_reason(r,
	           "%s an extra %s ns%s, as the kernels before 3.8 charged it: the failing "
	           "MAP_32BIT mmap walks the %s VMAs of the full window (2 × %s stacks), %s ns%s; "
	           "then the plain retry walks down from mmap_base past the %s VMAs outside the "
	           "window and the 2 × %s stacks that missed before it, %s ns (read at %s VMAs, "
	           "with the %s in map32's window, which it never reaches)%s; less the plain "
	           "mmap a high stack costs among %s VMAs, %s ns%s.%s",
	           lead, NUM(m->et.extra), DURP(m->et.extra), NUM(m->et.fail_vmas), NUM(m->cap),
	           NUM(m->et.fail), SRC(&in->fail, "fail_ns"), NUM(m->cm.others),
	           NUM(m->e_at - m->cap), NUM(m->et.retry), NUM(m->et.retry_vmas),
	           NUM(m->cm.window), SRC(&in->retry, "retry_ns"),
	           NUM(REC_VMAS_PER_THREAD * m->e_at + m->cm.others), NUM(m->et.plain),
	           SRC(&in->plain, "plain_ns"),
	           m->et.extrapolated ? " Beyond a curve's last point it is extrapolated linearly "
	                                "(through that point, with the least-squares slope of "
	                                "the curve)."
	                              : "");
	if (m->e_measured > 0)
		add_reason(
		    r,
		    "Cross-check: the threads probe measured a low-policy create at %s threads "
		    "%s ns dearer than a high-policy one; E is %.2f times that.",
		    NUM(m->e_at), NUM(m->e_measured), m->et.extra / m->e_measured);
	else if (m->e_measured == 0)
		/* No ratio to a cost that did not show: E over 0 is no figure. */
		add_reason(r,
		           "Cross-check: the threads probe measured a low-policy create at %s "
		           "threads no dearer than a high-policy one, where E is %s ns.",
		           NUM(m->e_at), NUM(m->et.extra));
}

static void reason_extra(const struct rec_model *m, json_t *r)
{
	const struct rec_in *in = m->in;
	const char *lead = m->n > m->cap ? "Each pthread_create that misses the window pays"
	                                 : "Should the workload outgrow the window, each create "
	                                   "beyond it would pay";

	if (m->cap < 1)
		return;
	if (!m->e_source) {
		add_reason(r, "The extra cost of a create that misses the window is unknown: "
		              "map32.fail_ns and the threads curves are missing or hold no usable "
		              "point (x and y above 0).");
		return;
	}
	if (!strcmp(m->e_source, "map32")) {
		reason_extra_map32(m, r, lead);
		return;
	} else
		add_reason(r,
		           "%s an extra %s ns%s: at %s live threads a low-policy create takes "
		           "%s ns and a high-policy one %s ns, %s on log-log axes from "
		           "threads.low_create_ns (%s to %s threads) and threads.high_create_ns.",
		           lead, NUM(m->et.extra), DURP(m->et.extra), NUM(m->e_at), NUM(m->et.low),
		           NUM(m->et.high), interp_word(&in->low_create, m->et.extrapolated),
		           NUM(in->low_create.x[0]), NUM(in->low_create.x[in->low_create.n - 1]));
}

/* The sum over the workload's creates: the ramp below C and the rest. */
static void reason_total(const struct rec_model *m, json_t *r)
{
	int map32 = m->e_source && !strcmp(m->e_source, "map32");

	if (!m->e_source || m->n < 1 || m->cap < 1)
		return;
	add_reason(
	    r,
	    "In all, creating the %s threads with low stacks costs %s ns%s more than with high "
	    "ones, %s ns per create on average: %s ns for the %s creates below the window's "
	    "capacity (%s) and %s ns for the %s from it on (each the failing walk plus the retry), "
	    "each create's extra counted as at least 0.",
	    NUM(m->n), NUM(m->extra_total), DURP(m->extra_total), NUM(m->extra_mean),
	    NUM(m->ramp_total), NUM(fmin(m->n, m->cap)),
	    !map32          ? "low less high create cost at each count of live threads"
	    : m->in->fill.n ? "create k walks the 2 k window VMAs below its hole, map32.fill_ns, "
	                      "less a plain mmap"
	                    : "map32.fill_ns not measured: counted as 0",
	    NUM(m->beyond_total), NUM(m->missing));
}

/* With churn: the same comparison per second. */
static void reason_churn(const struct rec_model *m, json_t *r)
{
	if (isnan(m->cps) || isnan(m->cost_rate))
		return;
	add_reason(r,
	           "Churn: at %s creates per second each create costs %s ns more on average, "
	           "so low stacks cost %s ns per second (in steady state a new thread finds a "
	           "window slot only when a low-stack thread left one, so %s of %s creates miss "
	           "it, as in the sum above); they save %s ns per second, and pay above %s "
	           "switches per second.",
	           NUM(m->cps), NUM(m->extra_mean), NUM(m->cost_rate), NUM(m->missing), NUM(m->n),
	           NUM(m->benefit_rate), NUM(m->be_rate));
}

static void reason_break_even(const struct rec_model *m, json_t *r)
{
	double low = fmin(m->n, m->cap);

	reason_total(m, r);
	reason_churn(m, r);
	if (!m->significant || isnan(m->be))
		return;
	add_reason(r,
	           "Break-even: the creates cost %s ns%s more in all, so each of the %s "
	           "low-stack threads must make more than %s / (%s × %s ns) = %s context "
	           "switches to repay it (%s to %s with the saving's CI).",
	           NUM(m->extra_total), DURP(m->extra_total), NUM(low), NUM(m->extra_total),
	           NUM(low), NUM(m->s), NUM(m->be), NUM(m->be_lo), NUM(m->be_hi));
	if (m->spt_known)
		add_reason(
		    r,
		    "The workload expects %s switches per thread%s: the low-stack threads save "
		    "%s × %s × %s ns = %s ns%s, %s the %s ns the creates cost.",
		    NUM(m->spt), isnan(m->sps) ? "" : " (switches per second / creates per second)",
		    NUM(low), NUM(m->spt), NUM(m->s), NUM(m->benefit_total), DURP(m->benefit_total),
		    m->benefit_total > m->extra_total ? "more than" : "not more than",
		    NUM(m->extra_total));
	else
		add_reason(r,
		           "The workload's switches per thread are unknown (give "
		           "switches_per_thread, or --switches N), so the break-even of %s cannot "
		           "be compared with them.",
		           NUM(m->be));
}

static void reason_sensitivity(const struct rec_model *m, json_t *r)
{
	char th[160], sw[160];

	if (m->rule == RULE_NO_CTXSW)
		return;
	if (isnan(m->flip_threads))
		snprintf(th, sizeof(th), "no thread count up to %s changes it",
		         NUM(REC_MAX_THREADS));
	else if (m->verdict_low)
		snprintf(th, sizeof(th), "it turns high at %s threads", NUM(m->flip_threads));
	else if (m->n < 1)
		snprintf(th, sizeof(th), "it turns low from %s thread on", NUM(m->flip_threads));
	else
		snprintf(th, sizeof(th), "it turns low at %s threads or fewer",
		         NUM(m->flip_threads));
	if (!isnan(m->flip_spt))
		snprintf(sw, sizeof(sw), "it is low only above %s switches per thread",
		         NUM(m->flip_spt));
	else if (m->significant && m->cap >= 1 && m->rule == RULE_FITS)
		snprintf(sw, sizeof(sw),
		         "switches per thread do not matter while every thread fits");
	else
		snprintf(sw, sizeof(sw), "no number of switches per thread changes it");
	add_reason(r, "Sensitivity: %s; %s.", th, sw);
}

/* Why a weak confidence could not be strong ("" when strong): "; ..." */
static const char *weak_caps(const struct rec_model *m, char *buf, size_t len)
{
	int weak = strcmp(m->confidence, "strong") != 0;

	snprintf(buf, len, "%s%s%s%s", weak && !m->have_ci ? "; no CI was given for the ratio" : "",
	         weak && m->window_assumed ? "; the window was assumed, not measured" : "",
	         weak && m->x_extrapolated && m->rule >= RULE_COST_UNKNOWN
	             ? "; the extra cost was extrapolated"
	             : "",
	         weak && m->aa_biased ? "; the A/A CI excludes 1.0 (a possible bias)" : "");
	return buf;
}

static void reason_rule(const struct rec_model *m, json_t *r)
{
	char caps[200];

	weak_caps(m, caps, sizeof(caps));
	switch (m->rule) {
	case RULE_NO_CTXSW:
		if (m->in->ctxsw_why)
			add_reason(
			    r,
			    "No context-switch figures: %s, so nothing shows that low stacks "
			    "save anything: the verdict stays at glibc's default, high, with "
			    "confidence none.",
			    m->in->ctxsw_why);
		else
			add_reason(r,
			           "No context-switch figures (ctxsw) were given, so nothing shows "
			           "that low stacks save anything: the verdict stays at glibc's "
			           "default, high, with confidence none.");
		break;
	case RULE_NO_WINDOW:
		add_reason(r, "Rule: no stack fits in the window, so low stacks are impossible and "
		              "the verdict is high (strong).");
		break;
	case RULE_NO_THREADS:
		add_reason(r,
		           "Rule: a workload of 0 threads gains nothing from where stacks lie, so "
		           "the verdict stays high (weak).");
		break;
	case RULE_NO_BENEFIT:
		if (!m->have_ci)
			add_reason(r, "Rule: without a significant per-switch benefit the verdict "
			              "is high; weak because no CI was given for the ratio.");
		else
			add_reason(r,
			           "Rule: without a significant per-switch benefit the verdict is "
			           "high; %s because the best case in the CI, a %.1f%% benefit, is "
			           "%s 5%%.",
			           m->confidence, 100 * (1 - m->ci_lo),
			           m->ci_lo >= REC_STRONG_RATIO ? "under" : "at least");
		break;
	case RULE_FITS:
		add_reason(r,
		           "Rule: a significant benefit and every thread fits in the window, so "
		           "low; %s: the benefit, %.1f%%, is %s 5%%%s.",
		           m->confidence, 100 * (1 - m->ratio),
		           m->ratio <= REC_STRONG_RATIO ? "at least" : "under", caps);
		break;
	case RULE_COST_UNKNOWN:
		add_reason(r,
		           "Rule: the workload outgrows the window and the extra creation cost is "
		           "unknown, so no break-even can be computed: high (weak).");
		break;
	case RULE_SWITCH_UNKNOWN:
		add_reason(
		    r,
		    "Rule: %s and its switches per thread are unknown, so the verdict is high "
		    "(weak); low pays only above %s switches per low-stack thread.",
		    m->missing > 0 ? "the workload outgrows the window"
		                   : "the low-stack creates cost extra",
		    NUM(m->be));
		break;
	case RULE_BREAK_EVEN:
		add_reason(r,
		           "Rule: %s, so the break-even decides: %s "
		           "switches per thread is %s %s, so %s; %s because it lies %s the "
		           "break-even's CI (%s to %s)%s.",
		           m->missing > 0 ? "the workload outgrows the window"
		                          : "the low-stack creates cost extra",
		           NUM(m->spt), m->verdict_low ? "above" : "not above", NUM(m->be),
		           m->verdict_low ? "low" : "high", m->confidence,
		           m->spt >= m->be_lo && m->spt <= m->be_hi ? "inside" : "outside",
		           NUM(m->be_lo), NUM(m->be_hi), caps);
		break;
	}
}

/* The selector clause's wording: [fsgsbase][cost, cheaper, no difference].
 * Without FSGSBASE the arm loads FS from a selector against a wrmsr, the
 * pre-4.7 segment path; with it the kernel loads the selector and then
 * writes the base with wrfsbase, so the arm measures selector load +
 * wrfsbase against wrfsbase alone, not the segment path by itself. */
static const char *const selector_words[2][3] = {
    {"; the 32-bit segment path would cost +%.1f%% here",
     "; the segment path is %.1f%% cheaper on this CPU, but this kernel does not use it",
     "; the 32-bit segment path makes no measurable difference here (ratio %.3f)"},
    {"; with FSGSBASE on, a selector load followed by wrfsbase costs +%.1f%% over wrfsbase "
     "alone here (what the selector arm measures; not the pre-4.7 path by itself)",
     "; with FSGSBASE on, a selector load followed by wrfsbase is %.1f%% cheaper than "
     "wrfsbase alone here, but this kernel does not use it",
     "; with FSGSBASE on, a selector load followed by wrfsbase makes no measurable "
     "difference against wrfsbase alone here (ratio %.3f)"},
};

/* What the segment path would do here, as a clause after "; " ("" when
 * the selector arm was not measured). */
static const char *selector_clause(const struct rec_model *m, char *buf, size_t len)
{
	const char *const *w = selector_words[m->in->fsgsbase ? 1 : 0];

	if (isnan(m->sel_ratio))
		snprintf(buf, len, "%s", "");
	else if (m->have_sel_ci && m->sel_lo > 1)
		snprintf(buf, len, w[0], 100 * (m->sel_ratio - 1));
	else if (m->have_sel_ci && m->sel_hi < 1)
		snprintf(buf, len, w[1], 100 * (1 - m->sel_ratio));
	else
		snprintf(buf, len, w[2], m->sel_ratio);
	return buf;
}

/* The no_benefit sentence names the mechanism: equal switches mean the
 * kernel writes FS the same way for both placements. "Equivalent" only
 * when the CI lies within the margin. */
static char *sentence_no_benefit(const struct rec_model *m)
{
	char sel[256], *s = NULL;

	selector_clause(m, sel, sizeof(sel));
	if (m->equivalent)
		xasprintf(&s,
		          "Keep high stacks: this kernel writes FS the same way for low and high "
		          "stacks, whose switches are equivalent within ±%.0f%% (ratio %.3f)%s.",
		          100 * m->margin, m->ratio, sel);
	else if (m->have_ci && m->ci_lo > 1)
		xasprintf(&s,
		          "Keep high stacks: a low stack makes context switches slower here (ratio "
		          "%.3f)%s.",
		          m->ratio, sel);
	else if (m->ci_hi < 1)
		xasprintf(&s,
		          "Keep high stacks: a low stack makes context switches faster here, but "
		          "is not shown to save the ±%.0f%% margin (ratio %.3f)%s.",
		          100 * m->margin, m->ratio, sel);
	else
		xasprintf(&s,
		          "Keep high stacks: a low stack does not make context switches "
		          "significantly faster here (ratio %.3f)%s.",
		          m->ratio, sel);
	return s;
}

static char *sentence(const struct rec_model *m)
{
	char *s = NULL, *assumed;

	switch (m->rule) {
	case RULE_NO_CTXSW:
		if (m->in->ctxsw_why)
			xasprintf(&s,
			          "Keep glibc's default high (MAP_STACK) stacks: %s, so no "
			          "context-switch figures show that low stacks would help.",
			          m->in->ctxsw_why);
		else
			xasprintf(&s, "Keep glibc's default high (MAP_STACK) stacks: without "
			              "context-switch figures nothing shows that low stacks would "
			              "help.");
		break;
	case RULE_NO_WINDOW:
		xasprintf(&s,
		          "Keep high stacks: no %s-byte stack fits in the %s-byte MAP_32BIT "
		          "window, so low stacks are impossible here.",
		          NUM(m->stack), NUM(m->window));
		break;
	case RULE_NO_THREADS:
		xasprintf(&s, "Keep high stacks: a workload without threads gains nothing from low "
		              "ones.");
		break;
	case RULE_NO_BENEFIT:
		s = sentence_no_benefit(m);
		break;
	case RULE_FITS:
		xasprintf(&s,
		          "Use low stacks: all %s threads fit in the MAP_32BIT window and each "
		          "context switch gets %s ns (%.1f%%) cheaper.",
		          NUM(m->n), NUM(m->s), 100 * (1 - m->ratio));
		break;
	case RULE_COST_UNKNOWN:
		xasprintf(&s,
		          "Keep high stacks: %s of %s threads would miss the MAP_32BIT window and "
		          "what that costs was not measured.",
		          NUM(m->missing), NUM(m->n));
		break;
	case RULE_SWITCH_UNKNOWN:
		xasprintf(&s,
		          "Keep high stacks unless each thread makes more than %s context "
		          "switches: %s of %s threads fit in the window, and creating them all "
		          "with low stacks costs %s more (%s per create on average).",
		          NUM(m->be), NUM(fmin(m->cap, m->n)), NUM(m->n), DUR(m->extra_total),
		          DUR(m->extra_mean));
		break;
	case RULE_BREAK_EVEN:
		xasprintf(&s,
		          "%s stacks: at %s switches per thread the %s threads that fit in the "
		          "window save %s, %s the %s that creating all %s with low stacks costs "
		          "more in pthread_create.",
		          m->verdict_low ? "Use low" : "Keep high", NUM(m->spt),
		          NUM(fmin(m->cap, m->n)), DUR(m->benefit_total),
		          m->verdict_low ? "more than" : "not more than", DUR(m->extra_total),
		          NUM(m->n));
		break;
	}
	if (m->window_assumed && m->rule != RULE_NO_CTXSW && m->rule != RULE_NO_THREADS) {
		/* never pass an assumption off as a measurement */
		xasprintf(&assumed,
		          "%s (The MAP_32BIT window is assumed, not measured: no map32 "
		          "figures yet.)",
		          s);
		free(s);
		s = assumed;
	}
	return s;
}

static const char *const rec_rule_names[] = {
    [RULE_NO_CTXSW] = "no_ctxsw",
    [RULE_NO_WINDOW] = "no_window",
    [RULE_NO_THREADS] = "no_threads",
    [RULE_NO_BENEFIT] = "no_benefit",
    [RULE_FITS] = "fits",
    [RULE_COST_UNKNOWN] = "cost_unknown",
    [RULE_SWITCH_UNKNOWN] = "switches_unknown",
    [RULE_BREAK_EVEN] = "break_even",
};

static json_t *figures(const struct rec_model *m)
{
	json_t *f = json_pack(
	    "{s:o s:o s:o s:o s:o s:o s:b s:o s:o s:o s:o s:o s:o s:o s:o s:s? s:o s:o s:o s:o "
	    "s:o s:o s:o s:o s:o s:o s:o}",
	    "switch_low_ns", rec_jnum(m->low_ns), "switch_high_ns", rec_jnum(m->high_ns),
	    "switch_saving_ns", rec_jnum(m->s), "switch_saving_ci_ns",
	    m->have_ci ? jpair(m->s_lo, m->s_hi) : json_null(), "switch_ratio", rec_jnum(m->ratio),
	    "switch_ratio_ci", m->have_ci ? jpair(m->ci_lo, m->ci_hi) : json_null(),
	    "window_assumed", m->window_assumed, "window_bytes", rec_jnum(m->window), "stack_bytes",
	    rec_jnum(m->stack), "slot_bytes", rec_jnum(m->slot), "window_stacks", rec_jnum(m->cap),
	    "threads", rec_jnum(m->n), "threads_missing", rec_jnum(m->missing), "extra_create_ns",
	    rec_jnum(m->et.extra), "extra_create_at_threads", rec_jnum(m->e_source ? m->e_at : NAN),
	    "extra_create_source", m->e_source, "extra_create_vmas", rec_jnum(m->et.retry_vmas),
	    "extra_create_extrapolated",
	    m->e_source ? json_boolean(m->et.extrapolated) : json_null(), "extra_total_ns",
	    rec_jnum(m->extra_total), "switches_per_thread", rec_jnum(m->spt), "benefit_total_ns",
	    rec_jnum(m->benefit_total), "break_even_switches", rec_jnum(m->be),
	    "break_even_switches_ci", jpair(m->be_lo, m->be_hi), "flip_threads",
	    rec_jnum(m->flip_threads), "flip_switches_per_thread", rec_jnum(m->flip_spt),
	    "strong_ratio", rec_jnum(REC_STRONG_RATIO), "guard_bytes", rec_jnum(REC_GUARD_BYTES));
	json_t *terms = json_pack(
	    "{s:o s:o s:o s:o s:o s:o}", "extra_create_fail_ns", rec_jnum(m->et.fail),
	    "extra_create_fail_vmas",
	    rec_jnum(m->e_source && !strcmp(m->e_source, "map32") ? m->et.fail_vmas : NAN),
	    "extra_create_retry_ns", rec_jnum(m->et.retry), "extra_create_plain_ns",
	    rec_jnum(m->et.plain), "extra_create_measured_ns", rec_jnum(m->e_measured),
	    "extra_create_vs_measured",
	    rec_jnum(m->e_measured > 0 ? m->et.extra / m->e_measured : NAN));

	json_object_update(f, terms);
	json_decref(terms);
	return f;
}

/* The creates' sum, its parts and the churn (issue 24), added to figures(). */
static void figures_creates(const struct rec_model *m, json_t *f)
{
	static const struct {
		const char *key;
		size_t offset;
	} keys[] = {
	    {"extra_ramp_ns", offsetof(struct rec_model, ramp_total)},
	    {"extra_beyond_ns", offsetof(struct rec_model, beyond_total)},
	    {"extra_create_mean_ns", offsetof(struct rec_model, extra_mean)},
	    {"creates_per_second", offsetof(struct rec_model, cps)},
	    {"switches_per_second", offsetof(struct rec_model, sps)},
	    {"extra_cost_per_second_ns", offsetof(struct rec_model, cost_rate)},
	    {"benefit_per_second_ns", offsetof(struct rec_model, benefit_rate)},
	    {"break_even_switches_per_second", offsetof(struct rec_model, be_rate)},
	};

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		json_object_set_new(f, keys[i].key,
		                    rec_jnum(*(const double *)((const char *)m + keys[i].offset)));
	json_object_set_new(
	    f, "extra_create_window_vmas",
	    rec_jnum(m->e_source && !strcmp(m->e_source, "map32") ? m->cm.window : NAN));
	json_object_set_new(
	    f, "extra_create_outside_vmas",
	    rec_jnum(m->e_source && !strcmp(m->e_source, "map32") ? m->cm.others : NAN));
	json_object_set_new(f, "window_stacks_source",
	                    json_string(m->cap_measured ? "measured" : "computed"));
	json_object_set_new(f, "extra_total_extrapolated",
	                    m->e_source ? json_boolean(m->x_extrapolated) : json_null());
}

/* The figures of issue 14, added to figures(). */
static void figures_mechanism(const struct rec_model *m, json_t *f)
{
	const struct rec_in *in = m->in;

	json_object_set_new(f, "equivalence_margin", rec_jnum(m->margin));
	json_object_set_new(f, "switch_equivalent",
	                    m->have_ci ? json_boolean(m->equivalent) : json_null());
	json_object_set_new(f, "switch_equivalence_ci",
	                    m->have_ci ? jpair(m->eq_lo, m->eq_hi) : json_null());
	json_object_set_new(f, "selector_ratio", rec_jnum(m->sel_ratio));
	json_object_set_new(f, "selector_ratio_ci",
	                    m->have_sel_ci ? jpair(m->sel_lo, m->sel_hi) : json_null());
	json_object_set_new(f, "aa_ratio_ci",
	                    in->have_aa_ci ? jpair(in->aa_lo, in->aa_hi) : json_null());
	json_object_set_new(f, "aa_biased",
	                    in->have_aa_ci ? json_boolean(m->aa_biased) : json_null());
}

static json_t *result_build(const struct rec_model *m)
{
	json_t *reasons = json_array();
	char *sent = sentence(m);
	json_t *res, *fig;

	if (m->in->have_ctxsw) {
		reason_switch(m, reasons);
		reason_mechanism(m, reasons);
	} else
		reason_rule(m, reasons);
	reason_window(m, reasons);
	reason_extra(m, reasons);
	reason_break_even(m, reasons);
	reason_sensitivity(m, reasons);
	if (m->in->have_ctxsw)
		reason_rule(m, reasons);
	fig = figures(m);
	figures_mechanism(m, fig);
	figures_creates(m, fig);
	res = json_pack("{s:s s:s s:s s:s s:o s:o}", "verdict", m->verdict_low ? "low" : "high",
	                "confidence", m->confidence, "rule", rec_rule_names[m->rule], "sentence",
	                sent, "reasons", reasons, "figures", fig);
	free(sent);
	assert(res);
	return res;
}

json_t *rec_compute(const json_t *inputs, char *err, size_t errlen)
{
	struct rec_in in;
	struct rec_model m;
	json_t *res = NULL;
	const char *arch;

	if (rec_in_parse(inputs, &in, err, errlen) < 0 ||
	    rec_arch_parse(inputs, &arch, err, errlen) < 0)
		goto out;
	model_inputs(&m, &in);
	model_figures(&m);
	model_verdict(&m);
	res = result_build(&m);
	rec_failed_apply(&in.failed, inputs, res, in.ctxsw_why ? "ctxsw" : NULL);
	rec_arch_apply(arch, res);
out:
	rec_in_free(&in);
	return res;
}

void rec_workload_default(struct rec_workload *w)
{
	w->threads = TW_DEFAULT_THREADS;
	w->stack_bytes = TW_DEFAULT_STACK_BYTES;
	w->switches_per_thread = -1;
	w->creates_per_second = 0;
	w->switches_per_second = -1;
}
