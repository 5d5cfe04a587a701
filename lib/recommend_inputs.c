/*
 * recommend_inputs: the recommendation inputs built from the latest probe
 * documents and the host fingerprint (rec_inputs_build()), as the daemon
 * and `threadwatch run` hand them to rec_compute().
 */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jnum.h"
#include "failure.h"
#include "protocol.h"
#include "recommend.h"
#include "recommendp.h"
#include "xmalloc.h"

/* --- inputs from probe documents --------------------------------------- */

static int doc_ok(const json_t *doc)
{
	const char *st = protocol_status(doc);

	return st && !strcmp(st, "ok");
}

/* A scalar of a probe document, NAN when absent or not finite. */
static double doc_scalar(const json_t *doc, const char *name)
{
	double v = protocol_scalar(doc, name);

	return isfinite(v) ? v : NAN;
}

/* A series' points as a curve, points of equal x merged into their mean
 * (the protocol allows repeated x, the inputs do not). NULL if absent. */
static json_t *doc_curve(const json_t *doc, const char *name)
{
	const json_t *pts = protocol_series(doc, name);
	double x = 0, sum = 0;
	size_t i, cnt = 0;
	const json_t *p;
	json_t *out;

	if (!json_is_array(pts))
		return NULL;
	out = json_array();
	json_array_foreach(pts, i, p)
	{
		const json_t *px = json_array_get(p, 0), *py = json_array_get(p, 1);

		if (json_array_size(p) != 2 || !json_is_number(px) || !json_is_number(py))
			continue;
		if (cnt && json_number_value(px) == x) {
			sum += json_number_value(py);
			cnt++;
			continue;
		}
		if (cnt)
			json_array_append_new(
			    out, json_pack("[oo]", jnum_int(x), jnum_int(sum / (double)cnt)));
		x = json_number_value(px);
		sum = json_number_value(py);
		cnt = 1;
	}
	if (cnt)
		json_array_append_new(out,
		                      json_pack("[oo]", jnum_int(x), jnum_int(sum / (double)cnt)));
	return out;
}

static void set_num(json_t *obj, const char *key, double v)
{
	if (isfinite(v))
		json_object_set_new(obj, key, jnum_int(v));
}

static int is_string(const json_t *v)
{
	return json_is_string(v);
}

static int is_number(const json_t *v)
{
	return json_is_number(v);
}

static int is_flag(const json_t *v)
{
	return json_is_boolean(v) || json_is_number(v);
}

/* The fingerprint's cpu fields the inputs carry, with the type each needs. */
static json_t *inputs_cpu(const json_t *fingerprint)
{
	static const struct {
		const char *key;
		int (*ok)(const json_t *);
	} keys[] = {{"vendor", is_string}, {"model_name", is_string}, {"family", is_number},
	            {"model", is_number},  {"stepping", is_number},   {"fsgsbase", is_flag}};
	const json_t *cpu = json_object_get(fingerprint, "cpu");
	json_t *out;

	if (!json_is_object(cpu))
		return NULL;
	out = json_object();
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		json_t *v = json_object_get(cpu, keys[i].key);

		if (v && keys[i].ok(v))
			json_object_set(out, keys[i].key, v);
	}
	return out;
}

/* ctxsw.KEY_ciLEVEL from the scalars KEY_ciTAG_lo and KEY_ciTAG_hi when
 * both are there (TAG "" for the 95% CI, "90" for the 90% one). */
static void set_ci_level(json_t *o, const json_t *doc, const char *key, const char *tag,
                         const char *level)
{
	char lo[64], hi[64], out[64];

	snprintf(lo, sizeof(lo), "%s_ci%s_lo", key, tag);
	snprintf(hi, sizeof(hi), "%s_ci%s_hi", key, tag);
	snprintf(out, sizeof(out), "%s_ci%s", key, level);
	if (isfinite(doc_scalar(doc, lo)) && isfinite(doc_scalar(doc, hi)))
		json_object_set_new(o, out,
		                    json_pack("[oo]", jnum_int(doc_scalar(doc, lo)),
		                              jnum_int(doc_scalar(doc, hi))));
}

static void set_ci95(json_t *o, const json_t *doc, const char *key)
{
	set_ci_level(o, doc, key, "", "95");
}

