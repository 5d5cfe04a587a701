/*
 * test_metrics: the Prometheus exposition (daemon/metrics.c) from
 * hand-made store snapshots: the hygiene of Prometheus's "writing
 * exporters" guide (failures as their own counter, runs counted without a
 * status label, no NaN sample: a knee that did not occur has no series,
 * no label whose sum means nothing), a renamed metric under both names,
 * the process_* self-metrics and the scheduler's gauges.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "metrics.h"
#include "metrics_procself.h"

/* The value of the sample line that starts with `prefix` followed by a
 * space; fails the test when there is none. */
static double sample_value(const char *text, const char *prefix)
{
	size_t n = strlen(prefix);

	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, prefix, n) && p[n] == ' ')
			return strtod(p + n + 1, NULL);
	fail_msg("no sample \"%s\" in:\n%s", prefix, text);
	return 0;
}

static char *format(const char *snapshot_json)
{
	json_error_t e;
	json_t *snap = json_loads(snapshot_json, 0, &e);
	char *text;
	size_t len;

	assert_non_null(snap);
	metrics_format(snap, &text, &len);
	assert_int_equal(strlen(text), len);
	json_decref(snap);
	return text;
}

/* runs_total sums every status; failures_total counts errors, and is 0
 * (not absent) for a probe that never failed, so that increase() sees the
 * first failure. */
static void test_runs_and_failures(void **state)
{
	char *t = format("{\"probes\": {}, \"runs_total\": {"
	                 "\"ctxsw\": {\"ok\": 5, \"error\": 2, \"skipped\": 1},"
	                 "\"map32\": {\"ok\": 3}}}");

	(void)state;
	assert_true(sample_value(t, "threadwatch_probe_runs_total{probe=\"ctxsw\"}") == 8);
	assert_true(sample_value(t, "threadwatch_probe_runs_total{probe=\"map32\"}") == 3);
	assert_true(sample_value(t, "threadwatch_probe_failures_total{probe=\"ctxsw\"}") == 2);
	assert_true(sample_value(t, "threadwatch_probe_failures_total{probe=\"map32\"}") == 0);
	assert_null(strstr(t, "status=\""));
	free(t);
}

/* A threads run without a knee leaves that policy's knee series out: no
 * sample is NaN. */
static void test_knee_absent(void **state)
{
	char *t = format("{\"probes\": {\"threads\": {\"last_ok_ms\": 1767225600000,"
	                 "\"scalars\": {\"low_knee\": {\"value\": 256, \"unit\": \"threads\"}}}},"
	                 "\"runs_total\": {}}");

	(void)state;
	assert_true(sample_value(t, "threadwatch_threads_knee{policy=\"low\"}") == 256);
	assert_null(strstr(t, "threadwatch_threads_knee{policy=\"high\"}"));
	assert_null(strstr(t, "threadwatch_threads_knee{policy=\"default\"}"));
	assert_null(strstr(t, "NaN"));
	free(t);
}

/* threads.max_threads is threadwatch_threads_live_max; its old name stays
 * for one release with the same value, its help marked deprecated. */
static void test_renamed(void **state)
{
	char *t =
	    format("{\"probes\": {\"threads\": {\"last_ok_ms\": 1,"
	           "\"scalars\": {\"max_threads\": {\"value\": 4096, \"unit\": \"threads\"}}}},"
	           "\"runs_total\": {}}");

	(void)state;
	assert_true(sample_value(t, "threadwatch_threads_live_max") == 4096);
	assert_true(sample_value(t, "threadwatch_threads_max") == 4096);
	assert_non_null(strstr(t, "# HELP threadwatch_threads_max DEPRECATED: use "
	                          "threadwatch_threads_live_max. "));
	assert_non_null(strstr(t, "# TYPE threadwatch_threads_max gauge\n"));
	free(t);
}

/* The process_* families every exporter has, appended to the exposition:
 * CPU time as a counter, the rest as gauges. */
static void test_process(void **state)
{
	struct metrics_procself p = {.cpu_seconds = 1.5,
	                             .resident_bytes = 8388608,
	                             .start_time_seconds = 1767225600.25,
	                             .open_fds = 12};
	char *t = format("{\"probes\": {}, \"runs_total\": {}}");
	size_t len = strlen(t);

	(void)state;
	metrics_format_process(&p, &t, &len);
	assert_int_equal(strlen(t), len);
	assert_non_null(strstr(t, "threadwatch_build_info"));
	assert_true(sample_value(t, "process_cpu_seconds_total") == 1.5);
	assert_true(sample_value(t, "process_resident_memory_bytes") == 8388608);
	assert_true(sample_value(t, "process_start_time_seconds") == 1767225600.25);
	assert_true(sample_value(t, "process_open_fds") == 12);
	assert_non_null(strstr(t, "# TYPE process_cpu_seconds_total counter\n"));
	assert_non_null(strstr(t, "# TYPE process_open_fds gauge\n"));
	free(t);
}

