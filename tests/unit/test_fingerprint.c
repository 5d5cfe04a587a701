/*
 * test_fingerprint: the host fingerprint has every field of the contract,
 * its identity leaves out the tuning limits, and the difference of two
 * identities names what changed ("kernel A → B; microcode X → Y").
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "fingerprint.h"

static void test_read_has_every_field(void **state)
{
	static const char *const top[] = {
	    "hostname", "kernel",         "kernel_version", "glibc",           "arch",
	    "cpu",      "virtualization", "ncpus",          "vulnerabilities", "limits"};
	static const char *const cpu[] = {"vendor",    "family",     "model",   "stepping",
	                                  "microcode", "model_name", "fsgsbase"};
	static const char *const limits[] = {"threads_max",      "pid_max",  "nproc_soft",
	                                     "stack_soft",       "pids_max", "max_map_count",
	                                     "overcommit_memory"};
	json_t *fp = fingerprint_read();

	(void)state;
	for (size_t i = 0; i < sizeof(top) / sizeof(top[0]); i++)
		if (!json_object_get(fp, top[i]))
			fail_msg("fingerprint.%s missing", top[i]);
	for (size_t i = 0; i < sizeof(cpu) / sizeof(cpu[0]); i++)
		if (!json_object_get(json_object_get(fp, "cpu"), cpu[i]))
			fail_msg("fingerprint.cpu.%s missing", cpu[i]);
	for (size_t i = 0; i < sizeof(limits) / sizeof(limits[0]); i++)
		if (!json_object_get(json_object_get(fp, "limits"), limits[i]))
			fail_msg("fingerprint.limits.%s missing", limits[i]);
	/* Always readable on Linux with glibc. */
	assert_true(json_is_string(json_object_get(fp, "kernel")));
	assert_true(json_is_string(json_object_get(fp, "glibc")));
	assert_true(json_integer_value(json_object_get(fp, "ncpus")) >= 1);
	assert_true(json_is_string(json_object_get(fp, "virtualization")));
#if defined(__x86_64__)
	assert_true(json_is_string(json_object_get(json_object_get(fp, "cpu"), "vendor")));
	assert_true(json_is_boolean(json_object_get(json_object_get(fp, "cpu"), "fsgsbase")));
#endif
	/* Reading twice gives the same identity, so a re-check sees no change. */
	{
		json_t *again = fingerprint_read();
		json_t *a = fingerprint_identity(fp), *b = fingerprint_identity(again);
		char *d = fingerprint_diff(a, b);

		assert_true(json_equal(a, b));
		assert_null(d);
		json_decref(a);
		json_decref(b);
		json_decref(again);
	}
	json_decref(fp);
}

static json_t *sample(const char *kernel, const char *microcode, int threads_max)
{
	return json_pack("{s:s, s:s, s:s, s:s, s:s, s:{s:s, s:i, s:i, s:i, s:s, s:s, s:b}, s:s, "
	                 "s:i, s:{s:s}, s:{s:i}}",
	                 "hostname", "h", "kernel", kernel, "kernel_version", "#1 SMP", "glibc",
	                 "2.36", "arch", "x86_64", "cpu", "vendor", "GenuineIntel", "family", 6,
	                 "model", 85, "stepping", 7, "microcode", microcode, "model_name", "Xeon",
	                 "fsgsbase", 1, "virtualization", "kvm", "ncpus", 2, "vulnerabilities",
	                 "meltdown", "Not affected", "limits", "threads_max", threads_max);
}

static void test_identity_and_diff(void **state)
{
	json_t *a = sample("6.1.0-18-amd64", "0x2b", 1000);
	json_t *b = sample("6.1.0-21-amd64", "0x2c", 2000);
	json_t *c = sample("6.1.0-18-amd64", "0x2b", 5000);
	json_t *ia = fingerprint_identity(a), *ic = fingerprint_identity(c);
	char *d;

	(void)state;
	/* Limits and the host name are tuning, not identity. */
	assert_null(json_object_get(ia, "limits"));
	assert_null(json_object_get(ia, "hostname"));
	assert_string_equal(
	    json_string_value(json_object_get(json_object_get(ia, "cpu"), "microcode")), "0x2b");
	assert_true(json_equal(ia, ic));
	assert_null(fingerprint_diff(a, c));

	d = fingerprint_diff(a, b);
	assert_non_null(d);
	assert_string_equal(d, "kernel 6.1.0-18-amd64 → 6.1.0-21-amd64; microcode 0x2b → 0x2c");
	free(d);

	/* A vulnerability entry that changes is named. */
	json_object_set_new(json_object_get(c, "vulnerabilities"), "meltdown",
	                    json_string("Mitigation: PTI"));
	json_object_set_new(json_object_get(c, "cpu"), "fsgsbase", json_false());
	d = fingerprint_diff(a, c);
	assert_string_equal(d, "fsgsbase yes → no; vulnerability meltdown changed");
	free(d);

	/* Works on anything, even NULL and fields that are missing. */
	d = fingerprint_diff(NULL, a);
	assert_non_null(strstr(d, "kernel unknown → 6.1.0-18-amd64"));
	free(d);
	assert_null(fingerprint_diff(NULL, NULL));
	json_decref(ia);
	json_decref(ic);
	json_decref(a);
	json_decref(b);
	json_decref(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_read_has_every_field),
	    cmocka_unit_test(test_identity_and_diff),
	};

	return cmocka_run_group_tests_name("fingerprint", tests, NULL, NULL);
}
