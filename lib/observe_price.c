/*
 * observe_price: each workload priced at the costs the probes measured on
 * this host: the share of a CPU its thread creates take (creates/s x the
 * cost of a create and join, createscale), the share its switches take
 * (switches/s x a switch on one CPU, up to x a hand-off across CPUs where
 * the share that crosses is unknown, handoff), and the memory its stacks
 * hold beyond what glibc's would (stackmem). Findings past the limits of
 * lib/defaults.h carry a cause and a fix; the low-stack verdict is
 * computed for the workload as observed.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "defaults.h"
#include "jnum.h"
#include "observe.h"
#include "recommend.h"
#include "xmalloc.h"

/* A share of one CPU past which creating threads is worth a pool. */
#define PRICE_CREATE_PROBLEM_SHARE 0.01
/* A share of one CPU below which switching is not worth a finding. */
#define PRICE_SWITCH_NOTABLE_SHARE 0.01

struct prices {
	double switch_ns, cross_ratio, create_ns, glibc_bytes;
	const char *switch_from, *thp, *handoff_fix, *stack_fix;
};

/* A positive finite number at inputs[section][key], or NAN. */
static double num_at(const json_t *inputs, const char *section, const char *key)
{
	const json_t *v = json_object_get(json_object_get(inputs, section), key);
	double x = json_is_number(v) ? json_number_value(v) : NAN;

	return isfinite(x) && x > 0 ? x : NAN;
}

static const char *text_at(const json_t *inputs, const char *section, const char *key)
{
	return json_string_value(json_object_get(json_object_get(inputs, section), key));
}

static void prices_read(const json_t *in, struct prices *p)
{
	double rate = num_at(in, "createscale", "cached_1_rate");

	p->switch_ns = num_at(in, "handoff", "same_cpu_ns");
	p->switch_from = "handoff.same_cpu_ns";
	if (isnan(p->switch_ns)) {
		p->switch_ns = num_at(in, "ctxsw", "high_ns");
		p->switch_from = isnan(p->switch_ns) ? NULL : "ctxsw.high_ns";
	}
	p->cross_ratio = num_at(in, "handoff", "cross_ratio");
	p->create_ns = isnan(rate) ? NAN : 1e9 / rate;
	p->glibc_bytes = num_at(in, "stackmem", "glibc_bytes_per_thread");
	p->thp = text_at(in, "stackmem", "thp_enabled");
	p->handoff_fix = text_at(in, "handoff", "fix");
	p->stack_fix = text_at(in, "stackmem", "fix");
}

/* A JSON string of a malloc'd text, which it frees. */
static json_t *take(char *text)
{
	json_t *j = json_string(text);

	free(text);
	return j;
}

/* x as printed with 4 significant digits, so that a printed formula
 * recomputes to its printed result. */
static double r4(double x)
{
	char b[64];

	snprintf(b, sizeof(b), "%.4g", x);
	return strtod(b, NULL);
}

static double wnum(const json_t *w, const char *key)
{
	const json_t *v = json_object_get(w, key);

	return json_is_number(v) ? json_number_value(v) : NAN;
}

static json_t *price_create(const json_t *w, const struct prices *p, double *share)
{
	double cps = r4(wnum(w, "creates_per_s")), us = r4(p->create_ns / 1000);
	char *f;

	*share = NAN;
	if (isnan(cps))
		return json_pack("{s:n s:s}", "cpu_share", "finding", "creates not seen here");
	if (isnan(us))
		return json_pack("{s:n s:s}", "cpu_share", "finding", "no create cost measured");
	*share = cps * us / 1e6;
	xasprintf(&f, "%.4g creates/s x %.4g µs = %.4g%% of one CPU", cps, us, r4(*share * 100));
	return json_pack("{s:o s:o s:o}", "cpu_share", jnum(*share), "create_ns",
	                 jnum(p->create_ns), "finding", take(f));
}

static json_t *price_switch(const json_t *w, const struct prices *p, double *lo, double *hi)
{
	const json_t *sw = json_object_get(w, "switches_per_s");
	double sps = r4(json_number_value(json_object_get(sw, "total")));
	double us = r4(p->switch_ns / 1000), xus = r4(p->switch_ns * p->cross_ratio / 1000);
	char *f;

	*lo = *hi = NAN;
	if (!json_is_object(sw))
		return json_pack("{s:n s:n s:s}", "cpu_share", "cpu_share_max", "finding",
		                 "switches not seen here");
	if (isnan(us))
		return json_pack("{s:n s:n s:s}", "cpu_share", "cpu_share_max", "finding",
		                 "no switch cost measured");
	*lo = sps * us / 1e6;
	if (isnan(xus)) {
		xasprintf(&f, "%.4g switches/s x %.4g µs = %.4g%% of one CPU", sps, us,
		          r4(*lo * 100));
	} else {
		*hi = sps * xus / 1e6;
		xasprintf(&f,
		          "%.4g switches/s x %.4g µs = %.4g%% of one CPU, up to x %.4g µs = %.4g%% "
		          "if every one wakes a thread on another CPU",
		          sps, us, r4(*lo * 100), xus, r4(*hi * 100));
	}
	return json_pack("{s:o s:o s:o s:s s:o}", "cpu_share", jnum(*lo), "cpu_share_max",
	                 jnum(*hi), "switch_ns", jnum(p->switch_ns), "switch_from", p->switch_from,
	                 "finding", take(f));
}

