/*
 * test_catalog: the metric catalogue is well-formed (unique names, known
 * units, valid Prometheus names and labels, one help per family, CI bounds
 * and key scalars that exist), and every consumer lists exactly its
 * metrics: a store seeded with one run of each built-in probe carrying
 * every catalogue scalar and series gives /metrics a sample for every
 * exported row and no probe family of its own, an events counter for every
 * key figure and no other, an /api/v1/metrics list whose names and
 * descriptions are the catalogue's, a history for every key figure
 * detection reads, and run listings that show each probe's key figure.
 */
#include <errno.h>
#include <math.h>
#include <regex.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "api.h"
#include "catalog.h"
#include "detect.h"
#include "metrics.h"
#include "store.h"

#define T0 INT64_C(1767225600000) /* 2026-01-01 */

/* The families /metrics exports that are not probe metrics (metrics.c's
 * own rows and the process_* ones); every other family must come from the
 * catalogue. */
static const char *const own_families[] = {
    "process_cpu_seconds_total",
    "process_resident_memory_bytes",
    "process_start_time_seconds",
    "process_open_fds",
    "threadwatch_build_info",
    "threadwatch_host_info",
    "threadwatch_probe_last_run_timestamp_seconds",
    "threadwatch_probe_last_run_duration_seconds",
    "threadwatch_probe_last_run_success",
    "threadwatch_probe_last_ok_timestamp_seconds",
    "threadwatch_probe_runs_total",
    "threadwatch_probe_failures_total",
    "threadwatch_probe_consecutive_failures",
    "threadwatch_last_cycle_status",
    "threadwatch_next_cycle_timestamp_seconds",
    "threadwatch_last_cycle_timestamp_seconds",
    "threadwatch_last_cycle_duration_seconds",
    "threadwatch_store_ok",
    "threadwatch_host_change_timestamp_seconds",
    "threadwatch_recommendation_low_stacks",
    "threadwatch_recommendation_info",
    "threadwatch_recommendation_break_even_switches",
    "threadwatch_recommendation_switch_saving_seconds",
    "threadwatch_recommendation_extra_create_seconds",
    "threadwatch_recommendation_extra_create_measured_seconds",
    "threadwatch_recommendation_timestamp_seconds",
    "threadwatch_headroom_ratio",
    "threadwatch_headroom_warning",
    "threadwatch_headroom_timestamp_seconds",
    "threadwatch_retention_held",
    "threadwatch_retention_skipped_total",
    "threadwatch_tls_cert_expiry_timestamp_seconds",
    "threadwatch_regression_events_total",
    "threadwatch_regression_last_event_timestamp_seconds",
};

static int matches(const char *re, const char *s)
{
	regex_t r;
	int ok;

	assert_int_equal(regcomp(&r, re, REG_EXTENDED | REG_NOSUB), 0);
	ok = regexec(&r, s, 0, NULL, 0) == 0;
	regfree(&r);
	return ok;
}

static int is_unit(const char *u)
{
	for (size_t i = 0; u && catalog_units[i]; i++)
		if (!strcmp(catalog_units[i], u))
			return 1;
	return 0;
}

static void check_row(const struct catalog_metric *m)
{
	char want[256];

	assert_non_null(catalog_probe_find(m->probe));
	assert_true(is_unit(m->unit));
	assert_true(m->description && m->description[0]);
	assert_true((m->scalar == NULL) != (m->series == NULL));
	if (m->scalar)
		snprintf(want, sizeof(want), "%s.%s", m->probe, m->scalar);
	else
		snprintf(want, sizeof(want), "%s.%s_at_%g", m->probe, m->series, m->x);
	assert_string_equal(m->name, want);
	/* a series point exists only for detection, and the store keeps no
	 * sample of it for /metrics, the CLI or the dashboard to show */
	if (m->series)
		assert_true(m->key && m->x > 0 && !m->prom.name && !m->run_label && !m->label);
	assert_true(m->abs_floor >= 0);
	if (m->ci_lo || m->ci_hi) {
		assert_non_null(m->run_label);
		assert_non_null(catalog_scalar_find(m->probe, m->ci_lo));
		assert_non_null(catalog_scalar_find(m->probe, m->ci_hi));
	}
	if (!m->prom.name)
		return;
	assert_true(matches("^threadwatch_[a-z0-9_]+$", m->prom.name));
	assert_true(!strcmp(m->prom.type, "gauge") || !strcmp(m->prom.type, "counter"));
	assert_true(m->prom.scale > 0);
	if (m->prom.labels)
		assert_true(
		    matches("^[a-z_][a-z0-9_]*=\"[^\"\\\\]*\"(,[a-z_][a-z0-9_]*=\"[^\"\\\\]*\")*$",
		            m->prom.labels));
}

