/*
 * detect: the regression detection method of doc/regression.md: the last k
 * runs of a key figure against the runs before them (since the last
 * fingerprint change, at most N): a minimum effect, every run on the new
 * side, their mean beyond the host's noise scaled for autocorrelation, a
 * two-sided Mann-Whitney test; one event per change; and verdict flips.
 * Pure functions over arrays the caller fills from the store.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "errbuf.h"
#include "detect.h"
#include "fingerprint.h"
#include "stats.h"
#include "xmalloc.h"

#define QN_MAX 60 /* Qn is estimated from the last 60 runs of the noise window */
#define MAX_K 64
#define MAX_BASELINE 1000
#define NO_FP_CHANGE "no fingerprint change"

void detect_config_default(struct detect_config *c)
{
	*c = (struct detect_config){
	    .k = DETECT_K_DEFAULT,
	    .min_effect = DETECT_MIN_EFFECT_DEFAULT,
	    .alpha = DETECT_ALPHA_DEFAULT,
	    .baseline_runs = DETECT_BASELINE_DEFAULT,
	};
}

/* stats_mann_whitney_p() for k values above n distinct others: U = 0, no
 * ties, normal approximation with the continuity correction. */
double detect_p_min(unsigned k, size_t n)
{
	double a = k, b = (double)n, mu = a * b / 2, var = a * b * (a + b + 1) / 12;

	if (k == 0 || n == 0)
		return 1.0;
	return fmin(1.0, erfc((mu - 0.5) / sqrt(var) / sqrt(2.0)));
}

size_t detect_min_baseline(const struct detect_config *c)
{
	size_t floor = c->baseline_runs < DETECT_MIN_JUDGED ? c->baseline_runs : DETECT_MIN_JUDGED;

	for (size_t n = DETECT_MIN_BASELINE; n <= c->baseline_runs; n++)
		if (detect_p_min(c->k, n) <= c->alpha)
			return n > floor ? n : floor;
	return 0;
}

int detect_config_check(const struct detect_config *c, char *err, size_t errlen)
{
	if (c->k < 1 || c->k > MAX_K)
		return errbuf_set(err, errlen, -EINVAL, "detect_k: %u is not in 1..%d", c->k,
		                  MAX_K);
	if (c->baseline_runs < DETECT_MIN_BASELINE || c->baseline_runs > MAX_BASELINE)
		return errbuf_set(err, errlen, -EINVAL, "detect_baseline_runs: %u is not in %d..%d",
		                  c->baseline_runs, DETECT_MIN_BASELINE, MAX_BASELINE);
	if (!(c->min_effect >= 0 && c->min_effect <= 1))
		return errbuf_set(err, errlen, -EINVAL, "detect_min_effect: %g is not in 0..1",
		                  c->min_effect);
	if (!(c->alpha > 0 && c->alpha <= 0.5))
		return errbuf_set(err, errlen, -EINVAL, "detect_alpha: %g is not in (0, 0.5]",
		                  c->alpha);
	if (!detect_min_baseline(c))
		return errbuf_set(
		    err, errlen, -EINVAL,
		    "detect_alpha: %g cannot be reached with detect_k %u and "
		    "detect_baseline_runs %u (the rank test's smallest p-value is %.2g); "
		    "raise detect_alpha, detect_k or detect_baseline_runs",
		    c->alpha, c->k, c->baseline_runs, detect_p_min(c->k, c->baseline_runs));
	return 0;
}

void detect_events_free(struct detect_event *ev, size_t n)
{
	for (size_t i = 0; ev && i < n; i++)
		free(ev[i].fp_diff);
	free(ev);
}

static struct detect_event *event_append(struct detect_event **ev, size_t *n)
{
	*ev = xreallocarray(*ev, *n + 1, sizeof(**ev));
	memset(&(*ev)[*n], 0, sizeof(**ev));
	return &(*ev)[(*n)++];
}

static const json_t *fp_find(const struct detect_fp *fps, size_t n, int64_t id)
{
	for (size_t i = 0; i < n; i++)
		if (fps[i].id == id)
			return fps[i].identity;
	return NULL;
}

