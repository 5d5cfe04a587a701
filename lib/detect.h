/*
 * detect: regression detection, the pure method (doc/regression.md). A
 * change that comes with a host fingerprint change is judged on the fast
 * path (the k runs since the change against the stretch before it); one
 * without on the slow path, which waits k_sustained runs so that a noisy
 * neighbour's episode passes. Both compare runs with the host's own
 * baseline (a minimum effect, their mean beyond the host's noise scaled for
 * its autocorrelation, every run on the new side, a Mann-Whitney rank test);
 * runs taken under contention are left out (lib/contention.h). Each change
 * is reported once with the fingerprint difference between the two periods,
 * and every flip of the recommendation's verdict is an event. No I/O: the
 * caller reads the history from the store and stores the events.
 */
#ifndef TW_DETECT_H
#define TW_DETECT_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#define DETECT_K_DEFAULT 3             /* runs since a fingerprint change (fast path) */
#define DETECT_K_SUSTAINED_DEFAULT 12  /* runs without one (slow path): 3 days at 6 h */
#define DETECT_MIN_EFFECT_DEFAULT 0.05 /* LKP ignores changes under 5% */
#define DETECT_ALPHA_DEFAULT 0.01
#define DETECT_BASELINE_DEFAULT 30
/* The smallest baseline ever judged; the test may need more (detect_min_baseline). */
#define DETECT_MIN_BASELINE 5
/* ...and no fewer than this many (or detect_baseline_runs if shorter), so
 * that the noise is known before a run is judged against it. */
#define DETECT_MIN_JUDGED 20
/* The mean of the k runs must lie this many standard errors from the
 * baseline median: the baseline's noise (a robust estimate, Rousseeuw and
 * Croux's Qn) scaled for k runs and for the noise's autocorrelation, so
 * that a noisy host needs a larger change before it raises an event... */
#define DETECT_NOISE_Z 6.0
/* ...and each of the k runs this many noise standard deviations, on the
 * same side, so that the change holds in every one of them. */
#define DETECT_RUN_Z 2.0
/* On the slow path, this many of the k_sustained runs may miss DETECT_RUN_Z
 * (on the new side still; never the last): one unlucky run must not hide a
 * change for the k_sustained judgements it is part of. */
#define DETECT_SPARE_RUNS 1
/* On the fast path (right after a fingerprint change, which is when changes
 * come) the mean of the k runs need only lie this many standard errors out,
 * each run on the new side, and three in four of the runs since the change
 * DETECT_SINCE_Z noise standard deviations out. */
#define DETECT_CHANGE_Z 3.0
#define DETECT_SINCE_Z 2.0
/* There the rank test's level is detect_alpha times this (0.05 at the
 * default): three runs against 30 cannot reach 0.01 unless every one lies
 * above nearly every baseline run, which a 10% step at 3% noise often
 * misses; the mean's test at DETECT_CHANGE_Z carries the significance. */
#define DETECT_CHANGE_ALPHA_FACTOR 5.0
/* The autocorrelation assumed is at most this (a baseline of 30 runs
 * cannot tell more). */
#define DETECT_PHI_MAX 0.9
/* The noise and its autocorrelation are estimated over at most this many
 * runs before the k (on the same fingerprint, since the last change). */
#define DETECT_NOISE_RUNS 120
#define DETECT_FEW_RUNS 2.5
#define DETECT_CLIP_Z 4.0
/* The create cost "at" a live-thread count is the median of the threads
 * series' points (buckets) whose x is within this fraction of it: one
 * bucket at 64, about three at 512, ten at 2048 (buckets are up to 64
 * wide), which evens out the noise of single buckets. */
#define DETECT_X_TOLERANCE 0.15

/* The journal's MESSAGE_ID of each kind of event (fixed forever). */
#define DETECT_MESSAGE_ID_STEP "78d06f1af1ac4ee9afec21ee1a5d4526"
#define DETECT_MESSAGE_ID_FLIP "525b027946b3463b8b467d271ec7bd5e"

/* The metric name of verdict flips. */
#define DETECT_VERDICT_METRIC "recommendation.verdict"

struct detect_config {
	unsigned k;             /* runs a change must hold since a fingerprint change */
	unsigned k_sustained;   /* runs a change without one must hold (>= k) */
	double min_effect;      /* relative, 0.05 = 5% */
	double alpha;           /* significance of the rank test */
	unsigned baseline_runs; /* N: the baseline's longest length */
};
void detect_config_default(struct detect_config *c);

/* Checks the ranges and that alpha can be reached at all: the rank test
 * of k runs against N cannot go below detect_p_min(k, N). -EINVAL with a
 * message for a person in err. */
int detect_config_check(const struct detect_config *c, char *err, size_t errlen);

/* The smallest p-value the test can give for k runs against a baseline of
 * n (all k beyond every baseline run). */
