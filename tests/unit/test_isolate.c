/*
 * test_isolate: a function run in a forked child: what it sent before it
 * ended is kept, and how it ended (exit, a fault's signal, a hang killed at
 * the deadline) is told, so that a probe survives a faulting arm.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "isolate.h"

/* Sends `*arg` numbers 1, 2, ... and then ends as the test asks. */
struct plan {
	int count;
	int end; /* 0: return 0, > 0: raise this signal, -1: hang, -2: return 3 */
};

static int child(int fd, void *arg)
{
	const struct plan *p = arg;

	for (int i = 1; i <= p->count; i++)
		if (isolate_send(fd, &i, sizeof(i)) < 0)
			return 9;
	if (p->end > 0) {
		signal(p->end, SIG_DFL);
		raise(p->end);
	}
	if (p->end == -1)
		for (;;)
			pause();
	return p->end == -2 ? 3 : 0;
}

static void run(struct plan *p, int *got, size_t n, struct isolate_end *end, int ms)
{
	assert_int_equal(isolate_run(child, p, got, n * sizeof(int), ms, end), 0);
}

static void test_clean(void **state)
{
	struct plan p = {3, 0};
	struct isolate_end end;
	int got[3] = {0};
	char buf[96];

	(void)state;
	run(&p, got, 3, &end, 5000);
	assert_int_equal(end.got, 3 * sizeof(int));
	assert_int_equal(got[2], 3);
	assert_true(isolate_clean(&end));
	assert_string_equal(isolate_describe(&end, buf, sizeof(buf)), "exited with status 0");
}

/* A fault after two messages: both kept, the signal named. */
static void test_fault(void **state)
{
	struct plan p = {2, SIGSEGV};
	struct isolate_end end;
	int got[4] = {0};
	char buf[96];

	(void)state;
	run(&p, got, 4, &end, 5000);
	assert_int_equal(end.got, 2 * sizeof(int));
	assert_int_equal(got[1], 2);
	assert_false(isolate_clean(&end));
	assert_true(WIFSIGNALED(end.status));
	assert_string_equal(isolate_describe(&end, buf, sizeof(buf)),
	                    "was killed by SIGSEGV (Segmentation fault)");
	p.end = SIGBUS;
	run(&p, got, 4, &end, 5000);
	assert_non_null(strstr(isolate_describe(&end, buf, sizeof(buf)), "SIGBUS"));
}

static void test_status(void **state)
{
	struct plan p = {0, -2};
	struct isolate_end end;
	int got[1];
	char buf[96];

	(void)state;
	run(&p, got, 1, &end, 5000);
	assert_int_equal(end.got, 0);
	assert_false(isolate_clean(&end));
	assert_string_equal(isolate_describe(&end, buf, sizeof(buf)), "exited with status 3");
}

/* A hang is killed at the deadline and said so. */
static void test_hang(void **state)
{
	struct plan p = {1, -1};
	struct isolate_end end;
	int got[2] = {0};
	char buf[96];

	(void)state;
	run(&p, got, 2, &end, 200);
	assert_true(end.timed_out);
	assert_int_equal(end.got, sizeof(int));
	assert_false(isolate_clean(&end));
	assert_true(WIFSIGNALED(end.status) && WTERMSIG(end.status) == SIGKILL);
	assert_string_equal(isolate_describe(&end, buf, sizeof(buf)),
	                    "did not finish in 200 ms and was killed");
}

/* More than the buffer holds: the rest is drained, the child not blocked. */
static void test_overflow(void **state)
{
	struct plan p = {40000, 0};
	struct isolate_end end;
	int got[4] = {0};

	(void)state;
	run(&p, got, 4, &end, 10000);
	assert_int_equal(end.got, 4 * sizeof(int));
	assert_int_equal(got[3], 4);
	assert_true(isolate_clean(&end));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_clean),    cmocka_unit_test(test_fault),
	    cmocka_unit_test(test_status),   cmocka_unit_test(test_hang),
	    cmocka_unit_test(test_overflow),
	};

	return cmocka_run_group_tests_name("isolate", tests, NULL, NULL);
}
