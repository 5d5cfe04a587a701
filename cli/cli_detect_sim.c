/*
 * cli_detect_sim: `threadwatch detect-sim`, regression detection at the
 * config's defaults judged on a simulated fleet (lib/detectsim.c): false
 * events per 1,000 host-days over every key figure, and how many true steps
 * were found and how soon. Every detection figure in doc/regression.md and
 * the README comes from a command of this.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "cli.h"
#include "detect.h"
#include "detectsim.h"

#define CMD "threadwatch detect-sim"

struct sim_args {
	struct dsim_params p;
	struct detect_config c;
	int json, help, phi_given;
};

enum opt_type { O_UINT, O_SEED, O_REAL, O_DURATION, O_NOISE, O_FLAG };

/* The options: the parser, the usage text and the checks. */
static const struct sim_opt {
	const char *name;
	const char *arg; /* NULL: a flag */
	enum opt_type type;
	size_t off; /* in struct sim_args */
	const char *help;
} sim_opts[] = {
#define P(f) offsetof(struct sim_args, p.f)
    {"hosts", "N", O_UINT, P(hosts), "hosts simulated (default 1000)"},
    {"days", "D", O_UINT, P(days), "days of history per host (default 90)"},
    {"every", "DURATION", O_DURATION, P(every_s),
     "time between cycles: 6h, 90m, 1d, or seconds (default 6h: 4 cycles a day)"},
    {"seed", "N", O_SEED, P(seed), "the simulation's seed (default 1)"},
    {"noise", "MODEL", O_NOISE, P(noise),
     "iid | ar1 | bimodal | episodic (default iid); each adds to Gaussian noise of --cv"},
    {"cv", "X", O_REAL, P(cv),
     "the Gaussian noise's standard deviation, relative: "
     "0.05 or 5% (default 2%)"},
    {"phi", "X", O_REAL, P(phi),
     "its lag-1 autocorrelation, AR(1), in every model (default 0.5 for ar1, else 0)"},
    {"mode-gap", "X", O_REAL, P(mode_gap), "bimodal: how much slower the slow mode is (10%)"},
    {"mode-p", "X", O_REAL, P(mode_p), "bimodal: share of cycles in the slow mode (30%)"},
    {"episode-cycles", "K", O_UINT, P(episode_cycles),
     "episodic: cycles a noisy neighbour's episode lasts (4)"},
    {"episode-rate", "X", O_REAL, P(episode_rate),
     "episodic: share of cycles that start an episode (2%)"},
    {"episode-size", "X", O_REAL, P(episode_size),
     "episodic: mean slow-down of every figure in an episode, uniform from half to "
     "1.5 times it (10%: 5-15%)"},
    {"step", "X", O_REAL, P(step),
     "a true change of every key figure of every host: "
     "0.10 or 10%, negative for faster (default none)"},
    {"step-day", "D", O_REAL, P(step_day), "the day the step comes (default 60)"},
    {"with-fingerprint-change", NULL, O_FLAG, P(fp_change),
     "the step comes with a new kernel (a host fingerprint change)"},
    {"within", "K", O_UINT, P(within), "a step counts as found in time within K cycles (4)"},
    {"detect-k", "K", O_UINT, offsetof(struct sim_args, c.k),
     "the config key detect_k, to see what another setting would do"},
    {"detect-min-effect", "X", O_REAL, offsetof(struct sim_args, c.min_effect),
     "the config key detect_min_effect"},
    {"detect-alpha", "X", O_REAL, offsetof(struct sim_args, c.alpha),
     "the config key detect_alpha"},
    {"detect-baseline-runs", "N", O_UINT, offsetof(struct sim_args, c.baseline_runs),
     "the config key detect_baseline_runs"},
    {"json", NULL, O_FLAG, offsetof(struct sim_args, json), "print one JSON object"},
    {"help", NULL, O_FLAG, offsetof(struct sim_args, help), "show this help"},
#undef P
};

#define N_OPTS (sizeof(sim_opts) / sizeof(sim_opts[0]))

static void usage(FILE *f)
{
	fprintf(f, "usage: " CMD " [OPTIONS]\n\n"
	           "Judges simulated histories of every key figure of every host with the\n"
	           "daemon's regression detection at the config's defaults and reports false\n"
	           "events per 1,000 host-days and the steps found (doc/regression.md).\n\n"
	           "Options:\n");
	for (size_t i = 0; i < N_OPTS; i++) {
		char left[48];

		snprintf(left, sizeof(left), "--%s%s%s", sim_opts[i].name,
		         sim_opts[i].arg ? " " : "", sim_opts[i].arg ? sim_opts[i].arg : "");
		fprintf(f, "  %-26s %s\n", left, sim_opts[i].help);
	}
}

