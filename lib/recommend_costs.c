/*
 * recommend_costs: what a thread costs on this host beside the low-stack
 * verdict (result.costs, doc/recommendation.md "What a thread costs"): to
 * create and join one, to create with two creators at once, to hand one
 * off to another CPU, and to keep one idle in memory, from the
 * createscale, handoff and stackmem figures of the inputs. Each cost has
 * its figures and a finding with the arithmetic; where the figures show a
 * problem (the limits of lib/defaults.h), the cause and the fix as the
 * probe found them on this host.
 */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "catalog.h"
#include "defaults.h"
#include "errbuf.h"
#include "jnum.h"
#include "recommendp.h"
#include "xmalloc.h"

/* A text of the inputs (a probe's info: placement, mechanism, fix). */
#define COST_TEXT_MAX 1024

struct cost_in {
	/* createscale */
	struct rec_num c1, n1, ceff, neff;
	int have_ceff_ci, have_neff_ci;
	double ceff_lo, ceff_hi, neff_lo, neff_hi;
	/* handoff */
	struct rec_num same, ratio;
	int have_ratio_ci;
	double ratio_lo, ratio_hi;
	const char *placement, *mechanism, *handoff_fix;
	/* stackmem */
	struct rec_num glibc, glibc_huge, plain, plain_huge, huge;
	int have_glibc_ci;
	double glibc_lo, glibc_hi;
	const char *thp, *stack_fix;
	int nohuge_known, nohuge; /* the kernel gives MAP_STACK VM_NOHUGEPAGE */
	/* why a probe's section holds no figures ("skipped: ..."), or NULL */
	const char *createscale_why, *handoff_why, *stackmem_why;
};

/* Null, as absent, leaves a figure unmeasured. */
#define COST_NUM(sect, key, flags, member)                                                         \
	{                                                                                          \
		sect, key, REC_F_NULL | (flags), 0, offsetof(struct cost_in, member)               \
	}
static const struct rec_field cost_nums[] = {
    COST_NUM("createscale", "cached_1_rate", REC_F_POSITIVE, c1),
    COST_NUM("createscale", "nocache_1_rate", REC_F_POSITIVE, n1),
    COST_NUM("createscale", "cached_2_efficiency", 0, ceff),
    COST_NUM("createscale", "nocache_2_efficiency", 0, neff),
    COST_NUM("handoff", "same_cpu_ns", REC_F_POSITIVE, same),
    COST_NUM("handoff", "cross_ratio", REC_F_POSITIVE, ratio),
    COST_NUM("stackmem", "glibc_bytes_per_thread", 0, glibc),
    COST_NUM("stackmem", "glibc_huge_bytes_per_thread", 0, glibc_huge),
    COST_NUM("stackmem", "plain_bytes_per_thread", 0, plain),
    COST_NUM("stackmem", "plain_huge_bytes_per_thread", 0, plain_huge),
    COST_NUM("stackmem", "huge_bytes_per_thread", 0, huge),
};

static const struct cost_ci {
	const char *section, *key;
	size_t have, lo, hi;
} cost_cis[] = {
    {"createscale", "cached_2_efficiency_ci95", offsetof(struct cost_in, have_ceff_ci),
     offsetof(struct cost_in, ceff_lo), offsetof(struct cost_in, ceff_hi)},
    {"createscale", "nocache_2_efficiency_ci95", offsetof(struct cost_in, have_neff_ci),
     offsetof(struct cost_in, neff_lo), offsetof(struct cost_in, neff_hi)},
    {"handoff", "cross_ratio_ci95", offsetof(struct cost_in, have_ratio_ci),
     offsetof(struct cost_in, ratio_lo), offsetof(struct cost_in, ratio_hi)},
    {"stackmem", "glibc_bytes_per_thread_ci95", offsetof(struct cost_in, have_glibc_ci),
     offsetof(struct cost_in, glibc_lo), offsetof(struct cost_in, glibc_hi)},
};