/* What changed between two fingerprint rows; NULL when nothing did. */
static char *fp_text(const struct detect_fp *fps, size_t n, int64_t before, int64_t after)
{
	const json_t *a, *b;
	char *s;

	if (before == after)
		return NULL;
	a = fp_find(fps, n, before);
	b = fp_find(fps, n, after);
	if (!a || !b) {
		xasprintf(&s, "host fingerprint #%lld → #%lld", (long long)before,
		          (long long)after);
		return s;
	}
	return fingerprint_diff(a, b);
}

static void period_fill(struct detect_period *p, const struct detect_point *pts, size_t from,
                        size_t to, double *buf)
{
	size_t n = to - from + 1;

	for (size_t i = 0; i < n; i++)
		buf[i] = pts[from + i].value;
	p->median = stats_median(buf, n);
	p->mad = stats_mad(buf, n);
	p->q1 = stats_percentile(buf, n, 25);
	p->q3 = stats_percentile(buf, n, 75);
	p->n = n;
	p->from_ms = pts[from].t_ms;
	p->to_ms = pts[to].t_ms;
}

/* The first run of the stretch measured on run j's fingerprint, looking
 * back no further than `floor` and than `limit` runs. */
static size_t seg_start(const struct detect_point *pts, size_t j, size_t floor, size_t limit)
{
	size_t s = j;

	while (s > floor && j - s + 1 < limit && pts[s - 1].fp_id == pts[j].fp_id)
		s--;
	return s;
}

/* The baseline [*b0, *b1] for the k runs ending at i: the runs before them
 * on the same fingerprint (at most N). When that stretch is too short to
 * judge (the host changed fewer than nmin runs ago), the stretch before
 * the change is the baseline and the runs since the change are judged.
 * Returns 0 when there is no baseline large enough. */
static int baseline_find(const struct detect_config *c, const struct detect_point *pts,
                         size_t restart, size_t nmin, size_t i, size_t *b0, size_t *b1)
{
	size_t s, n = c->baseline_runs;

	if (i < restart + c->k)
		return 0;
	*b1 = i - c->k;
	s = seg_start(pts, *b1, restart, n);
	if (*b1 - s + 1 >= nmin) {
		*b0 = s;
		return 1;
	}
	if (s == restart)
		return 0;
	*b1 = s - 1;
	*b0 = seg_start(pts, *b1, restart, n);
	return *b1 - *b0 + 1 >= nmin;
}

/* Runs of [from, i] beyond the threshold on side dir (+1 above, -1 below) of m. */
static size_t beyond(const struct detect_point *pts, size_t from, size_t i, double m, double thr,
                     int dir)
{
	size_t n = 0;

	for (size_t j = from; j <= i; j++) {
		double d = (pts[j].value - m) * dir;

		n += d > 0 && d >= thr;
	}
	return n;
}

/* The noise of the baseline as a standard deviation: Rousseeuw and Croux's
 * Qn (stats_qn), robust to the odd slow run like the MAD but about twice as
 * efficient, so that a baseline of 30 runs rarely looks quieter than it
 * is. Over the last QN_MAX runs. */
static double noise_sd(const double *v, size_t n, double *pairs)
{
	if (n > QN_MAX) {
		v += n - QN_MAX;
		n = QN_MAX;
	}
	return n < 2 ? 0 : stats_qn(v, n, pairs);
}

struct scratch {
	double *a, *b, *noise, *pairs;
};

/* The lag-1 autocorrelation of the baseline (runs on after the other,
 * deviations from m clipped at 3 sd so that a wild run does not decide it),
 * with Kendall's small-sample bias correction, within [0, DETECT_PHI_MAX]. */
static double noise_phi(const double *v, size_t n, double m, double sd)
{
	double num = 0, den = 0, r;

	if (n < 3 || !(sd > 0))
		return 0;
	for (size_t j = 0; j < n; j++) {
		double d = fmax(-3 * sd, fmin(3 * sd, v[j] - m));
		double prev = j ? fmax(-3 * sd, fmin(3 * sd, v[j - 1] - m)) : 0;

		den += d * d;
		if (j)
			num += d * prev;
	}
	r = den > 0 ? num / den : 0;
	r += (1 + 4 * r) / (double)n;
	return fmax(0, fmin(DETECT_PHI_MAX, r));
}

/* The root mean square deviation from m, each clipped at +-clip: unlike
 * Qn it counts the runs a noisy neighbour slowed, which a host that has
 * them must count as noise, while a stalled run counts only as clip. */
