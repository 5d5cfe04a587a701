/*
 * recommend: the verdict on low (MAP_32BIT) thread stacks. Takes the
 * inputs recommend_parse.c validated, applies the model of doc/recommendation.md and
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

#include "jnum.h"
#include "defaults.h"
#include "recommend.h"
#include "recommendp.h"
#include "stats.h"

/* --- the model ---------------------------------------------------------- */

/* The rule that decided, in the order they are tried. */

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
	/* The selector runs in child processes: read against its control
	 * (high stacks sampled the same way) where the run had one, so that a
	 * child's own cost does not pass for the segment path's. */
	m->sel_controlled = in->sel_child_ratio.set;
	m->sel_ratio = m->sel_controlled   ? in->sel_child_ratio.v
	               : in->sel_ratio.set ? in->sel_ratio.v
	                                   : NAN;
	m->have_sel_ci =
	    m->sel_controlled ? in->have_selc_ci : in->have_sel_ci && in->sel_ratio.set;
	m->sel_lo = !m->have_sel_ci ? NAN : m->sel_controlled ? in->selc_lo : in->sel_lo;
	m->sel_hi = !m->have_sel_ci ? NAN : m->sel_controlled ? in->selc_hi : in->sel_hi;
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
	 * would repay the creates only by chance. */
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
	 * the window's free space may come in pieces (126 measured
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

static json_t *jpair(double a, double b)
{
	if (!isfinite(a) && !isfinite(b))
		return json_null();
	return json_pack("[oo]", jnum_int(a), jnum_int(b));
}

/* The rules by name, as the result gives them. */
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
	    "switch_low_ns", jnum_int(m->low_ns), "switch_high_ns", jnum_int(m->high_ns),
	    "switch_saving_ns", jnum_int(m->s), "switch_saving_ci_ns",
	    m->have_ci ? jpair(m->s_lo, m->s_hi) : json_null(), "switch_ratio", jnum_int(m->ratio),
	    "switch_ratio_ci", m->have_ci ? jpair(m->ci_lo, m->ci_hi) : json_null(),
	    "window_assumed", m->window_assumed, "window_bytes", jnum_int(m->window), "stack_bytes",
	    jnum_int(m->stack), "slot_bytes", jnum_int(m->slot), "window_stacks", jnum_int(m->cap),
	    "threads", jnum_int(m->n), "threads_missing", jnum_int(m->missing), "extra_create_ns",
	    jnum_int(m->et.extra), "extra_create_at_threads", jnum_int(m->e_source ? m->e_at : NAN),
	    "extra_create_source", m->e_source, "extra_create_vmas", jnum_int(m->et.retry_vmas),
	    "extra_create_extrapolated",
	    m->e_source ? json_boolean(m->et.extrapolated) : json_null(), "extra_total_ns",
	    jnum_int(m->extra_total), "switches_per_thread", jnum_int(m->spt), "benefit_total_ns",
	    jnum_int(m->benefit_total), "break_even_switches", jnum_int(m->be),
	    "break_even_switches_ci", jpair(m->be_lo, m->be_hi), "flip_threads",
	    jnum_int(m->flip_threads), "flip_switches_per_thread", jnum_int(m->flip_spt),
	    "strong_ratio", jnum_int(REC_STRONG_RATIO), "guard_bytes", jnum_int(REC_GUARD_BYTES));
	json_t *terms = json_pack(
	    "{s:o s:o s:o s:o s:o s:o}", "extra_create_fail_ns", jnum_int(m->et.fail),
	    "extra_create_fail_vmas",
	    jnum_int(m->e_source && !strcmp(m->e_source, "map32") ? m->et.fail_vmas : NAN),
	    "extra_create_retry_ns", jnum_int(m->et.retry), "extra_create_plain_ns",
	    jnum_int(m->et.plain), "extra_create_measured_ns", jnum_int(m->e_measured),
	    "extra_create_vs_measured",
	    jnum_int(m->e_measured > 0 ? m->et.extra / m->e_measured : NAN));

	json_object_update(f, terms);
	json_decref(terms);
	return f;
}

