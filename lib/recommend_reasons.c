/*
 * recommend_reasons: the recommendation in words (see recommendp.h): each
 * reason with its arithmetic, the rule that decided, and the one-sentence
 * verdict, from the model recommend.c computed.
 */
#include <assert.h>
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "errbuf.h"
#include "recommend.h"
#include "recommendp.h"
#include "xmalloc.h"

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

const char *rec_dur_unit(double ns, double *scale)
{
	static const struct {
		double scale;
		const char *unit;
	} units[] = {{1e9, "s"}, {1e6, "ms"}, {1e3, "µs"}, {1, "ns"}};
	size_t i;

	for (i = 0; i < sizeof(units) / sizeof(units[0]) - 1; i++)
		if (fabs(ns) >= units[i].scale)
			break;
	*scale = units[i].scale;
	return units[i].unit;
}

const char *rec_fmt_dur(char *buf, size_t len, double ns)
{
	double scale;
	const char *unit;

	if (!isfinite(ns))
		return rec_fmt_num(buf, len, ns);
	unit = rec_dur_unit(ns, &scale);
	snprintf(buf, len, "%.3g %s", ns / scale, unit);
	return buf;
}

#define NUM(v) rec_fmt_num((char[48]){0}, 48, (v))
#define DUR(v) rec_fmt_dur((char[48]){0}, 48, (v))

/* " (8.32 ms)" after a count of ns from 1 µs up, else "". */
static const char *fmt_dur_paren(char *buf, size_t len, double ns)
{
	char d[48];

	if (!isfinite(ns) || fabs(ns) < 1000)
		return "";
	snprintf(buf, len, " (%s)", rec_fmt_dur(d, sizeof(d), ns));
	return buf;
}

#define DURP(v) fmt_dur_paren((char[56]){0}, 56, (v))

/* Where the expected thread count comes from, and so how to change it. */
#define WORKLOAD_THREADS_FROM                                                                      \
	"(workload_threads in threadwatchd.conf; --threads for threadwatch recommend)"

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

static double eval_saving(const double *p)
{
	return fabs(p[0] * (1 - p[1]));
}

static double eval_signed_saving(const double *p)
{
	return p[0] * (1 - p[1]);
}

static double eval_break_even(const double *p)
{
	return p[0] / (p[1] * p[2]);
}

static double eval_product(const double *p)
{
	return p[0] * p[1] * p[2];
}

/* The range of the saving's CI, high × (1 - each bound), printed with the
 * high stack time the saving shows (kept) and the digits of each bound
 * that give it: "95% CI 0.98909 to 1.02632, so -98.8 to 41 ns". */
static void switch_ci(const struct rec_model *m, const char *high, char *buf, size_t len)
{
	struct rec_formula lo = {2,   {m->high_ns, m->ci_hi}, eval_signed_saving, {""}, 1u, {0},
	                         NULL};
	struct rec_formula hi;
	double s_lo, s_hi;

	snprintf(lo.text[0], sizeof(lo.text[0]), "%s", high);
	hi = lo;
	hi.v[1] = m->ci_lo;
	s_lo = rec_formula_fit(&lo, m->s_lo);
	s_hi = rec_formula_fit(&hi, m->s_hi);
	snprintf(buf, len, "95%% CI %s to %s, so %s to %s ns", hi.text[1], lo.text[1], NUM(s_lo),
	         NUM(s_hi));
}

void rec_reason_switch(const struct rec_model *m, json_t *r)
{
	struct rec_formula f = {2, {m->high_ns, m->ratio}, eval_saving, {""}, 0, {0}, NULL};
	char ci[200], sig[200];
	double s = rec_formula_fit(&f, fabs(m->s));

	if (m->have_ci)
		switch_ci(m, f.text[0], ci, sizeof(ci));
	else
		snprintf(ci, sizeof(ci), "no CI given");
	add_reason(r,
	           "A context switch takes %s ns with a low stack and %s ns with a high one "
	           "(medians); the paired ratio low/high is %s, so low stacks %s %s ns per "
	           "switch, %s × (1 - %s), a %.1f%% %s (%s): %s.",
	           NUM(m->low_ns), NUM(m->high_ns), f.text[1], m->s >= 0 ? "save" : "lose", NUM(s),
	           f.text[0], f.text[1], 100 * fabs(1 - m->ratio), m->s >= 0 ? "benefit" : "loss",
	           ci, switch_significance(m, sig, sizeof(sig)));
}

