/*
 * test_scheduler: the scheduler's pure parts (the first delay after start,
 * /proc readers, probe names, discovery) and its life on a real store with
 * fake probes: the start cycle, the API trigger with -EBUSY while a cycle
 * runs, the published state, and a stop that interrupts a running probe.
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
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "tmpdir.h"

#include "clock.h"

#include "config.h"
#include "log.h"
#include "scheduler.h"
#include "sysinfo.h"
#include "store.h"

static char *path_in(const char *name)
{
	char *p;

	assert_true(asprintf(&p, "%s/%s", tmpdir, name) > 0);
	return p;
}

static void write_file(const char *name, const char *text, mode_t mode)
{
	char *p = path_in(name);
	FILE *f = fopen(p, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	assert_int_equal(chmod(p, mode), 0);
	free(p);
}

/* A fake probe that sleeps, then prints a valid document. */
static void fake_probe(const char *dir, const char *name, const char *sleep_s)
{
	char *rel, *text;

	assert_true(asprintf(&rel, "%s/%s", dir, name) > 0);
	assert_true(asprintf(&text,
	                     "#!/bin/sh\nsleep %s\n"
	                     "echo '{\"probe\":\"%s\",\"protocol\":1,\"status\":\"ok\","
	                     "\"reason\":null,\"started_at\":\"2026-12-03T07:51:56.123Z\","
	                     "\"started_unix\":1796284316.123,\"duration_s\":0.1,\"params\":{},"
	                     "\"scalars\":{\"v\":{\"value\":1,\"unit\":\"count\"}},"
	                     "\"series\":{},\"info\":{}}'\n",
	                     sleep_s, name) > 0);
	write_file(rel, text, 0755);
	free(rel);
	free(text);
}

static void test_start_delay(void **state)
{
	(void)state;
	assert_true(sched_start_delay(1000000, 0, 0, 3600) == 0);     /* no cycle yet */
	assert_true(sched_start_delay(10000000, 1000, 1, 3600) == 0); /* older */
	assert_true(sched_start_delay(3601000, 1000, 1, 3600) == 0);  /* exactly */
	assert_true(fabs(sched_start_delay(1001000, 1000, 1, 3600) - 2600) < 1e-9);
	assert_true(sched_start_delay(1000, 5000000, 1, 3600) == 0); /* in the future */
}

static void test_retry_delay(void **state)
{
	(void)state;
	assert_true(sched_retry_delay(0, 21600) == 21600); /* regular: the interval */
	assert_true(sched_retry_delay(1, 21600) == 60);
	assert_true(sched_retry_delay(2, 21600) == 300);
	assert_true(sched_retry_delay(3, 21600) == 1800);
	assert_true(sched_retry_delay(40, 21600) == 1800);
	assert_true(sched_retry_delay(2, 120) == 120); /* capped at the interval */
	assert_true(sched_retry_delay(1, 30) == 30);
	assert_true(cycle_status_retried(CYCLE_FAILED));
	assert_true(cycle_status_retried(CYCLE_INTERRUPTED));
	assert_false(cycle_status_retried(CYCLE_OK));
	assert_false(cycle_status_retried(CYCLE_PARTIAL));
	assert_false(cycle_status_retried(CYCLE_NONE));
	/* names and statuses: one table */
	assert_int_equal(cycle_status_parse("partial"), CYCLE_PARTIAL);
	assert_int_equal(cycle_status_parse("bogus"), CYCLE_NONE);
	assert_int_equal(cycle_status_parse(NULL), CYCLE_NONE);
	for (int i = CYCLE_OK; i < CYCLE_N_STATUSES; i++)
		assert_int_equal(cycle_status_parse(cycle_status_name((enum cycle_status)i)), i);
}

