/*
 * cli_detect_sim: `threadwatch detect-sim`, regression detection at the
 * config's defaults judged on a simulated fleet (lib/detectsim.c): false
 * events per 1,000 host-days over every key figure, and how many true steps
 * were found and how soon. Every detection figure in doc/regression.md
 * comes from a command of this.
 */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli.h"
#include "clock.h"
#include "detect.h"
#include "detectsim.h"
#include "opt.h"

#define CMD "threadwatch detect-sim"

struct sim_args {
	struct dsim_params p;
	struct detect_config c;
	int json, help, phi_given;
};

static int set_noise(void *field, const char *v, char *why, size_t wlen)
{
	(void)why, (void)wlen;
	for (size_t i = 0; i < dsim_n_noises; i++)
		if (!strcmp(v, dsim_noise_names[i])) {
			*(enum dsim_noise *)field = (enum dsim_noise)i;
			return 0;
		}
	return -EINVAL;
}

/* --phi, noted as given: ar1 has another default (off 0: the whole args). */
static int set_phi(void *ctx, const char *v, char *why, size_t wlen)
{
	struct sim_args *a = ctx;

	a->phi_given = 1;
	return opt_set_real(&a->p.phi, v, why, wlen);
}

/* The options: the parser and the usage text (the ranges: dsim_params_check
 * and detect_config_check). */
static const struct opt sim_opts[] = {
#define P(f) offsetof(struct sim_args, p.f)
#define C(f) offsetof(struct sim_args, c.f)
    {"hosts", 0, "N", "hosts simulated (default 1000)", opt_set_uint, P(hosts)},
    {"days", 0, "D", "days of history per host (default 90)", opt_set_uint, P(days)},
    {"every", 0, "DURATION",
     "time between cycles: 6h, 90m, 1d, or seconds (default 6h: 4 cycles a day)", opt_set_duration,
     P(every_s)},
    {"seed", 0, "N", "the simulation's seed (default 1)", opt_set_u64, P(seed)},
    {"noise", 0, "MODEL",
     "iid | ar1 | bimodal | episodic (default iid); each adds to Gaussian noise of --cv", set_noise,
     P(noise)},
    {"cv", 0, "X",
     "the Gaussian noise's standard deviation, relative: "
     "0.05 or 5% (default 2%)",
     opt_set_real, P(cv)},
    {"phi", 0, "X",
     "its lag-1 autocorrelation, AR(1), in every model (default 0.5 for ar1, else 0)", set_phi, 0},
    {"mode-gap", 0, "X", "bimodal: how much slower the slow mode is (10%)", opt_set_real,
     P(mode_gap)},
    {"mode-p", 0, "X", "bimodal: share of cycles in the slow mode (30%)", opt_set_real, P(mode_p)},
    {"episode-cycles", 0, "K", "episodic: cycles a noisy neighbour's episode lasts (4)",
     opt_set_uint, P(episode_cycles)},
    {"episode-rate", 0, "X", "episodic: share of cycles that start an episode (2%)", opt_set_real,
     P(episode_rate)},
    {"episode-size", 0, "X",
     "episodic: mean slow-down of every figure in an episode, uniform from half to "
     "1.5 times it (10%: 5-15%)",
     opt_set_real, P(episode_size)},
    {"episode-visible", 0, "X",
     "episodic: share of episodes the host's contention readings (steal, load) show, "
     "whose runs detection leaves out (50%)",
     opt_set_real, P(episode_visible)},
    {"step", 0, "X",
     "a true change of every key figure of every host: "
     "0.10 or 10%, negative for faster (default none)",
     opt_set_real, P(step)},
    {"step-day", 0, "D", "the day the step comes (default 60)", opt_set_real, P(step_day)},
    {"with-fingerprint-change", 0, NULL,
     "every step comes with a new kernel (a host fingerprint change)", NULL, P(fp_change)},
    {"fingerprint-change-share", 0, "X",
     "the share of hosts whose step comes with a new kernel (default 0)", opt_set_real,
     P(fp_share)},
    {"within", 0, "K",
     "a step with no fingerprint change counts as found in time within K cycles (16)", opt_set_uint,
     P(within)},
    {"within-change", 0, "K",
     "a step with a fingerprint change counts as found in time within K cycles (2)", opt_set_uint,
     P(within_change)},
    {"detect-k", 0, "K", "the config key detect_k, to see what another setting would do",
     opt_set_uint, C(k)},
    {"detect-k-sustained", 0, "K", "the config key detect_k_sustained", opt_set_uint,
     C(k_sustained)},
    {"detect-min-effect", 0, "X", "the config key detect_min_effect", opt_set_real, C(min_effect)},
    {"detect-alpha", 0, "X", "the config key detect_alpha", opt_set_real, C(alpha)},
    {"detect-baseline-runs", 0, "N", "the config key detect_baseline_runs", opt_set_uint,
     C(baseline_runs)},
    {"json", 0, NULL, "print one JSON object", NULL, offsetof(struct sim_args, json)},
    {"help", 'h', NULL, "show this help", NULL, offsetof(struct sim_args, help)},
#undef C
#undef P
};

