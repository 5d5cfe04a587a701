/*
 * detectsim: simulated fleets for regression detection. Each host draws the
 * slow-downs all its figures share (modes, noisy-neighbour episodes, whose
 * runs are marked contended in a share of the episodes), each figure its
 * own Gaussian AR(1) noise, and detect_scan() judges every run
 * of every figure, as threadwatchd's detection.c does run by run (a scan over
 * a whole history gives the same events: tests/unit/test_detect.c).
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "detectsim.h"
#include "errbuf.h"
#include "stats.h"
#include "xmalloc.h"

#define T0_MS INT64_C(1767225600000) /* 2026-01-01, the simulated start */
/* A figure's level: the method is relative, so any level serves as long
 * as the figure's absolute floor is a small part of it (1% at most: a
 * stack's 64 KiB floor puts its level at 6.5 MB, where 1,000 serves the
 * rest). */
#define LEVEL 1000.0
#define LEVEL_FLOORS 100.0
#define MAX_HOSTS 1000000
#define MAX_RUNS 100000
#define MAX_WORKERS 8

const char *const dsim_noise_names[] = {"iid", "ar1", "bimodal", "episodic"};
const size_t dsim_n_noises = sizeof(dsim_noise_names) / sizeof(dsim_noise_names[0]);

void dsim_params_default(struct dsim_params *p)
{
	*p = (struct dsim_params){
	    .hosts = 1000,
	    .days = 90,
	    .every_s = 21600,
	    .seed = 1,
	    .noise = DSIM_IID,
	    .cv = 0.02,
	    .phi = 0,
	    .mode_gap = 0.10,
	    .mode_p = 0.3,
	    .episode_cycles = 4,
	    .episode_rate = 0.02,
	    .episode_size = 0.10,
	    .episode_visible = DSIM_EPISODE_VISIBLE_DEFAULT,
	    .step = 0,
	    .step_day = 60,
	    .within = 16,
	    .within_change = 2,
	};
}

size_t dsim_runs(const struct dsim_params *p)
{
	return (size_t)floor(p->days * 86400.0 / p->every_s + 1e-9);
}

size_t dsim_step_at(const struct dsim_params *p)
{
	return p->step != 0 ? (size_t)ceil(p->step_day * 86400.0 / p->every_s - 1e-9) : SIZE_MAX;
}

int dsim_params_check(const struct dsim_params *p, char *err, size_t errlen)
{
	size_t n = dsim_runs(p);

	if (p->hosts < 1 || p->hosts > MAX_HOSTS)
		return errbuf_set(err, errlen, -EINVAL, "--hosts: %u is not in 1..%d", p->hosts,
		                  MAX_HOSTS);
	if (!(p->every_s >= 1))
		return errbuf_set(err, errlen, -EINVAL, "--every: %g s is shorter than a second",
		                  p->every_s);
	if (p->days < 1 || n < 2 || n > MAX_RUNS)
		return errbuf_set(err, errlen, -EINVAL,
		                  "--days %u with --every %gs gives %zu cycles; 2..%d can be "
		                  "simulated",
		                  p->days, p->every_s, n, MAX_RUNS);
	if (!(p->cv >= 0 && p->cv <= 0.3))
		return errbuf_set(err, errlen, -EINVAL, "--cv: %g is not in 0..0.3", p->cv);
	if (!(p->phi >= 0 && p->phi < 1))
		return errbuf_set(err, errlen, -EINVAL, "--phi: %g is not in [0, 1)", p->phi);
	if (!(p->mode_gap >= 0 && p->mode_gap <= 1) || !(p->mode_p >= 0 && p->mode_p <= 1))
		return errbuf_set(err, errlen, -EINVAL, "--mode-gap and --mode-p must be in 0..1");
	if (p->episode_cycles < 1 || p->episode_cycles > 1000 ||
	    !(p->episode_rate >= 0 && p->episode_rate <= 1) ||
	    !(p->episode_size >= 0 && p->episode_size <= 1))
		return errbuf_set(err, errlen, -EINVAL,
		                  "--episode-cycles must be in 1..1000, --episode-rate and "
		                  "--episode-size in 0..1");
	if (!(p->step > -1 && p->step <= 10))
		return errbuf_set(err, errlen, -EINVAL, "--step: %g is not in (-1, 10]", p->step);
	if (!(p->episode_visible >= 0 && p->episode_visible <= 1) ||
	    !(p->fp_share >= 0 && p->fp_share <= 1))
		return errbuf_set(
		    err, errlen, -EINVAL,
		    "--episode-visible and --fingerprint-change-share must be in 0..1");
	if (p->step != 0 && !(p->step_day > 0 && dsim_step_at(p) < n))
		return errbuf_set(err, errlen, -EINVAL,
		                  "--step-day: %g is not inside the %u simulated days", p->step_day,
		                  p->days);
	if (p->within < 1 || p->within_change < 1)
		return errbuf_set(err, errlen, -EINVAL,
		                  "--within and --within-change: must be at least 1");
	return 0;
}