static void test_readers(void **state)
{
	struct sys_cpu_jiffies a = {0, 0, 0}, b = {0, 0, 0};
	double load = -1;
	char *p;

	(void)state;
	write_file("loadavg", "1.25 0.50 0.25 3/456 789\n", 0644);
	p = path_in("loadavg");
	assert_int_equal(sys_loadavg1(p, &load), 0);
	assert_true(load == 1.25);
	free(p);
	write_file("loadavg", "garbage\n", 0644);
	p = path_in("loadavg");
	assert_int_equal(sys_loadavg1(p, &load), -EINVAL);
	free(p);
	assert_int_equal(sys_loadavg1("/nonexistent/loadavg", &load), -ENOENT);

	write_file("stat1", "cpu  100 0 50 800 0 0 0 50 0 0\ncpu0 1 2 3\n", 0644);
	write_file("stat2", "cpu  150 0 100 1600 0 0 0 100 0 0\n", 0644);
	p = path_in("stat1");
	assert_int_equal(sys_cpu_total(p, &a), 0);
	free(p);
	p = path_in("stat2");
	assert_int_equal(sys_cpu_total(p, &b), 0);
	free(p);
	assert_true(a.total == 1000 && a.steal == 50);
	/* 50 of 950 more jiffies were stolen */
	assert_true(fabs(sched_steal_pct(&a, &b) - 100.0 * 50 / 950) < 1e-9);
	assert_true(sched_steal_pct(&a, &a) == 0);
	assert_true(sched_steal_pct(&b, &a) == 0);
	/* the real files parse */
	assert_int_equal(sys_cpu_total("/proc/stat", &a), 0);
	assert_int_equal(sys_loadavg1("/proc/loadavg", &load), 0);
}

static void test_cycle_status(void **state)
{
	(void)state;
	assert_int_equal(cycle_status_of(3, 3, 0), CYCLE_OK);
	assert_int_equal(cycle_status_of(3, 2, 0), CYCLE_PARTIAL);
	assert_int_equal(cycle_status_of(3, 1, 0), CYCLE_PARTIAL);
	assert_int_equal(cycle_status_of(3, 0, 0), CYCLE_FAILED);
	assert_int_equal(cycle_status_of(0, 0, 0), CYCLE_FAILED);
	assert_int_equal(cycle_status_of(3, 3, 1), CYCLE_INTERRUPTED);
	assert_int_equal(cycle_status_of(3, 0, 1), CYCLE_INTERRUPTED);
}

static void test_names(void **state)
{
	(void)state;
	assert_true(sched_probe_name_ok("ctxsw"));
	assert_true(sched_probe_name_ok("my_probe-2"));
	assert_false(sched_probe_name_ok(""));
	assert_false(sched_probe_name_ok("README"));
	assert_false(sched_probe_name_ok("run.sh"));
	assert_false(sched_probe_name_ok("a/b"));
	assert_true(sched_probe_name_ok(
	    "a234567890123456789012345678901234567890123456789012345678901234"));
	assert_false(sched_probe_name_ok(
	    "a2345678901234567890123456789012345678901234567890123456789012345"));
}

