/*
 * catalog: the master copy of what threadwatch measures (as tmux's
 * options-table.c is for its options). One table of metrics, each with its
 * unit, description, key-figure flag and detection settings, Prometheus
 * name and labels, and dashboard label; one table of the built-in probes.
 * The API, /metrics, regression detection, the store's run listing, the
 * CLI, the scheduler and the dashboard (GET /api/v1/catalog) all read it.
 */
#ifndef TW_CATALOG_H
#define TW_CATALOG_H

#include <stddef.h>

#include <jansson.h>

/* The handoff probe's placements across CPUs (its topo_place_names[] past
 * same_cpu), the master copy of their words: X(name, between, to), where
 * the catalogue describes "a hand-off between BETWEEN" and the
 * recommendation's finding "a hand-off to TO". */
#define CATALOG_HANDOFF_PLACEMENTS(X)                                                              \
	X("smt", "two hardware threads of one core", "the other hardware thread of its core")      \
	X("llc", "two cores that share the last-level cache",                                      \
	  "another core of its last-level cache")                                                  \
	X("cross_llc", "two last-level caches of one NUMA node",                                   \
	  "a core of another last-level cache")                                                    \
	X("cross_node", "two NUMA nodes", "a CPU of another NUMA node")

/* How /metrics exports a metric (a gauge of the probe's last ok run; no
 * sample when that run has no value, such as a knee that did not occur). */
struct catalog_prom {
	const char *name;   /* threadwatch_...; NULL: not exported */
	const char *type;   /* "gauge" */
	const char *help;   /* on the family's first row only, else NULL */
	const char *labels; /* fixed labels such as stack="low", or NULL */
	double scale;       /* divides the stored value into the base unit (1e9: ns to s) */
	/* The family's former name, exported as well for one release with
	 * "DEPRECATED: use NAME." before its help, or NULL. */
	const char *deprecated;
};

struct catalog_metric {
	const char *name; /* "probe.scalar", or "probe.series_at_x" for a series point */
	const char *probe;
	const char *scalar; /* NULL for a series point: */
	const char *series; /* the median y of the series' points within */
	double x;           /* DETECT_X_TOLERANCE of x */
	const char *unit;   /* one of catalog_units */
	const char *description;
	int key;          /* a key figure: regression detection watches it */
	double abs_floor; /* detection: a change must also be this large (0: none) */
	/* The dashboard's title for it; the dashboard draws the history of
	 * each metric with a label. NULL: none. */
	const char *label;
	struct catalog_prom prom;
	/* `threadwatch run` shows it as "run_label VALUE [ci_lo, ci_hi]". */
	const char *run_label, *ci_lo, *ci_hi;
};

struct catalog_probe {
	const char *name;
	double timeout_s;       /* default time limit of a run */
	const char *key_scalar; /* the run's key figure in run listings */
	/* Info entries `threadwatch run` also shows (NULL-padded); the label
	 * is the name up to "_class" ("fail_class" shows as "fail"). */
	const char *info[2];
	/* The arms an operator may switch off (probes_disabled = probe.arm;
	 * the probe gets --skip-arm ARM), NULL-padded. */
	const char *arms[3];
	/* The probe pins its own threads to several CPUs: the runner leaves it
	 * the caller's CPUs instead of pinning it to one. */
	int own_cpus;
	/* What it measures, in words, as the page names it ("context-switch"). */
	const char *title;
	/* Its absolute times price the services (a switch, a hand-off, a
	 * create): under probe_sched = priced it runs at SCHED_OTHER, nice 19,
	 * as the normal threads it prices do, not at SCHED_IDLE. */
	int priced;
};

extern const struct catalog_metric catalog_metrics[];
extern const size_t catalog_n_metrics;
/* The built-in probes, in the order a default run takes them. */
extern const struct catalog_probe catalog_probes[];
extern const size_t catalog_n_probes;
/* The units a metric may have (NULL-terminated). */
extern const char *const catalog_units[];

/* The metric of that name, or NULL. */
const struct catalog_metric *catalog_metric_find(const char *name);
/* The metric exported to /metrics as that family (its prom.name), or NULL. */
const struct catalog_metric *catalog_metric_find_prom(const char *family);
/* The built-in probe of that name, or NULL. */
const struct catalog_probe *catalog_probe_find(const char *name);
/* 1 when the built-in probe has an arm of that name that may be skipped. */
int catalog_arm_known(const struct catalog_probe *p, const char *arm);
/* The metric of a probe's scalar, or NULL. */
const struct catalog_metric *catalog_scalar_find(const char *probe, const char *scalar);

/* A figure kept for each workload every observer window
 * (catalog_workloads.c): its name in the store and the API, where it sits
 * in a priced workload (a jpath: "stacks/thp_bytes"), its unit, words, the
 * page's title, and its /metrics family (labelled workload="NAME"). */
struct catalog_workload_metric {
	const char *name, *path, *unit, *description, *label, *prom, *help;
};
extern const struct catalog_workload_metric catalog_workload_metrics[];
extern const size_t catalog_n_workload_metrics;
/* The workload figure of that name, or NULL. */
const struct catalog_workload_metric *catalog_workload_metric_find(const char *name);
/* [{"name", "unit", "description", "label", "prometheus": {"name", "type"}}]
 * of the workload figures. New reference. */
json_t *catalog_workloads_json(void);

/* {"metrics": [{"name", "probe", "unit", "description", "key_figure",
 * "label" | null, "prometheus": {"name", "type", "labels", "deprecated_name"}
 * | null}],
 * "probes": [{"name", "timeout_s", "key_figure"}]}. New reference. */
json_t *catalog_json(void);

#endif