/* No sample carries a label whose values cannot be summed: CI bounds and
 * create-rate buckets are metrics of their own. */
static void test_no_meaningless_labels(void **state)
{
	char *t = format("{\"probes\": {\"ctxsw\": {\"last_ok_ms\": 1, \"scalars\": {"
	                 "\"ratio_ci_lo\": {\"value\": 0.98, \"unit\": \"ratio\"},"
	                 "\"ratio_ci_hi\": {\"value\": 1.01, \"unit\": \"ratio\"}}},"
	                 "\"threads\": {\"last_ok_ms\": 1, \"scalars\": {"
	                 "\"low_first_rate\": {\"value\": 50000, \"unit\": \"per_s\"},"
	                 "\"low_last_rate\": {\"value\": 264, \"unit\": \"per_s\"}}}},"
	                 "\"runs_total\": {}}");

	(void)state;
	assert_null(strstr(t, "bound=\""));
	assert_null(strstr(t, "bucket=\""));
	assert_true(sample_value(t, "threadwatch_ctxsw_ratio_ci_lower") == 0.98);
	assert_true(sample_value(t, "threadwatch_ctxsw_ratio_ci_upper") == 1.01);
	assert_true(
	    sample_value(t, "threadwatch_threads_first_create_rate_per_second{policy=\"low\"}") ==
	    50000);
	assert_true(
	    sample_value(t, "threadwatch_threads_last_create_rate_per_second{policy=\"low\"}") ==
	    264);
	free(t);
}

/* The scheduler's gauges: failures in a row, the next cycle, and the last
 * cycle's status as one sample per status. */
static void test_cycle_gauges(void **state)
{
	char *t = format("{\"probes\": {\"map32\": {\"consecutive_failures\": 2},"
	                 "\"ctxsw\": {\"consecutive_failures\": 0}},"
	                 "\"runs_total\": {}, \"next_cycle_ms\": 1767225600500,"
	                 "\"last_cycle\": {\"status\": \"partial\"}}");
	char *odd = format("{\"probes\": {}, \"runs_total\": {}, \"next_cycle_ms\": null,"
	                   "\"last_cycle\": {\"status\": \"weird\"}}");

	(void)state;
	assert_true(sample_value(t, "threadwatch_probe_consecutive_failures{probe=\"map32\"}") ==
	            2);
	assert_true(sample_value(t, "threadwatch_probe_consecutive_failures{probe=\"ctxsw\"}") ==
	            0);
	assert_true(sample_value(t, "threadwatch_next_cycle_timestamp_seconds") == 1767225600.5);
	assert_true(sample_value(t, "threadwatch_last_cycle_status{status=\"partial\"}") == 1);
	assert_true(sample_value(t, "threadwatch_last_cycle_status{status=\"ok\"}") == 0);
	assert_true(sample_value(t, "threadwatch_last_cycle_status{status=\"failed\"}") == 0);
	assert_null(strstr(odd, "\nthreadwatch_next_cycle_timestamp_seconds "));
	assert_true(sample_value(odd, "threadwatch_last_cycle_status{status=\"weird\"}") == 1);
	assert_true(sample_value(odd, "threadwatch_last_cycle_status{status=\"ok\"}") == 0);
	free(t);
	free(odd);
}

/* threadwatch_host_info: 1 with the cohort labels of the recorded
 * fingerprint, each escaped and bounded (a hostile CPU model with a quote,
 * a backslash and a newline, cut at 64 bytes), the mitigations as a
 * summary from a fixed set of words; absent before any fingerprint. */