static void test_discover(void **state)
{
	struct sched_probe *list;
	size_t n;
	char *bin = path_in("bin"), *d = path_in("probes.d"), *dirs;

	(void)state;
	assert_int_equal(mkdir(bin, 0755), 0);
	assert_int_equal(mkdir(d, 0755), 0);
	fake_probe("bin", "ctxsw", "0");
	fake_probe("bin", "threads", "0");
	fake_probe("probes.d", "zeta", "0");
	fake_probe("probes.d", "alpha", "0");
	fake_probe("probes.d", "ctxsw", "0");
	fake_probe("probes.d", "Bad.Name", "0");
	fake_probe("probes.d", ".hidden", "0");
	fake_probe("probes.d", "backup~", "0");
	write_file("probes.d/plain", "not executable\n", 0644);
	{
		char *sub = path_in("probes.d/subdir");

		assert_int_equal(mkdir(sub, 0755), 0);
		free(sub);
	}
	assert_true(asprintf(&dirs, "/nonexistent:%s", bin) > 0);
	assert_int_equal(sched_discover(dirs, d, &list, &n), 0);
	assert_int_equal(n, 12);
	assert_string_equal(list[0].name, "ctxsw");
	assert_non_null(strstr(list[0].path, "/bin/ctxsw"));
	assert_null(list[0].skip);
	assert_string_equal(list[1].name, "threads");
	/* a missing built-in keeps a path in the first directory */
	assert_string_equal(list[2].name, "map32");
	assert_string_equal(list[2].path, "/nonexistent/map32");
	assert_null(list[2].skip);
	assert_string_equal(list[3].name, "handoff");
	assert_string_equal(list[4].name, "stackmem");
	assert_string_equal(list[5].name, "createscale");
	/* then probes.d in name order, with reasons for what is not run */
	assert_string_equal(list[6].name, "Bad.Name");
	assert_non_null(list[6].skip);
	assert_string_equal(list[7].name, "alpha");
	assert_null(list[7].skip);
	assert_string_equal(list[8].name, "ctxsw");
	assert_non_null(strstr(list[8].skip, "built-in"));
	assert_string_equal(list[9].name, "plain"); /* not executable: run, so it is recorded */
	assert_null(list[9].skip);
	assert_string_equal(list[10].name, "subdir");
	assert_non_null(strstr(list[10].skip, "regular file"));
	assert_string_equal(list[11].name, "zeta");
	sched_probes_free(list, n);

	/* a missing probes_d is no error; an empty one means none */
	assert_int_equal(sched_discover(bin, "/nonexistent/probes.d", &list, &n), 0);
	assert_int_equal(n, 6);
	sched_probes_free(list, n);
	assert_int_equal(sched_discover(bin, "", &list, &n), 0);
	assert_int_equal(n, 6);
	sched_probes_free(list, n);
	assert_int_equal(sched_discover(bin, "/etc/hostname", &list, &n), -ENOTDIR);
	assert_int_equal(n, 6);
	sched_probes_free(list, n);
	free(dirs);
	free(bin);
	free(d);
}

static void wait_cycles(struct sched *s, unsigned n)
{
	struct sched_status st;

	for (int i = 0; i < 300; i++) {
		sched_get_status(s, &st);
		if (st.cycles >= n && !st.running)
			return;
		usleep(20000);
	}
	fail_msg("%u cycles did not finish in 6 s", n);
}

/* A new scheduler on st, started, that runs no cycle at once. */
static struct sched *start_idle(const struct config *c, struct store *st, struct sched_status *ss)
{
	struct sched *s;

	assert_int_equal(sched_new(c, st, NULL, NULL, &s), 0);
	assert_int_equal(sched_start(s), 0);
	usleep(200000);
	sched_get_status(s, ss);
	assert_int_equal(ss->cycles, 0);
	assert_false(ss->running);
	return s;
}

