/*
 * detectsim: a fleet of simulated hosts for regression detection. Every key
 * figure of every host gets a seeded history under a noise model (Gaussian,
 * autocorrelated, two modes, noisy-neighbour episodes), optionally with a
 * true step on every figure, and the real detect_scan() judges it; the
 * result counts false events per host-day and how soon the steps were found
 * (doc/regression.md). No I/O.
 */
#ifndef TW_DETECTSIM_H
#define TW_DETECTSIM_H

#include <stddef.h>
#include <stdint.h>

#include "catalog.h"
#include "detect.h"

enum dsim_noise { DSIM_IID, DSIM_AR1, DSIM_BIMODAL, DSIM_EPISODIC };

/* The noise models' names, indexed by enum dsim_noise. */
extern const char *const dsim_noise_names[];
extern const size_t dsim_n_noises;

struct dsim_params {
	unsigned hosts, days;
	double every_s; /* seconds between cycles */
	uint64_t seed;
	enum dsim_noise noise;
	double cv;  /* the Gaussian part's standard deviation, relative */
	double phi; /* its lag-1 autocorrelation (AR(1)); 0: independent */
	/* bimodal: a cycle runs in the slow mode with probability mode_p,
	 * mode_gap slower */
	double mode_gap, mode_p;
	/* episodic: a cycle starts an episode with probability episode_rate;
	 * it lasts episode_cycles and slows every figure of the host by a
	 * uniform 0.5..1.5 x episode_size */
	unsigned episode_cycles;
	double episode_rate, episode_size;
	double step;     /* relative step on every figure; 0: none */
	double step_day; /* when it comes (days from the start) */
	int fp_change;   /* the step comes with a fingerprint change */
	/* a step counts as found in time when the run that completes the
	 * evidence comes at most this many cycles after the first run that
	 * shows it (the delay: 0 when that run itself completes it) */
	unsigned within;
};

/* The defaults of `threadwatch detect-sim`. */
void dsim_params_default(struct dsim_params *p);

/* Checks ranges and that the step (if any) falls inside the history, with
 * a baseline before it. -EINVAL with a message for a person in err. */
int dsim_params_check(const struct dsim_params *p, char *err, size_t errlen);

/* Cycles in the history and the cycle of the step (SIZE_MAX: none). */
size_t dsim_runs(const struct dsim_params *p);
size_t dsim_step_at(const struct dsim_params *p);

struct dsim_result {
	double host_days;
	uint64_t runs; /* judged runs, every figure of every host */
	uint64_t false_events;
	uint64_t *false_by_figure; /* dsim_n_figures() counts; malloc'd */
	uint64_t steps, detected_steps, detected_in_time;
	double median_delay_cycles; /* of the steps found; NAN when none was */
	unsigned max_delay_cycles;
};

/* Simulates p->hosts hosts and judges each of their key figures with
 * detect_scan() under c. 0 or -EINVAL (bad parameters or config). */
int dsim_run(const struct detect_config *c, const struct dsim_params *p, struct dsim_result *r);

void dsim_result_free(struct dsim_result *r);

/* The key figures the daemon watches: the catalogue's rows marked as key
 * figures (lib/catalog.c), in its order; figure k of a host is the k-th. */
size_t dsim_n_figures(void);
const struct catalog_metric *dsim_figure(size_t k);

#endif
