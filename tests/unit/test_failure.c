/*
 * test_failure: a failed run's kind, signal and short text from the
 * runner's reasons (lib/failure.c).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <jansson.h>

#include "failure.h"

static void test_kind(void **state)
{
	char sig[32];

	(void)state;
	assert_int_equal(failure_kind_of("crashed with SIGSEGV", sig, sizeof(sig)), FAILURE_CRASH);
	assert_string_equal(sig, "SIGSEGV");
	assert_int_equal(
	    failure_kind_of("crashed with SIGABRT (stderr: assertion)", sig, sizeof(sig)),
	    FAILURE_CRASH);
	assert_string_equal(sig, "SIGABRT");
	assert_int_equal(failure_kind_of("crashed with signal 42", sig, sizeof(sig)),
	                 FAILURE_CRASH);
	assert_string_equal(sig, "signal 42");
	assert_int_equal(failure_kind_of("killed after the 20 s time limit", sig, sizeof(sig)),
	                 FAILURE_TIMEOUT);
	assert_string_equal(sig, "");
	assert_int_equal(failure_kind_of("empty output", sig, sizeof(sig)), FAILURE_ERROR);
	assert_int_equal(failure_kind_of(NULL, sig, sizeof(sig)), FAILURE_ERROR);
}

static void expect_short(const char *reason, const char *text)
{
	json_t *f = failure_json("ctxsw", reason, 1, 2);
	char buf[256];

	failure_short(f, buf, sizeof(buf));
	assert_string_equal(buf, text);
	json_decref(f);
}

static void test_short(void **state)
{
	(void)state;
	expect_short("crashed with SIGSEGV (stderr: x)", "ctxsw crashed (SIGSEGV)");
	expect_short("killed after the 20 s time limit", "ctxsw timed out");
	expect_short("empty output", "ctxsw failed (empty output)");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_kind),
	    cmocka_unit_test(test_short),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