static json_t *price_memory(const json_t *w, const struct prices *p)
{
	const json_t *s = json_object_get(w, "stacks");
	double count = json_number_value(json_object_get(s, "count"));
	double res = json_number_value(json_object_get(s, "resident_bytes"));
	double glibc = count * p->glibc_bytes;
	char *f;

	if (!json_is_integer(json_object_get(s, "count")))
		return json_pack("{s:n s:s}", "stack_bytes", "finding", "stacks not measured here");
	if (isnan(glibc))
		return json_pack("{s:o s:n s:s}", "stack_bytes", jnum(res), "excess_bytes",
		                 "finding", "no glibc stack figure measured");
	xasprintf(&f, "%.0f stacks hold %.0f bytes; glibc's would hold %.0f x %.0f = %.0f", count,
	          res, count, p->glibc_bytes, glibc);
	return json_pack("{s:o s:o s:o s:o}", "stack_bytes", jnum(res), "glibc_bytes", jnum(glibc),
	                 "excess_bytes", jnum(res > glibc ? res - glibc : 0), "finding", take(f));
}

static json_t *finding(const char *kind, char *text, const char *cause, const char *fix)
{
	return json_pack("{s:s s:o s:s s:s}", "kind", kind, "finding", take(text), "cause", cause,
	                 "fix", fix);
}

/* Stacks on huge pages: each idle thread holds 2 MiB instead of a few KiB. */
static void find_thp(json_t *out, const json_t *w, const struct prices *p)
{
	const json_t *s = json_object_get(w, "stacks");
	json_int_t n = json_integer_value(json_object_get(s, "thp_backed"));
	json_int_t bytes = json_integer_value(json_object_get(s, "thp_bytes"));
	char *f, *cause;

	if (n <= 0)
		return;
	xasprintf(&f, "%lld of %lld thread stacks are backed by huge pages, holding %.1f MiB",
	          (long long)n, (long long)json_integer_value(json_object_get(s, "count")),
	          (double)bytes / 1048576.0);
	xasprintf(&cause,
	          "transparent huge pages (THP %s) back stacks mapped without MAP_STACK, or "
	          "advised MADV_HUGEPAGE, or on a kernel that does not give MAP_STACK "
	          "VM_NOHUGEPAGE (before 6.8 and 6.7.5)",
	          p->thp ? p->thp : "setting unknown");
	json_array_append_new(
	    out, finding("thp_stacks", f, cause,
	                 "map thread stacks with MAP_STACK and without MADV_HUGEPAGE; keep THP "
	                 "at madvise (not always); use the runtime's own switch (the JVM: "
	                 "-XX:-UseTransparentHugePages or THP madvise); run a kernel with "
	                 "c4608d1bf7c6 (MAP_STACK implies VM_NOHUGEPAGE, 6.8 and 6.7.5)"));
	free(cause);
}

static void find_creates(json_t *out, double share)
{
	char *f;

	if (!(share > PRICE_CREATE_PROBLEM_SHARE))
		return;
	xasprintf(&f, "creating threads takes %.4g%% of one CPU, more than %g%%", r4(share * 100),
	          PRICE_CREATE_PROBLEM_SHARE * 100);
	json_array_append_new(out, finding("creates", f,
	                                   "a thread per task or request: every create maps a "
	                                   "stack and every exit unmaps it",
	                                   "keep threads in a pool and hand them work"));
}

static void find_handoff(json_t *out, const struct prices *p, double hi)
{
	char *f;

	if (!(p->cross_ratio > TW_HANDOFF_PROBLEM_RATIO) || !(hi > PRICE_SWITCH_NOTABLE_SHARE))
		return;
	xasprintf(&f,
	          "a hand-off to another CPU costs %.3g switches here (the limit is %g), so its "
	          "switching may take up to %.4g%% of one CPU",
	          p->cross_ratio, TW_HANDOFF_PROBLEM_RATIO, r4(hi * 100));
	json_array_append_new(
	    out, finding("handoff", f,
	                 "threads that wake each other on different CPUs pay the wake-up of an "
	                 "idle CPU on every hand-off",
	                 p->handoff_fix ? p->handoff_fix
	                                : "keep threads that hand work to each other on one CPU "
	                                  "or core (affinity, a pool per CPU)"));
}

