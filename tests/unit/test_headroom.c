/*
 * test_headroom: the limits and warnings built from a sample (a warning at
 * 90% of a limit, unknown and unlimited limits left out), the VMA scan of a
 * fake /proc, a real reading of this host, and the largest process taken
 * from the observer's window.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "tmpdir.h"
#include <jansson.h>

#include "headroom.h"

static const json_t *limit(const json_t *h, const char *name)
{
	const json_t *l;
	size_t i;

	json_array_foreach(
	    json_object_get(h, "limits"), i,
	    l) if (!strcmp(json_string_value(json_object_get(l, "name")), name)) return l;
	return NULL;
}

static void test_limits_and_warnings(void **state)
{
	struct headroom_sample s = {
	    .threads = 950,
	    .threads_max = 100000,
	    .pid_max = 1000,
	    .pids_current = 0,
	    .pids_max = UINT64_MAX,
	    .max_map_count = 65530,
	    .largest_vmas = 60000,
	    .largest_pid = 42,
	    .largest_comm = "java",
	    .scanned = 10,
	    .unreadable = 2,
	};
	json_t *h = headroom_json(&s);
	const json_t *l;

	(void)state;
	assert_int_equal(json_integer_value(json_object_get(h, "threads")), 950);
	assert_true(json_is_null(json_object_get(h, "pids_max")));
	assert_string_equal(json_string_value(json_object_get(h, "largest_vmas_comm")), "java");
	assert_int_equal(json_integer_value(json_object_get(h, "processes_unreadable")), 2);
	/* threads against threads-max: 0.95% */
	l = limit(h, "threads_max");
	assert_non_null(l);
	assert_false(json_is_true(json_object_get(l, "warning")));
	/* threads against pid_max: 95%, within 10% */
	l = limit(h, "pid_max");
	assert_non_null(l);
	assert_true(json_is_true(json_object_get(l, "warning")));
	assert_true(json_real_value(json_object_get(l, "ratio")) == 0.95);
	/* VMAs: 60000 of 65530 is 91.6% */
	l = limit(h, "max_map_count");
	assert_non_null(l);
	assert_true(json_is_true(json_object_get(l, "warning")));
	assert_int_equal(json_integer_value(json_object_get(l, "used")), 60000);
	/* pids.max unlimited and pids.current unknown: left out */
	assert_null(limit(h, "pids_max"));
	assert_int_equal(json_array_size(json_object_get(h, "warnings")), 2);
	assert_non_null(strstr(json_string_value(json_array_get(json_object_get(h, "warnings"), 0)),
	                       "pid_max: 950 of 1000 (95%)"));
	json_decref(h);

	/* Just below 90% is no warning; nothing read is no limit. */
	s = (struct headroom_sample){.threads = 899,
	                             .pid_max = 1000,
	                             .pids_current = 10,
	                             .pids_max = 100,
	                             .largest_vmas = -1};
	h = headroom_json(&s);
	assert_false(json_is_true(json_object_get(limit(h, "pid_max"), "warning")));
	assert_null(limit(h, "threads_max"));
	assert_null(limit(h, "max_map_count"));
	assert_true(json_is_null(json_object_get(h, "largest_vmas")));
	assert_non_null(limit(h, "pids_max"));
	assert_int_equal(json_array_size(json_object_get(h, "warnings")), 0);
	json_decref(h);
}

static void make_proc(const char *pid, int lines, const char *comm)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, pid);
	assert_int_equal(mkdir(path, 0755), 0);
	if (lines < 0)
		return; /* a process without maps, like one that just exited */
	snprintf(path, sizeof(path), "%s/%s/maps", tmpdir, pid);
	f = fopen(path, "w");
	assert_non_null(f);
	for (int i = 0; i < lines; i++)
		fprintf(f, "7f0000%04x000-7f0000%04x000 rw-p 00000000 00:00 0\n", i, i + 1);
	fclose(f);
	snprintf(path, sizeof(path), "%s/%s/comm", tmpdir, pid);
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "%s\n", comm);
	fclose(f);
}

static void test_scan(void **state)
{
	struct headroom_sample s;

	(void)state;
	make_proc("1", 12, "init");
	make_proc("4242", 5000, "big");
	make_proc("77", 0, "kthread");
	make_proc("99", -1, "gone");
	make_proc("self", 9999, "not-a-pid");
	assert_int_equal(headroom_scan_vmas(tmpdir, &s), 0);
	assert_int_equal(s.largest_vmas, 5000);
	assert_int_equal(s.largest_pid, 4242);
	assert_string_equal(s.largest_comm, "big");
	assert_int_equal(s.scanned, 3);
	assert_int_equal(headroom_scan_vmas("/nonexistent/proc", &s), -ENOENT);
	assert_int_equal(s.largest_vmas, -1);
}