/* The mechanism figures of a ctxsw document: margin, selector, A/A. */
static void inputs_ctxsw_mechanism(const json_t *doc, json_t *o)
{
	if (isfinite(doc_scalar(doc, "equivalence_margin")) &&
	    doc_scalar(doc, "equivalence_margin") > 0)
		set_num(o, "equivalence_margin", doc_scalar(doc, "equivalence_margin"));
	if (isfinite(doc_scalar(doc, "selector_ratio")) && doc_scalar(doc, "selector_ratio") > 0) {
		set_num(o, "selector_ratio", doc_scalar(doc, "selector_ratio"));
		set_ci95(o, doc, "selector_ratio");
	}
	/* The selector against its control in a child process (ctxsw's child
	 * arm), which the recommendation prefers. */
	if (isfinite(doc_scalar(doc, "selector_child_ratio")) &&
	    doc_scalar(doc, "selector_child_ratio") > 0) {
		set_num(o, "selector_child_ratio", doc_scalar(doc, "selector_child_ratio"));
		set_ci95(o, doc, "selector_child_ratio");
	}
	set_ci95(o, doc, "aa_ratio");
}

/* map32.window_vmas, the VMAs in the window while the retry ladder ran,
 * and map32.outside_vmas, those outside it at the ladder's first rung (the
 * probe's libraries, heap, stack and vDSO, as a workload has them too):
 * start_vmas - window_vmas. */
static void inputs_map32_vmas(const json_t *doc, json_t *o)
{
	double w = doc_scalar(doc, "window_vmas"), start = doc_scalar(doc, "start_vmas");

	set_num(o, "window_vmas", w);
	if (start >= w)
		set_num(o, "outside_vmas", start - w);
}

/* The workload's churn, when given. */
static void inputs_churn(json_t *wl, const struct rec_workload *w)
{
	if (w->creates_per_second > 0)
		set_num(wl, "creates_per_second", w->creates_per_second);
	if (w->creates_per_second > 0 && w->switches_per_second >= 0)
		set_num(wl, "switches_per_second", w->switches_per_second);
}

json_t *rec_inputs_build(const json_t *fingerprint, const json_t *ctxsw_doc,
                         const json_t *map32_doc, const json_t *threads_doc,
                         const struct rec_workload *w)
{
	struct rec_workload def;
	json_t *in = json_object(), *o, *c;
	const char *arch = json_string_value(json_object_get(fingerprint, "arch"));

	if (!w) {
		rec_workload_default(&def);
		w = &def;
	}
	if ((o = inputs_cpu(fingerprint)))
		json_object_set_new(in, "cpu", o);
	json_object_set_new(in, "workload",
	                    json_pack("{s:o s:o s:o}", "threads", jnum_int(w->threads),
	                              "stack_bytes", jnum_int(w->stack_bytes),
	                              "switches_per_thread",
	                              w->switches_per_thread >= 0 ? jnum_int(w->switches_per_thread)
	                                                          : json_null()));
	inputs_churn(json_object_get(in, "workload"), w);
	if (doc_ok(ctxsw_doc) && isfinite(doc_scalar(ctxsw_doc, "low_ns")) &&
	    isfinite(doc_scalar(ctxsw_doc, "high_ns"))) {
		o = json_object();
		set_num(o, "low_ns", doc_scalar(ctxsw_doc, "low_ns"));
		set_num(o, "high_ns", doc_scalar(ctxsw_doc, "high_ns"));
		set_num(o, "ratio", doc_scalar(ctxsw_doc, "ratio"));
		set_ci95(o, ctxsw_doc, "ratio");
		set_ci_level(o, ctxsw_doc, "ratio", "90", "90");
		inputs_ctxsw_mechanism(ctxsw_doc, o);
		json_object_set_new(in, "ctxsw", o);
	}
	if (doc_ok(map32_doc)) {
		o = json_object();
		set_num(o, "window_bytes", doc_scalar(map32_doc, "window_bytes"));
		set_num(o, "capacity_stacks", doc_scalar(map32_doc, "capacity_stacks"));
		set_num(o, "stack_bytes", doc_scalar(map32_doc, "stack_bytes"));
		inputs_map32_vmas(map32_doc, o);
		if ((c = doc_curve(map32_doc, "fill_median_ns")))
			json_object_set_new(o, "fill_ns", c);
		if ((c = doc_curve(map32_doc, "fail_median_ns")))
			json_object_set_new(o, "fail_ns", c);
		if ((c = doc_curve(map32_doc, "retry_median_ns")))
			json_object_set_new(o, "retry_ns", c);
		if ((c = doc_curve(map32_doc, "plain_median_ns")))
			json_object_set_new(o, "plain_ns", c);
		json_object_set_new(in, "map32", o);
	} else if (arch && strcmp(arch, "x86_64")) {
		/* MAP_32BIT exists only on x86-64. */
		json_object_set_new(in, "map32", json_pack("{s:i}", "window_bytes", 0));
	}
	if (arch && strcmp(arch, "x86_64"))
		json_object_set_new(in, "arch", json_string(arch));
	if (doc_ok(threads_doc)) {
		o = json_object();
		if ((c = doc_curve(threads_doc, "low_median_ns")))
			json_object_set_new(o, "low_create_ns", c);
		if ((c = doc_curve(threads_doc, "high_median_ns")))
			json_object_set_new(o, "high_create_ns", c);
		json_object_set_new(in, "threads", o);
	}
	return in;
}

