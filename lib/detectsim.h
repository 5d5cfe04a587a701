/*
 * detectsim: a fleet of simulated hosts for regression detection. Every key
 * figure of every host gets a seeded history under a noise model (Gaussian,
 * autocorrelated, two modes, noisy-neighbour episodes, a share of which
 * the host's contention readings show), optionally with a true step on every
 * figure, with or without a fingerprint change, and the real detect_scan()
 * judges it; the result counts false events per host-day and how many steps
 * each path found and how soon (doc/regression.md). No I/O.
 */
#ifndef TW_DETECTSIM_H
#define TW_DETECTSIM_H

#include <stddef.h>
#include <stdint.h>

#include "catalog.h"
#include "detect.h"

enum dsim_noise { DSIM_IID, DSIM_AR1, DSIM_BIMODAL, DSIM_EPISODIC };

/* The share of noisy-neighbour episodes the contention readings show by
 * default: a neighbour on the same CPUs shows as steal or load, one that
 * competes for caches or memory bandwidth on other cores does not. */
#define DSIM_EPISODE_VISIBLE_DEFAULT 0.5

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
	/* the share of episodes the contention readings show (steal, load):
	 * their runs are marked contended */
	double episode_visible;
	double step;     /* relative step on every figure; 0: none */
	double step_day; /* when it comes (days from the start) */
	int fp_change;   /* every step comes with a fingerprint change */
	double fp_share; /* the share of hosts whose step comes with one */
	/* a step counts as found in time when the run that completes the
	 * evidence comes at most this many cycles after the first run that
	 * shows it (the delay: 0 when that run itself completes it): within
	 * for steps with no fingerprint change, within_change for those with */
	unsigned within, within_change;
};

/* The defaults of `threadwatch detect-sim`. */
void dsim_params_default(struct dsim_params *p);

/* Checks ranges and that the step (if any) falls inside the history, with
 * a baseline before it. -EINVAL with a message for a person in err. */
int dsim_params_check(const struct dsim_params *p, char *err, size_t errlen);

/* Cycles in the history and the cycle of the step (SIZE_MAX: none). */
size_t dsim_runs(const struct dsim_params *p);
size_t dsim_step_at(const struct dsim_params *p);

/* Whether host h's step comes with a fingerprint change. */
int dsim_host_fp_change(const struct dsim_params *p, unsigned h);

/* The steps of one kind: with a fingerprint change (judged on the fast
 * path, DETECT_PATH_CHANGE) or without (DETECT_PATH_SUSTAINED). */
struct dsim_steps {
	uint64_t steps, detected, in_time;
	uint64_t by_path[2];        /* found by each path */
	double median_delay_cycles; /* of the steps found; NAN when none was */
	unsigned max_delay_cycles;
};

struct dsim_result {
	double host_days;
	uint64_t runs;           /* judged runs, every figure of every host */
	uint64_t contended_runs; /* of them, marked contended */
	uint64_t false_events;
	uint64_t *false_by_figure; /* dsim_n_figures() counts; malloc'd */
	/* both kinds together, and each (indexed by enum detect_path) */
	uint64_t steps, detected_steps, detected_in_time;
	double median_delay_cycles;
	unsigned max_delay_cycles;
	struct dsim_steps kind[2];
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
