/*
 * test_protocol: the probe-document validator accepts real documents
 * (including one built by the probe library) and rejects every kind of
 * malformed one with a message that names the offending field.
 */
#include <errno.h>
#include <math.h>
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

#include "probe.h"
#include "protocol.h"

static const char base_doc[] =
    "{\"probe\":\"ctxsw\",\"protocol\":1,\"status\":\"ok\",\"reason\":null,"
    "\"started_at\":\"2026-12-03T07:51:56.123Z\",\"started_unix\":1796284316.123,"
    "\"duration_s\":3.21,\"params\":{\"quick\":false,\"seed\":1,\"cpu\":\"0\",\"x\":null},"
    "\"scalars\":{\"low_ns\":{\"value\":812.5,\"unit\":\"ns\"},"
    "\"ratio\":{\"value\":0.96,\"unit\":\"ratio\"}},"
    "\"series\":{\"pair_ratio\":{\"x_unit\":\"count\",\"y_unit\":\"ratio\","
    "\"points\":[[0,0.9],[1,0.95],[1,0.97],[2,1.0]]}},"
    "\"info\":{\"low_stack\":\"0x40000000\",\"fsgsbase\":true,\"reps\":3,\"knee\":null}}";

static json_t *load_base(void)
{
	json_error_t e;
	json_t *doc = json_loads(base_doc, 0, &e);

	assert_non_null(doc);
	return doc;
}