static void test_rows_well_formed(void **state)
{
	(void)state;
	assert_true(catalog_n_metrics > 0 && catalog_n_probes > 0);
	for (size_t i = 0; i < catalog_n_metrics; i++) {
		const struct catalog_metric *m = &catalog_metrics[i];
		int first_of_family = 1;

		check_row(m);
		assert_ptr_equal(catalog_metric_find(m->name), m);
		for (size_t j = 0; j < i; j++) {
			const struct catalog_metric *o = &catalog_metrics[j];

			assert_string_not_equal(o->name, m->name);
			if (!m->prom.name || !o->prom.name || strcmp(o->prom.name, m->prom.name))
				continue;
			/* one family: one type, and no two rows with the same labels */
			first_of_family = 0;
			assert_string_equal(o->prom.type, m->prom.type);
			assert_true(o->prom.labels && m->prom.labels);
			assert_string_not_equal(o->prom.labels, m->prom.labels);
		}
		/* the help goes on the family's first row, once */
		if (m->prom.name)
			assert_true(first_of_family ? m->prom.help && m->prom.help[0]
			                            : m->prom.help == NULL);
		for (size_t k = 0; m->prom.name && k < sizeof(own_families) / sizeof(*own_families);
		     k++)
			assert_string_not_equal(m->prom.name, own_families[k]);
		/* a former name is no current name */
		for (size_t j = 0; m->prom.deprecated && j < catalog_n_metrics; j++)
			assert_true(!catalog_metrics[j].prom.name ||
			            strcmp(catalog_metrics[j].prom.name, m->prom.deprecated));
	}
	for (size_t i = 0; i < catalog_n_probes; i++) {
		const struct catalog_probe *p = &catalog_probes[i];
		const struct catalog_metric *k = catalog_scalar_find(p->name, p->key_scalar);

		assert_ptr_equal(catalog_probe_find(p->name), p);
		assert_true(p->timeout_s > 0);
		/* run listings show the key figure under its dashboard label */
		assert_non_null(k);
		assert_non_null(k->label);
	}
	assert_null(catalog_metric_find("ctxsw.no_such"));
	assert_null(catalog_probe_find("crashy"));
}

/* ---- one run of each probe with every catalogue metric ----------------- */

struct fixture {
	char dir[64], path[96];
	struct store *st;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	char err[512] = "";