size_t dsim_n_figures(void)
{
	size_t n = 0;

	for (size_t i = 0; i < catalog_n_metrics; i++)
		n += catalog_metrics[i].key != 0;
	return n;
}

const struct catalog_metric *dsim_figure(size_t k)
{
	for (size_t i = 0; i < catalog_n_metrics; i++)
		if (catalog_metrics[i].key && k-- == 0)
			return &catalog_metrics[i];
	return NULL;
}

int dsim_host_fp_change(const struct dsim_params *p, unsigned h)
{
	return p->fp_change || (double)h < p->fp_share * (double)p->hosts;
}

/* The factor every figure of the host shares in each cycle: the slow
 * mode, or the slow-down of a noisy neighbour's episode; and whether the
 * cycle's contention readings show it (busy: a visible episode). */
static void host_factors(const struct dsim_params *p, struct stats_rng *r, double *f,
                         unsigned char *busy, size_t n)
{
	unsigned left = 0;
	double size = 0;
	int seen = 0;

	for (size_t i = 0; i < n; i++) {
		f[i] = 1;
		busy[i] = 0;
		if (p->noise == DSIM_BIMODAL && stats_rng_uniform(r) < p->mode_p)
			f[i] += p->mode_gap;
		if (p->noise != DSIM_EPISODIC)
			continue;
		if (!left && stats_rng_uniform(r) < p->episode_rate) {
			left = p->episode_cycles;
			size = p->episode_size * (0.5 + stats_rng_uniform(r));
			seen = stats_rng_uniform(r) < p->episode_visible;
		}
		if (left) {
			f[i] += size;
			busy[i] = (unsigned char)seen;
			left--;
		}
	}
}

/* One host's shared part: the factors, the contention marks and whether
 * its step comes with a fingerprint change. */
struct host {
	const double *f;
	const unsigned char *busy;
	int fp_change;
};

/* One figure's history: AR(1) Gaussian noise of standard deviation cv
 * (started in its stationary distribution), the host's factors, the step. */
static void figure_history(const struct dsim_params *p, struct stats_rng *r, const struct host *h,
                           size_t n, size_t step_at, double level, struct detect_point *pts)
{
	const double every_ms = p->every_s * 1000, innov = sqrt(1 - p->phi * p->phi);
	double x = p->cv * stats_rng_normal(r);

	for (size_t i = 0; i < n; i++) {
		if (i)
			x = p->phi * x + innov * p->cv * stats_rng_normal(r);
		pts[i] = (struct detect_point){
		    .run_id = (int64_t)i + 1,
		    .t_ms = T0_MS + (int64_t)((double)i * every_ms),
		    .value = level * (1 + x) * h->f[i] * (i >= step_at ? 1 + p->step : 1),
		    .fp_id = h->fp_change && i >= step_at ? 2 : 1,
		    .contended = h->busy[i],
		};
	}
}

/* What one worker adds up over its hosts. */
struct tally {
	uint64_t false_events, contended;
	uint64_t detected[2], in_time[2], by_path[2][2];
	uint64_t *false_by_figure;
	unsigned *delays; /* one per stepped figure; 0: not found */
};