/* Sets (or, with text NULL, deletes) the value at a '/'-separated path. */
static void mutate(json_t *doc, const char *path, const char *text)
{
	char buf[256], *save = NULL, *key, *next;
	json_t *parent = doc, *v = NULL;

	snprintf(buf, sizeof(buf), "%s", path);
	key = strtok_r(buf, "/", &save);
	while ((next = strtok_r(NULL, "/", &save))) {
		parent = json_object_get(parent, key);
		assert_non_null(parent);
		key = next;
	}
	if (!text) {
		json_object_del(parent, key);
		return;
	}
	v = json_loads(text, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
	assert_non_null(v);
	json_object_set_new(parent, key, v);
}

static void expect_parse_error(const char *buf, size_t len, const char *expect)
{
	char err[512] = "";
	json_t *doc = (json_t *)1;

	assert_int_equal(protocol_parse(buf, len, &doc, err, sizeof(err)), -EINVAL);
	assert_null(doc);
	if (!strstr(err, expect))
		fail_msg("expected \"%s\" in \"%s\"", expect, err);
}

static void expect_ok_len(const char *buf, size_t len)
{
	char err[512] = "";
	json_t *doc = NULL;

	if (protocol_parse(buf, len, &doc, err, sizeof(err)) != 0)
		fail_msg("rejected: %s", err);
	assert_non_null(doc);
	json_decref(doc);
}

static void expect_ok(const char *buf)
{
	expect_ok_len(buf, strlen(buf));
}

static void test_valid_base(void **state)
{
	char err[256];
	json_t *doc = NULL, *pts;

	(void)state;
	assert_int_equal(protocol_parse(base_doc, strlen(base_doc), &doc, err, sizeof(err)), 0);
	assert_string_equal(protocol_status(doc), "ok");
	assert_true(protocol_scalar(doc, "low_ns") == 812.5);
	assert_true(isnan(protocol_scalar(doc, "high_ns")));
	pts = protocol_series(doc, "pair_ratio");
	assert_non_null(pts);
	assert_int_equal(json_array_size(pts), 4);
	assert_null(protocol_series(doc, "nothing"));
	assert_int_equal(protocol_validate(doc, err, sizeof(err)), 0);
	json_decref(doc);
}

static void test_valid_variants(void **state)
{
	(void)state;
	/* Only the required fields. */
	expect_ok("{\"probe\":\"x\",\"protocol\":1,\"status\":\"ok\","
	          "\"started_at\":\"2026-01-01T00:00:00Z\",\"started_unix\":0,\"duration_s\":0}");
	/* Skipped and error with reasons, a time offset, white space around. */
	expect_ok("\n  {\"probe\":\"map32\",\"protocol\":1,\"status\":\"skipped\","
	          "\"reason\":\"not x86-64\",\"started_at\":\"2026-01-01T00:00:00.5+02:00\","
	          "\"started_unix\":1,\"duration_s\":0.1}  \n\t");
	/* Not applicable on this architecture, with its reason. */
	expect_ok("{\"probe\":\"map32\",\"protocol\":1,\"status\":\"not_applicable\","
	          "\"reason\":\"no MAP_32BIT window on aarch64\","
	          "\"started_at\":\"2026-01-01T00:00:00Z\",\"started_unix\":1,\"duration_s\":0}");
	expect_ok("{\"probe\":\"threads-2\",\"protocol\":1,\"status\":\"error\","
	          "\"reason\":\"low stacks not low\",\"started_at\":\"2026-01-01T00:00:00Z\","
	          "\"started_unix\":1,\"duration_s\":1,\"scalars\":{},\"series\":{},"
	          "\"info\":{},\"params\":{}}");
	/* Every unit of the contract. */
	expect_ok("{\"probe\":\"u\",\"protocol\":1,\"status\":\"ok\","
	          "\"started_at\":\"2026-01-01T00:00:00Z\",\"started_unix\":1,\"duration_s\":1,"
	          "\"scalars\":{\"a\":{\"value\":1,\"unit\":\"ns\"},\"b\":{\"value\":1,\"unit\":"
	          "\"cycles\"},\"c\":{\"value\":1,\"unit\":\"bytes\"},\"d\":{\"value\":1,\"unit\":"
	          "\"hz\"},\"e\":{\"value\":1,\"unit\":\"per_s\"},\"f\":{\"value\":1,\"unit\":"
	          "\"threads\"},\"g\":{\"value\":1,\"unit\":\"vmas\"},\"h\":{\"value\":1,\"unit\":"
	          "\"bool\"},\"i\":{\"value\":140737488355328,\"unit\":\"address\"},\"j\":{"
	          "\"value\":-1.5,\"unit\":\"slope\"},\"k\":{\"value\":2,\"unit\":\"s\"},"
	          "\"L.x-y_z\":{\"value\":0,\"unit\":\"count\"}}}");
}

/* A document written by the probe library itself must pass. */
static void test_valid_from_probe_lib(void **state)
{
	struct probe_doc *pd = probe_doc_new("ctxsw");
	struct probe_series *s;
	char path[] = "/tmp/test_protocol.XXXXXX", buf[65536], err[256];
	int fd = mkstemp(path), saved = dup(1);
	ssize_t n;
	json_t *doc = NULL;

	(void)state;
	assert_true(fd >= 0 && saved >= 0);
	probe_param_bool(pd, "quick", 1);
	probe_param_int(pd, "seed", 1);
	probe_scalar(pd, "low_ns", 812.25, "ns");
	probe_scalar(pd, "bad", NAN, "ns"); /* left out, not written */
	s = probe_series_new(pd, "pair_ratio", "count", "ratio");
	probe_series_add(s, 0, 0.97);
	probe_series_add(s, 1, 0.99);
	probe_info_str(pd, "low_stack", "0x40000000");
	probe_info_str(pd, "none", NULL);
	probe_info_num(pd, "reps", 12);
	probe_status(pd, PROBE_SKIPPED, "because %s", "testing");
	fflush(stdout);
	dup2(fd, 1);
	assert_int_equal(probe_emit(pd), 0);
	fflush(stdout);
	dup2(saved, 1);
	close(saved);
	probe_doc_free(pd);
	n = pread(fd, buf, sizeof(buf) - 1, 0);
	close(fd);
	unlink(path);
	assert_true(n > 0);
	if (protocol_parse(buf, (size_t)n, &doc, err, sizeof(err)) != 0)
		fail_msg("probe library document rejected: %s", err);
	assert_string_equal(protocol_status(doc), "skipped");
	assert_true(protocol_scalar(doc, "low_ns") == 812.25);
	assert_true(isnan(protocol_scalar(doc, "bad")));
	json_decref(doc);
}

/* One mutation of the base document and the message it must produce. */
static const struct reject_case {
	const char *path;
	const char *value; /* JSON text; NULL deletes the field */
	const char *expect;
} reject_cases[] = {
    {"probe", NULL, "probe: missing"},
    {"probe", "\"Ctx\"", "probe: invalid name \"Ctx\""},
    {"probe", "\"a/b\"", "probe: invalid name"},
    {"probe", "\"\"", "probe: invalid name"},
    {"probe", "\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"",
     "probe: invalid name"},
    {"probe", "5", "probe: not a string"},
    {"protocol", NULL, "protocol: missing"},
    {"protocol", "2", "protocol: unsupported version 2"},
    {"protocol", "\"1\"", "protocol: not an integer"},
    {"protocol", "1.0", "protocol: not an integer"},
    {"status", NULL, "status: missing"},
    {"status", "\"fine\"", "status: must be"},
    {"status", "\"error\"", "reason: required when status is \"error\""},
    {"status", "\"skipped\"", "reason: required when status is \"skipped\""},
    {"status", "\"not_applicable\"", "reason: required when status is \"not_applicable\""},
    {"reason", "\"\"", "reason: empty"},
    {"reason", "5", "reason: not a string"},
    {"started_at", NULL, "started_at: missing"},
    {"started_at", "\"yesterday\"", "started_at: not an RFC 3339 time"},
    {"started_at", "\"2026-12-03 07:51:56Z\"", "started_at: not an RFC 3339 time"},
    {"started_at", "\"2026-12-03T07:51:56.Z\"", "started_at: not an RFC 3339 time"},
    {"started_at", "1796284316", "started_at: not a string"},
    {"started_unix", NULL, "started_unix: missing"},
    {"started_unix", "\"now\"", "started_unix: not a number"},
    {"started_unix", "-1", "started_unix: negative"},
    {"duration_s", NULL, "duration_s: missing"},
    {"duration_s", "-0.5", "duration_s: negative"},
    {"duration_s", "true", "duration_s: not a number"},
    {"params", "[]", "params: not an object"},
    {"params/quick", "{}", "params.quick: must be a number, string, boolean or null"},
    {"params/bad name", "1", "params: invalid name \"bad name\""},
    {"scalars", "[1]", "scalars: not an object"},
    {"scalars/low_ns/value", "\"fast\"", "scalars.low_ns.value: not a number"},
    {"scalars/low_ns/value", NULL, "scalars.low_ns.value: missing"},
    {"scalars/low_ns/value", "null", "scalars.low_ns.value: not a number"},
    {"scalars/low_ns/unit", "\"furlongs\"", "scalars.low_ns.unit: unknown unit \"furlongs\""},
    {"scalars/low_ns/unit", NULL, "scalars.low_ns.unit: missing"},
    {"scalars/low_ns/unit", "7", "scalars.low_ns.unit: not a string"},
    {"scalars/low_ns", "5", "scalars.low_ns: not an object"},
    {"scalars/low_ns/ci", "1", "scalars.low_ns: unknown field \"ci\""},
    {"scalars/a b", "{\"value\":1,\"unit\":\"ns\"}", "scalars: invalid name \"a b\""},
    {"series", "5", "series: not an object"},
    {"series/pair_ratio", "[]", "series.pair_ratio: not an object"},
    {"series/pair_ratio/points", "[[1,1],[0,1]]", "series.pair_ratio.points[1]: x decreases"},
    {"series/pair_ratio/points", "[[1]]", "series.pair_ratio.points[0]: not an [x, y] pair"},
    {"series/pair_ratio/points", "[[1,2,3]]", "series.pair_ratio.points[0]: not an [x, y]"},
    {"series/pair_ratio/points", "[5]", "series.pair_ratio.points[0]: not an [x, y] pair"},
    {"series/pair_ratio/points", "[[0,1],[1,\"a\"]]",
     "series.pair_ratio.points[1]: y is not a finite number"},
    {"series/pair_ratio/points", "[[null,1]]",
     "series.pair_ratio.points[0]: x is not a finite number"},
    {"series/pair_ratio/points", "{}", "series.pair_ratio.points: not an array"},
    {"series/pair_ratio/points", NULL, "series.pair_ratio.points: missing"},
    {"series/pair_ratio/x_unit", NULL, "series.pair_ratio.x_unit: missing"},
    {"series/pair_ratio/y_unit", "\"parsecs\"",
     "series.pair_ratio.y_unit: unknown unit \"parsecs\""},
    {"series/pair_ratio/colour", "\"red\"", "series.pair_ratio: unknown field \"colour\""},
    {"series/bad\\name", "{}", "series: invalid name \"bad?name\""},
    {"info", "\"x\"", "info: not an object"},
    {"info/x", "{\"a\":1}", "info.x: must be a number, string, boolean or null"},
    {"info/x", "[1]", "info.x: must be a number, string, boolean or null"},
    {"hello", "1", "document: unknown field \"hello\""},
    /* The ctxsw equivalence, A/A and selector figures */
    {"scalars/equivalent", "{\"value\":0.5,\"unit\":\"bool\"}",
     "scalars.equivalent.value: must be a whole number"},
    {"scalars/equivalent", "{\"value\":2,\"unit\":\"bool\"}",
     "scalars.equivalent.value: must lie in [0, 1]"},
    {"scalars/aa_equivalent", "{\"value\":1,\"unit\":\"ratio\"}",
     "scalars.aa_equivalent.unit: must be \"bool\""},
    {"scalars/equivalence_margin", "{\"value\":0,\"unit\":\"ratio\"}",
     "scalars.equivalence_margin.value: must lie in (0, 0.5)"},
    {"scalars/equivalence_margin", "{\"value\":0.5,\"unit\":\"ratio\"}",
     "scalars.equivalence_margin.value: must lie in (0, 0.5)"},
    {"scalars/selector_ratio", "{\"value\":0,\"unit\":\"ratio\"}",
     "scalars.selector_ratio.value: must lie in (0, inf)"},
    {"scalars/aa_ratio_ci_lo", "{\"value\":1.01,\"unit\":\"ratio\"}",
     "scalars.aa_ratio_ci_lo: present without scalars.aa_ratio_ci_hi"},
    {"scalars/ratio_ci_lo", "{\"value\":1.01,\"unit\":\"ratio\"}",
     "scalars.ratio_ci_lo: present without scalars.ratio_ci_hi"},
    {"info/order", "\"sideways\"", "info.order: must be one of abba, random"},
    {"info/cycles_source", "5", "info.cycles_source: must be one of perf, tsc, none"},
};

/* CI bounds out of order are rejected, in order accepted; the
 * same fields in another probe's document are that probe's business. */
static void test_ctxsw_rules(void **state)
{
	json_t *doc = load_base();
	char err[512] = "";

	(void)state;
	mutate(doc, "scalars/selector_ratio_ci_lo", "{\"value\":1.02,\"unit\":\"ratio\"}");
	mutate(doc, "scalars/selector_ratio_ci_hi", "{\"value\":1.01,\"unit\":\"ratio\"}");
	assert_int_equal(protocol_validate(doc, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "scalars.selector_ratio_ci_lo.value: above "
	                            "scalars.selector_ratio_ci_hi.value"));
	mutate(doc, "scalars/selector_ratio_ci_hi", "{\"value\":1.03,\"unit\":\"ratio\"}");
	mutate(doc, "scalars/equivalent", "{\"value\":1,\"unit\":\"bool\"}");
	mutate(doc, "scalars/equivalence_margin", "{\"value\":0.02,\"unit\":\"ratio\"}");
	mutate(doc, "info/order", "\"abba\"");
	assert_int_equal(protocol_validate(doc, err, sizeof(err)), 0);
	mutate(doc, "probe", "\"other\"");
	mutate(doc, "info/order", "\"sideways\"");
	mutate(doc, "scalars/equivalent", "{\"value\":7,\"unit\":\"count\"}");
	assert_int_equal(protocol_validate(doc, err, sizeof(err)), 0);
	json_decref(doc);
}

static void test_rejections(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(reject_cases) / sizeof(reject_cases[0]); i++) {
		const struct reject_case *c = &reject_cases[i];
		json_t *doc = load_base();
		char *text, err[512] = "";

		mutate(doc, c->path, c->value);
		/* The parse path and the validate path give the same verdict. */
		text = json_dumps(doc, JSON_COMPACT);
		assert_non_null(text);
		expect_parse_error(text, strlen(text), c->expect);
		assert_int_equal(protocol_validate(doc, err, sizeof(err)), -EINVAL);
		if (!strstr(err, c->expect))
			fail_msg("case %zu (%s): expected \"%s\" in \"%s\"", i, c->path, c->expect,
			         err);
		free(text);
		json_decref(doc);
	}
}