static void test_lifecycle(void **state)
{
	struct config c;
	struct store *st;
	struct sched *s;
	struct sched_status ss;
	char err[512], *db = path_in("t.db"), *value = NULL, *dir = path_in("life");
	int64_t id = 0, id2 = 0, ended;

	(void)state;
	assert_int_equal(mkdir(dir, 0755), 0);
	fake_probe("life", "ctxsw", "0");
	fake_probe("life", "threads", "0");
	fake_probe("life", "map32", "0.6");
	fake_probe("life", "handoff", "0");
	fake_probe("life", "stackmem", "0");
	fake_probe("life", "createscale", "0");
	config_init(&c);
	assert_int_equal(config_set(&c, "probe_dir", dir, "t", err, sizeof(err)), 0);
	assert_int_equal(config_set(&c, "probes_d", "", "t", err, sizeof(err)), 0);
	assert_int_equal(config_set(&c, "interval", "1h", "t", err, sizeof(err)), 0);
	assert_int_equal(config_set(&c, "guard", "off", "t", err, sizeof(err)), 0);
	/* the start cycle within a second of its splay (test_start_splay) */
	assert_int_equal(config_set(&c, "splay", "1s", "t", err, sizeof(err)), 0);
	/* the fake probes compete for the CPU: under SCHED_IDLE a loaded
	 * machine could hold them past the waits below */
	assert_int_equal(config_set(&c, "probe_sched", "normal", "t", err, sizeof(err)), 0);
	assert_int_equal(
	    config_set(&c, "token", "abcdefghijklmnopqrstuvwxyz", "t", err, sizeof(err)), 0);
	assert_int_equal(store_open(db, 0, &st, err, sizeof(err)), 0);

	/* No cycle yet: the start cycle runs within its splay. */
	assert_int_equal(sched_new(&c, st, NULL, NULL, &s), 0);
	assert_int_equal(store_state_get(st, "trigger_enabled", &value), 0);
	assert_string_equal(value, "1");
	free(value);
	assert_true(sched_alive(s));
	assert_int_equal(sched_start(s), 0);
	wait_cycles(s, 1);
	sched_get_status(s, &ss);
	assert_int_equal(ss.last_status, CYCLE_OK);
	assert_int_equal(ss.cycle_id, 1);
	/* the next cycle is an interval (at most 10% splay) away */
	assert_true(ss.next_cycle_ms - ss.last_cycle_ms > 3590 * 1000LL);
	assert_true(ss.next_cycle_ms - ss.last_cycle_ms < 3970 * 1000LL);
	assert_int_equal(store_last_cycle(st, &ended), 0);

	/* The API trigger: a cycle id, then -EBUSY while it runs. */
	assert_int_equal(sched_trigger(s, &id), 0);
	assert_int_equal(id, 2);
	assert_int_equal(sched_trigger(s, &id2), -EBUSY);
	assert_int_equal(store_state_get(st, "cycle_running", &value), 0);
	assert_string_equal(value, "1");
	free(value);
	assert_true(sched_alive(s));
	wait_cycles(s, 2);
	assert_int_equal(store_state_get(st, "cycle_running", &value), 0);
	assert_string_equal(value, "0");
	free(value);

	/* Stopping during map32's sleep interrupts the cycle promptly. The
	 * API sees the probe that runs. */
	assert_int_equal(sched_trigger(s, &id), 0);
	assert_int_equal(id, 3);
	/* ctxsw and threads end at once, map32 sleeps 0.6 s: wait (up to
	 * 20 s, for a loaded machine) until the API names it */
	for (int i = 0; i < 2000; i++) {
		assert_int_equal(store_state_get(st, "current_probe", &value), 0);
		if (value && !strcmp(value, "map32"))
			break;
		free(value);
		value = NULL;
		usleep(10000);
	}
	assert_non_null(value);
	assert_string_equal(value, "map32");
	free(value);
	sched_stop(s);
	sched_get_status(s, &ss);
	assert_int_equal(ss.last_status, CYCLE_INTERRUPTED);
	assert_int_equal(sched_trigger(s, &id), -ESHUTDOWN);
	sched_free(s);

	/* A new scheduler on the same store retries the interrupted cycle a
	 * minute after it ended (with at most 10% of that as splay), not an
	 * interval later, and says so. */
	s = start_idle(&c, st, &ss);
	assert_int_equal(store_state_get(st, "next_cycle_retry", &value), 0);
	assert_string_equal(value, "1");
	free(value);
	assert_int_equal(ss.retry, 1);
	assert_int_equal(ss.last_status, CYCLE_INTERRUPTED);
	assert_int_equal(store_last_cycle(st, &ended), 0);
	assert_true(ss.next_cycle_ms - ended >= 59 * 1000LL);
	assert_true(ss.next_cycle_ms - ended <= 67 * 1000LL);
	sched_free(s);

	/* A process that died during a cycle left it marked running: the next
	 * start retries it (the second retry: five minutes from now). */
	assert_int_equal(store_state_set(st, "cycle_running", "1"), 0);
	assert_int_equal(sched_new(&c, st, NULL, NULL, &s), 0);
	sched_get_status(s, &ss);
	assert_int_equal(ss.retry, 2);
	assert_true(ss.next_cycle_ms - (int64_t)(clock_wall_ns() / 1000000) > 290 * 1000LL);
	assert_true(ss.next_cycle_ms - (int64_t)(clock_wall_ns() / 1000000) < 340 * 1000LL);
	sched_free(s);

	/* An ok cycle ends the retries: then a recent cycle is not re-run. */
	assert_int_equal(store_state_set(st, "cycle_running", "0"), 0);
	assert_int_equal(store_state_set(st, "last_cycle_status", "ok"), 0);
	s = start_idle(&c, st, &ss);
	assert_int_equal(ss.retry, 0);
	assert_true(ss.next_cycle_ms - ended > 3590 * 1000LL);

	/* A reload with a new interval re-plans, and the API (which reads the
	 * store) sees the new plan. */
	assert_int_equal(config_set(&c, "interval", "3h", "t", err, sizeof(err)), 0);
	sched_reconfigure(s, &c);
	for (int i = 0; i < 100; i++) {
		value = NULL;
		assert_int_equal(store_state_get(st, "next_cycle_ms", &value), 0);
		if (atoll(value) - ended > 10790 * 1000LL)
			break;
		free(value);
		usleep(20000);
	}
	assert_true(atoll(value) - ended > 10790 * 1000LL);
	assert_true(atoll(value) - ended < 11900 * 1000LL);
	free(value);
	sched_free(s);
	store_close(st);
	config_free(&c);
	free(db);
	free(dir);
}

