/*
 * recommendp: what the recommendation's files (recommend.c,
 * recommend_inputs.c, recommend_text.c) share and nobody else uses.
 */
#ifndef TW_RECOMMENDP_H
#define TW_RECOMMENDP_H

#include <stddef.h>

#include <jansson.h>

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
/* The least-squares slope of a curve's points, never below 0. */
double rec_curve_slope(const struct rec_curve *c);
/* A curve walks when its fitted rise over its range is at least this many
 * times its first point: the kernels before 3.8 (and their double) rise
 * 100-fold and more over map32's ladders; kernels since are flat to within
 * noise (a rise of 0.2 to 0.4). */
#define REC_WALK_RISE 1.0
/* 1 when a map32 curve grows as a walk does (REC_WALK_RISE), 0 when this
 * kernel's search does not walk. */
int rec_curve_walks(const struct rec_curve *c);

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

/* How an input number is checked (recommend.c). */
enum {
	REC_F_REQUIRED = 1 << 0, /* must be present when its section is */
	REC_F_POSITIVE = 1 << 1, /* > 0 (all numbers must be >= 0) */
	REC_F_WHOLE = 1 << 2,    /* a whole number */
	REC_F_NULL = 1 << 3,     /* null means unknown */
};
/* A finite number, not negative, checked by flags and max (0: no upper
 * bound) into *out; 0, or -EINVAL naming `what` in err. */
int rec_number_check(const json_t *v, const char *what, unsigned flags, double max, double *out,
                     char *err, size_t errlen);
/* One number of the inputs: inputs[section][key] into the struct rec_num
 * at offset of a struct of the caller's (struct rec_in, the costs' own). */
struct rec_field {
	const char *section;
	const char *key;
	unsigned flags;
	double max; /* 0: no upper bound */
	size_t offset;
};
/* Every field of the table, each checked by rec_number_check() into its
 * rec_num of base (set when present); a missing section leaves its fields
 * unset. 0, or -EINVAL naming the first bad field in err. */
int rec_fields_parse(const json_t *inputs, const struct rec_field *f, size_t n, void *base,
                     char *err, size_t errlen);
/* inputs[name] as a section: absent or null is missing (*out NULL),
 * anything else must be an object. 0, or -EINVAL naming it in err. */
int rec_section_get(const json_t *in, const char *name, const json_t **out, char *err,
                    size_t errlen);
/* sect[key] as a CI [lo, hi] with lo <= hi, named section.key in err: *have
 * is set when it is there; absent or null leaves it. 0, or -EINVAL. */
int rec_ci_parse(const json_t *sect, const char *section, const char *key, int *have, double *lo,
                 double *hi, char *err, size_t errlen);

/* result.costs: what a thread costs here to create, with two creators,
 * to hand off across CPUs and to keep idle (recommend_costs.c), from
 * inputs.createscale, inputs.handoff and inputs.stackmem. 0 and a new
 * reference in *out (NULL when the inputs have none of the three), or
 * -EINVAL naming the field in err. */
int rec_costs_build(const json_t *inputs, json_t **out, char *err, size_t errlen);

/* A number for a sentence: grouped digits from 1000 up ("57,418"), else
 * 3 significant digits; "unknown" for NaN (recommend.c). */
const char *rec_fmt_num(char *buf, size_t len, double v);
/* A duration in ns in the unit that reads best ("8.32 ms", "412 ns"). */
const char *rec_fmt_dur(char *buf, size_t len, double ns);
/* The unit rec_fmt_dur() prints ns in ("µs"), and its size in ns. */
const char *rec_dur_unit(double ns, double *scale);

/* A printed formula (recommend_formula.c): its operands v, and eval, which
 * computes its result from them. rec_formula_fit() fills text[i] with each
 * operand in rec_fmt_num()'s form, all with the fewest significant digits
 * (3 up to 15) for which eval of the printed operands prints as `result`
 * does (in fmt's form, rec_fmt_num()'s when NULL), so that every formula
 * shown checks by hand. An operand whose bit is set in keep was printed
 * before (the same figure earlier in the sentence): its text[i] is given
 * and kept. An operand with a scale is printed in that unit (v[i] /
 * scale[i], "2.36" of 2,360 ns in µs). It returns the result to print:
 * `result`, or when no digits give it (a kept operand too coarse), what
 * the operands printed at 15 digits give. */
#define REC_FORMULA_MAX 3
struct rec_formula {
	int n;
	double v[REC_FORMULA_MAX];
	double (*eval)(const double *p);
	char text[REC_FORMULA_MAX][48];
	unsigned keep;
	double scale[REC_FORMULA_MAX]; /* 0: 1 */
	const char *(*fmt)(char *buf, size_t len, double v);
};
double rec_formula_fit(struct rec_formula *f, double result);
/* A number as rec_fmt_num() printed it ("1,781.42"), read back. */
double rec_num_parse(const char *text);

/* --- the model's state (recommend.c), shared with its sentences
 * (recommend_reasons.c) --------------------------------------------------- */

struct rec_num {
	double v;
	int set;
};