/* The low-stack verdict for the workload as observed. */
static json_t *workload_verdict(const json_t *inputs, const json_t *w)
{
	json_t *in = json_deep_copy(inputs), *wl = json_object(), *res, *out;
	double threads = wnum(w, "threads"), cps = wnum(w, "creates_per_s");
	double sps =
	    json_number_value(json_object_get(json_object_get(w, "switches_per_s"), "total"));
	char err[256];

	json_object_set_new(wl, "threads", json_integer(isnan(threads) ? 0 : (json_int_t)threads));
	json_object_set(wl, "stack_bytes",
	                json_object_get(json_object_get(inputs, "workload"), "stack_bytes"));
	if (cps > 0) {
		json_object_set_new(wl, "creates_per_second", json_real(cps));
		json_object_set_new(wl, "switches_per_second", json_real(isfinite(sps) ? sps : 0));
	}
	if (!json_object_get(wl, "stack_bytes") || json_is_null(json_object_get(wl, "stack_bytes")))
		json_object_del(wl, "stack_bytes");
	json_object_set_new(in, "workload", wl);
	res = rec_compute(in, err, sizeof(err));
	json_decref(in);
	if (!res)
		return json_pack("{s:n s:s}", "verdict", "why", err);
	out = json_pack("{s:O s:O s:O}", "verdict", json_object_get(res, "verdict"), "confidence",
	                json_object_get(res, "confidence"), "sentence",
	                json_object_get(res, "sentence"));
	json_decref(res);
	return out;
}

static double sort_cost(const json_t *w)
{
	const json_t *s = json_object_get(json_object_get(w, "costs"), "cpu_share");

	return json_is_number(s) ? json_number_value(s) : -1;
}

static int by_cost(const void *a, const void *b)
{
	const json_t *x = *(json_t *const *)a, *y = *(json_t *const *)b;
	double cx = sort_cost(x), cy = sort_cost(y);
	double tx = wnum(json_object_get(x, "stacks"), "thp_bytes");
	double ty = wnum(json_object_get(y, "stacks"), "thp_bytes");

	if (cx != cy)
		return cx < cy ? 1 : -1;
	tx = isnan(tx) ? -1 : tx;
	ty = isnan(ty) ? -1 : ty;
	if (tx != ty)
		return tx < ty ? 1 : -1;
	tx = wnum(x, "threads");
	ty = wnum(y, "threads");
	tx = isnan(tx) ? -1 : tx;
	ty = isnan(ty) ? -1 : ty;
	return (tx < ty) - (tx > ty);
}

static void price_one(json_t *w, const json_t *inputs, const struct prices *p)
{
	double create, lo, hi;
	json_t *costs = json_object(), *findings = json_array();

	json_object_set_new(costs, "create", price_create(w, p, &create));
	json_object_set_new(costs, "switch", price_switch(w, p, &lo, &hi));
	json_object_set_new(costs, "memory", price_memory(w, p));
	json_object_set_new(costs, "cpu_share",
	                    isnan(create) && isnan(lo)
	                        ? json_null()
	                        : jnum((isnan(create) ? 0 : create) + (isnan(lo) ? 0 : lo)));
	find_thp(findings, w, p);
	find_creates(findings, create);
	find_handoff(findings, p, hi);
	json_object_set_new(w, "costs", costs);
	json_object_set_new(w, "findings", findings);
	json_object_set_new(w, "recommendation",
	                    inputs && json_object_get(inputs, "ctxsw") ? workload_verdict(inputs, w)
	                                                               : json_null());
}

void obs_price(json_t *doc, const json_t *inputs)
{
	json_t *list = json_object_get(doc, "workloads"), *sorted = json_array(), *v;
	struct prices p = {NAN, NAN, NAN, NAN, NULL, NULL, NULL, NULL};
	json_t **w;
	size_t n = json_array_size(list), i;

	if (inputs)
		prices_read(inputs, &p);
	json_object_set_new(doc, "prices",
	                    json_pack("{s:o s:s? s:o s:o s:o}", "switch_ns", jnum(p.switch_ns),
	                              "switch_from", p.switch_from, "cross_ratio",
	                              jnum(p.cross_ratio), "create_ns", jnum(p.create_ns),
	                              "glibc_stack_bytes", jnum(p.glibc_bytes)));
	w = xcalloc(n + 1, sizeof(*w));
	json_array_foreach(list, i, v)
	{
		price_one(v, inputs, &p);
		w[i] = v;
	}
	qsort(w, n, sizeof(*w), by_cost);
	for (i = 0; i < n; i++)
		json_array_append(sorted, w[i]);
	json_object_set_new(doc, "workloads", sorted);
	free(w);
}
