/*
 * test_units: the shared size and duration parser and formatter
 * (lib/units.c): every suffix, fractions, the empty, negative, malformed and
 * overflowing inputs, the limits of uint64_t, and that what is formatted
 * reads back as the same value.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "units.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

static void test_size_suffixes(void **state)
{
	static const struct {
		const char *text;
		uint64_t bytes;
	} ok[] = {
	    {"0", 0},
	    {"4096", 4096},
	    {"7B", 7},
	    {"256K", 256 * 1024},
	    {"1k", 1024},
	    {"2KB", 2048},
	    {"3KiB", 3072},
	    {"8M", 8 << 20},
	    {"8m", 8 << 20},
	    {"8MB", 8 << 20},
	    {"8MiB", 8 << 20},
	    {"8 M", 8 << 20}, /* a space before the suffix */
	    {"1G", 1ULL << 30},
	    {"1g", 1ULL << 30},
	    {"2GiB", 2ULL << 30},
	    {"1T", 1ULL << 40},
	    {"1t", 1ULL << 40},
	    {"1TB", 1ULL << 40},
	    {"1TiB", 1ULL << 40},
	    {"007", 7},
	};

	(void)state;
	for (size_t i = 0; i < N(ok); i++) {
		uint64_t v = 12345;

		if (units_parse_size(ok[i].text, &v) != 0 || v != ok[i].bytes)
			fail_msg("\"%s\": got %llu, want %llu", ok[i].text, (unsigned long long)v,
			         (unsigned long long)ok[i].bytes);
	}
}

static void test_size_fractions(void **state)
{
	uint64_t v;

	(void)state;
	assert_int_equal(units_parse_size("1.5M", &v), 0);
	assert_int_equal(v, 1572864); /* 1.5 * 1048576 */
	assert_int_equal(units_parse_size(".5K", &v), 0);
	assert_int_equal(v, 512);
	assert_int_equal(units_parse_size("2.", &v), 0);
	assert_int_equal(v, 2);
	/* a fraction of a byte is dropped, not rounded up */
	assert_int_equal(units_parse_size("1.9", &v), 0);
	assert_int_equal(v, 1);
	assert_int_equal(units_parse_size("0.0001K", &v), 0); /* 0.1024 bytes */
	assert_int_equal(v, 0);
}

static void test_size_bad(void **state)
{
	static const char *const bad[] = {
	    "",    " 8M",  "-1",  "-8M", "+8M", "8Q",   "8MM", "M",   "8M ",
	    "8 ",  "0x10", "1e3", "1,5", "8Mi", "8kb",  ".",   "..5", "8.M.",
	    "inf", "nan",  "8\t", "K8",  "8iB", "8Kib", "1 2",
	};
	uint64_t v = 99;

	(void)state;
	for (size_t i = 0; i < N(bad); i++)
		if (units_parse_size(bad[i], &v) != -EINVAL)
			fail_msg("\"%s\" was not refused as malformed", bad[i]);
	assert_int_equal(v, 99); /* untouched on failure */
	assert_int_equal(units_parse_size(NULL, &v), -EINVAL);
}

static void test_size_limits(void **state)
{
	uint64_t v;

	(void)state;
	/* 2^64 - 2048 is the largest double below 2^64: it fits */
	assert_int_equal(units_parse_size("18446744073709549568", &v), 0);
	assert_true(v == 18446744073709549568ULL);
	assert_int_equal(units_parse_size("16777215T", &v), 0); /* (2^24 - 1) * 2^40 */
	assert_true(v == 18446742974197923840ULL);
	/* 2^64 and beyond do not */
	assert_int_equal(units_parse_size("18446744073709551616", &v), -ERANGE);
	assert_int_equal(units_parse_size("16777216T", &v), -ERANGE);
	assert_int_equal(units_parse_size("99999999999999999999999T", &v), -ERANGE);
	/* more digits than a double holds: not a number at all */
	char huge[400];
	memset(huge, '9', sizeof(huge) - 1);
	huge[sizeof(huge) - 1] = '\0';
	assert_int_equal(units_parse_size(huge, &v), -EINVAL);
}

static void test_duration(void **state)
{
	static const struct {
		const char *text;
		double s;
	} ok[] = {
	    {"0", 0},        {"5", 5},          {"90s", 90},         {"15m", 900},
	    {"6h", 21600},   {"1d", 86400},     {"2w", 1209600},     {"500ms", 0.5},
	    {"1h30m", 5400}, {"1h 30m", 5400},  {"1.5h", 5400},      {"0.25s", 0.25},
	    {".5m", 30},     {"1m1ms", 60.001}, {"1d2h3m4s", 93784}, {"0.0000004s", 0},
	};

	(void)state;
	for (size_t i = 0; i < N(ok); i++) {
		double v = -1;

		if (units_parse_duration(ok[i].text, &v) != 0 || fabs(v - ok[i].s) > 1e-9)
			fail_msg("\"%s\": got %g, want %g", ok[i].text, v, ok[i].s);
	}
}

