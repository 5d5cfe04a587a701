/*
 * test_sysinfo: sys_procs_running(), sys_cpu_jiffies() and sys_mem_available()
 * (lib/sysinfo.c)
 * on /proc/stat- and /proc/meminfo-format files of the test's own: the line
 * among the others, a missing line, a value that is not a count, a missing
 * file, and the host's own file.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <cmocka.h>

#include "sysinfo.h"

static char path[64];

static void put(const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static int setup(void **state)
{
	int fd;

	(void)state;
	snprintf(path, sizeof(path), "/tmp/test_sysinfo.XXXXXX");
	fd = mkstemp(path);
	if (fd < 0)
		return -1;
	close(fd);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unlink(path);
	return 0;
}

static void test_found_among_others(void **state)
{
	long n = -1;

	(void)state;
	put("cpu  10 0 20 300 0 0 0 0 0 0\ncpu0 5 0 10 150 0 0 0 0 0 0\nintr 123 4 5\n"
	    "ctxt 98765\nbtime 1700000000\nprocesses 4321\nprocs_running 7\n"
	    "procs_blocked 2\nsoftirq 1 2 3\n");
	assert_int_equal(sys_procs_running(path, &n), 0);
	assert_int_equal(n, 7);
	/* the last line, without a newline */
	put("ctxt 1\nprocs_running 12");
	assert_int_equal(sys_procs_running(path, &n), 0);
	assert_int_equal(n, 12);
}

static void test_refused(void **state)
{
	static const char *const bad[] = {
	    "procs_running x\n",
	    "procs_running 3 4\n",
	    "procs_running -1\n",
	    "procs_running \n",
	    "procs_running 99999999999999999999999\n",
	};
	long n = 5;

	(void)state;
	put("cpu 1 2 3\nprocs_blocked 0\n");
	assert_int_equal(sys_procs_running(path, &n), -ENODATA);
	/* a name that only begins like it */
	put("procs_running_total 3\n");
	assert_int_equal(sys_procs_running(path, &n), -ENODATA);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		put(bad[i]);
		assert_int_equal(sys_procs_running(path, &n), -EINVAL);
	}
	assert_int_equal(n, 5);
	assert_int_equal(sys_procs_running("/nonexistent/stat", &n), -ENOENT);
}

static void test_host(void **state)
{
	long n = -1;

	(void)state;
	if (access("/proc/stat", R_OK) < 0)
		skip();
	/* this test's own thread is running while it reads */
	assert_int_equal(sys_procs_running(NULL, &n), 0);
	assert_true(n >= 1);
}

/* Each CPU's busy and total jiffies from its cpuN line (the line fs/proc/
 * stat.c's show_stat() prints: user nice system idle iowait irq softirq
 * steal guest guest_nice, guest time already counted in user and nice); the
 * "cpu" sum is not a CPU; CPUs past the array are read over. */
static void test_cpu_jiffies(void **state)
{
	struct sys_cpu_jiffies j[3];

	(void)state;
	put("cpu  100 0 20 300 7 0 0 0 0 0\ncpu0 10 1 2 150 3 4 5 6 9 0\n"
	    "cpu2 40 0 10 50 0 0 0 0 0 0\ncpu7 1 1 1 1 1 1 1 1 0 0\nintr 123 4 5\n"
	    "procs_running 7\n");
	assert_int_equal(sys_cpu_jiffies(path, j, 3), 0);
	assert_true(j[0].total == 10 + 1 + 2 + 150 + 3 + 4 + 5 + 6);
	assert_true(j[0].busy == 10 + 1 + 2 + 4 + 5 + 6);
	assert_true(j[1].total == 0 && j[1].busy == 0); /* offline: no line */
	assert_true(j[2].total == 100 && j[2].busy == 50);
	/* a kernel before 2.6: four fields */
	put("cpu0 1 2 3 4\n");
	assert_int_equal(sys_cpu_jiffies(path, j, 1), 0);
	assert_true(j[0].total == 10 && j[0].busy == 6);
	put("cpu 1 2 3 4\nprocs_running 1\n");
	assert_int_equal(sys_cpu_jiffies(path, j, 1), -ENODATA);
	put("cpu0 1 x 3 4\n");
	assert_int_equal(sys_cpu_jiffies(path, j, 1), -EINVAL);
	assert_int_equal(sys_cpu_jiffies("/nonexistent/stat", j, 1), -ENOENT);
	if (access("/proc/stat", R_OK) == 0) {
		assert_int_equal(sys_cpu_jiffies(NULL, j, 1), 0);
		assert_true(j[0].total > 0 && j[0].busy <= j[0].total);
	}
}

/* MemAvailable in bytes; a file without it (Linux before 3.14) or none at
 * all leaves the value alone. */
static void test_mem_available(void **state)
{
	uint64_t b = 5;

	(void)state;
	put("MemTotal:       16303412 kB\nMemFree:         8123456 kB\n"
	    "MemAvailable:   12345678 kB\nBuffers:          234567 kB\n");
	assert_int_equal(sys_mem_available(path, &b), 0);
	assert_true(b == 12345678ull * 1024);
	b = 5;
	put("MemTotal:       16303412 kB\nMemFree:         8123456 kB\n");
	assert_int_equal(sys_mem_available(path, &b), -ENODATA);
	assert_int_equal(sys_mem_available("/nonexistent/meminfo", &b), -ENOENT);
	assert_true(b == 5);
	if (access("/proc/meminfo", R_OK) == 0) {
		assert_int_equal(sys_mem_available(NULL, &b), 0);
		assert_true(b > 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_found_among_others, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_refused, setup, teardown),
	    cmocka_unit_test(test_host),
	    cmocka_unit_test_setup_teardown(test_cpu_jiffies, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_mem_available, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