static void test_host_info(void **state)
{
	char *t =
	    format("{\"probes\": {}, \"fingerprint\": {\"id\": 1, \"host\": {"
	           "\"kernel\": \"6.1.0-18-amd64\", \"glibc\": \"2.36\", \"arch\": \"x86_64\","
	           "\"virtualization\": \"kvm\","
	           "\"cpu\": {\"vendor\": \"AuthenticAMD\", \"model_name\": "
	           "\"AMD \\\"EPYC\\\" 7\\\\B\\n"
	           "0123456789012345678901234567890123456789012345678901234567890123456789\"},"
	           "\"vulnerabilities\": {\"meltdown\": \"Mitigation: PTI\","
	           "\"spectre_v2\": \"Mitigation: Retpolines; IBPB: conditional\","
	           "\"mds\": \"Vulnerable: Clear CPU buffers attempted, no microcode\","
	           "\"l1tf\": \"Not affected\"}}}}");
	char *u = format("{\"probes\": {}, \"fingerprint\": {\"id\": 1, \"host\": {"
	                 "\"vulnerabilities\": {\"meltdown\": \"Not affected\"}}}}");
	char *none = format("{\"probes\": {}, \"fingerprint\": null}");
	/* IBRS only as the main mitigation, not inside a sub-clause
	 * ("PBRSB-eIBRS: Not affected"); enhanced IBRS counts. */
	char *sub = format("{\"probes\": {}, \"fingerprint\": {\"id\": 1, \"host\": {"
	                   "\"vulnerabilities\": {\"spectre_v2\": \"Mitigation: Retpolines; IBPB: "
	                   "conditional; STIBP: disabled; RSB filling; PBRSB-eIBRS: Not affected; "
	                   "BHI: Not affected\"}}}}");
	char *eibrs = format("{\"probes\": {}, \"fingerprint\": {\"id\": 1, \"host\": {"
	                     "\"vulnerabilities\": {\"spectre_v2\": \"Mitigation: Enhanced / "
	                     "Automatic IBRS; IBPB: conditional; PBRSB-eIBRS: SW sequence\"}}}}");

	(void)state;
	assert_true(sample_value(t,
	                         "threadwatch_host_info{kernel=\"6.1.0-18-amd64\","
	                         "cpu=\"AMD \\\"EPYC\\\" 7\\\\B_"
	                         "0123456789012345678901234567890123456789012345678\","
	                         "vendor=\"AuthenticAMD\",virt=\"kvm\",arch=\"x86_64\","
	                         "glibc=\"2.36\",mitigations=\"pti+retpoline+vulnerable\"}") == 1);
	assert_true(sample_value(u, "threadwatch_host_info{kernel=\"unknown\",cpu=\"unknown\","
	                            "vendor=\"unknown\",virt=\"unknown\",arch=\"unknown\","
	                            "glibc=\"unknown\",mitigations=\"none\"}") == 1);
	assert_null(strstr(none, "threadwatch_host_info{"));
	assert_non_null(strstr(sub, "mitigations=\"retpoline\"}"));
	assert_non_null(strstr(eibrs, "mitigations=\"ibrs\"}"));
	free(sub);
	free(eibrs);
	free(t);
	free(u);
	free(none);
}

/* Workload labels: the row that sums the rest alone is "other" (a process
 * named "other" gets its key), a unit keeps its name against a process
 * that calls itself the same, whatever their ranks, and the label values
 * are escaped. */
static void test_workload_labels(void **state)
{
	char *t = format(
	    "{\"probes\": {}, \"workloads\": {\"workloads\": ["
	    "{\"key\": \"process:/tmp/x\\nnginx.service\", \"kind\": \"process\","
	    " \"name\": \"nginx.service\", \"figures\": {\"threads\": 9}},"
	    "{\"key\": \"process:/tmp/o\\nother\", \"kind\": \"process\", \"name\": \"other\","
	    " \"figures\": {\"threads\": 8}},"
	    "{\"key\": \"unit:nginx.service\", \"kind\": \"unit\", \"name\": \"nginx.service\","
	    " \"figures\": {\"threads\": 7}},"
	    "{\"key\": \"process:/q\\nq\\\"\\\\\", \"kind\": \"process\", \"name\": \"q\\\"\\\\\","
	    " \"figures\": {\"threads\": 6}},"
	    "{\"key\": \"other\", \"kind\": \"other\", \"name\": \"other\","
	    " \"figures\": {\"threads\": 5}}]}}");

	(void)state;
	assert_true(sample_value(t, "threadwatch_workload_threads{workload=\"other\"}") == 5);
	assert_true(sample_value(t, "threadwatch_workload_threads{workload=\"nginx.service\"}") ==
	            7);
	assert_true(
	    sample_value(
	        t, "threadwatch_workload_threads{workload=\"process:/tmp/x\\nnginx.service\"}") ==
	    9);
	assert_true(
	    sample_value(t, "threadwatch_workload_threads{workload=\"process:/tmp/o\\nother\"}") ==
	    8);
	assert_true(sample_value(t, "threadwatch_workload_threads{workload=\"q\\\"\\\\\"}") == 6);
	free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_runs_and_failures),
	    cmocka_unit_test(test_knee_absent),
	    cmocka_unit_test(test_renamed),
	    cmocka_unit_test(test_process),
	    cmocka_unit_test(test_no_meaningless_labels),
	    cmocka_unit_test(test_cycle_gauges),
	    cmocka_unit_test(test_host_info),
	    cmocka_unit_test(test_workload_labels),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