struct worker {
	const struct detect_config *c;
	const struct dsim_params *p;
	unsigned first, stride;
	struct tally t;
	int err;
};

/* The kind of a host's step: judged on the fast path when it comes with
 * a fingerprint change. */
static enum detect_path step_kind(const struct dsim_params *p, unsigned h)
{
	return dsim_host_fp_change(p, h) ? DETECT_PATH_CHANGE : DETECT_PATH_SUSTAINED;
}

/* Sorts one figure's events into the step's detection (the first event in
 * its direction completed at or after it) and false events. */
static void classify(const struct dsim_params *p, const struct detect_event *ev, size_t n_ev,
                     size_t step_at, enum detect_path kind, size_t fig, unsigned *delay,
                     struct tally *t)
{
	const int dir = p->step > 0 ? 1 : -1;
	const unsigned within = kind == DETECT_PATH_CHANGE ? p->within_change : p->within;

	for (size_t e = 0; e < n_ev; e++) {
		size_t at =
		    (size_t)llround((double)(ev[e].detected_ms - T0_MS) / (p->every_s * 1000));

		if (step_at != SIZE_MAX && !*delay && at >= step_at && ev[e].direction == dir) {
			*delay = (unsigned)(at - step_at) + 1; /* stored + 1: 0 is "not found" */
			t->detected[kind]++;
			t->in_time[kind] += *delay - 1 <= within;
			t->by_path[kind][ev[e].path]++;
			continue;
		}
		t->false_events++;
		t->false_by_figure[fig]++;
	}
}

/* Judges one figure of host h; 0 or -EINVAL. */
static int judge_figure(struct worker *w, const struct host *hs, unsigned h, size_t k,
                        struct stats_rng *r, struct detect_point *pts)
{
	const struct dsim_params *p = w->p;
	const size_t n = dsim_runs(p), step_at = dsim_step_at(p), nf = dsim_n_figures();
	const struct catalog_metric *fig = dsim_figure(k);
	struct detect_series s = {.metric = fig->name,
	                          .unit = fig->unit,
	                          .abs_floor = fig->abs_floor,
	                          .pts = pts,
	                          .n = n};
	struct detect_event *ev = NULL;
	size_t n_ev = 0;
	int rc;

	figure_history(p, r, hs, n, step_at, fmax(LEVEL, LEVEL_FLOORS * fig->abs_floor), pts);
	rc = detect_scan(w->c, &s, &ev, &n_ev);
	if (rc >= 0)
		classify(p, ev, n_ev, step_at, step_kind(p, h), k, &w->t.delays[(size_t)h * nf + k],
		         &w->t);
	detect_events_free(ev, n_ev);
	return rc < 0 ? rc : 0;
}

static void *worker_run(void *arg)
{
	struct worker *w = arg;
	const struct dsim_params *p = w->p;
	const size_t n = dsim_runs(p), nf = dsim_n_figures();
	double *f = xcalloc(n, sizeof(*f));
	unsigned char *busy = xcalloc(n, 1);
	struct detect_point *pts = xcalloc(n, sizeof(*pts));

	for (unsigned h = w->first; h < p->hosts && !w->err; h += w->stride) {
		struct host hs = {f, busy, dsim_host_fp_change(p, h)};
		struct stats_rng r;

		stats_rng_seed(&r, p->seed * UINT64_C(0x9e3779b97f4a7c15) + h);
		host_factors(p, &r, f, busy, n);
		for (size_t i = 0; i < n; i++)
			w->t.contended += busy[i] * nf;
		for (size_t k = 0; k < nf && !w->err; k++)
			w->err = judge_figure(w, &hs, h, k, &r, pts);
	}
	free(f);
	free(busy);
	free(pts);
	return NULL;
}

static int by_value(const void *a, const void *b)
{
	unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;

	return (x > y) - (x < y);
}

/* The median and largest delay of the steps found among the n in d of
 * the hosts whose kind is `kind` (every kind: -1). */