static void test_long_strings(void **state)
{
	json_t *doc = load_base();
	char *big = malloc(PROTOCOL_MAX_STRING + 2), err[256];

	(void)state;
	memset(big, 'r', PROTOCOL_MAX_STRING + 1);
	big[PROTOCOL_MAX_STRING + 1] = '\0';
	json_object_set_new(doc, "reason", json_string(big));
	assert_int_equal(protocol_validate(doc, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "reason: longer than 4096 bytes"));
	big[PROTOCOL_MAX_STRING] = '\0';
	json_object_set_new(doc, "reason", json_string(big));
	assert_int_equal(protocol_validate(doc, err, sizeof(err)), 0);
	/* Only a document built in memory can hold a NUL inside a string. */
	json_object_set_new(json_object_get(doc, "info"), "x", json_stringn("a\0b", 3));
	assert_int_equal(protocol_validate(doc, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "info.x: contains a NUL character"));
	free(big);
	json_decref(doc);
}

static void test_too_many_points(void **state)
{
	json_t *doc = load_base(), *pts = json_array();
	char err[256];

	(void)state;
	for (int i = 0; i <= PROTOCOL_MAX_SERIES_POINTS; i++)
		json_array_append_new(pts, json_pack("[i, i]", i, 1));
	json_object_set_new(json_object_get(json_object_get(doc, "series"), "pair_ratio"), "points",
	                    pts);
	assert_int_equal(protocol_validate(doc, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "series.pair_ratio.points: more than 100000 points"));
	json_decref(doc);
}

