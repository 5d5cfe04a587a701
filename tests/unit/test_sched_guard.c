/*
 * test_sched_guard: the quiet-host guard's readers and decisions on files shaped
 * as the kernel writes them: /proc/pressure/cpu (kernel/sched/psi.c,
 * psi_show()), /proc/stat's cpu line (fs/proc/stat.c, show_stat()),
 * /proc/PID/stat (fs/proc/array.c, do_task_stat()) and /proc/loadavg.
 * The point of the guard: a load average still high from a spike seconds
 * ago does not hold a cycle when PSI or the busy time say the host is
 * quiet now.
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

#include <cmocka.h>

#include "tmpdir.h"

#include "sched_guard.h"

static char paths[5][256];

/* Writes text to tmpdir/name and returns the path (one of five slots). */
static const char *put(int slot, const char *name, const char *text)
{
	FILE *f;

	snprintf(paths[slot], sizeof(paths[slot]), "%s/%s", tmpdir, name);
	f = fopen(paths[slot], "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	return paths[slot];
}

static const char *missing(int slot)
{
	snprintf(paths[slot], sizeof(paths[slot]), "%s/absent", tmpdir);
	return paths[slot];
}

static const struct guard_limits lim = {10, 50, 0.7};

#define PSI_QUIET                                                                                  \
	"some avg10=0.42 avg60=3.10 avg300=1.00 total=27027436\n"                                  \
	"full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"
#define PSI_BUSY "some avg10=63.50 avg60=20.00 avg300=5.00 total=99999999\n"
/* load1 31.70 on 2 CPUs: what a spike of ~3,600 runnable threads leaves
 * behind in the 1-minute average for minutes */
#define LOAD_SPIKE "63.40 20.00 5.00 1/456 789\n"

static void test_readers(void **state)
{
	struct sys_cpu_jiffies c;
	unsigned long long own = 0;
	double v = -1;

	(void)state;
	assert_int_equal(guard_read_psi(put(0, "psi", PSI_QUIET), &v), 0);
	assert_true(fabs(v - 0.42) < 1e-9);
	assert_int_equal(guard_read_psi(put(0, "psi", "full avg10=5.00\n"), &v), -EINVAL);
	assert_int_equal(guard_read_psi(missing(0), &v), -ENOENT);

	/* the guard's reading, lib/sysinfo.c's: idle and iowait are not busy */
	assert_int_equal(
	    sys_cpu_total(put(1, "stat", "cpu  100 10 50 800 40 0 0 5 0 0\ncpu0 1 2 3 4\n"), &c),
	    0);
	assert_true(c.total == 1005 && c.total - c.busy == 840 && c.steal == 5);
	assert_int_equal(sys_cpu_total(put(1, "stat", "intr 1 2 3\n"), &c), -EINVAL);

	/* a command name with a space and a parenthesis */
	assert_int_equal(guard_read_own(put(2, "self",
	                                    "4242 (tw d) x) S 1 4242 4242 0 -1 4194560 100 0 0 0 "
	                                    "70 30 15 5 20 0 3 0 100 0 0\n"),
	                                &own),
	                 0);
	assert_true(own == 70 + 30 + 15 + 5);
	assert_int_equal(guard_read_own(put(2, "self", "4242 tw S 1\n"), &own), -EINVAL);
	assert_int_equal(guard_read_own("/proc/self/stat", &own), 0);

	assert_int_equal(sys_loadavg1(put(3, "loadavg", LOAD_SPIKE), &v), 0);
	assert_true(v == 63.40);
	/* the real files parse where the kernel has them */
	assert_int_equal(sys_cpu_total("/proc/stat", &c), 0);
}

static void test_busy_pct(void **state)
{
	/* {busy, steal, total}: 200 and 700 busy of 1000 and 2000 */
	struct sys_cpu_jiffies a = {200, 0, 1000}, b = {700, 0, 2000};

	(void)state;
	/* 1000 ticks passed, 500 idle: 50% busy; our own 300 ticks leave 20% */
	assert_true(fabs(guard_busy_pct(&a, &b, 0) - 50) < 1e-9);
	assert_true(fabs(guard_busy_pct(&a, &b, 300) - 20) < 1e-9);
	assert_true(guard_busy_pct(&a, &b, 900) == 0);
	assert_true(guard_busy_pct(&a, &a, 0) == 0);
	assert_true(guard_busy_pct(&b, &a, 0) == 0);
}

/* auto takes PSI where the kernel has it, else /proc/stat, else loadavg. */
static void test_auto_order(void **state)
{
	struct guard_paths p;
	struct guard g;

	(void)state;
	p = (struct guard_paths){put(0, "psi", PSI_QUIET), put(1, "stat", "cpu  1 2 3 4\n"),
	                         "/proc/self/stat", put(3, "loadavg", LOAD_SPIKE)};
	assert_int_equal(guard_begin(&g, GUARD_AUTO, &p), 0);
	assert_int_equal(g.mode, GUARD_PSI);
	p.psi = missing(0);
	assert_int_equal(guard_begin(&g, GUARD_AUTO, &p), 0);
	assert_int_equal(g.mode, GUARD_BUSY);
	p.stat = missing(1);
	assert_int_equal(guard_begin(&g, GUARD_AUTO, &p), 0);
	assert_int_equal(g.mode, GUARD_LOADAVG);
	p.loadavg = missing(3);
	assert_int_equal(guard_begin(&g, GUARD_AUTO, &p), 0);
	assert_int_equal(g.mode, GUARD_OFF);
	/* a measure asked for by name that the host lacks: off, with the error */
	assert_int_equal(guard_begin(&g, GUARD_PSI, &p), -ENOENT);
	assert_int_equal(g.mode, GUARD_OFF);
	assert_string_equal(guard_mode_name(GUARD_LOADAVG), "loadavg");
}

/* Right after a spike: load1 still says 31.7 per CPU, PSI says quiet. */
static void test_after_spike(void **state)
{
	struct guard_paths p = {put(0, "psi", PSI_QUIET), missing(1), "/proc/self/stat",
	                        put(3, "loadavg", LOAD_SPIKE)};
	struct guard_look look;
	struct guard g;

	(void)state;
	assert_int_equal(guard_begin(&g, GUARD_AUTO, &p), 0);
	assert_int_equal(guard_look(&g, &lim, &look), 0);
	assert_true(look.known && !look.busy);
	assert_true(fabs(look.value - 0.42) < 1e-9 && look.limit == 10);
	assert_string_equal(look.unit, "%");
	/* during the spike itself PSI holds the cycle */
	put(0, "psi", PSI_BUSY);
	assert_int_equal(guard_look(&g, &lim, &look), 0);
	assert_true(look.known && look.busy && look.value == 63.5);
	/* the old measure would have waited */
	assert_int_equal(guard_begin(&g, GUARD_LOADAVG, &p), 0);
	assert_int_equal(guard_look(&g, &lim, &look), 0);
	assert_true(look.busy && look.value > lim.load_per_cpu);
}

/* Busy time: the first look only starts a sample; the next compares. */
static void test_busy_look(void **state)
{
	struct guard_paths p = {missing(0), put(1, "stat", "cpu  1000 0 0 800 0 0 0 0\n"),
	                        put(2, "self", "1 (d) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20\n"),
	                        missing(3)};
	struct guard_look look;
	struct guard g;

	(void)state;
	assert_int_equal(guard_begin(&g, GUARD_AUTO, &p), 0);
	assert_int_equal(g.mode, GUARD_BUSY);
	assert_int_equal(guard_look(&g, &lim, &look), 0);
	assert_false(look.known);
	assert_false(look.busy);
	/* 1000 more ticks, 200 idle: 80% busy, but 500 of them were ours */
	put(1, "stat", "cpu  1800 0 0 1000 0 0 0 0\n");
	put(2, "self", "1 (d) S 1 1 1 0 -1 0 0 0 0 0 400 100 0 0 20\n");
	assert_int_equal(guard_look(&g, &lim, &look), 0);
	assert_true(look.known && !look.busy);
	assert_true(fabs(look.value - 30) < 1e-9);
	/* then 1000 more, 100 idle, none ours: 90% busy */
	put(1, "stat", "cpu  2700 0 0 1100 0 0 0 0\n");
	assert_int_equal(guard_look(&g, &lim, &look), 0);
	assert_true(look.known && look.busy);
	assert_true(fabs(look.value - 90) < 1e-9);
}

static int setup(void **state)
{
	(void)state;
	return tmpdir_make("test_guard");
}

static int teardown(void **state)
{
	(void)state;
	return tmpdir_remove();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_readers),    cmocka_unit_test(test_busy_pct),
	    cmocka_unit_test(test_auto_order), cmocka_unit_test(test_after_spike),
	    cmocka_unit_test(test_busy_look),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