struct rec_in {
	struct rec_num threads, stack_bytes, spt;
	struct rec_num cps, sps; /* churn: creates and switches per second */
	int have_ctxsw;
	struct rec_num low_ns, high_ns, ratio;
	int have_ci, have_ci90;
	double ci_lo, ci_hi, ci90_lo, ci90_hi; /* 95% CI; 90% CI for equivalence (TOST) */
	/* Equivalence, the segment path, the A/A control */
	struct rec_num margin, sel_ratio;
	int have_sel_ci, have_aa_ci;
	double sel_lo, sel_hi, aa_lo, aa_hi;
	/* the selector against its control, high stacks in a child process */
	struct rec_num sel_child_ratio;
	int have_selc_ci;
	double selc_lo, selc_hi;
	struct rec_num window, window_vmas, outside_vmas;
	/* what map32 measured the window to hold, and at which stack size */
	struct rec_num capacity_stacks, capacity_stack_bytes;
	struct rec_curve fill, fail, retry, plain, low_create, high_create;
	struct rec_num family, model;
	/* probes whose last run failed or that are disabled */
	struct rec_failed failed;
	const char *ctxsw_why; /* why there are no ctxsw figures, or NULL */
	char ctxsw_why_buf[1024];
	int fsgsbase; /* the CPU has FSGSBASE: the switch writes FS with wrfsbase */
};

/* recommend_parse.c: the inputs validated into *in (0), or -EINVAL with the
 * field named in err; rec_in_free() releases what it holds (a curve, the
 * failed probes) after either. */
int rec_in_parse(const json_t *inputs, struct rec_in *in, char *err, size_t errlen);
void rec_in_free(struct rec_in *in);

enum rec_rule {
	RULE_NO_CTXSW,       /* no switch figures: high, confidence none */
	RULE_NO_WINDOW,      /* no stack fits the window: high */
	RULE_NO_THREADS,     /* a workload without threads: high */
	RULE_NO_BENEFIT,     /* no significant switch benefit: high */
	RULE_FITS,           /* benefit, every thread fits: low */
	RULE_COST_UNKNOWN,   /* outgrows the window, extra cost unknown: high */
	RULE_SWITCH_UNKNOWN, /* outgrows the window, switches unknown: high */
	RULE_BREAK_EVEN,     /* outgrows the window: the break-even decides */
};

struct rec_model {
	const struct rec_in *in;
	enum rec_rule rule;
	double n, stack, spt; /* spt: switches per thread life, given or sps / cps */
	int spt_known;
	double cps, sps; /* churn: creates and switches per second (NAN: none) */
	double low_ns, high_ns, ratio, ci_lo, ci_hi;
	int have_ci, significant;
	double margin;  /* equivalence margin m */
	int equivalent; /* the ratio's 90% CI lies inside [1 - m, 1 + m] */
	int have_ci90;  /* eq_lo, eq_hi: the 90% CI (else the 95% one) */
	double eq_lo, eq_hi;
	double sel_ratio, sel_lo, sel_hi; /* the segment path against high */
	int have_sel_ci, aa_biased;
	int sel_controlled;       /* sel_* is against the child-process control */
	double s, s_lo, s_hi;     /* per-switch saving and its CI, ns */
	double window, slot, cap; /* bytes, bytes per stack + guard, stacks */
	double cap_computed;      /* floor(window / slot) */
	int cap_measured;         /* cap is what map32 measured at this stack size */
	int window_assumed;
	double missing;       /* threads beyond the window */
	struct rec_create cm; /* what the create costs are computed from */
	/* E: the extra cost of the marginal create, with e_at threads alive
	 * (the workload's count, or C when all fit: the first miss). */
	const char *e_source; /* "map32", "threads" or NULL (unknown) */
	double e_at;
	struct rec_create_term et; /* E (extra) and its terms */
	/* The sum over the workload's creates: below C (the ramp) and from C. */
	double ramp_total, beyond_total, extra_mean;
	int x_extrapolated; /* a term of the sum was read beyond a curve's end */
	double cost_rate, benefit_rate, be_rate; /* with churn, per second */
	/* The threads probe's own extra cost at the workload's count, when it
	 * measured that far (a cross-check of the map32 terms). */
	double e_measured;
	double extra_total, benefit_total;
	double be, be_lo, be_hi; /* break-even switches per low-stack thread */
	double flip_threads, flip_spt;
	int verdict_low;
	const char *confidence;
};

/* recommend_reasons.c: the reasons and the sentence, each figure with its
 * arithmetic. */
void rec_reason_break_even(const struct rec_model *m, json_t *r);
void rec_reason_extra(const struct rec_model *m, json_t *r);
void rec_reason_mechanism(const struct rec_model *m, json_t *r);
void rec_reason_rule(const struct rec_model *m, json_t *r);
void rec_reason_sensitivity(const struct rec_model *m, json_t *r);
void rec_reason_switch(const struct rec_model *m, json_t *r);
void rec_reason_window(const struct rec_model *m, json_t *r);
char *rec_sentence(const struct rec_model *m);

#endif