/* The first cycle after start waits a random part of the splay:
 * twenty schedulers on a store without cycles plan it within 10% of 1 h,
 * and not all at once. */
static void test_start_splay(void **state)
{
	struct config c;
	struct store *st;
	struct sched *s;
	struct sched_status ss;
	char err[512], *db = path_in("splay.db");
	int64_t lo = INT64_MAX, hi = INT64_MIN, now;

	(void)state;
	config_init(&c);
	assert_int_equal(config_set(&c, "probes_d", "", "t", err, sizeof(err)), 0);
	assert_int_equal(config_set(&c, "interval", "1h", "t", err, sizeof(err)), 0);
	assert_int_equal(config_set(&c, "splay", "10%", "t", err, sizeof(err)), 0);
	assert_int_equal(store_open(db, 0, &st, err, sizeof(err)), 0);
	for (int i = 0; i < 20; i++) {
		now = (int64_t)(clock_wall_ns() / 1000000);
		assert_int_equal(sched_new(&c, st, NULL, NULL, &s), 0);
		sched_get_status(s, &ss);
		assert_int_equal(ss.cycles, 0);
		assert_true(ss.next_cycle_ms >= now - 1000);
		assert_true(ss.next_cycle_ms <= now + 361 * 1000LL);
		lo = ss.next_cycle_ms - now < lo ? ss.next_cycle_ms - now : lo;
		hi = ss.next_cycle_ms - now > hi ? ss.next_cycle_ms - now : hi;
		sched_free(s);
	}
	/* twenty uniform draws from 360 s all within 60 s: about 1e-14 */
	assert_true(hi - lo > 60 * 1000LL);
	/* and the thread keeps to the plan: no cycle before it is due */
	assert_int_equal(sched_new(&c, st, NULL, NULL, &s), 0);
	assert_int_equal(sched_start(s), 0);
	usleep(1500 * 1000);
	now = (int64_t)(clock_wall_ns() / 1000000);
	sched_get_status(s, &ss);
	assert_true((!ss.running && ss.cycles == 0) || ss.next_cycle_ms <= now);
	sched_free(s);
	store_close(st);
	config_free(&c);
	free(db);
}

static int setup(void **state)
{
	(void)state;
	log_open("test_scheduler", LOG_WARNING);
	if (tmpdir_make("test_scheduler") < 0 || chdir(tmpdir) < 0)
		return -1;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	return tmpdir_remove();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_start_delay), cmocka_unit_test(test_retry_delay),
	    cmocka_unit_test(test_readers),     cmocka_unit_test(test_names),
	    cmocka_unit_test(test_discover),    cmocka_unit_test(test_cycle_status),
	    cmocka_unit_test(test_lifecycle),   cmocka_unit_test(test_start_splay),
	};

	return cmocka_run_group_tests_name("scheduler", tests, setup, teardown);
}