static void delays_sum_up(const struct dsim_params *p, const unsigned *d, size_t n, int kind,
                          double *median, unsigned *max)
{
	const size_t nf = dsim_n_figures();
	unsigned *v = xcalloc(n + 1, sizeof(*v));
	size_t m = 0;

	for (size_t i = 0; i < n; i++)
		if (d[i] && (kind < 0 || (int)step_kind(p, (unsigned)(i / nf)) == kind))
			v[m++] = d[i] - 1;
	qsort(v, m, sizeof(*v), by_value);
	*median = !m ? NAN : m % 2 ? v[m / 2] : (v[m / 2 - 1] + v[m / 2]) / 2.0;
	*max = m ? v[m - 1] : 0;
	free(v);
}

/* Adds worker t's tally to r. */
static void tally_add(struct dsim_result *r, const struct tally *t)
{
	r->false_events += t->false_events;
	r->contended_runs += t->contended;
	for (int k = 0; k < 2; k++) {
		r->kind[k].detected += t->detected[k];
		r->kind[k].in_time += t->in_time[k];
		r->kind[k].by_path[0] += t->by_path[k][0];
		r->kind[k].by_path[1] += t->by_path[k][1];
	}
	for (size_t k = 0; k < dsim_n_figures(); k++)
		r->false_by_figure[k] += t->false_by_figure[k];
}

/* The steps of each kind and of both, from the tallies and the delays. */
static void steps_sum_up(const struct dsim_params *p, const unsigned *delays, size_t n,
                         struct dsim_result *r)
{
	for (unsigned h = 0; p->step != 0 && h < p->hosts; h++)
		r->kind[step_kind(p, h)].steps += dsim_n_figures();
	for (int k = 0; k < 2; k++) {
		delays_sum_up(p, delays, n, k, &r->kind[k].median_delay_cycles,
		              &r->kind[k].max_delay_cycles);
		r->steps += r->kind[k].steps;
		r->detected_steps += r->kind[k].detected;
		r->detected_in_time += r->kind[k].in_time;
	}
	delays_sum_up(p, delays, n, -1, &r->median_delay_cycles, &r->max_delay_cycles);
}

int dsim_run(const struct detect_config *c, const struct dsim_params *p, struct dsim_result *r)
{
	const size_t n_slots = (size_t)p->hosts * dsim_n_figures();
	unsigned *delays = xcalloc(n_slots + 1, sizeof(*delays));
	struct worker w[MAX_WORKERS];
	pthread_t tid[MAX_WORKERS];
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned nw = cpus < 1 ? 1 : cpus > MAX_WORKERS ? MAX_WORKERS : (unsigned)cpus;
	int err = 0;

	memset(r, 0, sizeof(*r));
	if (dsim_params_check(p, NULL, 0) < 0 || detect_config_check(c, NULL, 0) < 0) {
		free(delays);
		return -EINVAL;
	}
	if (nw > p->hosts)
		nw = p->hosts;
	r->false_by_figure = xcalloc(dsim_n_figures(), sizeof(*r->false_by_figure));
	for (unsigned i = 0; i < nw; i++) {
		w[i] = (struct worker){.c = c, .p = p, .first = i, .stride = nw};
		w[i].t.delays = delays; /* each worker writes its own hosts' slots */
		w[i].t.false_by_figure = xcalloc(dsim_n_figures(), sizeof(uint64_t));
		if (i && pthread_create(&tid[i], NULL, worker_run, &w[i]))
			abort(); /* out of threads: fatal, like out of memory */
	}
	worker_run(&w[0]);
	for (unsigned i = 0; i < nw; i++) {
		if (i)
			pthread_join(tid[i], NULL);
		if (w[i].err)
			err = w[i].err;
		tally_add(r, &w[i].t);
		free(w[i].t.false_by_figure);
	}
	r->host_days = (double)p->hosts * (double)dsim_runs(p) * p->every_s / 86400.0;
	r->runs = (uint64_t)n_slots * dsim_runs(p);
	steps_sum_up(p, delays, p->step != 0 ? n_slots : 0, r);
	free(delays);
	return err;
}

void dsim_result_free(struct dsim_result *r)
{
	if (!r)
		return;
	free(r->false_by_figure);
	r->false_by_figure = NULL;
}