	if (!f)
		return -1;
	snprintf(f->dir, sizeof(f->dir), "/tmp/tw-test-catalog.XXXXXX");
	if (!mkdtemp(f->dir))
		return -1;
	snprintf(f->path, sizeof(f->path), "%s/tw.db", f->dir);
	if (store_open(f->path, 0, &f->st, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s\n", err);
		return -1;
	}
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	static const char *const suffixes[] = {"", "-wal", "-shm", "-journal", ".lock"};
	char p[128];

	store_close(f->st);
	for (size_t j = 0; j < sizeof(suffixes) / sizeof(suffixes[0]); j++) {
		snprintf(p, sizeof(p), "%s%s", f->path, suffixes[j]);
		unlink(p);
	}
	rmdir(f->dir);
	free(f);
	return 0;
}

/* The value every run stores for catalogue row i. */
static double value_of(size_t i)
{
	return 1000.0 + (double)i;
}

/* A probe document with every scalar and series of the catalogue. */
static json_t *probe_doc(const char *probe, int64_t t_ms)
{
	json_t *doc =
	    json_pack("{s:s, s:i, s:s, s:n, s:s, s:f, s:f, s:{}, s:{}, s:{}, s:{}}", "probe", probe,
	              "protocol", 1, "status", "ok", "reason", "started_at",
	              "2026-01-01T00:00:00.000Z", "started_unix", (double)t_ms / 1e3, "duration_s",
	              1.0, "params", "scalars", "series", "info");

	for (size_t i = 0; i < catalog_n_metrics; i++) {
		const struct catalog_metric *m = &catalog_metrics[i];
		json_t *pts;

		if (strcmp(m->probe, probe))
			continue;
		if (m->scalar) {
			json_object_set_new(
			    json_object_get(doc, "scalars"), m->scalar,
			    json_pack("{s:f, s:s}", "value", value_of(i), "unit", m->unit));
			continue;
		}
		if (json_object_get(json_object_get(doc, "series"), m->series))
			continue;
		pts = json_array();
		for (int x = 0; x < 4096; x += 64)
			json_array_append_new(pts, json_pack("[i, f]", x, 20000.0));
		json_object_set_new(json_object_get(doc, "series"), m->series,
		                    json_pack("{s:s, s:s, s:o}", "x_unit", "threads", "y_unit",
		                              "ns", "points", pts));
	}
	return doc;
}

static void seed(struct store *st)
{
	json_t *fp = json_pack("{s:s, s:s, s:s, s:s, s:{s:s, s:i, s:i, s:s}, s:s, s:i, s:{}, s:{}}",
	                       "hostname", "testhost", "kernel", "6.1.0-18-amd64", "glibc", "2.36",
	                       "arch", "x86_64", "cpu", "vendor", "GenuineIntel", "family", 6,
	                       "model", 85, "microcode", "0x2b", "virtualization", "none", "ncpus",
	                       4, "vulnerabilities", "limits");
	int64_t cycle_id, id;
	int changed;

	assert_int_equal(store_fingerprint_record(st, fp, T0, &changed), 0);
	json_decref(fp);
	assert_int_equal(store_cycle_begin(st, T0, "interval", 0, &cycle_id), 0);
	for (size_t i = 0; i < catalog_n_probes; i++) {
		int64_t t = T0 + 10 * (int64_t)(i + 1);
		json_t *doc = probe_doc(catalog_probes[i].name, t);
		struct store_run run = {.probe = catalog_probes[i].name,
		                        .cycle_id = cycle_id,
		                        .started_ms = t,
		                        .ended_ms = t + 5,
		                        .status = "ok",
		                        .doc = doc,
		                        .loadavg1 = 0.1,
		                        .cpu_s = 1};

		assert_int_equal(store_run_insert(st, &run, &id), 0);
		json_decref(doc);
	}
	assert_int_equal(store_cycle_end(st, cycle_id, T0 + 100, "ok"), 0);
}

/* The value of the sample line starting with `prefix` ("name{labels} "),
 * or NAN when there is none. */
static double sample_value(const char *text, const char *prefix)
{
	size_t n = strlen(prefix);

	for (const char *l = text; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL)
		if (!strncmp(l, prefix, n))
			return strtod(l + n, NULL);
	return NAN;
}

/* Every catalogue row with a Prometheus name has its sample with the
 * stored value in the base unit; every family that is not metrics.c's own
 * is a catalogue family. */
static void check_exposition(const char *text)
{
	char prefix[256], family[128];

	for (size_t i = 0; i < catalog_n_metrics; i++) {
		const struct catalog_metric *m = &catalog_metrics[i];
		double v;

		if (!m->prom.name)
			continue;
		if (m->prom.labels)
			snprintf(prefix, sizeof(prefix), "%s{%s} ", m->prom.name, m->prom.labels);
		else
			snprintf(prefix, sizeof(prefix), "%s ", m->prom.name);
		v = sample_value(text, prefix);
		if (!(fabs(v - value_of(i) / m->prom.scale) <= 1e-9 * v))
			fail_msg("/metrics has %s%g for %s, not %g", prefix, v, m->name,
			         value_of(i) / m->prom.scale);
		/* a renamed family keeps its old name, with the same value */
		if (m->prom.deprecated) {
			snprintf(prefix, sizeof(prefix), "%s ", m->prom.deprecated);
			assert_true(sample_value(text, prefix) == v);
		}
	}
	for (const char *l = text; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
		int known = 0;

		if (sscanf(l, "# TYPE %127s", family) != 1)
			continue;
		for (size_t k = 0; k < sizeof(own_families) / sizeof(*own_families); k++)
			known |= !strcmp(family, own_families[k]);
		for (size_t i = 0; i < catalog_n_metrics && !known; i++)
			known = (catalog_metrics[i].prom.name &&
			         !strcmp(family, catalog_metrics[i].prom.name)) ||
			        (catalog_metrics[i].prom.deprecated &&
			         !strcmp(family, catalog_metrics[i].prom.deprecated));
		if (!known)
			fail_msg("/metrics exports %s, which is not in the catalogue", family);
	}
}

/* The events counter lists every key figure (and the verdict) and no
 * other metric. */
static void check_event_counters(const char *text)
{
	static const char head[] = "threadwatch_regression_events_total{metric=\"";
	char prefix[256];
	size_t n = 0, keys = 0;

	for (size_t i = 0; i < catalog_n_metrics; i++) {
		if (!catalog_metrics[i].key)
			continue;
		keys++;
		snprintf(prefix, sizeof(prefix), "%s%s\"} ", head, catalog_metrics[i].name);
		if (isnan(sample_value(text, prefix)))
			fail_msg("/metrics counts no events of key figure %s",
			         catalog_metrics[i].name);
	}
	for (const char *l = strstr(text, head); l; l = strstr(l + 1, head)) {
		const struct catalog_metric *m;
		char name[130];

		assert_int_equal(sscanf(l + strlen(head), "%129[^\"]", name), 1);
		m = catalog_metric_find(name);
		if (strcmp(name, DETECT_VERDICT_METRIC) && !(m && m->key))
			fail_msg("/metrics counts events of %s, which is no key figure", name);
		n++;
	}
	assert_int_equal(n, keys + 1);
}

static void test_metrics_exposition(void **state)
{
	struct fixture *f = *state;
	char *text = NULL;
	size_t len;

	seed(f->st);
	assert_int_equal(metrics_render(f->st, NULL, &text, &len), 0);
	assert_int_equal(strlen(text), len);
	check_exposition(text);
	check_event_counters(text);
	free(text);
}

/* GET path through its API handler; the body. */
static json_t *api_get(struct store *st, api_handler_fn *fn, const char *path)
{
	struct api_ctx ctx = {.st = st};
	struct api_target t = {0};
	struct api_error err = {0};
	json_t *body = NULL;

	assert_int_equal(api_parse_target(path, &t, &err), 0);
	assert_int_equal(fn(&ctx, &t, "", &body, &err), 200);
	api_target_clear(&t);
	return body;
}

/* /api/v1/metrics lists the catalogue's stored metrics, each once, with
 * the catalogue's unit and description. */
static void test_api_metrics(void **state)
{
	struct fixture *f = *state;
	json_t *body, *v;
	size_t i, n = 0, scalars = 0;

	seed(f->st);
	body = api_get(f->st, api_metrics, "/api/v1/metrics");
	json_array_foreach(json_object_get(body, "metrics"), i, v)
	{
		const char *name = json_string_value(json_object_get(v, "name"));
		const struct catalog_metric *m = catalog_metric_find(name);

		if (!m || !m->scalar)
			fail_msg("/api/v1/metrics lists %s, which is no catalogue scalar", name);
		assert_string_equal(json_string_value(json_object_get(v, "unit")), m->unit);
		assert_string_equal(json_string_value(json_object_get(v, "description")),
		                    m->description);
		assert_true(json_is_true(json_object_get(v, "stored")));
		n++;
	}
	for (i = 0; i < catalog_n_metrics; i++)
		scalars += catalog_metrics[i].scalar != NULL;
	assert_int_equal(n, scalars);
	json_decref(body);

	/* the dashboard's endpoint: the whole catalogue */
	body = api_get(f->st, api_catalog, "/api/v1/catalog");
	assert_int_equal(json_array_size(json_object_get(body, "metrics")), catalog_n_metrics);
	assert_int_equal(json_array_size(json_object_get(body, "probes")), catalog_n_probes);
	v = json_array_get(json_object_get(body, "metrics"), 0);
	assert_string_equal(json_string_value(json_object_get(v, "name")), catalog_metrics[0].name);
	json_decref(body);
}

/* Detection can read every key figure from a real run, and each run
 * listing shows its probe's key figure. */
static void test_detection_and_runs(void **state)
{
	struct fixture *f = *state;
	char path[128], want[128];

	seed(f->st);
	for (size_t i = 0; i < catalog_n_metrics; i++) {
		const struct catalog_metric *m = &catalog_metrics[i];
		struct store_point *pts = NULL;
		size_t n = 0;

		if (!m->key)
			continue;
		assert_int_equal(store_metric_history(f->st, m->probe, m->scalar, m->series, m->x,
		                                      DETECT_X_TOLERANCE, 0, &pts, &n),
		                 0);
		if (n == 0)
			fail_msg("detection finds no value of key figure %s", m->name);
		assert_true(pts[0].value == (m->scalar ? value_of(i) : 20000.0));
		free(pts);
	}
	for (size_t i = 0; i < catalog_n_probes; i++) {
		json_t *body, *k;

		snprintf(path, sizeof(path), "/api/v1/runs?probe=%s", catalog_probes[i].name);
		snprintf(want, sizeof(want), "%s.%s", catalog_probes[i].name,
		         catalog_probes[i].key_scalar);
		body = api_get(f->st, api_runs, path);
		k = json_object_get(json_array_get(json_object_get(body, "runs"), 0), "key_figure");
		assert_string_equal(json_string_value(json_object_get(k, "metric")), want);
		json_decref(body);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_rows_well_formed),
	    cmocka_unit_test_setup_teardown(test_metrics_exposition, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_api_metrics, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_detection_and_runs, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