/* Equivalence at the margin, the segment path and the A/A control. */
void rec_reason_mechanism(const struct rec_model *m, json_t *r)
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
		    "%s (%s)%s; today's kernels write every FS base with "
		    "wrfsbase or wrmsr instead, so low stacks cannot get this path.",
		    m->sel_ratio,
		    m->sel_controlled ? "time of high stacks sampled the same way, in a child "
		                        "process (the selector arm's control)"
		                      : "high-stack time",
		    ci,
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

void rec_reason_window(const struct rec_model *m, json_t *r)
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
		    "were its free space one piece); the workload expects %s "
		    "threads " WORKLOAD_THREADS_FROM ", so %s.",
		    NUM(m->window), NUM(m->cap), NUM(m->stack), NUM(m->window), NUM(m->stack),
		    REC_GUARD_BYTES, NUM(m->cap_computed), NUM(m->n), fit);
	else
		add_reason(
		    r,
		    "%s %s bytes holds floor(%s / (%s + %.0f)) = %s stacks of %s bytes with "
		    "their guard page; the workload expects %s threads " WORKLOAD_THREADS_FROM
		    ", so %s.",
		    m->window_assumed
		        ? "Assuming (no map32 figures) the x86-64 MAP_32BIT window, its"
		        : "The MAP_32BIT window of",
		    NUM(m->window), NUM(m->window), NUM(m->stack), REC_GUARD_BYTES, NUM(m->cap),
		    NUM(m->stack), NUM(m->n), fit);
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

/* What the old kernels' searches would take for create k: the window VMAs
 * the failing MAP_32BIT call walks, and the steps of the top-down retry
 * over the stacks that missed before it (and the mappings above them). */
static void reason_old_walks(const struct rec_model *m, json_t *r)
{
	const struct rec_create *c = &m->cm;

	if (rec_curve_walks(c->fail) || rec_curve_walks(c->retry))
		add_reason(
		    r,
		    "map32's ladders grow here as a walk does, %s ns per window VMA for the "
		    "failing call and %s ns per stack for the retry: this kernel searches "
		    "as those before 3.8 did. The failing call walks the %s VMAs of the full "
		    "window one by one; the retry steps down from mmap_base, one lookup per "
		    "step, once per stack that missed before it (%s) and over the mappings "
		    "above them (read at %s VMAs: map32's %s window VMAs and %s others, and "
		    "its stacks, two VMAs and one step each).",
		    NUM(rec_curve_slope(c->fail)),
		    NUM(REC_VMAS_PER_THREAD * rec_curve_slope(c->retry)), NUM(m->et.fail_vmas),
		    NUM(m->e_at - m->cap), NUM(m->et.retry_vmas), NUM(c->window), NUM(c->others));
	else
		add_reason(
		    r,
		    "map32's ladders are flat here: this kernel finds free space without "
		    "walking its VMAs (Linux 3.8 and later search a tree by gap size), so "
		    "the figures above are what it charges. A kernel before 3.8 would make "
		    "the failing call walk the %s VMAs of the full window one by one and the "
		    "retry step down from mmap_base once per stack that missed before it "
		    "(%s steps, plus a few over the mappings above them), one lookup per "
		    "step; this kernel does not take those steps, so it cannot price them "
		    "(doc/recommendation.md prices them under a double of v3.0).",
		    NUM(m->et.fail_vmas), NUM(m->e_at - m->cap));
}