double detect_p_min(unsigned k, size_t n);

/* The smallest baseline (at least DETECT_MIN_BASELINE) against which alpha
 * can be reached with k runs, and at least DETECT_MIN_JUDGED runs (or
 * baseline_runs if shorter); 0 when no baseline up to baseline_runs
 * reaches alpha. */
size_t detect_min_baseline(const struct detect_config *c);

/* One run's value of a metric, in measurement (run id) order. */
struct detect_point {
	int64_t run_id;
	int64_t t_ms;
	double value;
	int64_t fp_id; /* the host fingerprint the run was measured on */
	int contended; /* taken under contention (contention_of_run()): left out */
};

/* A fingerprint row's identity (fingerprint_identity()), by id. */
struct detect_fp {
	int64_t id;
	const json_t *identity;
};

/* The history of one metric. It starts where the current baseline may
 * start (after the last recorded event of the metric, or the oldest run);
 * runs with run_id <= after_run_id were judged by an earlier call and are
 * only used as baseline now. */
struct detect_series {
	const char *metric;
	const char *unit;
	double abs_floor;
	const struct detect_point *pts;
	size_t n;
	const struct detect_fp *fps;
	size_t n_fps;
	int64_t after_run_id;
};

/* A verdict of one stored recommendation, in order. */
struct detect_verdict {
	int64_t id;
	int64_t t_ms;
	const char *verdict;    /* "low" | "high" */
	const char *confidence; /* "strong" | "weak" | "none" */
	int64_t fp_id;
};

enum detect_kind { DETECT_STEP, DETECT_FLIP };

/* Which path found a step: the runs since a fingerprint change, or runs
 * that held k_sustained cycles with no change on the host. */
enum detect_path { DETECT_PATH_CHANGE, DETECT_PATH_SUSTAINED };
extern const char *const detect_path_names[]; /* "change", "sustained" */

struct detect_period {
	double median, mad, q1, q3;
	size_t n;
	int64_t from_ms, to_ms;
};

struct detect_event {
	enum detect_kind kind;
	char metric[130];
	char unit[33];
	int64_t t_ms;          /* the change: first run after the baseline, or the new verdict */
	int64_t ref_id;        /* that run's id, or that recommendation's id */
	int64_t detected_ms;   /* the run (or recommendation) that completed the evidence */
	int direction;         /* +1 up, -1 down (steps) */
	enum detect_path path; /* steps */
	struct detect_period before, after;
	double change_pct; /* NAN when the baseline median is 0, and for flips */
	double p;          /* NAN for flips */
	char verdict_before[8], verdict_after[8];
	char confidence_before[8], confidence_after[8];
	char *fp_diff; /* NULL: no fingerprint change; malloc'd */
	char *change; /* the fast path's change: "the kernel upgrade to 6.1.0-21-amd64"; malloc'd */
};

/* Frees the events' texts and the array. */
void detect_events_free(struct detect_event *ev, size_t n);

/* Judges every run of s after s->after_run_id and appends each change found
 * to *ev (a growing array of *n_ev). Runs marked contended are left out, as
 * if not taken, unless they are most of the series (then the host is always
 * busy and its noise says so). Returns the number of new events, or -EINVAL
 * for a bad config or series. */
int detect_scan(const struct detect_config *c, const struct detect_series *s,
                struct detect_event **ev, size_t *n_ev);

/* Appends an event for every recommendation with id > after_id whose
 * verdict differs from the one before it. Returns the number of new events
 * or -EINVAL. */
int detect_flips(const struct detect_verdict *v, size_t n, int64_t after_id,
                 const struct detect_fp *fps, size_t n_fps, struct detect_event **ev, size_t *n_ev);

/* The event as the API shows it:
 * {"kind": "step"|"flip", "metric", "unit", "t_ms", "at", "detected_ms",
 *  "detected_at", "run_id" | "recommendation_id", "direction": "up"|"down"|null,
 *  "path": "change"|"sustained"|null (flips), "headline": "after the kernel
 *  upgrade to 6.18.44: ctxsw.high_ns +12.0%" | "sustained for 3 days with no
 *  change on the host: ctxsw.high_ns +11.0%" (flips: the verdict's change),
 *  "before": {"median", "mad", "iqr": [q1, q3], "n", "from_ms", "to_ms"}
 *            (flips: {"verdict", "confidence"}), "after": the same,
 *  "change_pct", "p_value" (null for flips), "fingerprint_changed": bool,
 *  "fingerprint_diff": "kernel a → b" | "no fingerprint change",
 *  "message": one sentence}. New reference. */
json_t *detect_event_json(const struct detect_event *e);

/* The sentence for a person (the journal line): the headline, then the
 * figures. malloc'd. */
char *detect_event_text(const struct detect_event *e);

/* The headline alone, malloc'd. */
char *detect_event_headline(const struct detect_event *e);

#endif
