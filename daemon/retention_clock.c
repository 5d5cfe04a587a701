/*
 * retention_clock: the clock check before retention (see retention_clock.h).
 */
#include "retention_clock.h"

static const char *const verdict_text[] = {
    [RETENTION_RUN] = "",
    [RETENTION_BEHIND] = "the wall clock is behind the newest stored run",
    [RETENTION_AHEAD] = "the wall clock is far ahead of the newest stored run",
    [RETENTION_HELD] = "held since the wall clock jumped ahead of the stored data",
};

const char *retention_verdict_text(enum retention_verdict v)
{
	return (unsigned)v < sizeof(verdict_text) / sizeof(verdict_text[0]) ? verdict_text[v] : "";
}

enum retention_verdict retention_check(const struct retention_clock *c, int64_t *hold_until)
{
	int64_t gap;

	if (c->newest_ms <= 0)
		return c->held_until_ms > c->now_ms ? RETENTION_HELD : RETENTION_RUN;
	/* Compared as differences of values that are both plausible times, so
	 * nothing overflows; a hostile or absurd stored time only holds. */
	if (c->now_ms < c->newest_ms - RETENTION_BEHIND_SLACK_MS)
		return RETENTION_BEHIND;
	if (c->held_until_ms > c->now_ms)
		return RETENTION_HELD;
	gap = c->now_ms - c->newest_ms;
	if (gap <= c->ahead_max_ms)
		return RETENTION_RUN;
	*hold_until = c->now_ms + (gap < c->hold_max_ms ? gap : c->hold_max_ms);
	return RETENTION_AHEAD;
}
