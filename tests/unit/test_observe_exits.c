/*
 * test_observe_exits: a process's thread exits derived from its threads
 * when the connector sends no EXIT (obs_exits_derived(), lib/observe.c),
 * worked by hand against what do_exit() would have reported: a process
 * read at both ends, one that ended, one heard as it started, one that
 * exec'd (de_thread() ends every thread but one), and the edges where the
 * sweeps' reads and the events disagree.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "observep.h"

static struct obs_proc proc(uint64_t born, uint64_t creates, int seen_end, long nend)
{
	struct obs_proc p;

	memset(&p, 0, sizeof(p));
	p.born = born;
	p.creates = creates;
	p.seen_end = seen_end;
	p.nend = nend;
	return p;
}

/* 10 threads at the start, 100 created, 12 at the end: 98 ended. */
static void test_both_ends(void **state)
{
	struct obs_proc p = proc(10, 100, 1, 12);

	(void)state;
	assert_int_equal(obs_exits_derived(&p), 98);
	p = proc(200, 0, 1, 200); /* a pool that neither grew nor shrank */
	assert_int_equal(obs_exits_derived(&p), 0);
	p = proc(200, 0, 1, 150); /* a pool that shed 50 */
	assert_int_equal(obs_exits_derived(&p), 50);
}

/* A process that ended: all 5 + 3 threads ended, but its leader's end is
 * a process exit (pid == tgid), not a thread's: 7. */
static void test_ended(void **state)
{
	struct obs_proc p = proc(5, 3, 0, 0);

	(void)state;
	assert_int_equal(obs_exits_derived(&p), 7);
	p = proc(1, 0, 0, 0); /* a single-threaded process that ended: none */
	assert_int_equal(obs_exits_derived(&p), 0);
}

/* Heard as it started (its leader alone), 50 threads created and joined,
 * one thread at the end: 50 ended. */
static void test_started_within(void **state)
{
	struct obs_proc p = proc(1, 50, 1, 1);

	(void)state;
	assert_int_equal(obs_exits_derived(&p), 50);
}

/* An exec hands 8 + 4 threads to the later entry, which ends with 1:
 * 11 ended; the earlier entry reports none (they are counted once). */
static void test_exec(void **state)
{
	struct obs_proc before = proc(8, 4, 0, 0), after = proc(8 + 4, 0, 1, 1);

	(void)state;
	before.handed = 1;
	assert_int_equal(obs_exits_derived(&before), 0);
	assert_int_equal(obs_exits_derived(&after), 11);
}

/* Creates that fell after the process's last read and before the
 * connector closed are in neither count: more at the end than came in is
 * no negative exit. */
static void test_edge(void **state)
{
	struct obs_proc p = proc(2, 0, 1, 5);

	(void)state;
	assert_int_equal(obs_exits_derived(&p), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_both_ends),      cmocka_unit_test(test_ended),
	    cmocka_unit_test(test_started_within), cmocka_unit_test(test_exec),
	    cmocka_unit_test(test_edge),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
