/*
 * test_retention_clock: the clock check before retention: it runs when the
 * clock agrees with the newest stored run, and is held when the clock is
 * behind it or jumped far ahead of it, for as long as the jump (at most
 * hold_max_ms).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "retention_clock.h"

#define T0 INT64_C(1767225600000) /* 2026-01-01 */
#define HOUR INT64_C(3600000)
#define DAY (24 * HOUR)

static struct retention_clock clock_at(int64_t now, int64_t newest, int64_t held)
{
	return (struct retention_clock){.now_ms = now,
	                                .newest_ms = newest,
	                                .held_until_ms = held,
	                                .ahead_max_ms = 37 * HOUR,
	                                .hold_max_ms = 30 * DAY};
}

static void runs_when_in_step(void **state)
{
	struct retention_clock c = clock_at(T0 + 6 * HOUR, T0, 0);
	int64_t until = -1;

	(void)state;
	assert_int_equal(retention_check(&c, &until), RETENTION_RUN);
	assert_int_equal(until, -1);
	c = clock_at(T0, 0, 0); /* nothing stored yet */
	assert_int_equal(retention_check(&c, &until), RETENTION_RUN);
	c = clock_at(T0 - 60000, T0, 0); /* a small step back */
	assert_int_equal(retention_check(&c, &until), RETENTION_RUN);
	assert_string_equal(retention_verdict_text(RETENTION_RUN), "");
}

static void held_behind(void **state)
{
	struct retention_clock c = clock_at(T0 - 800 * DAY, T0, 0);
	int64_t until = -1;

	(void)state;
	assert_int_equal(retention_check(&c, &until), RETENTION_BEHIND);
	assert_int_equal(until, -1);
	c = clock_at(T0 - RETENTION_BEHIND_SLACK_MS - 1, T0, 0);
	assert_int_equal(retention_check(&c, &until), RETENTION_BEHIND);
}

static void held_ahead_for_the_jump(void **state)
{
	struct retention_clock c = clock_at(T0 + 31 * DAY, T0, 0);
	int64_t until = 0;

	(void)state;
	assert_int_equal(retention_check(&c, &until), RETENTION_AHEAD);
	assert_int_equal(until, T0 + 31 * DAY + 30 * DAY); /* capped at hold_max_ms */
	c = clock_at(T0 + 3 * DAY, T0, 0);
	assert_int_equal(retention_check(&c, &until), RETENTION_AHEAD);
	assert_int_equal(until, T0 + 6 * DAY);
	/* The next cycle: the newest run is now in step, the hold remains. */
	c = clock_at(T0 + 3 * DAY + 6 * HOUR, T0 + 3 * DAY, T0 + 6 * DAY);
	assert_int_equal(retention_check(&c, &until), RETENTION_HELD);
	c = clock_at(T0 + 6 * DAY + 1, T0 + 6 * DAY - HOUR, T0 + 6 * DAY);
	assert_int_equal(retention_check(&c, &until), RETENTION_RUN);
	assert_string_not_equal(retention_verdict_text(RETENTION_HELD), "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(runs_when_in_step),
	    cmocka_unit_test(held_behind),
	    cmocka_unit_test(held_ahead_for_the_jump),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
