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

#include "jnum.h"
#include "fingerprint_change.h"
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
	    .k_sustained = DETECT_K_SUSTAINED_DEFAULT,
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
	if (c->k_sustained < c->k || c->k_sustained > MAX_K)
		return errbuf_set(err, errlen, -EINVAL,
		                  "detect_k_sustained: %u is not in %u (detect_k)..%d",
		                  c->k_sustained, c->k, MAX_K);
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
	for (size_t i = 0; ev && i < n; i++) {
		free(ev[i].fp_diff);
		free(ev[i].change);
	}
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

/* One judgement: the baseline [b0, b1], the runs judged [b1 + 1, i] (all
 * of them since the change on the fast path), the last k of which must all
 * show the change, and the path. */
struct window {
	size_t b0, b1, k;
	enum detect_path path;
};

/* The window of the judgement ending at i. Within nmin + k runs after a
 * fingerprint change (until the new stretch could be a baseline) the fast
 * path judges every run since the change, once there are k, against the
 * stretch before it; the slow path judges the last k_sustained runs against
 * the runs before them on the same fingerprint (at most N), once there are
 * nmin of them. Returns 0 when run i is not judged. */
static int window_find(const struct detect_config *c, const struct detect_point *pts,
                       size_t restart, size_t nmin, size_t i, struct window *w)
{
	const size_t s = seg_start(pts, i, restart, SIZE_MAX), since = i - s + 1;
	const size_t ks = c->k_sustained;

	if (s > restart && since < nmin + c->k) {
		if (since < c->k)
			return 0;
		*w = (struct window){.b1 = s - 1, .k = c->k, .path = DETECT_PATH_CHANGE};
		w->b0 = seg_start(pts, w->b1, restart, c->baseline_runs);
		return w->b1 - w->b0 + 1 >= nmin;
	}
	if (since < nmin + ks)
		return 0;
	*w = (struct window){.b1 = i - ks, .k = ks, .path = DETECT_PATH_SUSTAINED};
	w->b0 = seg_start(pts, w->b1, s, c->baseline_runs);
	return 1;
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

/* The thresholds of each path: the mean of the k runs in standard errors,
 * each of the k runs in noise standard deviations (0: on the new side),
 * and whether the first of them must lie nearer the new level than the
 * old (else the change began later: the next judgement dates it). */
static const struct {
	double mean_z, run_z;
	size_t spare; /* runs that may miss run_z (still on the new side) */
	int first_nearer;
	double alpha_factor; /* the rank test's level: detect_alpha times this */
} paths[] = {
    [DETECT_PATH_CHANGE] = {DETECT_CHANGE_Z, 0, 0, 0, DETECT_CHANGE_ALPHA_FACTOR},
    [DETECT_PATH_SUSTAINED] = {DETECT_NOISE_Z, DETECT_RUN_Z, DETECT_SPARE_RUNS, 1, 1},
};

const char *const detect_path_names[] = {
    [DETECT_PATH_CHANGE] = "change",
    [DETECT_PATH_SUSTAINED] = "sustained",
};

/* The noise of runs [n0, b1] as a standard deviation (*sd) and its lag-1
 * autocorrelation (*phi). */
static void noise_of(const struct detect_point *pts, size_t n0, size_t b1, struct scratch *w,
                     double *sd, double *phi)
{
	const size_t n = b1 - n0 + 1;
	double mn;

	for (size_t j = n0; j <= b1; j++)
		w->noise[j - n0] = pts[j].value;
	*sd = noise_sd(w->noise, n, w->pairs);
	mn = stats_median(w->noise, n);
	*sd = fmax(*sd, clipped_sd(w->noise, n, mn, DETECT_CLIP_Z * *sd));
	*phi = noise_phi(w->noise, n, mn, *sd);
}

/* Whether the last wd->k runs ending at i show a change from baseline
 * median m (doc/regression.md): their median beyond the minimum effect,
 * every one beyond the path's per-run threshold on the same side, and
 * their mean beyond its number of standard errors. Returns the direction
 * or 0; *sd is the noise standard deviation. The noise is only computed
 * when the rest holds. */
static int shows_change(const struct detect_config *c, const struct detect_series *s, size_t i,
                        size_t n0, const struct window *wd, double m, struct scratch *w, double *sd)
{
	const struct detect_point *pts = s->pts;
	const size_t k = wd->k, a = i + 1 - k, nb = wd->b1 - wd->b0 + 1;
	double eff = fmax(c->min_effect * fabs(m), s->abs_floor), mk, mean = 0, phi;
	int dir;

	(void)c;
	for (size_t j = 0; j < k; j++) {
		w->a[j] = pts[a + j].value;
		mean += w->a[j] / (double)k;
	}
	mk = stats_median(w->a, k);
	dir = mk - m >= eff && mk > m ? 1 : m - mk >= eff && mk < m ? -1 : 0;
	if (!dir || beyond(pts, a, i, m, 0, dir) < k ||
	    (paths[wd->path].first_nearer && (pts[a].value - m) * dir < fabs(mk - m) / 2))
		return 0;
	noise_of(pts, n0, wd->b1, w, sd, &phi);
	/* a spare run may be any but the last: a change must still hold */
	if (beyond(pts, a, i, m, paths[wd->path].run_z * *sd, dir) + paths[wd->path].spare < k ||
	    !beyond(pts, i, i, m, paths[wd->path].run_z * *sd, dir) ||
	    (mean - m) * dir < paths[wd->path].mean_z * *sd * mean_sd_factor((unsigned)k, nb, phi) *
	                           few_runs_factor(wd->b1 - n0 + 1, phi))
		return 0;
	return dir;
}

/* Fills the step event of the window wd ending at i. */
static void step_fill(const struct detect_series *s, const struct window *wd, size_t i, double m,
                      int dir, double p, struct scratch *w, struct detect_event *e)
{
	const struct detect_point *pts = s->pts;
	const size_t a0 = wd->b1 + 1;

	e->kind = DETECT_STEP;
	snprintf(e->metric, sizeof(e->metric), "%s", s->metric);
	snprintf(e->unit, sizeof(e->unit), "%s", s->unit ? s->unit : "");
	e->t_ms = pts[a0].t_ms;
	e->ref_id = pts[a0].run_id;
	e->detected_ms = pts[i].t_ms;
	e->direction = dir;
	e->path = wd->path;
	period_fill(&e->before, pts, wd->b0, wd->b1, w->b);
	period_fill(&e->after, pts, a0, i, w->a);
	e->change_pct = m != 0 ? (e->after.median - m) / fabs(m) * 100 : NAN;
	e->p = p;
	e->fp_diff = fp_text(s->fps, s->n_fps, pts[wd->b1].fp_id, pts[i].fp_id);
	if (wd->path == DETECT_PATH_CHANGE)
		e->change = fingerprint_change_name(e->fp_diff);
}

/* Judges the runs ending at i; fills *e and returns 1 for a change. */
static int judge(const struct detect_config *c, const struct detect_series *s, size_t restart,
                 size_t nmin, size_t i, struct scratch *w, struct detect_event *e, size_t *change)
{
	const struct detect_point *pts = s->pts;
	struct window wd;
	size_t a0, na, nb;
	double m, sd, p;
	int dir;

	if (!window_find(c, pts, restart, nmin, i, &wd))
		return 0;
	a0 = wd.b1 + 1;
	na = i - a0 + 1;
	nb = wd.b1 - wd.b0 + 1;
	for (size_t j = 0; j < nb; j++)
		w->b[j] = pts[wd.b0 + j].value;
	m = stats_median(w->b, nb);
	dir = shows_change(c, s, i, seg_start(pts, wd.b1, restart, DETECT_NOISE_RUNS), &wd, m, w,
	                   &sd);
	if (!dir)
		return 0;
	/* Judging since a fingerprint change: the change must date from it
	 * (three runs in four beyond). */
	if (na > wd.k && beyond(pts, a0, i, m, DETECT_SINCE_Z * sd, dir) * 4 < na * 3)
		return 0;
	for (size_t j = 0; j < na; j++)
		w->a[j] = pts[a0 + j].value;
	p = stats_mann_whitney_p(w->a, na, w->b, nb);
	if (!(p <= fmin(0.5, c->alpha * paths[wd.path].alpha_factor)))
		return 0;
	step_fill(s, &wd, i, m, dir, p, w, e);
	*change = a0;
	return 1;
}

/* The runs of s not taken under contention, in a malloc'd copy (*n); all
 * of them when most were (the host is always busy: its noise says so). */
static struct detect_point *uncontended(const struct detect_series *s, size_t *n)
{
	struct detect_point *out = xcalloc(s->n + 1, sizeof(*out));
	size_t busy = 0;

	for (size_t i = 0; i < s->n; i++)
		busy += s->pts[i].contended != 0;
	*n = 0;
	for (size_t i = 0; i < s->n; i++)
		if (!s->pts[i].contended || busy * 2 > s->n)
			out[(*n)++] = s->pts[i];
	return out;
}

int detect_scan(const struct detect_config *c, const struct detect_series *s,
                struct detect_event **ev, size_t *n_ev)
{
	size_t nmin, restart = 0, cap, qn;
	struct detect_series q = *s;
	struct detect_point *pts;
	struct scratch w;
	int found = 0;

	if (detect_config_check(c, NULL, 0) < 0 || !s->metric || (s->n && !s->pts) ||
	    !(s->abs_floor >= 0))
		return -EINVAL;
	for (size_t i = 0; i < s->n; i++)
		if (!isfinite(s->pts[i].value))
			return -EINVAL;
	nmin = detect_min_baseline(c);
	pts = uncontended(s, &q.n);
	q.pts = pts;
	cap = (size_t)c->baseline_runs + nmin + c->k_sustained;
	qn = DETECT_NOISE_RUNS < QN_MAX ? DETECT_NOISE_RUNS : QN_MAX;
	w.a = xmalloc(cap * sizeof(*w.a));
	w.b = xmalloc(cap * sizeof(*w.b));
	w.noise = xmalloc(DETECT_NOISE_RUNS * sizeof(*w.noise));
	w.pairs = xmalloc((qn * (qn - 1) / 2 + 1) * sizeof(*w.pairs));
	for (size_t i = 0; i < q.n; i++) {
		struct detect_event e = {0};
		size_t change;

		if (q.pts[i].run_id <= q.after_run_id)
			continue;
		if (!judge(c, &q, restart, nmin, i, &w, &e, &change))
			continue;
		*event_append(ev, n_ev) = e;
		restart = change; /* the runs from the change on are the next baseline */
		found++;
	}
	free(w.a);
	free(w.b);
	free(w.noise);
	free(w.pairs);
	free(pts);
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
	char *text = detect_event_text(e), *head = detect_event_headline(e);
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

	if (j)
		json_object_set_new(j, "path",
		                    step ? json_string(detect_path_names[e->path]) : json_null());
	if (j)
		json_object_set_new(j, "headline", json_string(head));
	free(text);
	free(head);
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

/* "3 days", "18 hours": how long the runs of a period span, counting the
 * last run's cycle (n runs cover n cycles). */
static void span_text(char *buf, size_t len, const struct detect_period *p)
{
	double h = p->n > 1
	               ? (double)(p->to_ms - p->from_ms) * (double)p->n / (double)(p->n - 1) / 3.6e6
	               : 0;

	if (h >= 36)
		snprintf(buf, len, "%.0f days", h / 24);
	else if (h >= 2)
		snprintf(buf, len, "%.0f hours", h);
	else
		snprintf(buf, len, "%zu runs", p->n);
}

char *detect_event_headline(const struct detect_event *e)
{
	char change[48] = "", span[32], *s;

	if (e->kind == DETECT_FLIP) {
		xasprintf(&s, "the recommendation flipped from %s to %s stacks", e->verdict_before,
		          e->verdict_after);
		return s;
	}
	if (isfinite(e->change_pct))
		snprintf(change, sizeof(change), " %+.1f%%", e->change_pct);
	else
		snprintf(change, sizeof(change), " %s", e->direction > 0 ? "rose" : "fell");
	if (e->path == DETECT_PATH_CHANGE) {
		xasprintf(&s, "after %s: %s%s", e->change ? e->change : "a host change", e->metric,
		          change);
		return s;
	}
	span_text(span, sizeof(span), &e->after);
	xasprintf(&s, "sustained for %s with no change on the host: %s%s", span, e->metric, change);
	return s;
}

char *detect_event_text(const struct detect_event *e)
{
	char from[64], to[64], *s, *head = detect_event_headline(e);
	const char *why = e->fp_diff ? e->fp_diff : NO_FP_CHANGE;

	if (e->kind == DETECT_FLIP) {
		xasprintf(
		    &s, "The recommendation flipped from %s to %s stacks (confidence %s → %s); %s",
		    e->verdict_before, e->verdict_after, e->confidence_before, e->confidence_after,
		    why);
		free(head);
		return s;
	}
	value_text(from, sizeof(from), e->before.median, e->unit);
	value_text(to, sizeof(to), e->after.median, e->unit);
	xasprintf(&s, "%s, from %s to %s (median of %zu runs against %zu, p = %.2g); %s", head,
	          from, to, e->after.n, e->before.n, e->p, why);
	free(head);
	return s;
}