static void reason_extra_map32(const struct rec_model *m, json_t *r, const char *lead)
{
	const struct rec_in *in = m->in;

	add_reason(r,
	           "%s an extra %s ns%s on this kernel, from map32's curves: the failing "
	           "MAP_32BIT mmap with the window full (%s VMAs in it, %s stacks of 2 VMAs "
	           "each), %s ns%s; then the plain retry, with the %s stacks that missed before "
	           "it below mmap_base, %s ns%s; less the plain mmap a high stack costs among "
	           "%s VMAs, %s ns%s.%s",
	           lead, NUM(m->et.extra), DURP(m->et.extra), NUM(m->et.fail_vmas), NUM(m->cap),
	           NUM(m->et.fail), SRC(&in->fail, "fail_ns"), NUM(m->e_at - m->cap),
	           NUM(m->et.retry), SRC(&in->retry, "retry_ns"),
	           NUM(REC_VMAS_PER_THREAD * m->e_at + m->cm.others), NUM(m->et.plain),
	           SRC(&in->plain, "plain_ns"),
	           m->et.extrapolated ? " Beyond a curve's last point it is extrapolated linearly "
	                                "(through that point, with the least-squares slope of "
	                                "the curve)."
	                              : "");
	if (m->cm.fail->n || m->cm.retry->n)
		reason_old_walks(m, r);
	if (m->e_measured > 0)
		add_reason(
		    r,
		    "Cross-check: the threads probe measured a low-policy create at %s threads "
		    "%s ns dearer than a high-policy one; the extra cost per create above, %s ns, "
		    "is %.2f times that.",
		    NUM(m->e_at), NUM(m->e_measured), NUM(m->et.extra),
		    m->et.extra / m->e_measured);
	else if (m->e_measured == 0)
		/* No ratio to a cost that did not show: E over 0 is no figure. */
		add_reason(r,
		           "Cross-check: the threads probe measured a low-policy create at %s "
		           "threads no dearer than a high-policy one, where the extra cost per "
		           "create above is %s ns.",
		           NUM(m->e_at), NUM(m->et.extra));
}

void rec_reason_extra(const struct rec_model *m, json_t *r)
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
		              "point (a count and a time both above 0).");
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
	    "capacity (%s) and %s ns for the %s from it on (each the failing MAP_32BIT call plus "
	    "the retry), "
	    "each create's extra counted as at least 0.",
	    NUM(m->n), NUM(m->extra_total), DURP(m->extra_total), NUM(m->extra_mean),
	    NUM(m->ramp_total), NUM(fmin(m->n, m->cap)),
	    !map32 ? "low less high create cost at each count of live threads"
	    : m->in->fill.n
	        ? "each create's MAP_32BIT mmap finds its hole above the two window VMAs of "
	          "every stack created before it, map32.fill_ns, less a plain mmap"
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

void rec_reason_break_even(const struct rec_model *m, json_t *r)
{
	double low = fmin(m->n, m->cap);
	struct rec_formula be = {3,   {m->extra_total, low, m->s}, eval_break_even, {""}, 0, {0},
	                         NULL};
	struct rec_formula gain = {3, {low, m->spt, m->s}, eval_product, {""}, 0, {0}, NULL};
	double be_shown, gain_shown;

	reason_total(m, r);
	reason_churn(m, r);
	if (!m->significant || isnan(m->be))
		return;
	be_shown = rec_formula_fit(&be, m->be);
	add_reason(r,
	           "Break-even: the creates cost %s ns%s more in all, so each of the %s "
	           "low-stack threads must make more than %s / (%s × %s ns) = %s context "
	           "switches to repay it (%s to %s with the saving's CI).",
	           NUM(m->extra_total), DURP(m->extra_total), NUM(low), be.text[0], be.text[1],
	           be.text[2], NUM(be_shown), NUM(m->be_lo), NUM(m->be_hi));
	if (!m->spt_known)
		add_reason(r,
		           "The workload's switches per thread are unknown (give "
		           "switches_per_thread, or --switches N), so the break-even of %s cannot "
		           "be compared with them.",
		           NUM(m->be));
	if (!m->spt_known)
		return;
	gain_shown = rec_formula_fit(&gain, m->benefit_total);
	add_reason(
	    r,
	    "The workload expects %s switches per thread%s: the low-stack threads save "
	    "%s × %s × %s ns = %s ns%s, %s the %s ns the creates cost.",
	    NUM(m->spt), isnan(m->sps) ? "" : " (switches per second / creates per second)",
	    gain.text[0], gain.text[1], gain.text[2], NUM(gain_shown), DURP(m->benefit_total),
	    m->benefit_total > m->extra_total ? "more than" : "not more than", NUM(m->extra_total));
}

void rec_reason_sensitivity(const struct rec_model *m, json_t *r)
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

void rec_reason_rule(const struct rec_model *m, json_t *r)
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

char *rec_sentence(const struct rec_model *m)
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