static double clipped_sd(const double *v, size_t n, double m, double clip)
{
	double ss = 0;

	for (size_t j = 0; j < n; j++) {
		double d = fmin(fabs(v[j] - m), clip);

		ss += d * d;
	}
	return n > 1 ? sqrt(ss / (double)(n - 1)) : 0;
}

/* The standard deviation of (mean of the last k runs) - (baseline median)
 * in units of the runs' noise, for AR(1) noise of lag-1 correlation phi:
 * the mean of k runs has variance (1 + 2 sum (1 - j/k) phi^j) / k, the
 * median of nb runs about pi/2 (1 + phi) / (1 - phi) / nb. */
static double mean_sd_factor(unsigned k, size_t nb, double phi)
{
	double f = 1, pj = 1;

	for (unsigned j = 1; j < k; j++) {
		pj *= phi;
		f += 2 * (1 - (double)j / k) * pj;
	}
	return sqrt(f / k + M_PI / 2 * (1 + phi) / (1 - phi) / (double)nb);
}

/* A noise estimated from few runs may be too low: the threshold grows by
 * DETECT_FEW_RUNS / (effective number of independent runs). */
static double few_runs_factor(size_t n, double phi)
{
	return 1 + DETECT_FEW_RUNS / ((double)n * (1 - phi) / (1 + phi));
}

/* Whether the last k runs ending at i show a change from baseline median m
 * (doc/regression.md): the median of the k beyond the minimum effect, every
 * one beyond DETECT_RUN_Z noise sd on the same side, and their mean beyond
 * DETECT_NOISE_Z standard errors. Returns the direction or 0; *run_thr is
 * the per-run threshold. The noise is only computed when the rest holds. */
static int shows_change(const struct detect_config *c, const struct detect_series *s, size_t i,
                        size_t n0, size_t b1, size_t nb, double m, struct scratch *w,
                        double *run_thr)
{
	const struct detect_point *pts = s->pts;
	const size_t k = c->k, a = i + 1 - k;
	double eff = fmax(c->min_effect * fabs(m), s->abs_floor), mk, mean = 0, sd, phi, mn;
	int dir;

	for (size_t j = 0; j < k; j++) {
		w->a[j] = pts[a + j].value;
		mean += w->a[j] / (double)k;
	}
	mk = stats_median(w->a, k);
	dir = mk - m >= eff && mk > m ? 1 : m - mk >= eff && mk < m ? -1 : 0;
	/* every run on the new side, the first nearer the new level than the
	 * old (else the change began later: the next run's judgement says) */
	if (!dir || beyond(pts, a, i, m, 0, dir) < k || (pts[a].value - m) * dir < fabs(mk - m) / 2)
		return 0;
	for (size_t j = n0; j <= b1; j++)
		w->noise[j - n0] = pts[j].value;
	sd = noise_sd(w->noise, b1 - n0 + 1, w->pairs);
	mn = stats_median(w->noise, b1 - n0 + 1);
	sd = fmax(sd, clipped_sd(w->noise, b1 - n0 + 1, mn, DETECT_CLIP_Z * sd));
	phi = noise_phi(w->noise, b1 - n0 + 1, mn, sd);
	*run_thr = DETECT_RUN_Z * sd;
	if (beyond(pts, a, i, m, *run_thr, dir) < k ||
	    (mean - m) * dir < DETECT_NOISE_Z * sd * mean_sd_factor(c->k, nb, phi) *
	                           few_runs_factor(b1 - n0 + 1, phi))
		return 0;
	return dir;
}

