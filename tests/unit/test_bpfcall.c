/*
 * test_bpfcall: the one parser of the bpf(2) wrapper (lib/bpfcall.c), the
 * cpulist of /sys/devices/system/cpu/possible as cpumap_print_to_pagebuf()
 * writes it, whose count sizes every per-CPU map value read: ranges,
 * single CPUs, holes, the newline, and texts that are not a list.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "bpfcall.h"

static void test_cpus(void **state)
{
	(void)state;
	assert_int_equal(bpfc_cpus_parse("0\n"), 1);
	assert_int_equal(bpfc_cpus_parse("0-1\n"), 2);
	assert_int_equal(bpfc_cpus_parse("0-3"), 4);
	/* holes: a value for each CPU named, none for those between */
	assert_int_equal(bpfc_cpus_parse("0,2-5,8\n"), 6);
	assert_int_equal(bpfc_cpus_parse("0-127\n"), 128);
}

static void test_cpus_bad(void **state)
{
	static const char *bad[] = {"",       "\n",  "-1",   "3-1",  "0-",
	                            "a",      "0;1", "0,,1", "0-1x", "99999999999999999999",
	                            "0-70000"};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(bpfc_cpus_parse(bad[i]), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_cpus),
	    cmocka_unit_test(test_cpus_bad),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