static void test_duration_bad(void **state)
{
	static const char *const bad[] = {
	    "",    "-5",  "-1s", "+1s", "5x", "s",  "1h5",  "5 5", "1hh",   "1.2.3s",
	    "1e3", "inf", "5S",  "5 ",  " 5", "1y", "5sec", "m5",  "1h-5m", "0x5",
	};
	double v = 42;

	(void)state;
	for (size_t i = 0; i < N(bad); i++)
		if (units_parse_duration(bad[i], &v) != -EINVAL)
			fail_msg("\"%s\" was not refused", bad[i]);
	assert_true(v == 42);
	assert_int_equal(units_parse_duration(NULL, &v), -EINVAL);
}

static void test_duration_overflow(void **state)
{
	char huge[320];
	double v;

	(void)state;
	/* 10^307 weeks is finite as a number and infinite in seconds */
	huge[0] = '1';
	memset(huge + 1, '0', 307);
	strcpy(huge + 308, "w");
	assert_int_equal(units_parse_duration(huge, &v), -ERANGE);
	/* the same number of seconds is representable */
	huge[308] = 's';
	assert_int_equal(units_parse_duration(huge, &v), 0);
	assert_true(v == 1e307);
}

static void test_format_roundtrip(void **state)
{
	static const double durations[] = {0,    0.5,  0.001, 1,     59,     60,   90,
	                                   3600, 5400, 86400, 93784, 604800, 1.25, 31536000};
	static const double sizes[] = {
	    0, 1, 1000, 1024, 16384, 131072, 8388608, 1073741824.0, 1099511627776.0, 1572864};
	char buf[64];

	(void)state;
	for (size_t i = 0; i < N(durations); i++) {
		double back = -1;

		units_format_duration(durations[i], buf, sizeof(buf));
		if (units_parse_duration(buf, &back) != 0 || back != durations[i])
			fail_msg("%g formats as \"%s\", which reads as %g", durations[i], buf,
			         back);
	}
	for (size_t i = 0; i < N(sizes); i++) {
		uint64_t back = 1;

		units_format_size(sizes[i], buf, sizeof(buf));
		if (units_parse_size(buf, &back) != 0 || (double)back != sizes[i])
			fail_msg("%g formats as \"%s\"", sizes[i], buf);
	}
	units_format_duration(5400, buf, sizeof(buf));
	assert_string_equal(buf, "1h30m");
	units_format_duration(0.5, buf, sizeof(buf));
	assert_string_equal(buf, "500ms");
	units_format_size(131072, buf, sizeof(buf));
	assert_string_equal(buf, "128K");
	units_format_size(1572864, buf, sizeof(buf));
	assert_string_equal(buf, "1536K"); /* 1.5M is not a whole number of M */
	units_format_size(1000, buf, sizeof(buf));
	assert_string_equal(buf, "1000");
	units_format_number(0.1, "%", 0, buf, sizeof(buf));
	assert_string_equal(buf, "0.1%");
	units_format_number(1e-7, "", 0, buf, sizeof(buf));
	assert_string_equal(buf, "0.0000001");
	/* too small for 24 decimals: the exponent, not a 0 that reads back
	 * as another value (found by fuzz_config) */
	units_format_number(1e-129, "", 0, buf, sizeof(buf));
	assert_true(strtod(buf, NULL) == 1e-129);
}

static void test_decimal(void **state)
{
	double v;
	const char *s = "12.5rest";

	(void)state;
	assert_ptr_equal(units_decimal(s, &v), s + 4);
	assert_true(v == 12.5);
	assert_null(units_decimal("-1", &v));
	assert_null(units_decimal(".", &v));
	assert_null(units_decimal("", &v));
	assert_null(units_decimal("x1", &v));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_size_suffixes),     cmocka_unit_test(test_size_fractions),
	    cmocka_unit_test(test_size_bad),          cmocka_unit_test(test_size_limits),
	    cmocka_unit_test(test_duration),          cmocka_unit_test(test_duration_bad),
	    cmocka_unit_test(test_duration_overflow), cmocka_unit_test(test_format_roundtrip),
	    cmocka_unit_test(test_decimal),
	};

	return cmocka_run_group_tests_name("units", tests, NULL, NULL);
}