static void test_this_host(void **state)
{
	struct headroom_sample s;
	json_t *h;

	(void)state;
	assert_int_equal(headroom_read(&s), 0);
	assert_true(s.threads > 0);
	assert_true(s.pid_max > 0);
	assert_true(s.max_map_count > 0);
	/* at least this process's own maps were readable */
	assert_true(s.scanned > 0 && s.largest_vmas > 0);
	h = headroom_json(&s);
	assert_non_null(limit(h, "pid_max"));
	assert_non_null(limit(h, "max_map_count"));
	/* a scan of its own: no observer's window taken */
	assert_string_equal(json_string_value(json_object_get(h, "vmas_seen_by")), "threadwatchd");
	json_decref(h);
}

static int setup(void **state)
{
	(void)state;
	return tmpdir_make("test_headroom");
}

static int teardown(void **state)
{
	(void)state;
	return tmpdir_remove();
}

/* A record's limits get their ratio and warning recomputed, whatever the
 * record carried: both shapes of record, a limit without a value. */
static void test_headroom_limits(void **state)
{
	json_t *rec = json_pack("{s:{s:i,s:i},s:{s:i,s:n},s:{s:f,s:f},s:s}", "threads_max", "used",
	                        950, "limit", 1000, "pids_max", "used", 10, "limit",
	                        "max_map_count", "used", 100.0, "limit", 65530.0, "junk", "x");
	json_t *limits = headroom_limits(rec), *v;
	size_t i;
	int seen = 0;

	(void)state;
	assert_int_equal(json_array_size(limits), 3);
	json_array_foreach(limits, i, v)
	{
		const char *name = json_string_value(json_object_get(v, "name"));

		if (!strcmp(name, "threads_max")) {
			assert_true(json_real_value(json_object_get(v, "ratio")) > 0.949);
			assert_true(json_is_true(json_object_get(v, "warning")));
			seen++;
		} else if (!strcmp(name, "pids_max")) {
			assert_true(json_is_null(json_object_get(v, "ratio")));
			assert_true(json_is_false(json_object_get(v, "warning")));
			seen++;
		} else {
			assert_true(json_is_false(json_object_get(v, "warning")));
			seen++;
		}
	}
	assert_int_equal(seen, 3);
	json_decref(limits);
	json_decref(rec);
}

/* The observer's largest process replaces what the daemon's own scan saw;
 * a window without a count leaves the sample alone. */
static void test_take_observer(void **state)
{
	struct headroom_sample s = {.largest_vmas = 12, .largest_pid = 7};
	json_t *big = json_pack("{s:i s:s s:i s:i s:i}", "pid", 4242, "comm", "java", "vmas", 30001,
	                        "processes_scanned", 80, "processes_unreadable", 2);
	json_t *none = json_pack("{s:n s:n s:n s:i s:i}", "pid", "comm", "vmas",
	                         "processes_scanned", 0, "processes_unreadable", 80);
	json_t *h;

	(void)state;
	assert_int_equal(headroom_take_observer(&s, none), -EINVAL);
	assert_int_equal(s.largest_vmas, 12);
	assert_int_equal(headroom_take_observer(&s, NULL), -EINVAL);
	assert_int_equal(headroom_take_observer(&s, big), 0);
	assert_int_equal(s.largest_vmas, 30001);
	assert_int_equal(s.largest_pid, 4242);
	assert_string_equal(s.largest_comm, "java");
	assert_int_equal(s.scanned, 80);
	assert_int_equal(s.unreadable, 2);
	s.max_map_count = 32768;
	h = headroom_json(&s);
	assert_string_equal(json_string_value(json_object_get(h, "vmas_seen_by")), "observer");
	/* 30001 of 32768 mappings: past 90%, a warning names it */
	assert_true(json_is_true(json_object_get(limit(h, "max_map_count"), "warning")));
	json_decref(h);
	json_decref(big);
	json_decref(none);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_limits_and_warnings),
	    cmocka_unit_test(test_headroom_limits),
	    cmocka_unit_test(test_scan),
	    cmocka_unit_test(test_this_host),
	    cmocka_unit_test(test_take_observer),
	};

	return cmocka_run_group_tests_name("headroom", tests, setup, teardown);
}
