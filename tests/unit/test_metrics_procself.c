/*
 * test_metrics_procself: the daemon's own process figures (daemon/metrics_procself.c) as
 * /proc/self gives them: CPU time that grows with work, a resident size,
 * a start time in the recent past, and an open-descriptor count that
 * follows open(2) and close(2).
 */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "metrics_procself.h"

static void test_read(void **state)
{
	struct metrics_procself a, b;
	volatile double x = 0;
	clock_t until;
	int fd;

	(void)state;
	assert_int_equal(metrics_procself_read(&a), 0);
	assert_true(a.resident_bytes > 0);
	assert_true(a.start_time_seconds <= (double)time(NULL) + 1);
	assert_true(a.start_time_seconds > (double)time(NULL) - 3600);
	assert_true(a.open_fds >= 3);
	/* 50 ms of CPU time: 5 clock ticks at USER_HZ 100 */
	until = clock() + CLOCKS_PER_SEC / 20;
	while (clock() < until)
		x += 1;
	fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(metrics_procself_read(&b), 0);
	assert_true(b.cpu_seconds > a.cpu_seconds);
	assert_true(b.open_fds == a.open_fds + 1);
	assert_true(b.start_time_seconds == a.start_time_seconds);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_read),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