#define N_OPTS (sizeof(sim_opts) / sizeof(sim_opts[0]))

static void usage(FILE *f)
{
	fprintf(f, "usage: " CMD " [OPTIONS]\n\n" CLI_SUMMARY_DETECT_SIM "\n"
	           "It judges simulated histories of every key figure of every host with the\n"
	           "daemon's regression detection at the config's defaults and reports false\n"
	           "events per 1,000 host-days and the steps found (doc/regression.md).\n\n"
	           "Options:\n");
	opt_usage(f, sim_opts, N_OPTS);
}

/* The options, and no operand; -EINVAL with a message on stderr. */
static int parse_args(int argc, char **argv, struct sim_args *a)
{
	char err[256];
	int first = opt_parse(argc, argv, sim_opts, N_OPTS, a, err, sizeof(err));

	if (first < 0) {
		fprintf(stderr, CMD ": %s\n", err);
		return -EINVAL;
	}
	if (first < argc) {
		fprintf(stderr, CMD ": unexpected argument \"%s\"\n", argv[first]);
		return -EINVAL;
	}
	if (!a->phi_given && a->p.noise == DSIM_AR1)
		a->p.phi = 0.5;
	return 0;
}

static double per_1000(const struct dsim_result *r)
{
	return r->host_days > 0 ? (double)r->false_events / r->host_days * 1000 : NAN;
}

/* One-sided 95% upper bound of a Poisson mean seen as x (Wilson-Hilferty). */
static double poisson_upper95(uint64_t x)
{
	double n = (double)x + 1, z = 1.6449;

	return n * pow(1 - 1 / (9 * n) + z / (3 * sqrt(n)), 3);
}

static json_t *jreal(double d)
{
	return isfinite(d) ? json_real(d) : json_null();
}

/* The steps of one kind: {"steps", "detected", "in_time", "within_cycles",
 * "median_delay_cycles", "max_delay_cycles", "by_path": {"change", "sustained"}}. */
static json_t *kind_json(const struct dsim_steps *k, unsigned within)
{
	return json_pack(
	    "{s:I, s:I, s:I, s:I, s:o, s:I, s:{s:I, s:I}}", "steps", (json_int_t)k->steps,
	    "detected", (json_int_t)k->detected, "in_time", (json_int_t)k->in_time, "within_cycles",
	    (json_int_t)within, "median_delay_cycles", jreal(k->median_delay_cycles),
	    "max_delay_cycles", (json_int_t)k->max_delay_cycles, "by_path",
	    detect_path_names[DETECT_PATH_CHANGE], (json_int_t)k->by_path[DETECT_PATH_CHANGE],
	    detect_path_names[DETECT_PATH_SUSTAINED],
	    (json_int_t)k->by_path[DETECT_PATH_SUSTAINED]);
}

