/*
 * detect: regression detection, the pure method (doc/regression.md). Compares
 * the last k runs of one key figure with the host's own baseline (a minimum
 * effect, their mean beyond the host's noise scaled for its autocorrelation,
 * every run on the new side, a Mann-Whitney rank test), reports each change once with the
 * fingerprint difference between the two periods, and turns every flip of the recommendation's
 * verdict into an event. No I/O: the caller reads the history from the
 * store and stores the events.
 */
#ifndef TW_DETECT_H
#define TW_DETECT_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#define DETECT_K_DEFAULT 5
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
	unsigned k;             /* consecutive runs a change must hold */
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

struct detect_period {
	double median, mad, q1, q3;
	size_t n;
	int64_t from_ms, to_ms;
};

struct detect_event {
	enum detect_kind kind;
	char metric[130];
	char unit[33];
	int64_t t_ms;        /* the change: first run after the baseline, or the new verdict */
	int64_t ref_id;      /* that run's id, or that recommendation's id */
	int64_t detected_ms; /* the run (or recommendation) that completed the evidence */
	int direction;       /* +1 up, -1 down (steps) */
	struct detect_period before, after;
	double change_pct; /* NAN when the baseline median is 0, and for flips */
	double p;          /* NAN for flips */
	char verdict_before[8], verdict_after[8];
	char confidence_before[8], confidence_after[8];
	char *fp_diff; /* NULL: no fingerprint change; malloc'd */
};

/* Frees the events' texts and the array. */
void detect_events_free(struct detect_event *ev, size_t n);

/* Judges every run of s after s->after_run_id as the last of k and appends
 * each change found to *ev (a growing array of *n_ev). Returns the number
 * of new events, or -EINVAL for a bad config or series. */
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
 *  "before": {"median", "mad", "iqr": [q1, q3], "n", "from_ms", "to_ms"}
 *            (flips: {"verdict", "confidence"}), "after": the same,
 *  "change_pct", "p_value" (null for flips), "fingerprint_changed": bool,
 *  "fingerprint_diff": "kernel a → b" | "no fingerprint change",
 *  "message": one sentence}. New reference. */
json_t *detect_event_json(const struct detect_event *e);

/* The sentence for a person (the journal line), malloc'd. */
char *detect_event_text(const struct detect_event *e);

#endif