static const struct cost_text {
	const char *section, *key;
	size_t offset;
} cost_texts[] = {
    {"createscale", "unmeasured", offsetof(struct cost_in, createscale_why)},
    {"handoff", "unmeasured", offsetof(struct cost_in, handoff_why)},
    {"handoff", "cross_placement", offsetof(struct cost_in, placement)},
    {"handoff", "mechanism", offsetof(struct cost_in, mechanism)},
    {"handoff", "fix", offsetof(struct cost_in, handoff_fix)},
    {"stackmem", "unmeasured", offsetof(struct cost_in, stackmem_why)},
    {"stackmem", "thp_enabled", offsetof(struct cost_in, thp)},
    {"stackmem", "fix", offsetof(struct cost_in, stack_fix)},
};

#define FIELD(in, off, type) ((type *)((char *)(in) + (off)))

static int parse_text(const json_t *inputs, const struct cost_text *f, struct cost_in *in,
                      char *err, size_t errlen)
{
	const json_t *sect, *v;

	if (rec_section_get(inputs, f->section, &sect, err, errlen) < 0)
		return -EINVAL;
	v = json_object_get(sect, f->key);
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_string(v) || !json_string_length(v) || json_string_length(v) > COST_TEXT_MAX ||
	    strlen(json_string_value(v)) != json_string_length(v))
		return errbuf_set(err, errlen, -EINVAL,
		                  "%s.%s: must be a text of 1 to %d bytes without NUL", f->section,
		                  f->key, COST_TEXT_MAX);
	*FIELD(in, f->offset, const char *) = json_string_value(v);
	return 0;
}

static int parse_nohuge(const json_t *inputs, struct cost_in *in, char *err, size_t errlen)
{
	const json_t *sect, *v;

	if (rec_section_get(inputs, "stackmem", &sect, err, errlen) < 0)
		return -EINVAL;
	v = json_object_get(sect, "map_stack_nohugepage");
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_boolean(v))
		return errbuf_set(err, errlen, -EINVAL,
		                  "stackmem.map_stack_nohugepage: must be a boolean");
	in->nohuge_known = 1;
	in->nohuge = json_is_true(v);
	return 0;
}

static int cost_parse(const json_t *inputs, struct cost_in *in, char *err, size_t errlen)
{
	size_t i;

	memset(in, 0, sizeof(*in));
	if (rec_fields_parse(inputs, cost_nums, sizeof(cost_nums) / sizeof(cost_nums[0]), in, err,
	                     errlen) < 0)
		return -EINVAL;
	for (i = 0; i < sizeof(cost_cis) / sizeof(cost_cis[0]); i++) {
		const struct cost_ci *f = &cost_cis[i];
		const json_t *sect;

		if (rec_section_get(inputs, f->section, &sect, err, errlen) < 0 ||
		    (sect && rec_ci_parse(sect, f->section, f->key, FIELD(in, f->have, int),
		                          FIELD(in, f->lo, double), FIELD(in, f->hi, double), err,
		                          errlen) < 0))
			return -EINVAL;
	}
	for (i = 0; i < sizeof(cost_texts) / sizeof(cost_texts[0]); i++)
		if (parse_text(inputs, &cost_texts[i], in, err, errlen) < 0)
			return -EINVAL;
	return parse_nohuge(inputs, in, err, errlen);
}

/* --- each cost ------------------------------------------------------------ */

#define NUM(v) rec_fmt_num((char[48]){0}, 48, (v))
#define DUR(v) rec_fmt_dur((char[48]){0}, 48, (v))

/* " [lo, hi]" of a 95% CI. */
static const char *ci_text(char *buf, size_t len, double lo, double hi)
{
	char a[48], b[48];

	snprintf(buf, len, " [%s, %s]", rec_fmt_num(a, sizeof(a), lo),
	         rec_fmt_num(b, sizeof(b), hi));
	return buf;
}

static json_t *num_or_null(const struct rec_num *n)
{
	return n->set ? jnum_int(n->v) : json_null();
}

static json_t *ci_or_null(int have, double lo, double hi)
{
	return have ? json_pack("[oo]", jnum_int(lo), jnum_int(hi)) : json_null();
}

static json_t *text_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

