/*
 * test_clock: lib/clock.c's timestamp formatter, the one every program
 * prints times with: floored, with milliseconds, years 0..9999.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "clock.h"

static void test_rfc3339(void **state)
{
	char buf[48];

	(void)state;
	assert_int_equal(clock_rfc3339_ms(0, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "1970-01-01T00:00:00.000Z");
	assert_int_equal(clock_rfc3339_ms(1796284316123, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "2026-12-03T07:51:56.123Z");
	/* before 1970: floored, not truncated toward zero */
	assert_int_equal(clock_rfc3339_ms(-1, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "1969-12-31T23:59:59.999Z");
	clock_rfc3339(-1, buf, sizeof(buf));
	assert_string_equal(buf, "1969-12-31T23:59:59.999Z");
	clock_rfc3339(1796284316123456789, buf, sizeof(buf));
	assert_string_equal(buf, "2026-12-03T07:51:56.123Z");
	/* years outside 0..9999 */
	assert_int_equal(clock_rfc3339_ms(253402300800000, buf, sizeof(buf)), -ERANGE);
	assert_string_equal(buf, "");
	assert_int_equal(clock_rfc3339_ms(INT64_MIN, buf, sizeof(buf)), -ERANGE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_rfc3339),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
