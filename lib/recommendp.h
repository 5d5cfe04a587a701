/*
 * recommendp: what the recommendation's files (recommend.c,
 * recommend_inputs.c, recommend_text.c) share and nobody else uses.
 */
#ifndef TW_RECOMMENDP_H
#define TW_RECOMMENDP_H

#include <stddef.h>

#include <jansson.h>

/* A JSON number for a figure: an integer when it is one, null when it is
 * not finite. New reference. */
json_t *rec_jnum(double v);

/* The probes the recommendation reads (NULL-terminated). */
extern const char *const rec_probes[];

/* inputs.failed_probes (failure_json() objects) and inputs.disabled_probes
 * (names), checked (recommend_failed.c). */
struct rec_failed {
	json_t *failed, *disabled;
};
/* 0, or -EINVAL naming the field in err; clear f either way. */
int rec_failed_parse(const json_t *inputs, struct rec_failed *f, char *err, size_t errlen);
void rec_failed_clear(struct rec_failed *f);
/* "ctxsw's last run failed: REASON" or "ctxsw is disabled in the
 * configuration (probes_disabled)" into buf, or NULL when it is neither. */
const char *rec_failed_why(const struct rec_failed *f, const char *probe, char *buf, size_t len);
/* Sets result.failed_probes and result.disabled_probes, and tells each of
 * those probes but `named` (which the rule already names; may be NULL) at
 * the front of the reasons and in the sentence. */
void rec_failed_apply(const struct rec_failed *f, const json_t *inputs, json_t *result,
                      const char *named);

/* inputs.arch (recommend_arch.c): *arch is NULL when absent; 0, or
 * -EINVAL naming the field in err. */
int rec_arch_parse(const json_t *inputs, const char **arch, char *err, size_t errlen);
/* 1 when low stacks can exist on arch (x86-64, or unknown). */
int rec_arch_applies(const char *arch);
/* Sets result.applicable; where low stacks cannot exist, the verdict is
 * high (strong, rule not_applicable) and the sentence says why. */
void rec_arch_apply(const char *arch, json_t *result);

/* A curve's points usable on log-log axes (x > 0, y > 0). */
struct rec_curve {
	size_t points; /* points given */
	size_t n;      /* usable points */
	double *x, *y;
};

/* The curve at x on log-log axes between its points (a threads curve);
 * *extrapolated is set when x lies outside them (recommend_create.c). */
double rec_curve_eval(const struct rec_curve *c, double x, int *extrapolated);
/* A map32 curve at x (a VMA count): inside as rec_curve_eval(), outside
 * on the straight line a + b x of a walk (doc/recommendation.md);
 * *extrapolated is set beyond the last point only. */
double rec_curve_walk(const struct rec_curve *c, double x, int *extrapolated);

/* What the extra cost of a low-stack create is computed from: the map32
 * walks when any of fill, fail, retry is usable, else the threads curves. */
struct rec_create {
	const struct rec_curve *fill, *fail, *retry, *plain; /* map32 */
	const struct rec_curve *low, *high;                  /* threads */
	double cap;                                          /* C: stacks the window holds */
	double window; /* W: VMAs in map32's window while the retry ladder ran */
	double others; /* L: VMAs outside the window a retry walks besides stacks */
};

/* One create with k threads alive, with the terms it is made of (NAN for
 * a curve that is absent). */
struct rec_create_term {
	double extra; /* max(0, low - high create cost) */
	double fill, fail, retry, plain, low, high;
	double fill_vmas, fail_vmas, retry_vmas, plain_vmas;
	int extrapolated; /* a curve was read beyond its last point */
};

/* Every figure of t NAN: nothing known. */
void rec_create_term_unknown(struct rec_create_term *t);
/* "map32", "threads", or NULL when no usable curve gives the cost. */
const char *rec_create_source(const struct rec_create *m);
/* The create with k threads alive; 0, or -ENODATA without a source. */
int rec_create_at(const struct rec_create *m, double k, struct rec_create_term *t);
/* The sum of extra over the creates k = a .. b - 1 (*extrapolated when a
 * term read a curve beyond its end); 0, or -ENODATA without a source. */
int rec_create_sum(const struct rec_create *m, double a, double b, double *sum, int *extrapolated);

/* A number for a sentence: grouped digits from 1000 up ("57,418"), else
 * 3 significant digits; "unknown" for NaN (recommend.c). */
const char *rec_fmt_num(char *buf, size_t len, double v);

#endif