/* {"measured": false, "problem": null, "finding": why} for a cost whose
 * probe gave no figures. */
static json_t *unmeasured(const char *probe, const char *why)
{
	char *f;
	json_t *o;

	if (why)
		xasprintf(&f, "Not measured: %s's latest run was %s.", probe, why);
	else
		xasprintf(&f, "Not measured: no %s run yet.", probe);
	o = json_pack("{s:b s:n s:s s:n s:n}", "measured", 0, "problem", "finding", f, "cause",
	              "fix");

	free(f);
	return o;
}

/* A cost: its figures (fig, taken) and finding (taken), problem or not. */
static json_t *measured(json_t *fig, char *finding, int problem, const char *cause, const char *fix)
{
	json_object_set_new(fig, "measured", json_true());
	json_object_set_new(fig, "problem", json_boolean(problem));
	json_object_set_new(fig, "finding", json_string(finding));
	json_object_set_new(fig, "cause", problem ? text_or_null(cause) : json_null());
	json_object_set_new(fig, "fix", problem ? text_or_null(fix) : json_null());
	free(finding);
	return fig;
}

/* The formulas the findings print (rec_formula_fit()). */
static double eval_per_second(const double *p)
{
	return 1e9 / p[0];
}

static double eval_twice(const double *p)
{
	return 2 * p[0];
}

static double eval_times(const double *p)
{
	return p[0] * p[1];
}

static json_t *cost_create(const struct cost_in *in)
{
	struct rec_formula rate = {1, {0}, eval_per_second, {""}, 0, {0}, rec_fmt_dur};
	double ns, nc, shown;
	char *f;

	if (!in->c1.set)
		return unmeasured("createscale", in->createscale_why);
	ns = 1e9 / in->c1.v;
	nc = in->n1.set ? 1e9 / in->n1.v : NAN;
	rate.v[0] = in->c1.v;
	shown = rec_formula_fit(&rate, ns);
	xasprintf(&f,
	          "Creating and joining a thread takes %s here: 10^9 ns / %s creates per second by "
	          "one creator with glibc's stack cache (the createscale probe: create and join "
	          "in turn, glibc's default stacks)%s%s%s.",
	          DUR(shown), rate.text[0], isfinite(nc) ? "; when the cache misses, " : "",
	          isfinite(nc) ? DUR(nc) : "", isfinite(nc) ? " (its stack mapped anew)" : "");
	return measured(json_pack("{s:o s:o s:o s:o}", "ns", jnum_int(ns), "without_cache_ns",
	                          isfinite(nc) ? jnum_int(nc) : json_null(), "rate_per_s",
	                          jnum_int(in->c1.v), "without_cache_rate_per_s",
	                          num_or_null(&in->n1)),
	                f, 0, NULL, NULL);
}

/* The efficiency that decides: without the stack cache, where creators
 * map, protect and unmap stacks under mmap_lock; the cached one beside. */
