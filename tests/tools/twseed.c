/*
 * twseed: writes a realistic, deterministic probe history into a threadwatch
 * database through the store API, for the dashboard's browser test, the
 * regression tests and the benchmarks. Every cycle stores the documents of
 * the three built-in probes (shaped exactly as the probes print them), a
 * recommendation computed by the shared code from them, and a headroom
 * record, and an observer window of six services; the host fingerprint is recorded so that a kernel
 * change shows up in the history as it would on a real host.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "clock.h"
#include "fingerprint.h"
#include "headroom.h"
#include "recommend.h"
#include "store.h"
#include "workload_keep.h"
#include "xmalloc.h"

#define MS_PER_MIN INT64_C(60000)
#define MS_PER_DAY (1440 * MS_PER_MIN)
#define STACK_BYTES 8388608.0
#define PAGE_BYTES 4096.0
#define WINDOW_LO 1073741824.0 /* 0x40000000 */
#define WINDOW_BYTES 1073741824.0
#define MAX_MAP_COUNT 65530.0
#define MAX_THREADS 4096
#define BUCKET 64
#define PAIRS 15

struct seed_opts {
	const char *db;
	long days;
	long every_min;
	long seed;
	long kernel_change_day; /* -1: none */
	long failed_run;
	double step_pct;
	long linear;
	long synthetic;
	double end_s; /* 0: now */
	long near_limit;
	const char *host_kind; /* NULL: this host (or --synthetic-host) */
	double ratio;          /* 0: drawn from the seed */
	long quiet;
	long raw_days;   /* 0: keep every document */
	long all_probes; /* also handoff, stackmem and createscale */
};

enum opt_type { OPT_STR, OPT_LONG, OPT_DOUBLE, OPT_FLAG };

/* One table drives parsing, validation and --help. */
struct opt_def {
	const char *name;
	enum opt_type type;
	size_t off;
	double lo, hi;
	const char *arg;
	const char *help;
};

#define OFF(f) offsetof(struct seed_opts, f)
static const struct opt_def opt_defs[] = {
    {"db", OPT_STR, OFF(db), 0, 0, "PATH", "database to write (created and migrated when missing)"},
    {"days", OPT_LONG, OFF(days), 1, 3660, "N", "days of history ending now (default 30)"},
    {"every", OPT_LONG, OFF(every_min), 5, 10080, "MINUTES",
     "interval between cycles (default 360)"},
    {"seed", OPT_LONG, OFF(seed), 0, 4294967295.0, "N", "random seed (default 1)"},
    {"kernel-change-at", OPT_LONG, OFF(kernel_change_day), 0, 3660, "DAY",
     "day (from the first) on which the host gets a new kernel release"},
    {"failed-run", OPT_FLAG, OFF(failed_run), 0, 0, NULL,
     "make the threads run of the second-to-last cycle an error with a reason"},
    {"step", OPT_DOUBLE, OFF(step_pct), -90, 1000, "PCT",
     "at the kernel change, switch and create costs change by PCT percent"},
    {"linear-search", OPT_FLAG, OFF(linear), 0, 0, NULL,
     "simulate a kernel whose MAP_32BIT search is linear (a knee and the linear class)"},
    {"synthetic-host", OPT_FLAG, OFF(synthetic), 0, 0, NULL,
     "record a made-up host instead of this host's fingerprint"},
    {"end", OPT_DOUBLE, OFF(end_s), 1e9, 1e11, "UNIX_S", "time the history ends (default now)"},
    {"ratio", OPT_DOUBLE, OFF(ratio), 0.5, 1.5, "R",
     "low/high context-switch time ratio (default about 0.999: no benefit)"},
    {"near-limit", OPT_FLAG, OFF(near_limit), 0, 0, NULL,
     "the last headroom record has the cgroup's tasks within 10% of pids.max"},
    {"raw-days", OPT_LONG, OFF(raw_days), 0, 36500, "N",
     "keep documents, points, recommendations and headroom records of the last N days only, "
     "as the daemon's retention does; older cycles keep their runs and samples (default 0: "
     "keep everything)"},
    {"host-kind", OPT_STR, OFF(host_kind), 0, 0, "KIND",
     "a made-up host of one kind: intel (a switch about 0.8 us, FSGSBASE), amd (about 3.5 "
     "us, PTI) or arm64 (map32 not applicable)"},
    {"quiet", OPT_FLAG, OFF(quiet), 0, 0, NULL, "print nothing on success"},
    {"all-probes", OPT_FLAG, OFF(all_probes), 0, 0, NULL,
     "also write runs of the handoff, stackmem and createscale probes"},
};
#define N_OPTS (sizeof(opt_defs) / sizeof(opt_defs[0]))

static void usage(FILE *f)
{
	fprintf(f, "usage: twseed --db PATH [OPTION...]\n\n"
	           "Writes a realistic probe history into a threadwatch database.\n\n");
	for (size_t i = 0; i < N_OPTS; i++) {
		char left[64];

		snprintf(left, sizeof(left), "--%s%s%s", opt_defs[i].name,
		         opt_defs[i].arg ? " " : "", opt_defs[i].arg ? opt_defs[i].arg : "");
		fprintf(f, "  %-26s %s\n", left, opt_defs[i].help);
	}
}

static int opt_set(const struct opt_def *d, const char *arg, struct seed_opts *o)
{
	char *base = (char *)o + d->off;
	char *end;
	double v;

	switch (d->type) {
	case OPT_STR:
		if (!*arg)
			return -EINVAL;
		*(const char **)(void *)base = arg;
		return 0;
	case OPT_FLAG:
		*(long *)(void *)base = 1;
		return 0;
	case OPT_LONG:
	case OPT_DOUBLE:
		errno = 0;
		v = strtod(arg, &end);
		if (errno || end == arg || *end || !isfinite(v) || v < d->lo || v > d->hi)
			return -EINVAL;
		if (d->type == OPT_LONG) {
			if (v != floor(v))
				return -EINVAL;
			*(long *)(void *)base = (long)v;
		} else {
			*(double *)(void *)base = v;
		}
		return 0;
	}
	return -EINVAL;
}

static int parse_args(int argc, char **argv, struct seed_opts *o)
{
	struct option lo[N_OPTS + 2];
	int c;

	for (size_t i = 0; i < N_OPTS; i++)
		lo[i] = (struct option){
		    opt_defs[i].name,
		    opt_defs[i].type == OPT_FLAG ? no_argument : required_argument, NULL, (int)i};
	lo[N_OPTS] = (struct option){"help", no_argument, NULL, 'h'};
	lo[N_OPTS + 1] = (struct option){NULL, 0, NULL, 0};
	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		if (c == 'h') {
			usage(stdout);
			exit(0);
		}
		if (c < 0 || (size_t)c >= N_OPTS) {
			usage(stderr);
			return -EINVAL;
		}
		if (opt_set(&opt_defs[c], optarg, o) < 0) {
			fprintf(stderr, "twseed: bad value \"%s\" for --%s (%s)\n", optarg,
			        opt_defs[c].name, opt_defs[c].help);
			return -EINVAL;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "twseed: unexpected argument \"%s\"\n", argv[optind]);
		return -EINVAL;
	}
	if (!o->db) {
		fprintf(stderr, "twseed: --db PATH is required\n");
		return -EINVAL;
	}
	if (o->kernel_change_day > o->days) {
		fprintf(stderr, "twseed: --kernel-change-at %ld is after the last day (%ld)\n",
		        o->kernel_change_day, o->days);
		return -EINVAL;
	}
	if (o->step_pct != 0 && o->kernel_change_day < 0) {
		fprintf(stderr, "twseed: --step needs --kernel-change-at\n");
		return -EINVAL;
	}
	return 0;
}