/* The creates' sum, its parts and the churn, added to figures(). */
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
		                    jnum_int(*(const double *)((const char *)m + keys[i].offset)));
	json_object_set_new(
	    f, "extra_create_window_vmas",
	    jnum_int(m->e_source && !strcmp(m->e_source, "map32") ? m->cm.window : NAN));
	json_object_set_new(
	    f, "extra_create_outside_vmas",
	    jnum_int(m->e_source && !strcmp(m->e_source, "map32") ? m->cm.others : NAN));
	json_object_set_new(f, "window_stacks_source",
	                    json_string(m->cap_measured ? "measured" : "computed"));
	json_object_set_new(f, "extra_total_extrapolated",
	                    m->e_source ? json_boolean(m->x_extrapolated) : json_null());
}

/* The equivalence, segment-path and A/A figures, added to figures(). */
static void figures_mechanism(const struct rec_model *m, json_t *f)
{
	const struct rec_in *in = m->in;

	json_object_set_new(f, "equivalence_margin", jnum_int(m->margin));
	json_object_set_new(f, "switch_equivalent",
	                    m->have_ci ? json_boolean(m->equivalent) : json_null());
	json_object_set_new(f, "switch_equivalence_ci",
	                    m->have_ci ? jpair(m->eq_lo, m->eq_hi) : json_null());
	json_object_set_new(f, "selector_ratio", jnum_int(m->sel_ratio));
	json_object_set_new(f, "selector_ratio_ci",
	                    m->have_sel_ci ? jpair(m->sel_lo, m->sel_hi) : json_null());
	json_object_set_new(f, "selector_against",
	                    isnan(m->sel_ratio) ? json_null()
	                    : m->sel_controlled ? json_string("child")
	                                        : json_string("high"));
	json_object_set_new(f, "aa_ratio_ci",
	                    in->have_aa_ci ? jpair(in->aa_lo, in->aa_hi) : json_null());
	json_object_set_new(f, "aa_biased",
	                    in->have_aa_ci ? json_boolean(m->aa_biased) : json_null());
}

static json_t *result_build(const struct rec_model *m)
{
	json_t *reasons = json_array();
	char *sent = rec_sentence(m);
	json_t *res, *fig;

	if (m->in->have_ctxsw) {
		rec_reason_switch(m, reasons);
		rec_reason_mechanism(m, reasons);
	} else
		rec_reason_rule(m, reasons);
	rec_reason_window(m, reasons);
	rec_reason_extra(m, reasons);
	rec_reason_break_even(m, reasons);
	rec_reason_sensitivity(m, reasons);
	if (m->in->have_ctxsw)
		rec_reason_rule(m, reasons);
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

/* What each verdict asks of the operator, in plain words (the CLI's first
 * line, the page's headline): the first row that matches; NULL matches any. */
static const struct {
	const char *verdict, *confidence, *rule, *action;
} actions[] = {
    {"low", NULL, NULL, "Change: low (MAP_32BIT) thread stacks pay on this host."},
    {"high", NULL, "not_applicable",
     "Nothing to change: this architecture has no low thread stacks."},
    {"high", "none", NULL,
     "Nothing to change until the probes have answered: keep glibc's default thread "
     "stacks (MAP_STACK)."},
    {"high", NULL, NULL, "Nothing to change: keep glibc's default thread stacks (MAP_STACK)."},
};

static int field_is(const json_t *res, const char *key, const char *want)
{
	const char *v = json_string_value(json_object_get(res, key));

	return !want || (v && !strcmp(v, want));
}

static void action_apply(json_t *res)
{
	for (size_t i = 0; i < sizeof(actions) / sizeof(actions[0]); i++)
		if (field_is(res, "verdict", actions[i].verdict) &&
		    field_is(res, "confidence", actions[i].confidence) &&
		    field_is(res, "rule", actions[i].rule)) {
			json_object_set_new(res, "action", json_string(actions[i].action));
			return;
		}
}

json_t *rec_compute(const json_t *inputs, char *err, size_t errlen)
{
	struct rec_in in;
	struct rec_model m;
	json_t *res = NULL, *costs = NULL;
	const char *arch;

	if (rec_in_parse(inputs, &in, err, errlen) < 0 ||
	    rec_arch_parse(inputs, &arch, err, errlen) < 0 ||
	    rec_costs_build(inputs, &costs, err, errlen) < 0)
		goto out;
	model_inputs(&m, &in);
	model_figures(&m);
	model_verdict(&m);
	res = result_build(&m);
	rec_failed_apply(&in.failed, inputs, res, in.ctxsw_why ? "ctxsw" : NULL);
	rec_arch_apply(arch, res);
	action_apply(res);
	if (costs)
		json_object_set_new(res, "costs", costs);
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
