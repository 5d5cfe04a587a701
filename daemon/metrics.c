/*
 * metrics: the Prometheus text format (version 0.0.4) from one store
 * snapshot (see metrics.h). Every exported metric is a row of metric_defs:
 * its name, type, help, unit and where its value comes from; the probe
 * metrics are the catalogue's rows with a Prometheus name (lib/catalog.h);
 * the process_* families are rows of process_defs.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "atomic_file.h"
#include "catalog.h"
#include "clock.h"
#include "jpath.h"
#include "detect.h"
#include "headroom.h"
#include "metrics_host_labels.h"
#include "health.h"
#include "metrics.h"
#include "metrics_procself.h"
#include "store.h"
#include "xmalloc.h"

/* Where a value comes from. */
enum source {
	SRC_BUILD,      /* 1, labelled with the version */
	SRC_VALUE,      /* the number at `path` (a '/'-separated path in the snapshot) */
	SRC_PROBE,      /* for each probe: the number at probes/PROBE/`path` */
	SRC_PROBE_OK,   /* for each probe: 1 when its last run was ok */
	SRC_RUNS_TOTAL, /* for each probe: the sum of runs_total/PROBE/STATUS */
	SRC_FAILURES,   /* for each probe: runs_total/PROBE/error, 0 when none */
	SRC_CYCLE,      /* for each cycle status: 1 for the last cycle's, else 0 */
	SRC_REC_LOW,    /* 1 when the verdict is "low" */
	SRC_REC_INFO,   /* 1, labelled with verdict and confidence */
	SRC_HEADROOM,   /* for each limit: its `path` ("ratio" or "warning") */
	SRC_EVENTS,     /* for each key figure (and any other metric): events/total/METRIC */
	SRC_HOST_INFO,  /* 1, labelled with the host's cohort (metrics_host_labels.h) */
	SRC_CATALOG,    /* here come the probe metrics of the catalogue */
};

struct metric_def {
	const char *name;
	const char *type; /* "gauge" or "counter" */
	const char *help;
	const char *unit; /* base unit the value is in (documentation) */
	enum source src;
	const char *path;
	double div;         /* divides the stored value into the base unit (1e9: ns to s) */
	const char *labels; /* fixed labels, such as stack="low" */
};

#define STR_(x) #x
#define STR(x) STR_(x)

