/*
 * test_failure: a failed run's kind and signal as data, parsed back from a
 * failure object, and its short text (lib/failure.c).
 */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "failure.h"

static void test_kind(void **state)
{
	struct failure f;

	(void)state;
	assert_int_equal(failure_kind_parse("crash"), FAILURE_CRASH);
	assert_int_equal(failure_kind_parse("timeout"), FAILURE_TIMEOUT);
	assert_int_equal(failure_kind_parse("error"), FAILURE_ERROR);
	assert_int_equal(failure_kind_parse("crashed"), -EINVAL);
	assert_int_equal(failure_kind_parse(NULL), -EINVAL);
	failure_set(&f, FAILURE_CRASH, SIGSEGV);
	assert_string_equal(f.signal, "SIGSEGV");
	failure_set(&f, FAILURE_CRASH, 42);
	assert_string_equal(f.signal, "signal 42");
	/* the runner's kill at the time limit is not a crash's signal */
	failure_set(&f, FAILURE_TIMEOUT, SIGKILL);
	assert_string_equal(f.signal, "");
	failure_set(&f, FAILURE_ERROR, 0);
	assert_int_equal(f.kind, FAILURE_ERROR);
}

/* The kind comes from the data, never from the reason's words. */
static void test_json_round_trip(void **state)
{
	struct failure f, back;
	json_t *o;
	char err[128];

	(void)state;
	failure_set(&f, FAILURE_CRASH, SIGBUS);
	o = failure_json("ctxsw", &f, "killed after the 20 s time limit", 1, 2);
	assert_string_equal(json_string_value(json_object_get(o, "kind")), "crash");
	assert_string_equal(json_string_value(json_object_get(o, "signal")), "SIGBUS");
	assert_int_equal(failure_parse_json(o, &back, "x", err, sizeof(err)), 0);
	assert_int_equal(back.kind, FAILURE_CRASH);
	assert_string_equal(back.signal, "SIGBUS");
	json_decref(o);
	o = json_pack("{s:s}", "reason", "crashed with SIGSEGV");
	assert_int_equal(failure_parse_json(o, &back, "x", err, sizeof(err)), 0);
	assert_int_equal(back.kind, FAILURE_ERROR);
	json_decref(o);
	o = json_pack("{s:s, s:s}", "kind", "timeout", "signal", "SIGSEGV");
	assert_int_equal(failure_parse_json(o, &back, "e", err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "e.signal: must be null, or a crash's signal such as \"SIGSEGV\"");
	json_decref(o);
	o = json_pack("{s:s}", "kind", "exploded");
	assert_int_equal(failure_parse_json(o, &back, "e", err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "e.kind: must be error, crash or timeout");
	json_decref(o);
}

static void expect_short(enum failure_kind kind, int sig, const char *reason, const char *text)
{
	struct failure f;
	json_t *o;
	char buf[256];

	failure_set(&f, kind, sig);
	o = failure_json("ctxsw", &f, reason, 1, 2);
	failure_short(o, buf, sizeof(buf));
	assert_string_equal(buf, text);
	json_decref(o);
}

static void test_short(void **state)
{
	(void)state;
	expect_short(FAILURE_CRASH, SIGSEGV, "crashed with SIGSEGV (stderr: x)",
	             "ctxsw crashed (SIGSEGV)");
	expect_short(FAILURE_TIMEOUT, 0, "killed after the 20 s time limit", "ctxsw timed out");
	expect_short(FAILURE_ERROR, 0, "empty output", "ctxsw failed (empty output)");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_kind),
	    cmocka_unit_test(test_json_round_trip),
	    cmocka_unit_test(test_short),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