/* Judges the runs ending at i; fills *e and returns 1 for a change. */
static int judge(const struct detect_config *c, const struct detect_series *s, size_t restart,
                 size_t nmin, size_t i, struct scratch *w, struct detect_event *e, size_t *change)
{
	const struct detect_point *pts = s->pts;
	double *bufa = w->a, *bufb = w->b;
	size_t b0, b1, a0, na, nb;
	double m, thr, p;
	int dir;

	if (!baseline_find(c, pts, restart, nmin, i, &b0, &b1))
		return 0;
	a0 = b1 + 1;
	na = i - a0 + 1;
	nb = b1 - b0 + 1;
	for (size_t j = 0; j < nb; j++)
		bufb[j] = pts[b0 + j].value;
	m = stats_median(bufb, nb);
	dir = shows_change(c, s, i, seg_start(pts, b1, restart, DETECT_NOISE_RUNS), b1, nb, m, w,
	                   &thr);
	if (!dir)
		return 0;
	/* Judging since a fingerprint change: the change must date from it
	 * (three runs in four beyond). */
	if (na > c->k && beyond(pts, a0, i, m, thr, dir) * 4 < na * 3)
		return 0;
	for (size_t j = 0; j < na; j++)
		bufa[j] = pts[a0 + j].value;
	p = stats_mann_whitney_p(bufa, na, bufb, nb);
	if (!(p <= c->alpha))
		return 0;
	e->kind = DETECT_STEP;
	snprintf(e->metric, sizeof(e->metric), "%s", s->metric);
	snprintf(e->unit, sizeof(e->unit), "%s", s->unit ? s->unit : "");
	e->t_ms = pts[a0].t_ms;
	e->ref_id = pts[a0].run_id;
	e->detected_ms = pts[i].t_ms;
	e->direction = dir;
	period_fill(&e->before, pts, b0, b1, w->b);
	period_fill(&e->after, pts, a0, i, w->a);
	e->change_pct = m != 0 ? (e->after.median - m) / fabs(m) * 100 : NAN;
	e->p = p;
	e->fp_diff = fp_text(s->fps, s->n_fps, pts[b1].fp_id, pts[i].fp_id);
	*change = a0;
	return 1;
}

int detect_scan(const struct detect_config *c, const struct detect_series *s,
                struct detect_event **ev, size_t *n_ev)
{
	size_t nmin, restart = 0, cap, qn;
	struct scratch w;
	int found = 0;

	if (detect_config_check(c, NULL, 0) < 0 || !s->metric || (s->n && !s->pts) ||
	    !(s->abs_floor >= 0))
		return -EINVAL;
	for (size_t i = 0; i < s->n; i++)
		if (!isfinite(s->pts[i].value))
			return -EINVAL;
	nmin = detect_min_baseline(c);
	cap = (size_t)c->baseline_runs + nmin + c->k;
	qn = DETECT_NOISE_RUNS < QN_MAX ? DETECT_NOISE_RUNS : QN_MAX;
	w.a = xmalloc(cap * sizeof(*w.a));
	w.b = xmalloc(cap * sizeof(*w.b));
	w.noise = xmalloc(DETECT_NOISE_RUNS * sizeof(*w.noise));
	w.pairs = xmalloc((qn * (qn - 1) / 2 + 1) * sizeof(*w.pairs));
	for (size_t i = 0; i < s->n; i++) {
		struct detect_event e = {0};
		size_t change;

		if (s->pts[i].run_id <= s->after_run_id)
			continue;
		if (!judge(c, s, restart, nmin, i, &w, &e, &change))
			continue;
		*event_append(ev, n_ev) = e;
		restart = change; /* the runs from the change on are the next baseline */
		found++;
	}
	free(w.a);
	free(w.b);
	free(w.noise);
	free(w.pairs);
	return found;
}

static void verdict_period(struct detect_period *p, int64_t t_ms)
{
	*p = (struct detect_period){NAN, NAN, NAN, NAN, 1, t_ms, t_ms};
}

int detect_flips(const struct detect_verdict *v, size_t n, int64_t after_id,
                 const struct detect_fp *fps, size_t n_fps, struct detect_event **ev, size_t *n_ev)
{
	int found = 0;

	if (n && !v)
		return -EINVAL;
	for (size_t i = 1; i < n; i++) {
		struct detect_event *e;

		if (v[i].id <= after_id || !v[i].verdict || !v[i - 1].verdict ||
		    !strcmp(v[i].verdict, v[i - 1].verdict))
			continue;
		e = event_append(ev, n_ev);
		e->kind = DETECT_FLIP;
		snprintf(e->metric, sizeof(e->metric), "%s", DETECT_VERDICT_METRIC);
		e->t_ms = e->detected_ms = v[i].t_ms;
		e->ref_id = v[i].id;
		verdict_period(&e->before, v[i - 1].t_ms);
		verdict_period(&e->after, v[i].t_ms);
		e->change_pct = e->p = NAN;
		snprintf(e->verdict_before, sizeof(e->verdict_before), "%s", v[i - 1].verdict);
		snprintf(e->verdict_after, sizeof(e->verdict_after), "%s", v[i].verdict);
		snprintf(e->confidence_before, sizeof(e->confidence_before), "%s",
		         v[i - 1].confidence ? v[i - 1].confidence : "");
		snprintf(e->confidence_after, sizeof(e->confidence_after), "%s",
		         v[i].confidence ? v[i].confidence : "");
		e->fp_diff = fp_text(fps, n_fps, v[i - 1].fp_id, v[i].fp_id);
		found++;
	}
	return found;
}