static json_t *cost_creators(const struct cost_in *in)
{
	struct rec_formula both = {1, {0}, eval_twice, {""}, 0, {0}, NULL};
	int problem, near;
	double together;
	char *f;

	if (!in->neff.set && !in->ceff.set)
		return unmeasured("createscale", in->createscale_why);
	if (!in->neff.set) {
		xasprintf(&f,
		          "Two creators at once each make %s of one creator's creates with glibc's "
		          "stack cache; without it was not measured.",
		          NUM(in->ceff.v));
		return measured(json_pack("{s:i s:o s:o s:n s:n}", "creators", 2,
		                          "cached_efficiency", jnum_int(in->ceff.v),
		                          "cached_efficiency_ci95",
		                          ci_or_null(in->have_ceff_ci, in->ceff_lo, in->ceff_hi),
		                          "efficiency", "efficiency_ci95"),
		                f, 0, NULL, NULL);
	}
	/* A CI that straddles the limit does not decide the flag: a run a
	 * minute later would flip it. */
	near = in->have_neff_ci && in->neff_lo < TW_CREATORS_PROBLEM_EFFICIENCY &&
	       in->neff_hi >= TW_CREATORS_PROBLEM_EFFICIENCY;
	problem = !near && in->neff.v < TW_CREATORS_PROBLEM_EFFICIENCY;
	both.v[0] = in->neff.v;
	together = rec_formula_fit(&both, 2 * in->neff.v);
	xasprintf(&f,
	          "Two creators at once, when glibc's stack cache misses, each make %s%s of one "
	          "creator's creates: together %s× one creator%s%s%s%s%s%s.",
	          both.text[0],
	          in->have_neff_ci ? ci_text((char[112]){0}, 112, in->neff_lo, in->neff_hi) : "",
	          NUM(together), in->ceff.set ? "; with the cache each makes " : "",
	          in->ceff.set ? NUM(in->ceff.v) : "", in->ceff.set ? " of one creator's" : "",
	          near ? "; near the limit of " : "",
	          near ? NUM(TW_CREATORS_PROBLEM_EFFICIENCY) : "",
	          near ? ", which its CI straddles, so neither a problem nor clear of one" : "");
	return measured(
	    json_pack("{s:i s:o s:o s:o s:o s:b}", "creators", 2, "efficiency",
	              jnum_int(in->neff.v), "efficiency_ci95",
	              ci_or_null(in->have_neff_ci, in->neff_lo, in->neff_hi), "cached_efficiency",
	              num_or_null(&in->ceff), "cached_efficiency_ci95",
	              ci_or_null(in->have_ceff_ci, in->ceff_lo, in->ceff_hi), "near_limit", near),
	    f, problem,
	    "a creator that misses glibc's stack cache maps a stack, protects its guard page "
	    "and later unmaps it (mmap, mprotect, munmap), and each of those calls takes the "
	    "process's mmap_lock for writing, so creators queue on it",
	    "reuse threads (a pool) rather than create them, and keep glibc's stack "
	    "cache (GLIBC_TUNABLES glibc.pthread.stack_cache_size, 40 MiB by default) "
	    "larger than the stacks a workload churns");
}

/* The handoff probe's placements, as the finding names them (the words
 * of CATALOG_HANDOFF_PLACEMENTS). */
static const struct {
	const char *name, *words;
} placements[] = {
#define PLACEMENT_TO(p, between, to) {p, to},
    CATALOG_HANDOFF_PLACEMENTS(PLACEMENT_TO)
#undef PLACEMENT_TO
};

static const char *placement_words(const char *name)
{
	for (size_t i = 0; name && i < sizeof(placements) / sizeof(placements[0]); i++)
		if (!strcmp(name, placements[i].name))
			return placements[i].words;
	return "another CPU";
}

static json_t *cost_handoff(const struct cost_in *in)
{
	struct rec_formula times = {2, {0}, eval_times, {""}, 0, {0}, rec_fmt_dur};
	double cross, shown;
	const char *unit;
	int problem;
	char *f;

	if (!in->same.set || !in->ratio.set)
		return unmeasured("handoff", in->handoff_why);
	cross = in->same.v * in->ratio.v;
	problem = in->ratio.v > TW_HANDOFF_PROBLEM_RATIO;
	/* the same-CPU time in the unit it reads best in, with the digits
	 * that make ratio × it give the cross time printed */
	unit = rec_dur_unit(in->same.v, &times.scale[1]);
	times.v[0] = in->ratio.v;
	times.v[1] = in->same.v;
	shown = rec_formula_fit(&times, cross);
	xasprintf(&f,
	          "Waking a thread on %s takes %s here: %s%s times the %s %s of a switch on one "
	          "CPU.",
	          placement_words(in->placement), DUR(shown), times.text[0],
	          in->have_ratio_ci ? ci_text((char[112]){0}, 112, in->ratio_lo, in->ratio_hi) : "",
	          times.text[1], unit);
	return measured(json_pack("{s:o s:o s:o s:o s:o}", "same_cpu_ns", jnum_int(in->same.v),
	                          "cross_ns", jnum_int(cross), "ratio", jnum_int(in->ratio.v),
	                          "ratio_ci95",
	                          ci_or_null(in->have_ratio_ci, in->ratio_lo, in->ratio_hi),
	                          "placement", text_or_null(in->placement)),
	                f, problem, in->mechanism, in->handoff_fix);
}