/* Rows with the same name are adjacent; the first carries the help. */
static const struct metric_def metric_defs[] = {
    {"threadwatch_build_info", "gauge", "Version of threadwatchd; always 1.", "", SRC_BUILD, NULL,
     1, NULL},
    {"threadwatch_probe_last_run_timestamp_seconds", "gauge",
     "When the probe's last run started, as a Unix time.", "s", SRC_PROBE, "last_run_ms", 1e3,
     NULL},
    {"threadwatch_probe_last_run_duration_seconds", "gauge", "How long the probe's last run took.",
     "s", SRC_PROBE, "last_duration_s", 1, NULL},
    {"threadwatch_probe_last_run_success", "gauge",
     "1 when the probe's last run was ok, 0 when it was skipped or failed.", "", SRC_PROBE_OK, NULL,
     1, NULL},
    {"threadwatch_probe_last_ok_timestamp_seconds", "gauge",
     "When the probe's last ok run started, as a Unix time.", "s", SRC_PROBE, "last_ok_ms", 1e3,
     NULL},
    {"threadwatch_probe_runs_total", "counter", "Probe runs stored, by probe.", "", SRC_RUNS_TOTAL,
     NULL, 1, NULL},
    {"threadwatch_probe_failures_total", "counter",
     "Probe runs that failed (status error: a crash, a time limit, a bad document), by probe.", "",
     SRC_FAILURES, NULL, 1, NULL},
    {"threadwatch_probe_consecutive_failures", "gauge",
     "Runs of the probe that failed since its last run that did not fail.", "", SRC_PROBE,
     "consecutive_failures", 1, NULL},
    {"threadwatch_last_cycle_status", "gauge",
     "1 for the status of the last finished probe cycle (ok: every probe succeeded, partial: "
     "some failed, failed: none succeeded, interrupted: stopped before it finished), 0 for the "
     "others.",
     "", SRC_CYCLE, "last_cycle/status", 1, NULL},
    {"threadwatch_next_cycle_timestamp_seconds", "gauge",
     "When the scheduler expects to start the next probe cycle, as a Unix time.", "s", SRC_VALUE,
     "next_cycle_ms", 1e3, NULL},
    {"threadwatch_last_cycle_timestamp_seconds", "gauge",
     "When the last finished probe cycle ended, as a Unix time.", "s", SRC_VALUE,
     "last_cycle/ended_ms", 1e3, NULL},
    {"threadwatch_last_cycle_duration_seconds", "gauge", "How long the last probe cycle took.", "s",
     SRC_VALUE, "last_cycle/duration_s", 1, NULL},
    {"threadwatch_store_ok", "gauge",
     "1 while the database takes writes and reads clean; 0 when its last write failed (a full "
     "disk, a read-only file, an I/O error) or it was found corrupt.",
     "", SRC_VALUE, "store_ok", 1, NULL},
    {"threadwatch_host_change_timestamp_seconds", "gauge",
     "When the host's identity (kernel, glibc, CPU, microcode) last changed, as a Unix time.", "s",
     SRC_VALUE, "fingerprint/first_seen_ms", 1e3, NULL},
    {"threadwatch_host_info", "gauge",
     "The host's cohort: kernel, CPU model, CPU vendor, virtualization, arch, glibc and a "
     "summary of its mitigations; always 1.",
     "", SRC_HOST_INFO, "fingerprint/host", 1, NULL},
    {NULL, NULL, NULL, NULL, SRC_CATALOG, NULL, 1, NULL},
    {"threadwatch_recommendation_low_stacks", "gauge",
     "1 when low (MAP_32BIT) thread stacks pay on this host, 0 when high stacks are better.", "",
     SRC_REC_LOW, NULL, 1, NULL},
    {"threadwatch_recommendation_info", "gauge",
     "The current recommendation's verdict and confidence; always 1.", "", SRC_REC_INFO, NULL, 1,
     NULL},
    {"threadwatch_recommendation_break_even_switches", "gauge",
     "Context switches each low-stack thread must make to repay the extra creation cost.", "",
     SRC_VALUE, "recommendation/figures/break_even_switches", 1, NULL},
    {"threadwatch_recommendation_switch_saving_seconds", "gauge",
     "Time low stacks save on each thread switch (negative: they cost).", "s", SRC_VALUE,
     "recommendation/figures/switch_saving_ns", 1e9, NULL},
    {"threadwatch_recommendation_extra_create_seconds", "gauge",
     "Extra cost of a thread create that misses the MAP_32BIT window (E), from the map32 "
     "curves.",
     "s", SRC_VALUE, "recommendation/figures/extra_create_ns", 1e9, NULL},
    {"threadwatch_recommendation_extra_create_measured_seconds", "gauge",
     "The same extra cost as the threads probe measured it (low - high create time).", "s",
     SRC_VALUE, "recommendation/figures/extra_create_measured_ns", 1e9, NULL},
    {"threadwatch_recommendation_timestamp_seconds", "gauge",
     "When the recommendation was computed, as a Unix time.", "s", SRC_VALUE,
     "recommendation/computed_ms", 1e3, NULL},
    {"threadwatch_headroom_ratio", "gauge",
     "How much of a thread or map limit is in use (1: the limit is reached).", "ratio",
     SRC_HEADROOM, "ratio", 1, NULL},
    {"threadwatch_headroom_warning", "gauge",
     "1 when a limit is within " STR(HEADROOM_WARN_PCT) "% of being reached.", "", SRC_HEADROOM,
     "warning", 1, NULL},
    {"threadwatch_headroom_timestamp_seconds", "gauge",
     "When headroom was last recorded, as a Unix time.", "s", SRC_VALUE, "headroom/computed_ms",
     1e3, NULL},
    {"threadwatch_retention_held", "gauge",
     "1 while retention is held because the wall clock is behind the stored data or jumped far "
     "ahead of it, else 0.",
     "", SRC_VALUE, "retention/held", 1, NULL},
    {"threadwatch_retention_skipped_total", "counter",
     "Cycles after which retention did not run because of the wall clock.", "", SRC_VALUE,
     "retention/skipped_total", 1, NULL},
    {"threadwatch_regression_events_total", "counter",
     "Regression events recorded, by key figure (recommendation.verdict: verdict flips).", "",
     SRC_EVENTS, NULL, 1, NULL},
    {"threadwatch_tls_cert_expiry_timestamp_seconds", "gauge",
     "When the HTTPS certificate (tls_cert) expires, its notAfter as a Unix time; absent "
     "without TLS.",
     "s", SRC_VALUE, "tls/cert_expiry_s", 1, NULL},
    {"threadwatch_regression_last_event_timestamp_seconds", "gauge",
     "When the last regression event was detected, as a Unix time.", "s", SRC_VALUE,
     "events/last_detected_ms", 1e3, NULL},
};