/* ---- presentation ---------------------------------------------------------- */

static json_t *jnum(double d)
{
	return isfinite(d) ? json_real(d) : json_null();
}

static json_t *jtime(int64_t ms)
{
	char buf[40];

	clock_rfc3339(ms * 1000000, buf, sizeof(buf));
	return json_string(buf);
}

static json_t *period_json(const struct detect_event *e, int after)
{
	const struct detect_period *p = after ? &e->after : &e->before;

	if (e->kind == DETECT_FLIP)
		return json_pack("{s:s, s:s}", "verdict",
		                 after ? e->verdict_after : e->verdict_before, "confidence",
		                 after ? e->confidence_after : e->confidence_before);
	return json_pack("{s:o, s:o, s:[o, o], s:I, s:I, s:I}", "median", jnum(p->median), "mad",
	                 jnum(p->mad), "iqr", jnum(p->q1), jnum(p->q3), "n", (json_int_t)p->n,
	                 "from_ms", (json_int_t)p->from_ms, "to_ms", (json_int_t)p->to_ms);
}

json_t *detect_event_json(const struct detect_event *e)
{
	const int step = e->kind == DETECT_STEP;
	char *text = detect_event_text(e);
	json_t *j = json_pack(
	    "{s:s, s:s, s:s, s:I, s:o, s:I, s:o, s:I, s:o, s:o, s:o, s:o, s:o, s:b, s:s, s:s}",
	    "kind", step ? "step" : "flip", "metric", e->metric, "unit", e->unit, "t_ms",
	    (json_int_t)e->t_ms, "at", jtime(e->t_ms), "detected_ms", (json_int_t)e->detected_ms,
	    "detected_at", jtime(e->detected_ms), step ? "run_id" : "recommendation_id",
	    (json_int_t)e->ref_id, "direction",
	    !step              ? json_null()
	    : e->direction > 0 ? json_string("up")
	                       : json_string("down"),
	    "before", period_json(e, 0), "after", period_json(e, 1), "change_pct",
	    jnum(e->change_pct), "p_value", jnum(e->p), "fingerprint_changed", e->fp_diff != NULL,
	    "fingerprint_diff", e->fp_diff ? e->fp_diff : NO_FP_CHANGE, "message", text);

	free(text);
	if (!j)
		abort(); /* only on out of memory or a bad format, both fatal */
	return j;
}

/* 1657 ns, 17020 ns, 0.999, 0.0312: whole numbers from 100 on. */
static void value_text(char *buf, size_t len, double v, const char *unit)
{
	const int plain = !unit || !*unit || !strcmp(unit, "count") || !strcmp(unit, "ratio") ||
	                  !strcmp(unit, "slope");

	snprintf(buf, len, fabs(v) >= 100 ? "%.0f%s%s" : "%.3g%s%s", v, plain ? "" : " ",
	         plain ? "" : unit);
}

char *detect_event_text(const struct detect_event *e)
{
	char from[64], to[64], change[48] = "", *s;
	const char *why = e->fp_diff ? e->fp_diff : NO_FP_CHANGE;

	if (e->kind == DETECT_FLIP) {
		xasprintf(
		    &s, "The recommendation flipped from %s to %s stacks (confidence %s → %s); %s",
		    e->verdict_before, e->verdict_after, e->confidence_before, e->confidence_after,
		    why);
		return s;
	}
	value_text(from, sizeof(from), e->before.median, e->unit);
	value_text(to, sizeof(to), e->after.median, e->unit);
	if (isfinite(e->change_pct))
		snprintf(change, sizeof(change), " %.1f%%", fabs(e->change_pct));
	xasprintf(&s, "%s %s%s, from %s to %s (median of %zu runs against %zu, p = %.2g); %s",
	          e->metric, e->direction > 0 ? "rose" : "fell", change, from, to, e->after.n,
	          e->before.n, e->p, why);
	return s;
}