/* 6h, 90m, 1d, 30s or plain seconds. */
static int parse_duration(const char *v, double *out)
{
	static const struct {
		char suffix;
		double seconds;
	} units[] = {{'s', 1}, {'m', 60}, {'h', 3600}, {'d', 86400}};
	char *end;
	double d;

	if (*v < '0' || *v > '9')
		return -EINVAL;
	d = strtod(v, &end);
	for (size_t i = 0; *end && i < sizeof(units) / sizeof(units[0]); i++)
		if (end[0] == units[i].suffix && !end[1]) {
			d *= units[i].seconds;
			end++;
		}
	if (*end || !isfinite(d))
		return -EINVAL;
	*out = d;
	return 0;
}

/* A number, or a percentage with a trailing %. */
static int parse_real(const char *v, double *out)
{
	char *end;
	double d;

	errno = 0;
	d = strtod(v, &end);
	if (end == v || errno)
		return -EINVAL;
	if (*end == '%') {
		d /= 100;
		end++;
	}
	if (*end || !isfinite(d))
		return -EINVAL;
	*out = d;
	return 0;
}

static int parse_uint(const char *v, unsigned long long max, unsigned long long *out)
{
	char *end;

	if (*v < '0' || *v > '9')
		return -EINVAL;
	errno = 0;
	*out = strtoull(v, &end, 10);
	return errno || *end || *out > max ? -EINVAL : 0;
}

static int set_opt(struct sim_args *a, const struct sim_opt *o, const char *v)
{
	char *field = (char *)a + o->off;
	unsigned long long u;

	switch (o->type) {
	case O_UINT:
		if (parse_uint(v, 4000000000ULL, &u) < 0)
			return -EINVAL;
		*(unsigned *)field = (unsigned)u;
		return 0;
	case O_SEED:
		if (parse_uint(v, UINT64_MAX, &u) < 0)
			return -EINVAL;
		*(uint64_t *)field = u;
		return 0;
	case O_REAL:
		a->phi_given |= o->off == offsetof(struct sim_args, p.phi);
		return parse_real(v, (double *)field);
	case O_DURATION:
		return parse_duration(v, (double *)field);
	case O_NOISE:
		for (size_t i = 0; i < dsim_n_noises; i++)
			if (!strcmp(v, dsim_noise_names[i])) {
				*(enum dsim_noise *)field = (enum dsim_noise)i;
				return 0;
			}
		return -EINVAL;
	case O_FLAG:
		*(int *)field = 1;
		return 0;
	}
	return -EINVAL;
}

/* getopt_long over the table; -EINVAL with a message on stderr. */
static int parse_args(int argc, char **argv, struct sim_args *a)
{
	struct option lo[N_OPTS + 1];
	int c;

	for (size_t i = 0; i < N_OPTS; i++)
		lo[i] = (struct option){sim_opts[i].name,
		                        sim_opts[i].arg ? required_argument : no_argument, NULL,
		                        (int)i + 256};
	memset(&lo[N_OPTS], 0, sizeof(lo[N_OPTS]));
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":", lo, NULL)) != -1) {
		const struct sim_opt *o;

		if (c == ':') {
			fprintf(stderr, CMD ": %s needs a value\n", argv[optind - 1]);
			return -EINVAL;
		}
		if (c < 256) {
			fprintf(stderr, CMD ": unknown option \"%s\" (see --help)\n",
			        argv[optind - 1]);
			return -EINVAL;
		}
		o = &sim_opts[c - 256];
		if (set_opt(a, o, optarg) < 0) {
			fprintf(stderr, CMD ": invalid value \"%s\" for --%s: %s\n", optarg,
			        o->name, o->help);
			return -EINVAL;
		}
	}
	if (optind < argc) {
		fprintf(stderr, CMD ": unexpected argument \"%s\"\n", argv[optind]);
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

static void print_json(const struct sim_args *a, const struct detect_config *c,
                       const struct dsim_result *r)
{
	const struct dsim_params *p = &a->p;
	json_t *by = json_object(), *j;

	for (size_t k = 0; k < dsim_n_figures(); k++)
		json_object_set_new(by, dsim_figure(k)->name,
		                    json_integer((json_int_t)r->false_by_figure[k]));
	j = json_pack(
	    "{s:f, s:I, s:o, s:I, s:I, s:o, s:I, s:I, s:I, s:o, s:I, s:o,"
	    " s:{s:I, s:I, s:f, s:I, s:s, s:f, s:f, s:f, s:f, s:I, s:f, s:f, s:f, s:f, s:b},"
	    " s:{s:I, s:f, s:f, s:I}}",
	    "host_days", r->host_days, "false_events", (json_int_t)r->false_events,
	    "false_per_1000_host_days", jreal(per_1000(r)), "steps", (json_int_t)r->steps,
	    "detected_steps", (json_int_t)r->detected_steps, "median_delay_cycles",
	    jreal(r->median_delay_cycles), "max_delay_cycles", (json_int_t)r->max_delay_cycles,
	    "within_cycles", (json_int_t)p->within, "detected_in_time",
	    (json_int_t)r->detected_in_time, "false_per_1000_host_days_upper95",
	    jreal(poisson_upper95(r->false_events) / r->host_days * 1000), "figures",
	    (json_int_t)dsim_n_figures(), "false_by_figure", by, "simulation", "hosts",
	    (json_int_t)p->hosts, "days", (json_int_t)p->days, "every_s", p->every_s, "seed",
	    (json_int_t)p->seed, "noise", dsim_noise_names[p->noise], "cv", p->cv, "phi", p->phi,
	    "mode_gap", p->mode_gap, "mode_p", p->mode_p, "episode_cycles",
	    (json_int_t)p->episode_cycles, "episode_rate", p->episode_rate, "episode_size",
	    p->episode_size, "step", p->step, "step_day", p->step_day, "with_fingerprint_change",
	    p->fp_change, "detect", "k", (json_int_t)c->k, "min_effect", c->min_effect, "alpha",
	    c->alpha, "baseline_runs", (json_int_t)c->baseline_runs);
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
		       "%g-%g%%",
		       p->episode_rate * 100, p->episode_cycles, p->episode_size * 50,
		       p->episode_size * 150);
	printf("\n");
}