#define N_DEFS (sizeof(metric_defs) / sizeof(metric_defs[0]))

/* A growing text buffer. */
struct out {
	char *buf;
	size_t len, cap;
};

static void out_printf(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void out_printf(struct out *o, const char *fmt, ...)
{
	va_list ap;
	int n;

	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(o->buf + o->len, o->cap - o->len, fmt, ap);
		va_end(ap);
		if (n >= 0 && (size_t)n < o->cap - o->len)
			break;
		o->cap = o->cap * 2 + (n > 0 ? (size_t)n : 0);
		o->buf = xrealloc(o->buf, o->cap);
	}
	o->len += (size_t)n;
}

/* A label value with \, " and newline escaped. */
static void out_label(struct out *o, const char *name, const char *value)
{
	out_printf(o, "%s=\"", name);
	for (const char *p = value; *p; p++) {
		if (*p == '\\' || *p == '"')
			out_printf(o, "\\%c", *p);
		else if (*p == '\n')
			out_printf(o, "\\n");
		else
			out_printf(o, "%c", *p);
	}
	out_printf(o, "\"");
}

/* The shortest decimal that reads back as the same double. */
static void out_number(struct out *o, double v)
{
	char buf[32];

	if (isnan(v)) {
		out_printf(o, "NaN"); /* the text format's spelling, not printf's */
		return;
	}
	for (int prec = 15; prec <= 17; prec++) {
		snprintf(buf, sizeof(buf), "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	out_printf(o, "%s", buf);
}

/* The value at a '/'-separated path, or NULL. */
/* A number (booleans count as 0 or 1); 0 when there is none. */
static int number(const json_t *v, double *out)
{
	if (json_is_number(v))
		*out = json_number_value(v);
	else if (json_is_boolean(v))
		*out = json_is_true(v);
	else
		return 0;
	return isfinite(*out);
}

/* One sample line; `extra` labels (name, value pairs, NULL-terminated)
 * come after the row's fixed labels. */
static void sample(struct out *o, const struct metric_def *d, double v, const char *const *extra)
{
	int any = 0;

	out_printf(o, "%s", d->name);
	if (d->labels || (extra && extra[0])) {
		out_printf(o, "{");
		if (d->labels) {
			out_printf(o, "%s", d->labels);
			any = 1;
		}
		for (; extra && extra[0]; extra += 2) {
			out_printf(o, "%s", any ? "," : "");
			out_label(o, extra[0], extra[1]);
			any = 1;
		}
		out_printf(o, "}");
	}
	out_printf(o, " ");
	out_number(o, v / d->div);
	out_printf(o, "\n");
}

/* Every key figure and the verdict from 0 on (so that increase() sees the
 * first event), then any other metric the store counted. */
static void emit_events(struct out *o, const struct metric_def *d, json_t *total)
{
	const char *name;
	json_t *v;
	double x;

	for (size_t i = 0; i <= catalog_n_metrics; i++) {
		if (i < catalog_n_metrics && !catalog_metrics[i].key)
			continue;
		name = i < catalog_n_metrics ? catalog_metrics[i].name : DETECT_VERDICT_METRIC;
		if (!number(json_object_get(total, name), &x))
			x = 0;
		sample(o, d, x, (const char *const[]){"metric", name, NULL});
	}
	json_object_foreach(total, name, v)
	{
		const struct catalog_metric *m = catalog_metric_find(name);
		int known = !strcmp(name, DETECT_VERDICT_METRIC) || (m && m->key);

		if (!known && number(v, &x))
			sample(o, d, x, (const char *const[]){"metric", name, NULL});
	}
}

/* Once a fingerprint is recorded: 1 with its cohort labels. */
static void emit_host_info(struct out *o, const struct metric_def *d, const json_t *fp)
{
	char vals[METRICS_HOST_LABELS_N][METRICS_HOST_LABEL_MAX + 1];
	const char *extra[2 * METRICS_HOST_LABELS_N + 1];

	if (!json_is_object(fp))
		return;
	metrics_host_labels(fp, vals);
	for (size_t i = 0; i < METRICS_HOST_LABELS_N; i++) {
		extra[2 * i] = host_label_names[i];
		extra[2 * i + 1] = vals[i];
	}
	extra[2 * METRICS_HOST_LABELS_N] = NULL;
	sample(o, d, 1, extra);
}

static void emit_row(struct out *o, const struct metric_def *d, const json_t *snap)
{
	/* jansson's iterators take non-const values but do not modify them. */
	json_t *probes = json_object_get(snap, "probes"),
	       *totals = json_object_get(snap, "runs_total");
	const json_t *rec;
	json_t *v, *w;
	const char *name, *status;
	double x;

	switch (d->src) {
	case SRC_BUILD:
		sample(o, d, 1, (const char *const[]){"version", TW_VERSION, NULL});
		break;
	case SRC_VALUE:
		if (number(jpath_get(snap, d->path), &x))
			sample(o, d, x, NULL);
		break;
	case SRC_PROBE:
		json_object_foreach(probes, name, v) if (number(jpath_get(v, d->path), &x))
		    sample(o, d, x, (const char *const[]){"probe", name, NULL});
		break;
	case SRC_PROBE_OK:
		json_object_foreach(probes, name, v)
		{
			status = json_string_value(json_object_get(v, "last_status"));
			if (status)
				sample(o, d, !strcmp(status, "ok"),
				       (const char *const[]){"probe", name, NULL});
		}
		break;
	case SRC_RUNS_TOTAL:
		json_object_foreach(totals, name, v)
		{
			double sum = 0;

			json_object_foreach(v, status, w) if (number(w, &x)) sum += x;
			sample(o, d, sum, (const char *const[]){"probe", name, NULL});
		}
		break;
	case SRC_CYCLE: {
		const char *last = json_string_value(jpath_get(snap, d->path));
		int known = 0;

		if (!last)
			break;
		/* every status, so that a count by status over a fleet includes
		 * the ones no host is in */
		for (int i = CYCLE_OK; i < CYCLE_N_STATUSES; i++) {
			known |= !strcmp(last, cycle_statuses[i].name);
			sample(o, d, !strcmp(last, cycle_statuses[i].name),
			       (const char *const[]){"status", cycle_statuses[i].name, NULL});
		}
		if (!known)
			sample(o, d, 1, (const char *const[]){"status", last, NULL});
		break;
	}
	case SRC_FAILURES:
		json_object_foreach(totals, name, v)
		{
			if (!number(json_object_get(v, "error"), &x))
				x = 0;
			sample(o, d, x, (const char *const[]){"probe", name, NULL});
		}
		break;
	case SRC_REC_LOW:
	case SRC_REC_INFO:
		rec = json_object_get(snap, "recommendation");
		name = json_string_value(json_object_get(rec, "verdict"));
		status = json_string_value(json_object_get(rec, "confidence"));
		if (!name)
			break;
		if (d->src == SRC_REC_LOW)
			sample(o, d, !strcmp(name, "low"), NULL);
		else
			sample(o, d, 1,
			       (const char *const[]){"verdict", name, "confidence",
			                             status ? status : "none", NULL});
		break;
	case SRC_HEADROOM: {
		json_t *limits = headroom_limits(jpath_get(snap, "headroom/headroom"));
		size_t i;

		json_array_foreach(limits, i, v)
		{
			name = json_string_value(json_object_get(v, "name"));
			if (number(json_object_get(v, d->path), &x))
				sample(o, d, x, (const char *const[]){"limit", name, NULL});
		}
		json_decref(limits);
		break;
	}
	case SRC_EVENTS:
		emit_events(o, d, json_object_get(json_object_get(snap, "events"), "total"));
		break;
	case SRC_HOST_INFO:
		emit_host_info(o, d, jpath_get(snap, d->path));
		break;
	case SRC_CATALOG:
		break; /* metrics_format() emits them */
	}
}

/* The rows of one Prometheus family of the catalogue under `name` (its
 * own or the deprecated one), from its first row (which carries the help)
 * on: probes/PROBE/scalars/SCALAR/value of the snapshot, divided by the
 * row's scale. A row without a value (a knee that did not occur) has no
 * sample. */
static void emit_family(struct out *o, size_t first, const char *name, const json_t *snap)
{
	const struct catalog_metric *f = &catalog_metrics[first];
	char path[256];
	double x;

	out_printf(o, "# HELP %s ", name);
	if (f->prom.deprecated && !strcmp(name, f->prom.deprecated))
		out_printf(o, "DEPRECATED: use %s. ", f->prom.name);
	out_printf(o, "%s\n# TYPE %s %s\n", f->prom.help, name, f->prom.type);
	for (size_t i = first; i < catalog_n_metrics; i++) {
		const struct catalog_metric *m = &catalog_metrics[i];
		struct metric_def d = {
		    .name = name, .div = m->prom.scale, .labels = m->prom.labels};

		if (!m->prom.name || strcmp(m->prom.name, f->prom.name))
			continue;
		snprintf(path, sizeof(path), "probes/%s/scalars/%s/value", m->probe, m->scalar);
		if (number(jpath_get(snap, path), &x))
			sample(o, &d, x, NULL);
	}
}

/* Every Prometheus family of the catalogue once, in the order of its
 * first row; a family's rows need not be adjacent in the catalogue. */
static void emit_catalog(struct out *o, const json_t *snap)
{
	for (size_t i = 0; i < catalog_n_metrics; i++) {
		const char *name = catalog_metrics[i].prom.name;
		int seen = 0;

		for (size_t j = 0; name && j < i && !seen; j++)
			seen = catalog_metrics[j].prom.name &&
			       !strcmp(catalog_metrics[j].prom.name, name);
		if (name && !seen)
			emit_family(o, i, name, snap);
		if (name && !seen && catalog_metrics[i].prom.deprecated)
			emit_family(o, i, catalog_metrics[i].prom.deprecated, snap);
	}
}

/* Which row gets a name two rows share, as the workload label: "other"
 * the row that sums the rest, then a unit, a cgroup, a process; within a
 * kind the smaller key. A name is claimed by what it names, never by rank
 * (which a process's cost can change), so a process that calls itself
 * "nginx.service" cannot take the unit's label. */
static int label_order(const json_t *w)
{
	static const char *const kinds[] = {"other", "unit", "cgroup", "process"};
	const char *k = json_string_value(json_object_get(w, "kind"));

	for (int i = 0; k && i < 4; i++)
		if (!strcmp(k, kinds[i]))
			return i;
	return 4;
}

static int label_cmp(const void *a, const void *b, void *ctx)
{
	const json_t *const *rows = ctx;
	const json_t *x = rows[*(const size_t *)a], *y = rows[*(const size_t *)b];
	int ox = label_order(x), oy = label_order(y);

	if (ox != oy)
		return ox - oy;
	return strcmp(json_string_value(json_object_get(x, "key")) ?: "",
	              json_string_value(json_object_get(y, "key")) ?: "");
}

static int label_taken(char *const *l, const size_t *order, size_t upto, const char *s)
{
	for (size_t p = 0; p < upto; p++)
		if (!strcmp(l[order[p]], s))
			return 1;
	return 0;
}

/* The label of each kept workload of the latest window: its name, else
 * its key where the name is another row's (two processes of one comm),
 * else the key and its row number, so that no two series of a family
 * share their labels. malloc'd strings, one per row (labels_free()). */
static char **workload_labels(const json_t *list)
{
	size_t n = json_array_size(list), *order = xcalloc(n + 1, sizeof(*order));
	char **l = xcalloc(n + 1, sizeof(*l));
	const json_t **rows = xcalloc(n + 1, sizeof(*rows));

	for (size_t i = 0; i < n; i++) {
		rows[i] = json_array_get(list, i);
		order[i] = i;
	}
	qsort_r(order, n, sizeof(*order), label_cmp, rows);
	for (size_t o = 0; o < n; o++) {
		size_t i = order[o];
		const char *name = json_string_value(json_object_get(rows[i], "name")) ?: "";
		const char *key = json_string_value(json_object_get(rows[i], "key")) ?: "";

		if (!label_taken(l, order, o, name))
			l[i] = xstrdup(name);
		else if (!label_taken(l, order, o, key))
			l[i] = xstrdup(key);
		else
			xasprintf(&l[i], "%s#%zu", key, i);
	}
	free(order);
	free(rows);
	return l;
}

static void labels_free(char **l, size_t n)
{
	for (size_t i = 0; l && i < n; i++)
		free(l[i]);
	free(l);
}

/* The families of lib/catalog_workloads.c from the latest window's kept
 * workloads (snapshot member "workloads", absent when there is none or it
 * is stale): a series per kept workload, labelled workload="NAME" alone,
 * so at most workloads_top + 1 ("other") per family. */
static void emit_workloads(struct out *o, const json_t *snap)
{
	const json_t *list = json_object_get(json_object_get(snap, "workloads"), "workloads");
	char **labels;
	double x;

	if (!json_array_size(list))
		return;
	labels = workload_labels(list);
	for (size_t m = 0; m < catalog_n_workload_metrics; m++) {
		const struct catalog_workload_metric *c = &catalog_workload_metrics[m];
		struct metric_def d = {.name = c->prom, .div = 1};

		out_printf(o, "# HELP %s %s\n# TYPE %s gauge\n", c->prom, c->help, c->prom);
		for (size_t i = 0; i < json_array_size(list); i++) {
			const json_t *f = json_object_get(json_array_get(list, i), "figures");
			const char *extra[] = {"workload", labels[i], NULL};

			if (number(json_object_get(f, c->name), &x))
				sample(o, &d, x, extra);
		}
	}
	labels_free(labels, json_array_size(list));
}

void metrics_format(const json_t *snap, char **text, size_t *len)
{
	struct out o = {.buf = xmalloc(4096), .cap = 4096};

	o.buf[0] = '\0';
	for (size_t i = 0; i < N_DEFS; i++) {
		const struct metric_def *d = &metric_defs[i];

		if (d->src == SRC_CATALOG) {
			emit_catalog(&o, snap);
			continue;
		}
		if (i == 0 || !metric_defs[i - 1].name || strcmp(d->name, metric_defs[i - 1].name))
			out_printf(&o, "# HELP %s %s\n# TYPE %s %s\n", d->name, d->help, d->name,
			           d->type);
		emit_row(&o, d, snap);
	}
	emit_workloads(&o, snap);
	*text = o.buf;
	*len = o.len;
}

/* The process_* families, in the names and units of Prometheus's client
 * libraries. */
static const struct process_def {
	const char *name, *type, *help;
	size_t off; /* of the double in struct metrics_procself */
} process_defs[] = {
    {"process_cpu_seconds_total", "counter", "Total user and system CPU time spent in seconds.",
     offsetof(struct metrics_procself, cpu_seconds)},
    {"process_resident_memory_bytes", "gauge", "Resident memory size in bytes.",
     offsetof(struct metrics_procself, resident_bytes)},
    {"process_start_time_seconds", "gauge",
     "Start time of the process since unix epoch in seconds.",
     offsetof(struct metrics_procself, start_time_seconds)},
    {"process_open_fds", "gauge", "Number of open file descriptors.",
     offsetof(struct metrics_procself, open_fds)},
};

void metrics_format_process(const struct metrics_procself *self, char **text, size_t *len)
{
	struct out o = {.buf = *text, .len = *len, .cap = *len + 1};

	for (size_t i = 0; i < sizeof(process_defs) / sizeof(process_defs[0]); i++) {
		const struct process_def *d = &process_defs[i];

		out_printf(&o, "# HELP %s %s\n# TYPE %s %s\n%s ", d->name, d->help, d->name,
		           d->type, d->name);
		out_number(&o, *(const double *)((const char *)self + d->off));
		out_printf(&o, "\n");
	}
	*text = o.buf;
	*len = o.len;
}

/* The scheduler's status in memory over what the store last took (a store
 * that stopped taking writes would freeze it), and whether the store works
 * (daemon/health.c). A last cycle the store never recorded keeps no
 * duration. */
static void overlay_health(json_t *snap)
{
	struct health_cycle h;
	char why[512];
	json_t *last = json_object_get(snap, "last_cycle");

	json_object_set_new(snap, "store_ok",
	                    json_integer(health_store_error(why, sizeof(why)) == 0));
	if (health_get_cycle(&h) < 0)
		return;
	if (h.next_cycle_ms > 0)
		json_object_set_new(snap, "next_cycle_ms", json_integer(h.next_cycle_ms));
	if (h.last_status == CYCLE_NONE)
		return;
	if (!json_is_object(last)) {
		last = json_object();
		json_object_set_new(snap, "last_cycle", last);
	}
	json_object_set_new(last, "status", json_string(cycle_status_name(h.last_status)));
	if (h.last_cycle_ms > 0 &&
	    json_integer_value(json_object_get(last, "ended_ms")) != h.last_cycle_ms) {
		json_object_set_new(last, "ended_ms", json_integer(h.last_cycle_ms));
		json_object_del(last, "duration_s");
	}
}

/* The latest workload window into the snapshot, unless it is stale: older
 * than WORKLOADS_STALE_WINDOWS windows (a stopped observer leaves no gauge
 * behind). Nothing when none is stored or it cannot be read. */
#define WORKLOADS_STALE_WINDOWS 3
static void add_workloads(struct store *st, json_t *snap)
{
	json_t *w = NULL;
	double win_s;
	int64_t end;

	if (store_workloads_latest(st, &w) < 0)
		return;
	win_s = json_number_value(json_object_get(w, "window_s"));
	end = json_integer_value(json_object_get(w, "window_end_ms"));
	if ((double)(clock_wall_ms() - end) <= WORKLOADS_STALE_WINDOWS * win_s * 1000 + 30000)
		json_object_set(snap, "workloads", w);
	json_decref(w);
}

/* The store's exposition alone: no process_* families. */
static int render_store(struct store *st, const json_t *extra, char **text, size_t *len)
{
	json_t *snap = NULL;
	int rc = store_read_snapshot(st, &snap);

	if (rc < 0)
		return rc;
	overlay_health(snap);
	add_workloads(st, snap);
	if (extra)
		json_object_update(snap, (json_t *)(uintptr_t)extra);
	metrics_format(snap, text, len);
	json_decref(snap);
	return 0;
}

int metrics_render(struct store *st, const json_t *extra, char **text, size_t *len)
{
	struct metrics_procself self;
	int rc = render_store(st, extra, text, len);

	if (rc == 0 && metrics_procself_read(&self) == 0)
		metrics_format_process(&self, text, len);
	return rc;
}

int metrics_write_file(struct store *st, const char *path)
{
	char *text;
	size_t len;
	int rc = render_store(st, NULL, &text, &len);

	if (rc < 0)
		return rc;
	/* node_exporter reads only *.prom files, so the temporary one is never
	 * half-read. */
	rc = atomic_file_write(path, text, len, 0644);
	free(text);
	return rc;
}