/* --- the figures of result.costs ---------------------------------------- */

/* What each probe gives result.costs: scalars by their catalogue names,
 * CIs (KEY_ci_lo and KEY_ci_hi as KEY_ci95) and info entries, each under
 * inputs.PROBE as the probe names it. */
static const struct {
	const char *probe;
	const char *scalars[6], *cis[3], *info[4];
} cost_inputs[] = {
    {"createscale",
     {"cached_1_rate", "nocache_1_rate", "cached_2_efficiency", "nocache_2_efficiency"},
     {"cached_2_efficiency", "nocache_2_efficiency"},
     {NULL}},
    {"handoff",
     {"same_cpu_ns", "cross_ratio"},
     {"cross_ratio"},
     {"cross_placement", "mechanism", "fix"}},
    {"stackmem",
     {"glibc_bytes_per_thread", "glibc_huge_bytes_per_thread", "plain_bytes_per_thread",
      "plain_huge_bytes_per_thread", "huge_bytes_per_thread"},
     {"glibc_bytes_per_thread"},
     {"thp_enabled", "map_stack_nohugepage", "fix"}},
};

/* inputs.PROBE.unmeasured: "skipped: REASON" for a document not ok. */
static json_t *cost_unmeasured(const json_t *doc)
{
	const char *st = protocol_status(doc);
	const char *why = json_string_value(json_object_get(doc, "reason"));
	char *s;
	json_t *o;

	xasprintf(&s, "%s: %s", st ? st : "unreadable", why ? why : "no reason given");
	o = json_pack("{s:s}", "unmeasured", s);
	free(s);
	return o;
}

void rec_inputs_costs(json_t *inputs, const json_t *createscale, const json_t *handoff,
                      const json_t *stackmem)
{
	const json_t *docs[] = {createscale, handoff, stackmem};

	for (size_t i = 0; i < sizeof(cost_inputs) / sizeof(cost_inputs[0]); i++) {
		const json_t *doc = docs[i], *info = json_object_get(docs[i], "info");
		json_t *o;

		if (!doc)
			continue;
		if (!doc_ok(doc)) {
			json_object_set_new(inputs, cost_inputs[i].probe, cost_unmeasured(doc));
			continue;
		}
		o = json_object();
		for (size_t k = 0; k < 6 && cost_inputs[i].scalars[k]; k++)
			set_num(o, cost_inputs[i].scalars[k],
			        doc_scalar(doc, cost_inputs[i].scalars[k]));
		for (size_t k = 0; k < 3 && cost_inputs[i].cis[k]; k++)
			set_ci95(o, doc, cost_inputs[i].cis[k]);
		for (size_t k = 0; k < 4 && cost_inputs[i].info[k]; k++) {
			json_t *v = json_object_get(info, cost_inputs[i].info[k]);

			if (json_is_string(v) || json_is_boolean(v))
				json_object_set(o, cost_inputs[i].info[k], v);
		}
		json_object_set_new(inputs, cost_inputs[i].probe, o);
	}
}

/* The array inputs[key], made when absent. */
static json_t *inputs_list(json_t *inputs, const char *key)
{
	json_t *a = json_object_get(inputs, key);

	if (!json_is_array(a)) {
		a = json_array();
		json_object_set_new(inputs, key, a);
	}
	return a;
}

int rec_inputs_note_failed(json_t *inputs, const char *probe, const struct failure *f,
                           const char *reason, long long run_id, long long t_ms)
{
	if (!rec_inputs_needed(probe))
		return -ENOENT;
	json_array_append_new(inputs_list(inputs, "failed_probes"),
	                      failure_json(probe, f, reason, run_id, t_ms));
	return 0;
}

int rec_inputs_note_disabled(json_t *inputs, const char *probe)
{
	if (!rec_inputs_needed(probe))
		return -ENOENT;
	json_array_append_new(inputs_list(inputs, "disabled_probes"), json_string(probe));
	return 0;
}