static json_t *simulation_json(const struct dsim_params *p)
{
	return json_pack(
	    "{s:I, s:I, s:f, s:I, s:s, s:f, s:f, s:f, s:f, s:I, s:f, s:f, s:f, s:f, "
	    "s:f, s:b, s:f}",
	    "hosts", (json_int_t)p->hosts, "days", (json_int_t)p->days, "every_s", p->every_s,
	    "seed", (json_int_t)p->seed, "noise", dsim_noise_names[p->noise], "cv", p->cv, "phi",
	    p->phi, "mode_gap", p->mode_gap, "mode_p", p->mode_p, "episode_cycles",
	    (json_int_t)p->episode_cycles, "episode_rate", p->episode_rate, "episode_size",
	    p->episode_size, "episode_visible", p->episode_visible, "step", p->step, "step_day",
	    p->step_day, "with_fingerprint_change", p->fp_change, "fingerprint_change_share",
	    p->fp_change ? 1.0 : p->fp_share);
}

static void print_json(const struct sim_args *a, const struct detect_config *c,
                       const struct dsim_result *r)
{
	const struct dsim_params *p = &a->p;
	json_t *by = json_object(), *j;

	for (size_t k = 0; k < dsim_n_figures(); k++)
		json_object_set_new(by, dsim_figure(k)->name,
		                    json_integer((json_int_t)r->false_by_figure[k]));
	j = json_pack("{s:f, s:I, s:I, s:I, s:o, s:I, s:I, s:o, s:I, s:I, s:I, s:I, s:o, s:I, s:o,"
	              " s:{s:o, s:o}, s:o, s:{s:I, s:I, s:f, s:f, s:I}}",
	              "host_days", r->host_days, "runs", (json_int_t)r->runs, "contended_runs",
	              (json_int_t)r->contended_runs, "false_events", (json_int_t)r->false_events,
	              "false_per_1000_host_days", jreal(per_1000(r)), "steps", (json_int_t)r->steps,
	              "detected_steps", (json_int_t)r->detected_steps, "median_delay_cycles",
	              jreal(r->median_delay_cycles), "max_delay_cycles",
	              (json_int_t)r->max_delay_cycles, "within_cycles", (json_int_t)p->within,
	              "within_change_cycles", (json_int_t)p->within_change, "detected_in_time",
	              (json_int_t)r->detected_in_time, "false_per_1000_host_days_upper95",
	              jreal(poisson_upper95(r->false_events) / r->host_days * 1000), "figures",
	              (json_int_t)dsim_n_figures(), "false_by_figure", by, "paths",
	              detect_path_names[DETECT_PATH_CHANGE],
	              kind_json(&r->kind[DETECT_PATH_CHANGE], p->within_change),
	              detect_path_names[DETECT_PATH_SUSTAINED],
	              kind_json(&r->kind[DETECT_PATH_SUSTAINED], p->within), "simulation",
	              simulation_json(p), "detect", "k", (json_int_t)c->k, "k_sustained",
	              (json_int_t)c->k_sustained, "min_effect", c->min_effect, "alpha", c->alpha,
	              "baseline_runs", (json_int_t)c->baseline_runs);
	if (!j)
		abort(); /* out of memory or a bad format, both fatal */
	json_dumpf(j, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	putchar('\n');
	json_decref(j);
}

static void print_noise(const struct dsim_params *p)
{
	printf("noise: %s, Gaussian CV %g%%", dsim_noise_names[p->noise], p->cv * 100);
	if (p->phi > 0)
		printf(", AR(1) phi %g", p->phi);
	if (p->noise == DSIM_BIMODAL)
		printf(", %g%% of cycles in a mode %g%% slower", p->mode_p * 100,
		       p->mode_gap * 100);
	if (p->noise == DSIM_EPISODIC)
		printf(", %g%% of cycles start a %u-cycle episode slowing every figure by "
		       "%g-%g%%, %g%% of them seen as contention",
		       p->episode_rate * 100, p->episode_cycles, p->episode_size * 50,
		       p->episode_size * 150, p->episode_visible * 100);
	printf("\n");
}

/* One line for the steps of one kind. */
static void print_kind(const struct dsim_params *p, const struct dsim_steps *k,
                       enum detect_path kind)
{
	const char *what = kind == DETECT_PATH_CHANGE ? "with a kernel change" : "with no change";
	const unsigned within = kind == DETECT_PATH_CHANGE ? p->within_change : p->within;

	if (!k->steps)
		return;
	if (!k->detected) {
		printf("steps of %+g%% on day %g %s: none of %llu found\n", p->step * 100,
		       p->step_day, what, (unsigned long long)k->steps);
		return;
	}
	printf("steps of %+g%% on day %g %s: %llu of %llu found (%.2f%%), %llu (%.2f%%) "
	       "within %u cycles; delay median %g, at most %u cycles; found by the %s path %llu, "
	       "the %s path %llu\n",
	       p->step * 100, p->step_day, what, (unsigned long long)k->detected,
	       (unsigned long long)k->steps, 100.0 * (double)k->detected / (double)k->steps,
	       (unsigned long long)k->in_time, 100.0 * (double)k->in_time / (double)k->steps,
	       within, k->median_delay_cycles, k->max_delay_cycles,
	       detect_path_names[DETECT_PATH_CHANGE],
	       (unsigned long long)k->by_path[DETECT_PATH_CHANGE],
	       detect_path_names[DETECT_PATH_SUSTAINED],
	       (unsigned long long)k->by_path[DETECT_PATH_SUSTAINED]);
}

static void print_text(const struct sim_args *a, const struct detect_config *c,
                       const struct dsim_result *r, double seconds)
{
	const struct dsim_params *p = &a->p;

	printf("%u hosts x %u days, a cycle every %gs (%zu cycles), %zu key figures, seed %llu\n",
	       p->hosts, p->days, p->every_s, dsim_runs(p), dsim_n_figures(),
	       (unsigned long long)p->seed);
	print_noise(p);
	printf("detection: detect_k %u, detect_k_sustained %u, detect_min_effect %g, "
	       "detect_alpha %g, detect_baseline_runs %u\n",
	       c->k, c->k_sustained, c->min_effect, c->alpha, c->baseline_runs);
	if (r->contended_runs)
		printf("runs marked contended: %llu of %llu (%.2f%%)\n",
		       (unsigned long long)r->contended_runs, (unsigned long long)r->runs,
		       100.0 * (double)r->contended_runs / (double)r->runs);
	printf("false events: %llu in %.0f host-days: %.3f per 1,000 host-days "
	       "(95%% upper bound %.3f)\n",
	       (unsigned long long)r->false_events, r->host_days, per_1000(r),
	       poisson_upper95(r->false_events) / r->host_days * 1000);
	for (size_t k = 0; k < dsim_n_figures(); k++)
		if (r->false_by_figure[k])
			printf("  %-32s %llu\n", dsim_figure(k)->name,
			       (unsigned long long)r->false_by_figure[k]);
	for (int k = 0; k < 2; k++)
		print_kind(p, &r->kind[k], (enum detect_path)k);
	printf("judged %llu runs in %.1f s\n", (unsigned long long)r->runs, seconds);
}

int cli_detect_sim(int argc, char **argv)
{
	struct sim_args a = {0};
	struct dsim_result r;
	double t0;
	char err[256];
	int rc;

	dsim_params_default(&a.p);
	detect_config_default(&a.c);
	if (parse_args(argc, argv, &a) < 0) {
		opt_try_help(stderr, CMD);
		return 2;
	}
	if (a.help) {
		usage(stdout);
		return 0;
	}
	if (dsim_params_check(&a.p, err, sizeof(err)) < 0) {
		fprintf(stderr, CMD ": %s\n", err);
		return 2;
	}
	if (detect_config_check(&a.c, err, sizeof(err)) < 0) {
		fprintf(stderr, CMD ": %s\n", err);
		return 2;
	}
	t0 = clock_mono_s();
	rc = dsim_run(&a.c, &a.p, &r);
	if (rc < 0) {
		fprintf(stderr, CMD ": the simulation failed: %s\n", strerror(-rc));
		dsim_result_free(&r);
		return 1;
	}
	if (a.json)
		print_json(&a, &a.c, &r);
	else
		print_text(&a, &a.c, &r, clock_mono_s() - t0);
	dsim_result_free(&r);
	return 0;
}