static void print_text(const struct sim_args *a, const struct detect_config *c,
                       const struct dsim_result *r, double seconds)
{
	const struct dsim_params *p = &a->p;

	printf("%u hosts x %u days, a cycle every %gs (%zu cycles), %zu key figures, seed %llu\n",
	       p->hosts, p->days, p->every_s, dsim_runs(p), dsim_n_figures(),
	       (unsigned long long)p->seed);
	print_noise(p);
	printf("detection: detect_k %u, detect_min_effect %g, detect_alpha %g, "
	       "detect_baseline_runs %u\n",
	       c->k, c->min_effect, c->alpha, c->baseline_runs);
	printf("false events: %llu in %.0f host-days: %.3f per 1,000 host-days "
	       "(95%% upper bound %.3f)\n",
	       (unsigned long long)r->false_events, r->host_days, per_1000(r),
	       poisson_upper95(r->false_events) / r->host_days * 1000);
	for (size_t k = 0; k < dsim_n_figures(); k++)
		if (r->false_by_figure[k])
			printf("  %-32s %llu\n", dsim_figure(k)->name,
			       (unsigned long long)r->false_by_figure[k]);
	if (r->steps && !r->detected_steps)
		printf("steps of %+g%% on day %g: none of %llu found\n", p->step * 100, p->step_day,
		       (unsigned long long)r->steps);
	else if (r->steps)
		printf("steps of %+g%% on day %g%s: %llu of %llu found (%.1f%%), %llu (%.1f%%) "
		       "within %u cycles; delay median %g, at most %u cycles\n",
		       p->step * 100, p->step_day, p->fp_change ? " with a kernel change" : "",
		       (unsigned long long)r->detected_steps, (unsigned long long)r->steps,
		       100.0 * (double)r->detected_steps / (double)r->steps,
		       (unsigned long long)r->detected_in_time,
		       100.0 * (double)r->detected_in_time / (double)r->steps, p->within,
		       r->median_delay_cycles, r->max_delay_cycles);
	printf("judged %llu runs in %.1f s\n", (unsigned long long)r->runs, seconds);
}

int cli_detect_sim(int argc, char **argv)
{
	struct sim_args a = {0};
	struct dsim_result r;
	struct timespec t0, t1;
	char err[256];
	int rc;

	dsim_params_default(&a.p);
	detect_config_default(&a.c);
	if (parse_args(argc, argv, &a) < 0)
		return 2;
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
	clock_gettime(CLOCK_MONOTONIC, &t0);
	rc = dsim_run(&a.c, &a.p, &r);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (rc < 0) {
		fprintf(stderr, CMD ": the simulation failed: %s\n", strerror(-rc));
		dsim_result_free(&r);
		return 1;
	}
	if (a.json)
		print_json(&a, &a.c, &r);
	else
		print_text(&a, &a.c, &r,
		           (double)(t1.tv_sec - t0.tv_sec) +
		               (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
	dsim_result_free(&r);
	return 0;
}