/* The memory of an idle thread with glibc's own stacks decides; what a
 * runtime that maps its own stacks without MAP_STACK gets is told beside. */
static json_t *cost_memory(const struct cost_in *in)
{
	int problem, plain_huge;
	char cause[320], *f;

	if (!in->glibc.set)
		return unmeasured("stackmem", in->stackmem_why);
	problem = in->glibc.v >= TW_STACK_PROBLEM_BYTES;
	snprintf(cause, sizeof(cause),
	         "transparent huge pages back the stacks glibc maps: THP is %s here%s, and a stack "
	         "THP may back takes a whole huge page at its first touch",
	         in->thp ? in->thp : "on",
	         !in->nohuge_known ? ""
	         : in->nohuge      ? " (this kernel gives MAP_STACK stacks VM_NOHUGEPAGE)"
	                      : " and this kernel does not give MAP_STACK stacks VM_NOHUGEPAGE");
	plain_huge = in->plain_huge.set && in->plain_huge.v > 0;
	xasprintf(&f, "An idle thread keeps %s KiB%s resident with glibc's stacks%s%s%s%s%s%s%s.",
	          NUM(in->glibc.v / 1024),
	          in->have_glibc_ci
	              ? ci_text((char[112]){0}, 112, in->glibc_lo / 1024, in->glibc_hi / 1024)
	              : "",
	          in->glibc_huge.set && in->glibc_huge.v > 0 ? ", on huge pages" : "",
	          in->plain.set ? "; a stack mapped without MAP_STACK keeps " : "",
	          in->plain.set ? NUM(in->plain.v / 1024) : "",
	          in->plain.set ? (plain_huge ? " KiB, on huge pages" : " KiB") : "",
	          in->huge.set ? "; one that THP backs (advised MADV_HUGEPAGE, as THP always backs "
	                         "a stack mapped without MAP_STACK) keeps "
	                       : "",
	          in->huge.set ? NUM(in->huge.v / 1024) : "", in->huge.set ? " KiB" : "");
	return measured(json_pack("{s:o s:o s:o s:o s:o s:o s:o}", "bytes_per_thread",
	                          jnum_int(in->glibc.v), "bytes_per_thread_ci95",
	                          ci_or_null(in->have_glibc_ci, in->glibc_lo, in->glibc_hi),
	                          "huge_bytes_per_thread", num_or_null(&in->glibc_huge),
	                          "plain_bytes_per_thread", num_or_null(&in->plain),
	                          "plain_huge_bytes_per_thread", num_or_null(&in->plain_huge),
	                          "advised_bytes_per_thread", num_or_null(&in->huge), "thp_enabled",
	                          text_or_null(in->thp)),
	                f, problem, cause, in->stack_fix);
}

static const struct {
	const char *name;
	json_t *(*make)(const struct cost_in *in);
} costs[] = {
    {"create", cost_create},
    {"creators", cost_creators},
    {"handoff", cost_handoff},
    {"memory", cost_memory},
};

int rec_costs_build(const json_t *inputs, json_t **out, char *err, size_t errlen)
{
	struct cost_in in;
	json_t *o, *problems;

	*out = NULL;
	if (cost_parse(inputs, &in, err, errlen) < 0)
		return -EINVAL;
	/* Inputs without any of the three probes (written by hand for the
	 * low-stack question) get no costs rather than four "not measured". */
	if (!json_object_get(inputs, "createscale") && !json_object_get(inputs, "handoff") &&
	    !json_object_get(inputs, "stackmem"))
		return 0;
	o = json_object();
	problems = json_array();
	for (size_t i = 0; i < sizeof(costs) / sizeof(costs[0]); i++) {
		json_t *c = costs[i].make(&in);

		if (json_is_true(json_object_get(c, "problem")))
			json_array_append_new(problems, json_string(costs[i].name));
		json_object_set_new(o, costs[i].name, c);
	}
	json_object_set_new(o, "problems", problems);
	*out = o;
	return 0;
}