static void test_raw_text(void **state)
{
	char buf[2048], deep[256], *big;
	size_t n = 0;

	(void)state;
	expect_parse_error("", 0, "document: not valid JSON");
	expect_parse_error("   \n", 4, "document: not valid JSON");
	expect_parse_error("[]", 2, "document: not a JSON object");
	expect_parse_error("\"ok\"", 4, "document: not valid JSON");
	expect_parse_error("{\"probe\":", 9, "document: not valid JSON");
	expect_parse_error("garbage", 7, "document: not valid JSON");
	snprintf(buf, sizeof(buf), "%s garbage", base_doc);
	expect_parse_error(buf, strlen(buf), "document: not valid JSON");
	snprintf(buf, sizeof(buf), "%s%s", base_doc, base_doc);
	expect_parse_error(buf, strlen(buf), "document: not valid JSON");
	/* A NUL byte after the document is not white space. */
	snprintf(buf, sizeof(buf), "%s", base_doc);
	n = strlen(buf);
	buf[n] = '\0';
	buf[n + 1] = 'x';
	expect_parse_error(buf, n + 2, "document: contains a NUL byte");
	/* Duplicate keys, huge numbers, NaN. */
	expect_parse_error("{\"probe\":\"a\",\"probe\":\"b\"}", 25, "document: not valid JSON");
	snprintf(buf, sizeof(buf), "%s", base_doc);
	memcpy(strstr(buf, "812.5"), "1e999", 5);
	expect_parse_error(buf, strlen(buf), "document: not valid JSON");
	expect_parse_error("{\"a\":NaN}", 9, "document: not valid JSON");
	/* Nesting deeper than the limit, inside info where values are free. */
	memset(deep, '[', 40);
	memset(deep + 40, ']', 40);
	snprintf(buf, sizeof(buf), "{\"info\":{\"x\":%.80s}}", deep);
	expect_parse_error(buf, strlen(buf), "document: nested deeper than 16 levels");
	/* Brackets inside strings do not count as nesting. */
	snprintf(buf, sizeof(buf), "%s", base_doc);
	memcpy(strstr(buf, "0x40000000"), "[[[[[[[[[[", 10);
	expect_ok(buf);
	/* A valid document padded with white space past the size limit. */
	big = malloc((size_t)PROTOCOL_MAX_BYTES + 1);
	assert_non_null(big);
	memset(big, ' ', (size_t)PROTOCOL_MAX_BYTES + 1);
	memcpy(big, base_doc, strlen(base_doc));
	expect_parse_error(big, (size_t)PROTOCOL_MAX_BYTES + 1, "document: larger than");
	expect_ok_len(big, PROTOCOL_MAX_BYTES);
	free(big);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_valid_base),           cmocka_unit_test(test_valid_variants),
	    cmocka_unit_test(test_valid_from_probe_lib), cmocka_unit_test(test_rejections),
	    cmocka_unit_test(test_ctxsw_rules),          cmocka_unit_test(test_long_strings),
	    cmocka_unit_test(test_too_many_points),      cmocka_unit_test(test_raw_text),
	};

	return cmocka_run_group_tests_name("protocol", tests, NULL, NULL);
}