/* splitmix64: small, fast and the same everywhere. */
static uint64_t rng_state;

static double rng_uniform(void)
{
	uint64_t z = (rng_state += UINT64_C(0x9e3779b97f4a7c15));

	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	z ^= z >> 31;
	return (double)(z >> 11) / 9007199254740992.0;
}

static double rng_normal(void)
{
	double u = rng_uniform(), v = rng_uniform();

	if (u < 1e-300)
		u = 1e-300;
	return sqrt(-2.0 * log(u)) * cos(2.0 * M_PI * v);
}

/* Multiplicative noise: about `rel` relative spread, never below 0.5. */
static double jitter(double rel)
{
	return fmax(0.5, 1.0 + rel * rng_normal());
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Sorts v in place; returns the median. */
static double median_sorted(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static double mad(const double *v, size_t n, double med)
{
	double d[PAIRS];

	for (size_t i = 0; i < n; i++)
		d[i] = fabs(v[i] - med);
	return median_sorted(d, n);
}

/* What the simulated host is like; drawn once from the seed. */
struct host_model {
	double high_ns; /* one context switch, high stacks */
	double ratio;   /* low/high */
	double tsc_hz;
	double create_ns;       /* one pthread_create with few threads alive */
	double fail_ns;         /* a failing MAP_32BIT mmap on a tree-search kernel */
	double fail_ns_per_vma; /* the extra cost per VMA on a linear-search kernel */
	double fallback_ns;
	double plain_ns;
	double start_vmas;
	double low_fs_base, high_fs_base, default_stack;
	int linear;
};

/* --host-kind: the project's two kinds of test machine (a KVM guest on
 * Intel with FSGSBASE, one on AMD with PTI forced on) and an arm64 host. */
static const struct host_kind {
	const char *name, *arch, *vendor, *model_name, *meltdown, *kernel;
	int family, model, fsgsbase;
	double high_ns; /* one context switch */
} host_kinds[] = {
    {"intel", "x86_64", "GenuineIntel", "Intel(R) Xeon(R) Gold 6230 CPU @ 2.10GHz", "Not affected",
     "6.1.0-21-amd64", 6, 85, 1, 800},
    {"amd", "x86_64", "AuthenticAMD", "AMD EPYC 7B12 64-Core Processor", "Mitigation: PTI",
     "6.1.0-21-amd64", 23, 49, 0, 3500},
    {"arm64", "aarch64", "ARM", "Neoverse-N1", "Not affected", "6.1.0-21-arm64", 0, 3340, 0, 1200},
};

static const struct host_kind *host_kind_find(const char *name)
{
	for (size_t i = 0; name && i < sizeof(host_kinds) / sizeof(host_kinds[0]); i++)
		if (!strcmp(name, host_kinds[i].name))
			return &host_kinds[i];
	return NULL;
}

static void model_init(struct host_model *m, int linear, double ratio)
{
	m->high_ns = 1500 + 400 * rng_uniform();
	m->ratio = 0.996 + 0.006 * rng_uniform();
	m->tsc_hz = 2.1e9 + 1e8 * floor(10 * rng_uniform());
	m->create_ns = 14000 + 6000 * rng_uniform();
	m->fail_ns = 350 + 150 * rng_uniform();
	m->fail_ns_per_vma = 55 + 15 * rng_uniform();
	m->fallback_ns = 1300 + 300 * rng_uniform();
	m->plain_ns = 1100 + 200 * rng_uniform();
	m->start_vmas = 60 + floor(30 * rng_uniform());
	m->low_fs_base = WINDOW_LO + 4096.0 * floor(4096 * rng_uniform());
	m->high_fs_base = (double)0x7f0000000000 + 4096.0 * floor(1e8 * rng_uniform());
	m->default_stack = (double)0x7f8000000000 + 4096.0 * floor(1e8 * rng_uniform());
	m->linear = linear;
	if (ratio > 0)
		m->ratio = ratio;
}

/* A probe document as probes/lib/probe.c prints it. */
static json_t *doc_new(const char *probe, int64_t started_ms, double duration_s)
{
	char when[40];

	clock_rfc3339(started_ms * 1000000, when, sizeof(when));
	/* run as threadwatchd runs its probes by default (probes/lib/probe.c
	 * records it) */
	return json_pack("{s:s, s:i, s:s, s:n, s:s, s:f, s:f, s:{}, s:{}, s:{}, s:{s:s, s:i, s:s}}",
	                 "probe", probe, "protocol", 1, "status", "ok", "reason", "started_at",
	                 when, "started_unix", (double)started_ms / 1e3, "duration_s", duration_s,
	                 "params", "scalars", "series", "info", "sched_policy", "idle", "nice", 10,
	                 "cpus_allowed", "1");
}

static void doc_scalar(json_t *doc, const char *name, double v, const char *unit)
{
	json_object_set_new(json_object_get(doc, "scalars"), name,
	                    json_pack("{s:f, s:s}", "value", v, "unit", unit));
}

/* Adds a series and returns its (borrowed) points array. */
static json_t *doc_series(json_t *doc, const char *name, const char *x_unit, const char *y_unit)
{
	json_t *s = json_pack("{s:s, s:s, s:[]}", "x_unit", x_unit, "y_unit", y_unit, "points");

	json_object_set_new(json_object_get(doc, "series"), name, s);
	return json_object_get(s, "points");
}

static void point_add(json_t *points, double x, double y)
{
	json_array_append_new(points, json_pack("[f, f]", x, y));
}

static void doc_info_str(json_t *doc, const char *name, const char *v)
{
	json_object_set_new(json_object_get(doc, "info"), name, v ? json_string(v) : json_null());
}

static void doc_info_bool(json_t *doc, const char *name, int v)
{
	json_object_set_new(json_object_get(doc, "info"), name, json_boolean(v));
}

static void doc_info_hex(json_t *doc, const char *name, double addr)
{
	char hex[32];

	snprintf(hex, sizeof(hex), "0x%llx", (unsigned long long)addr);
	doc_info_str(doc, name, hex);
}

/* What differs from one run to the next: a slower host (step after the
 * kernel change) and a noisy neighbour now and then. */
struct run_env {
	double factor; /* multiplies switch and create costs */
	double loadavg1;
	double steal_pct;
};

/* The ctxsw mechanism figures (equivalence, selector, A/A, ring), derived from the high arm without
 * drawing from the generator (so every other seeded figure stays as it was): the A/A control equal
 * to high, the segment selector 1.2% dearer, equivalence at 2% read from the low/high CI, and a
 * ring that steps up past 2 threads. hi[] is sorted. */
static void ctxsw_mechanism(json_t *doc, const double *hi, double high_ns, double r_lo, double r_hi)
{
	static const int ring[] = {2, 4, 8, 16, 32, 64};
	json_t *ring_ns = doc_series(doc, "ring_ns", "threads", "ns");
	json_t *ring_sel = doc_series(doc, "ring_selector_ns", "threads", "ns");
	json_t *ring_sw = doc_series(doc, "ring_switches_per_hop", "threads", "ratio");

	doc_scalar(doc, "aa_ns", high_ns, "ns");
	doc_scalar(doc, "aa_ci_lo", hi[3], "ns");
	doc_scalar(doc, "aa_ci_hi", hi[11], "ns");
	doc_scalar(doc, "aa_ratio", 1.0, "ratio");
	doc_scalar(doc, "aa_ratio_ci_lo", 0.995, "ratio");
	doc_scalar(doc, "aa_ratio_ci_hi", 1.005, "ratio");
	doc_scalar(doc, "selector_ns", high_ns * 1.012, "ns");
	doc_scalar(doc, "selector_ci_lo", hi[3] * 1.012, "ns");
	doc_scalar(doc, "selector_ci_hi", hi[11] * 1.012, "ns");
	doc_scalar(doc, "selector_ratio", 1.012, "ratio");
	doc_scalar(doc, "selector_ratio_ci_lo", 1.006, "ratio");
	doc_scalar(doc, "selector_ratio_ci_hi", 1.018, "ratio");
	/* its control, high stacks in a child process, level with high */
	doc_scalar(doc, "child_ratio", 1.0, "ratio");
	doc_scalar(doc, "child_ratio_ci_lo", 0.996, "ratio");
	doc_scalar(doc, "child_ratio_ci_hi", 1.004, "ratio");
	doc_scalar(doc, "selector_child_ratio", 1.012, "ratio");
	doc_scalar(doc, "selector_child_ratio_ci_lo", 1.006, "ratio");
	doc_scalar(doc, "selector_child_ratio_ci_hi", 1.018, "ratio");
	doc_scalar(doc, "equivalence_margin", 0.02, "ratio");
	doc_scalar(doc, "equivalent", r_lo >= 0.98 && r_hi <= 1.02, "bool");
	for (size_t i = 0; i < sizeof(ring) / sizeof(ring[0]); i++) {
		double y = high_ns * (ring[i] == 2 ? 1.0 : 1.7 + 0.01 * (double)i);

		point_add(ring_ns, ring[i], y);
		point_add(ring_sel, ring[i], y * 1.012);
		point_add(ring_sw, ring[i], ring[i] == 2 ? 1.0 : 1.35);
	}
	doc_info_str(doc, "ring_switches", "counted: seeded");
	doc_info_str(doc, "order", "random");
	doc_info_str(doc, "cycles_source", "tsc");
	doc_info_str(doc, "selector", "0x63");
	json_object_set_new(json_object_get(doc, "info"), "aa_biased", json_false());
}

static json_t *make_ctxsw(const struct host_model *m, const struct run_env *e, int64_t t_ms,
                          uint64_t seed)
{
	double lo[PAIRS], hi[PAIRS], r[PAIRS], pr[PAIRS];
	const double spp = 20000;
	json_t *doc = doc_new("ctxsw", t_ms, 3.0 + 0.4 * rng_uniform());
	json_t *pts;
	double low_ns, high_ns, ratio;

	json_object_set_new(json_object_get(doc, "params"), "quick", json_false());
	json_object_set_new(json_object_get(doc, "params"), "seed", json_integer((json_int_t)seed));
	json_object_set_new(json_object_get(doc, "params"), "pairs", json_integer(PAIRS));
	pts = doc_series(doc, "pair_ratio", "count", "ratio");
	for (int i = 0; i < PAIRS; i++) {
		double drift = e->factor * jitter(0.015);

		hi[i] = m->high_ns * drift * jitter(0.01);
		lo[i] = m->high_ns * m->ratio * drift * jitter(0.01);
		r[i] = pr[i] = lo[i] / hi[i];
		point_add(pts, i, pr[i]);
	}
	low_ns = median_sorted(lo, PAIRS);
	high_ns = median_sorted(hi, PAIRS);
	ratio = median_sorted(r, PAIRS);
	/* Order statistics 4 and 12 of 15 bound a median at about 95%. */
	doc_scalar(doc, "low_ns", low_ns, "ns");
	doc_scalar(doc, "high_ns", high_ns, "ns");
	doc_scalar(doc, "low_cycles", low_ns * m->tsc_hz / 1e9, "cycles");
	doc_scalar(doc, "high_cycles", high_ns * m->tsc_hz / 1e9, "cycles");
	doc_scalar(doc, "low_mad_ns", mad(lo, PAIRS, low_ns), "ns");
	doc_scalar(doc, "high_mad_ns", mad(hi, PAIRS, high_ns), "ns");
	doc_scalar(doc, "low_ci_lo", lo[3], "ns");
	doc_scalar(doc, "low_ci_hi", lo[11], "ns");
	doc_scalar(doc, "high_ci_lo", hi[3], "ns");
	doc_scalar(doc, "high_ci_hi", hi[11], "ns");
	doc_scalar(doc, "ratio", ratio, "ratio");
	doc_scalar(doc, "ratio_ci_lo", r[3], "ratio");
	doc_scalar(doc, "ratio_ci_hi", r[11], "ratio");
	doc_scalar(doc, "pairs", PAIRS, "count");
	doc_scalar(doc, "switches_per_pair", spp, "count");
	doc_scalar(doc, "tsc_hz", m->tsc_hz, "hz");
	doc_scalar(doc, "fsgsbase", 1, "bool");
	doc_scalar(doc, "low_fs_base", m->low_fs_base, "address");
	doc_scalar(doc, "high_fs_base", m->high_fs_base, "address");
	doc_scalar(doc, "low_stack", m->low_fs_base - STACK_BYTES / 2, "address");
	doc_scalar(doc, "high_stack", m->high_fs_base - STACK_BYTES / 2, "address");
	doc_info_hex(doc, "low_fs_base", m->low_fs_base);
	doc_info_hex(doc, "high_fs_base", m->high_fs_base);
	doc_info_hex(doc, "low_stack", m->low_fs_base - STACK_BYTES / 2);
	doc_info_hex(doc, "high_stack", m->high_fs_base - STACK_BYTES / 2);
	ctxsw_mechanism(doc, hi, high_ns, r[3], r[11]);
	return doc;
}

/* Median cost of a failing MAP_32BIT mmap with `vmas` mappings. */
static double fail_cost(const struct host_model *m, double vmas)
{
	if (m->linear)
		return 200 + m->fail_ns_per_vma * vmas;
	return m->fail_ns * pow(vmas / m->start_vmas, 0.03);
}

static json_t *make_map32(const struct host_model *m, int64_t t_ms)
{
	json_t *doc = doc_new("map32", t_ms, 4.5 + 1.5 * rng_uniform());
	json_t *fm, *fp, *bm, *bp, *pm, *pp;
	double sx = 0, sy = 0, sxx = 0, sxy = 0, lx[32], ly[32];
	double v, last_fail = 0, last_v = 0, slope, icpt, ssr = 0, se, capacity;
	int n = 0;
	const char *cls;

	json_object_set_new(json_object_get(doc, "params"), "quick", json_false());
	json_object_set_new(json_object_get(doc, "params"), "stack_bytes",
	                    json_integer((json_int_t)STACK_BYTES));
	fm = doc_series(doc, "fail_median_ns", "vmas", "ns");
	fp = doc_series(doc, "fail_p99_ns", "vmas", "ns");
	bm = doc_series(doc, "retry_median_ns", "vmas", "ns");
	bp = doc_series(doc, "retry_p99_ns", "vmas", "ns");
	pm = doc_series(doc, "plain_median_ns", "vmas", "ns");
	pp = doc_series(doc, "plain_p99_ns", "vmas", "ns");
	for (v = m->start_vmas + 2 * 128; v < MAX_MAP_COUNT / 2 && n < 32; v = floor(v * 1.6)) {
		double f = fail_cost(m, v) * jitter(0.03);
		/* The retry after a failure walks every VMA on a linear-search
		 * kernel; both ladders share x here for simplicity. */
		double b = ((m->linear ? fail_cost(m, v) : 0) + m->fallback_ns) * jitter(0.04);
		double p = m->plain_ns * jitter(0.04);

		point_add(fm, v, f);
		point_add(fp, v, f * (1.4 + 0.3 * rng_uniform()));
		point_add(bm, v, b);
		point_add(bp, v, b * (1.5 + 0.4 * rng_uniform()));
		point_add(pm, v, p);
		point_add(pp, v, p * (1.5 + 0.4 * rng_uniform()));
		lx[n] = log(v);
		ly[n] = log(f);
		sx += lx[n];
		sy += ly[n];
		sxx += lx[n] * lx[n];
		sxy += lx[n] * ly[n];
		last_fail = f;
		last_v = v;
		n++;
	}
	slope = (n * sxy - sx * sy) / (n * sxx - sx * sx);
	icpt = (sy - slope * sx) / n;
	for (int i = 0; i < n; i++)
		ssr += pow(ly[i] - icpt - slope * lx[i], 2);
	se = sqrt(ssr / (n - 2) / (sxx - sx * sx / n));
	cls = slope < 0.2 ? "flat" : slope > 0.7 ? "linear" : "sublinear";
	capacity = floor(WINDOW_BYTES / (STACK_BYTES + PAGE_BYTES));
	doc_scalar(doc, "window_lo", WINDOW_LO, "address");
	doc_scalar(doc, "window_hi", WINDOW_LO + WINDOW_BYTES, "address");
	doc_scalar(doc, "window_bytes", WINDOW_BYTES, "bytes");
	doc_scalar(doc, "stack_bytes", STACK_BYTES, "bytes");
	doc_scalar(doc, "capacity_stacks", capacity, "count");
	doc_scalar(doc, "slope", slope, "slope");
	doc_scalar(doc, "slope_ci_lo", slope - 2.2 * se, "slope");
	doc_scalar(doc, "slope_ci_hi", slope + 2.2 * se, "slope");
	doc_scalar(doc, "fail_ns_at_max", last_fail, "ns");
	doc_scalar(doc, "max_vmas", last_v, "vmas");
	doc_scalar(doc, "start_vmas", m->start_vmas, "vmas");
	doc_info_str(doc, "fail_class", cls);
	doc_info_str(doc, "retry_class", cls);
	doc_info_str(doc, "window_stopped_by", "window_full");
	doc_info_str(doc, "ladder_stopped_by", "target");
	json_object_set_new(json_object_get(doc, "info"), "reps",
	                    json_integer(m->linear ? 40 : 200));
	return doc;
}

static const char *const policies[] = {"default", "low", "high"};

/* Median ns of one pthread_create with `live` threads for a policy. */
static double create_cost(const struct host_model *m, const struct run_env *e, int policy,
                          double live)
{
	double capacity = floor(WINDOW_BYTES / (STACK_BYTES + PAGE_BYTES));
	double c = m->create_ns * e->factor * (1 + 0.2 * live / MAX_THREADS);

	if (policy == 1 && live > capacity)
		c += fail_cost(m, m->start_vmas + 2 * live) + m->fallback_ns;
	return c;
}

static void threads_policy(json_t *doc, const struct host_model *m, const struct run_env *e,
                           int policy)
{
	const char *p = policies[policy];
	char name[64];
	json_t *rate, *med, *p99;
	double first = 0, last = 0, min = INFINITY, knee = -1;
	double capacity = floor(WINDOW_BYTES / (STACK_BYTES + PAGE_BYTES));

	snprintf(name, sizeof(name), "%s_rate", p);
	rate = doc_series(doc, name, "threads", "per_s");
	snprintf(name, sizeof(name), "%s_median_ns", p);
	med = doc_series(doc, name, "threads", "ns");
	snprintf(name, sizeof(name), "%s_p99_ns", p);
	p99 = doc_series(doc, name, "threads", "ns");
	for (int live = BUCKET; live <= MAX_THREADS; live += BUCKET) {
		double c = create_cost(m, e, policy, live - BUCKET / 2) * jitter(0.04);
		double r = 1e9 / (c * (1.05 + 0.05 * rng_uniform()));

		point_add(rate, live, r);
		point_add(med, live, c);
		point_add(p99, live, c * (1.8 + 0.6 * rng_uniform()));
		if (live == BUCKET)
			first = r;
		last = r;
		min = fmin(min, r);
		if (knee < 0 && r < first / 10)
			knee = live;
	}
	snprintf(name, sizeof(name), "%s_first_rate", p);
	doc_scalar(doc, name, first, "per_s");
	snprintf(name, sizeof(name), "%s_last_rate", p);
	doc_scalar(doc, name, last, "per_s");
	snprintf(name, sizeof(name), "%s_min_rate", p);
	doc_scalar(doc, name, min, "per_s");
	snprintf(name, sizeof(name), "%s_steady_rate", p);
	doc_scalar(doc, name, last, "per_s");
	snprintf(name, sizeof(name), "%s_knee", p);
	if (knee >= 0)
		doc_scalar(doc, name, knee, "threads");
	else
		doc_info_str(doc, name, NULL);
	snprintf(name, sizeof(name), "%s_map32_failures", p);
	doc_scalar(doc, name, policy == 1 ? fmax(0, MAX_THREADS - capacity) : 0, "count");
}

static json_t *make_threads(const struct host_model *m, const struct run_env *e, int64_t t_ms)
{
	json_t *doc = doc_new("threads", t_ms, (m->linear ? 10.0 : 6.0) + 2 * rng_uniform());
	double lo = m->default_stack, hi = lo + MAX_THREADS * (STACK_BYTES + PAGE_BYTES);
	char range[80];

	json_object_set_new(json_object_get(doc, "params"), "quick", json_false());
	json_object_set_new(json_object_get(doc, "params"), "max_threads",
	                    json_integer(MAX_THREADS));
	json_object_set_new(json_object_get(doc, "params"), "stack_bytes",
	                    json_integer((json_int_t)STACK_BYTES));
	for (int p = 0; p < 3; p++)
		threads_policy(doc, m, e, p);
	doc_scalar(doc, "max_threads", MAX_THREADS, "threads");
	doc_scalar(doc, "stack_bytes", STACK_BYTES, "bytes");
	doc_scalar(doc, "default_stack_lo", lo, "address");
	doc_scalar(doc, "default_stack_hi", hi, "address");
	snprintf(range, sizeof(range), "0x%llx-0x%llx", (unsigned long long)lo,
	         (unsigned long long)hi);
	doc_info_str(doc, "clamp_reason", "none");
	doc_info_str(doc, "default_stack_range", range);
	json_object_set_new(json_object_get(doc, "info"), "default_stacks_low", json_false());
	return doc;
}

/* A kernel release a few updates older than `cur` ("6.1.0-18-amd64" ->
 * "6.1.0-15-amd64"): the last number before the flavour goes down.
 * malloc'd. */
static char *older_kernel(const char *cur)
{
	const char *s = cur ? cur : "6.1.0-18-amd64";
	size_t n = strlen(s), best = n, i = 0;
	char *out;

	while (i < n && !(s[i] >= 'a' && s[i] <= 'z')) {
		size_t j = i + strspn(s + i, "0123456789");

		if (j > i && j - i <= 6 && strtol(s + i, NULL, 10) >= 2)
			best = i;
		i = j > i ? j : i + 1;
	}
	if (best == n) {
		xasprintf(&out, "%s-old", s);
	} else {
		long v = strtol(s + best, NULL, 10);

		xasprintf(&out, "%.*s%ld%s", (int)best, s, v - (v > 3 ? 3 : 1),
		          s + best + strspn(s + best, "0123456789"));
	}
	return out;
}

static json_t *synthetic_fingerprint(void)
{
	return json_pack(
	    "{s:s, s:s, s:s, s:s, s:s, s:{s:s, s:i, s:i, s:i, s:s, s:s, s:b}, s:s, s:i,"
	    " s:{s:s, s:s, s:s}, s:{s:i, s:i, s:i, s:i, s:i, s:i, s:i}}",
	    "hostname", "seedhost", "kernel", "6.1.0-21-amd64", "kernel_version",
	    "#1 SMP PREEMPT_DYNAMIC Debian 6.1.90-1 (2024-05-03)", "glibc", "2.36", "arch",
	    "x86_64", "cpu", "vendor", "GenuineIntel", "family", 6, "model", 85, "stepping", 7,
	    "microcode", "0x5003604", "model_name", "Intel(R) Xeon(R) Gold 6230 CPU @ 2.10GHz",
	    "fsgsbase", 1, "virtualization", "kvm", "ncpus", 8, "vulnerabilities", "meltdown",
	    "Not affected", "spectre_v2", "Mitigation: Enhanced / Automatic IBRS", "mds",
	    "Not affected", "limits", "threads_max", 255545, "pid_max", 4194304, "nproc_soft",
	    127772, "stack_soft", 8388608, "pids_max", 38325, "max_map_count", 65530,
	    "overcommit_memory", 0);
}

/* The synthetic host made one of the kinds, named after it and its seed. */
static json_t *kind_fingerprint(const struct host_kind *k, long seed)
{
	json_t *fp = synthetic_fingerprint(), *cpu = json_object_get(fp, "cpu");
	char name[64];

	snprintf(name, sizeof(name), "%s-%ld", k->name, seed);
	json_object_set_new(fp, "hostname", json_string(name));
	json_object_set_new(fp, "arch", json_string(k->arch));
	json_object_set_new(fp, "kernel", json_string(k->kernel));
	json_object_set_new(cpu, "vendor", json_string(k->vendor));
	json_object_set_new(cpu, "model_name", json_string(k->model_name));
	json_object_set_new(cpu, "family", json_integer(k->family));
	json_object_set_new(cpu, "model", json_integer(k->model));
	json_object_set_new(cpu, "fsgsbase", json_boolean(k->fsgsbase));
	json_object_set_new(json_object_get(fp, "vulnerabilities"), "meltdown",
	                    json_string(k->meltdown));
	return fp;
}

/* map32 where MAP_32BIT does not exist, as the probe says it. */
static json_t *make_map32_na(int64_t t_ms)
{
	json_t *doc = doc_new("map32", t_ms, 0.001);

	json_object_set_new(doc, "status", json_string("not_applicable"));
	json_object_set_new(doc, "reason",
	                    json_string("no MAP_32BIT window on aarch64: the flag exists only on "
	                                "x86-64"));
	return doc;
}

/* The host before the kernel change: the same, with an older release. */
static json_t *fingerprint_before(const json_t *now)
{
	json_t *fp = json_deep_copy(now);
	char *k = older_kernel(json_string_value(json_object_get(now, "kernel")));

	json_object_set_new(fp, "kernel", json_string(k));
	free(k);
	return fp;
}

/* A headroom record as the scheduler makes it (daemon/headroom.c), for
 * a host with a few hundred threads; `near` puts the cgroup's tasks at 95%
 * of pids.max, which raises a warning. */
static json_t *make_headroom(const json_t *fp, int near)
{
	const json_t *lim = json_object_get(fp, "limits");
	struct headroom_sample hs = {
	    .threads = 400 + (uint64_t)(200 * rng_uniform()),
	    .threads_max = (uint64_t)json_integer_value(json_object_get(lim, "threads_max")),
	    .pid_max = (uint64_t)json_integer_value(json_object_get(lim, "pid_max")),
	    .pids_max = 4915,
	    .max_map_count = (uint64_t)json_integer_value(json_object_get(lim, "max_map_count")),
	    .largest_vmas = 900 + (long)(400 * rng_uniform()),
	    .largest_pid = 812,
	    .largest_comm = "postgres",
	    .scanned = 130,
	    .unreadable = 0,
	};

	if (!hs.threads_max)
		hs.threads_max = 255545;
	if (!hs.pid_max)
		hs.pid_max = 4194304;
	if (!hs.max_map_count)
		hs.max_map_count = 65530;
	hs.pids_current = near ? (uint64_t)(0.95 * (double)hs.pids_max) : 40 + hs.threads / 20;
	return headroom_json(&hs);
}

struct seeder {
	const struct seed_opts *o;
	struct store *st;
	struct host_model m;
	json_t *fp_now, *fp_old;
	const struct host_kind *kind; /* --host-kind, or NULL */
	json_t *latest[6];            /* ctxsw, map32, threads, handoff, stackmem, createscale */
	int64_t latest_id[6];
	int64_t last_end;
	int64_t raw_cut; /* runs before this keep only their samples */
	long cycles, runs, errors;
};

static int store_doc_run(struct seeder *s, int idx, json_t *doc, int64_t cycle_id,
                         const struct run_env *e)
{
	const double dur = json_real_value(json_object_get(doc, "duration_s"));
	const int64_t t0 = (int64_t)(json_real_value(json_object_get(doc, "started_unix")) * 1e3);
	struct store_run run = {
	    .probe = json_string_value(json_object_get(doc, "probe")),
	    .cycle_id = cycle_id,
	    .started_ms = t0,
	    .ended_ms = t0 + (int64_t)(dur * 1e3) + 40,
	    .status = json_string_value(json_object_get(doc, "status")),
	    .reason = json_string_value(json_object_get(doc, "reason")),
	    .doc = doc,
	    .loadavg1 = e->loadavg1,
	    .steal_pct = e->steal_pct,
	    .cpu_s = dur * 0.97,
	};
	int64_t id;
	int r;

	/* Retention drops these points anyway: not writing them is what makes a
	 * year of history quick to seed. */
	if (t0 < s->raw_cut)
		json_object_set_new(doc, "series", json_object());
	r = store_run_insert(s->st, &run, &id);
	if (r < 0)
		return r;
	json_decref(s->latest[idx]);
	s->latest[idx] = doc;
	s->latest_id[idx] = id;
	s->runs++;
	return 0;
}

static int store_failed_run(struct seeder *s, int64_t cycle_id, int64_t t_ms,
                            const struct run_env *e)
{
	const char *reason = "killed after the 60 s wall-clock limit (SIGKILL); "
	                     "no document was printed";
	struct store_run run = {
	    .probe = "threads",
	    .cycle_id = cycle_id,
	    .started_ms = t_ms,
	    .ended_ms = t_ms + 60000 + 12,
	    .status = "error",
	    .reason = reason,
	    .raw = "",
	    .loadavg1 = e->loadavg1,
	    .steal_pct = e->steal_pct,
	    .cpu_s = 59.4,
	};
	int64_t id;
	int r = store_run_insert(s->st, &run, &id);

	if (r < 0)
		return r;
	s->runs++;
	s->errors++;
	return 0;
}

static int store_recommendation(struct seeder *s, const json_t *fp, int64_t now_ms)
{
	struct rec_workload w;
	json_t *inputs, *result;
	char err[256];
	int r;

	rec_workload_default(&w);
	inputs = rec_inputs_build(fp, s->latest[0], s->latest[1], s->latest[2], &w);
	rec_inputs_costs(inputs, s->latest[5], s->latest[3], s->latest[4]);
	result = rec_compute(inputs, err, sizeof(err));
	if (!result) {
		fprintf(stderr, "twseed: the recommendation rejected its inputs: %s\n", err);
		json_decref(inputs);
		return -EINVAL;
	}
	r = store_recommendation_insert(s->st, now_ms, inputs, result, s->latest_id, 3);
	json_decref(inputs);
	json_decref(result);
	return r;
}

/* A handoff document: a same-CPU hand-off near the host's switch and the
 * nearest cross-CPU placement (two cores of one LLC) about 20 times dearer,
 * as a KVM guest whose idle vCPUs halt pays it. */
static json_t *make_handoff(const struct host_model *m, const struct run_env *e, int64_t t_ms)
{
	json_t *doc = doc_new("handoff", t_ms, 3.0);
	double same = m->high_ns * e->factor * jitter(0.01), r = 20 * jitter(0.04);

	doc_scalar(doc, "blocks", 40, "count");
	doc_scalar(doc, "handoffs_per_sample", 2000, "count");
	doc_scalar(doc, "same_cpu_ns", same, "ns");
	doc_scalar(doc, "same_cpu_ci_lo", same * 0.99, "ns");
	doc_scalar(doc, "same_cpu_ci_hi", same * 1.01, "ns");
	doc_scalar(doc, "llc_ns", same * r, "ns");
	doc_scalar(doc, "llc_ci_lo", same * r * 0.97, "ns");
	doc_scalar(doc, "llc_ci_hi", same * r * 1.03, "ns");
	doc_scalar(doc, "llc_ratio", r, "ratio");
	doc_scalar(doc, "llc_ratio_ci_lo", r * 0.96, "ratio");
	doc_scalar(doc, "llc_ratio_ci_hi", r * 1.04, "ratio");
	doc_scalar(doc, "cross_ratio", r, "ratio");
	doc_scalar(doc, "cross_ratio_ci_lo", r * 0.96, "ratio");
	doc_scalar(doc, "cross_ratio_ci_hi", r * 1.04, "ratio");
	doc_info_str(doc, "cross_placement", "llc");
	doc_info_str(doc, "cpuidle_driver", "haltpoll");
	doc_info_str(doc, "haltpoll_guest_halt_poll_ns", "0");
	doc_info_str(doc, "mechanism",
	             "cpuidle haltpoll with guest_halt_poll_ns 0: an idle vCPU halts at once, so "
	             "each hand-off wakes a halted vCPU through the hypervisor");
	/* probes/handoff.c's words, whose sysfs path is the longest unbroken
	 * word the page shows (a phone must wrap it) */
	doc_info_str(doc, "fix",
	             "let an idle vCPU poll before it halts: haltpoll.guest_halt_poll_ns=200000 "
	             "on the guest kernel's command line (or written to "
	             "/sys/module/haltpoll/parameters/guest_halt_poll_ns) keeps a vCPU awake "
	             "200 µs after it idles, which the host counts as busy time");
	return doc;
}

/* A stackmem document: 8 KiB per idle thread, 2 MiB on huge pages. */
static json_t *make_stackmem(int64_t t_ms)
{
	static const char *const kinds[] = {"glibc", "map_stack", "plain", "huge"};
	json_t *doc = doc_new("stackmem", t_ms, 0.2);
	char name[64];

	for (size_t k = 0; k < 4; k++)
		for (int big = 0; big < 2; big++) {
			double per = k == 3 && !big ? 2097152 : 8192 * jitter(0.05);

			snprintf(name, sizeof(name), "%s%s_bytes_per_thread", kinds[k],
			         big ? "_2m" : "");
			doc_scalar(doc, name, per, "bytes");
			/* the lowest and highest of its rounds */
			snprintf(name, sizeof(name), "%s%s_bytes_per_thread_ci_lo", kinds[k],
			         big ? "_2m" : "");
			doc_scalar(doc, name, k == 3 && !big ? per : per - 1024, "bytes");
			snprintf(name, sizeof(name), "%s%s_bytes_per_thread_ci_hi", kinds[k],
			         big ? "_2m" : "");
			doc_scalar(doc, name, k == 3 && !big ? per : per + 1024, "bytes");
			snprintf(name, sizeof(name), "%s%s_huge_bytes_per_thread", kinds[k],
			         big ? "_2m" : "");
			doc_scalar(doc, name, k == 3 && !big ? 2097152 : 0, "bytes");
		}
	doc_info_str(doc, "thp_enabled", "madvise");
	doc_info_bool(doc, "map_stack_nohugepage", 1);
	doc_info_str(
	    doc, "fix",
	    "map thread stacks with MAP_STACK (this kernel gives them VM_NOHUGEPAGE), keep "
	    "THP at madvise, or keep stacks under 2 MiB; glibc 2.38+: "
	    "glibc.pthread.stack_hugetlb=0");
	return doc;
}

/* A createscale document: two creators without the stack cache make fewer
 * creates than one. */
static json_t *make_createscale(const struct run_env *e, int64_t t_ms)
{
	json_t *doc = doc_new("createscale", t_ms, 4.0);
	double one = 60000 / e->factor * jitter(0.03), eff = 0.38 * jitter(0.05);

	doc_scalar(doc, "rounds", 7, "count");
	doc_scalar(doc, "cached_1_rate", one * 1.6, "per_s");
	doc_scalar(doc, "cached_2_rate", one * 1.6 * 0.8, "per_s");
	doc_scalar(doc, "cached_2_efficiency", 0.8, "ratio");
	doc_scalar(doc, "cached_2_efficiency_ci_lo", 0.75, "ratio");
	doc_scalar(doc, "cached_2_efficiency_ci_hi", 0.85, "ratio");
	doc_scalar(doc, "nocache_1_rate", one, "per_s");
	doc_scalar(doc, "nocache_2_rate", one * eff, "per_s");
	doc_scalar(doc, "nocache_2_efficiency", eff, "ratio");
	doc_scalar(doc, "nocache_2_efficiency_ci_lo", eff * 0.9, "ratio");
	doc_scalar(doc, "nocache_2_efficiency_ci_hi", eff * 1.1, "ratio");
	doc_info_str(doc, "creator_cpus", "1,0");
	return doc;
}

/* The runs of the probes beyond the three the recommendation reads. */
static int seed_more_probes(struct seeder *s, int64_t cycle_id, int64_t *t_run,
                            const struct run_env *e)
{
	json_t *docs[3] = {make_handoff(&s->m, e, *t_run), NULL, NULL};
	int r = 0;

	for (int i = 0; i < 3 && r >= 0; i++) {
		if (i == 1)
			docs[1] = make_stackmem(*t_run);
		else if (i == 2)
			docs[2] = make_createscale(e, *t_run);
		*t_run +=
		    (int64_t)(json_real_value(json_object_get(docs[i], "duration_s")) * 1e3) + 60;
		r = store_doc_run(s, 3 + i, docs[i], cycle_id, e);
		if (r < 0)
			json_decref(docs[i]);
	}
	return r;
}

/* The workloads of an observer window, shaped as lib/observe_group.c
 * writes them: [key, kind, unit, comm, exe, threads, creates/s,
 * switches/s, stacks, of them on huge pages]. A JVM some of whose stacks
 * huge pages back (40 MiB: under ThreadwatchWorkloadStacksHugePages's
 * 64 MiB), a service that creates a thread per request (under 1% of a CPU:
 * ThreadwatchWorkloadCreatesCostly stays quiet). */
static const struct seed_workload {
	const char *key, *kind, *unit, *comm, *exe;
	double threads, creates, switches, stacks, thp;
} seed_workloads[] = {
    {"unit:nginx.service", "unit", "nginx.service", "nginx", "/usr/sbin/nginx", 9, 0, 2400, 8, 0},
    {"unit:tomcat.service", "unit", "tomcat.service", "java", "/usr/lib/jvm/bin/java", 220, 0.5,
     900, 210, 20},
    {"unit:cgi-spawner.service", "unit", "cgi-spawner.service", "spawner", "/usr/bin/spawner", 40,
     1500, 3200, 38, 0},
    {"unit:postgresql.service", "unit", "postgresql.service", "postgres", "/usr/bin/postgres", 12,
     0, 600, 0, 0},
    {"unit:cron.service", "unit", "cron.service", "cron", "/usr/sbin/cron", 1, 0, 0.2, 0, 0},
    {"unit:ssh.service", "unit", "ssh.service", "sshd", "/usr/sbin/sshd", 1, 0, 0.5, 0, 0},
};
#define SEED_WORKLOADS_TOP 4

/* The windows vary by a jitter of their own, a hash of the window's time
 * and the workload's place: drawing from the seeder's generator would
 * shift every probe figure seeded after it, and so the history the
 * regression tests expect. */
static double window_jitter(int64_t t, size_t i)
{
	uint64_t x = (uint64_t)t * 0x9E3779B97F4A7C15ULL + i * 0xBF58476D1CE4E5B9ULL;

	x ^= x >> 31;
	x *= 0x94D049BB133111EBULL;
	x ^= x >> 29;
	return 0.8 + 0.4 * (double)(x >> 11) * 0x1.0p-53;
}

static json_t *seed_workload_json(const struct seed_workload *w, double jitter)
{
	double res = w->stacks * 16384 + w->thp * 2097152;

	return json_pack("{s:s s:s s:s s:n s:n s:s s:s s:[i] s:i s:i s:f s:f s:{s:f s:f s:f} s:b "
	                 "s:{s:i s:I s:i s:I}}",
	                 "key", w->key, "kind", w->kind, "unit", w->unit, "manager", "cgroup",
	                 "comm", w->comm, "exe", w->exe, "pids", 1000, "processes", 1, "threads",
	                 (int)w->threads, "creates_per_s", w->creates * jitter, "exits_per_s",
	                 w->creates * jitter, "switches_per_s", "total", w->switches * jitter,
	                 "voluntary", w->switches * jitter * 0.9, "involuntary",
	                 w->switches * jitter * 0.1, "switches_exact", 1, "stacks", "count",
	                 (int)w->stacks, "resident_bytes", (json_int_t)res, "thp_backed",
	                 (int)w->thp, "thp_bytes", (json_int_t)(w->thp * 2097152));
}

/* An observer window ending at t, kept as threadwatchd keeps it (priced at
 * the latest recommendation's inputs, the dearest SEED_WORKLOADS_TOP and
 * "other"). */
static int seed_window(struct seeder *s, int64_t t)
{
	json_t *list = json_array(), *doc;
	int r;

	for (size_t i = 0; i < sizeof(seed_workloads) / sizeof(seed_workloads[0]); i++)
		json_array_append_new(list,
		                      seed_workload_json(&seed_workloads[i], window_jitter(t, i)));
	doc = json_pack("{s:f s:i s:i s:o s:{} s:{s:i s:s s:i s:i s:i}}", "window_s", 60.0,
	                "processes", 80, "threads", 400, "workloads", list, "mechanisms",
	                "largest_vmas", "pid", 1000, "comm", "java", "vmas", 900,
	                "processes_scanned", 80, "processes_unreadable", 0);
	r = wkeep_take(s->st, doc, SEED_WORKLOADS_TOP, t);
	json_decref(doc);
	return r;
}

/* One cycle starting at t: fingerprint, three runs, recommendation,
 * headroom, an observer window. `fail` makes the threads run an error. */
static int seed_cycle(struct seeder *s, int64_t t, int after_change, int first, int last, int fail)
{
	const json_t *fp = after_change ? s->fp_now : s->fp_old;
	struct run_env e = {.factor = 1, .loadavg1 = 0.05 + 0.3 * rng_uniform()};
	int64_t cycle_id, t_run = t + 150;
	int changed = 0, r;
	json_t *doc;

	if (after_change)
		e.factor = 1 + s->o->step_pct / 100;
	if (rng_uniform() < 0.06) { /* a noisy neighbour */
		e.steal_pct = 4 + 12 * rng_uniform();
		e.loadavg1 += 1 + 2 * rng_uniform();
		e.factor *= 1 + e.steal_pct / 100;
	} else {
		e.steal_pct = 0.3 * rng_uniform();
	}
	r = store_fingerprint_record(s->st, fp, t, &changed);
	if (r < 0)
		return r;
	r = store_cycle_begin(s->st, t,
	                      first     ? "start"
	                      : changed ? "fingerprint"
	                                : "interval",
	                      0, &cycle_id);
	if (r < 0)
		return r;

	doc = make_ctxsw(&s->m, &e, t_run, (uint64_t)s->o->seed);
	t_run += (int64_t)(json_real_value(json_object_get(doc, "duration_s")) * 1e3) + 60;
	r = store_doc_run(s, 0, doc, cycle_id, &e);
	if (r < 0)
		goto fail_doc;
	doc = s->kind && strcmp(s->kind->arch, "x86_64") ? make_map32_na(t_run)
	                                                 : make_map32(&s->m, t_run);
	t_run += (int64_t)(json_real_value(json_object_get(doc, "duration_s")) * 1e3) + 60;
	r = store_doc_run(s, 1, doc, cycle_id, &e);
	if (r < 0)
		goto fail_doc;
	if (fail) {
		r = store_failed_run(s, cycle_id, t_run, &e);
		t_run += 60100;
	} else {
		doc = make_threads(&s->m, &e, t_run);
		t_run += (int64_t)(json_real_value(json_object_get(doc, "duration_s")) * 1e3) + 60;
		r = store_doc_run(s, 2, doc, cycle_id, &e);
		if (r < 0)
			goto fail_doc;
	}
	if (r >= 0 && s->o->all_probes)
		r = seed_more_probes(s, cycle_id, &t_run, &e);
	if (r < 0)
		return r;
	if (t >= s->raw_cut) { /* retention deletes older ones */
		r = store_recommendation(s, fp, t_run);
		if (r < 0)
			return r;
		doc = make_headroom(fp, last && s->o->near_limit);
		r = store_headroom_record(s->st, t_run, doc);
		json_decref(doc);
		if (r >= 0)
			r = seed_window(s, t_run);
		if (r < 0)
			return r;
	}
	r = store_cycle_end(s->st, cycle_id, t_run + 20, fail ? "failed" : "ok");
	if (r < 0)
		return r;
	s->cycles++;
	s->last_end = t_run + 20;
	return 0;
fail_doc:
	json_decref(doc);
	return r;
}

static int seed_all(struct seeder *s)
{
	const struct seed_opts *o = s->o;
	const int64_t every = o->every_min * MS_PER_MIN;
	int64_t end = o->end_s > 0 ? (int64_t)(o->end_s * 1e3) : clock_wall_ns() / 1000000;
	int64_t start = end - o->days * MS_PER_DAY;
	int64_t change =
	    o->kernel_change_day >= 0 ? start + o->kernel_change_day * MS_PER_DAY : INT64_MIN;
	int64_t n = (end - start) / every, last_t = 0;
	const int64_t per_day = every < MS_PER_DAY ? MS_PER_DAY / every : 1;
	char next[32], last[32];
	int r;

	s->raw_cut = o->raw_days > 0 ? end - o->raw_days * MS_PER_DAY : INT64_MIN;
	/* The last cycle ends a couple of minutes before `end`, so a daemon
	 * started on the database right away finds its last cycle recent. */
	for (int64_t i = 0; i < n; i++) {
		int64_t t = end - (n - i) * every + every - 3 * MS_PER_MIN;
		int64_t splay = (int64_t)(rng_uniform() * 0.02 * (double)every);

		if (i < n - 1)
			t -= splay;
		r = seed_cycle(s, t, t >= change, i == 0, i == n - 1,
		               o->failed_run && n >= 2 && i == n - 2);
		/* Daily, as the daemon does after each cycle, so that the pages of
		 * dropped documents are reused. */
		if (r >= 0 && o->raw_days > 0 && (i % per_day == per_day - 1 || i == n - 1))
			r = store_retention(s->st, end, (int)o->raw_days, 0, 0);
		if (r < 0)
			return r;
		last_t = t;
	}
	/* What the scheduler publishes for GET /api/v1/status. */
	snprintf(next, sizeof(next), "%lld", (long long)(last_t + every));
	snprintf(last, sizeof(last), "%lld", (long long)s->last_end);
	const char *const state[][2] = {
	    {"cycle_running", "0"},  {"last_cycle_ms", last},  {"last_cycle_status", "ok"},
	    {"next_cycle_ms", next}, {"trigger_enabled", "0"},
	};
	for (size_t i = 0; i < sizeof(state) / sizeof(state[0]); i++) {
		r = store_state_set(s->st, state[i][0], state[i][1]);
		if (r < 0)
			return r;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct seed_opts o = {.days = 30, .every_min = 360, .seed = 1, .kernel_change_day = -1};
	struct seeder s = {.o = &o};
	char err[256] = "";
	int r;

	if (parse_args(argc, argv, &o) < 0)
		return 2;
	rng_state = (uint64_t)o.seed * UINT64_C(0x2545f4914f6cdd1d) + 1;
	model_init(&s.m, (int)o.linear, o.ratio);
	s.kind = host_kind_find(o.host_kind);
	if (o.host_kind && !s.kind) {
		fprintf(stderr, "twseed: --host-kind: intel, amd or arm64, not \"%s\"\n",
		        o.host_kind);
		return 2;
	}
	if (s.kind)
		s.m.high_ns = s.kind->high_ns * (0.95 + 0.1 * rng_uniform());
	s.fp_now = s.kind        ? kind_fingerprint(s.kind, o.seed)
	           : o.synthetic ? synthetic_fingerprint()
	                         : fingerprint_read();
	s.fp_old = o.kernel_change_day >= 0 ? fingerprint_before(s.fp_now) : json_incref(s.fp_now);
	r = store_open(o.db, 0, &s.st, err, sizeof(err));
	if (r < 0) {
		fprintf(stderr, "twseed: cannot open \"%s\": %s\n", o.db,
		        err[0] ? err : strerror(-r));
		goto out;
	}
	r = seed_all(&s);
	if (r < 0)
		fprintf(stderr, "twseed: writing \"%s\" failed: %s\n", o.db,
		        store_last_error()[0] ? store_last_error() : strerror(-r));
	else if (!o.quiet)
		printf("twseed: wrote %ld cycles, %ld runs (%ld errors) to \"%s\"\n", s.cycles,
		       s.runs, s.errors, o.db);
out:
	store_close(s.st);
	for (int i = 0; i < 6; i++)
		json_decref(s.latest[i]);
	json_decref(s.fp_now);
	json_decref(s.fp_old);
	return r < 0 ? 1 : 0;
}
