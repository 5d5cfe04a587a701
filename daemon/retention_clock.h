/*
 * retention_clock: whether retention may run after a cycle, judged from the
 * wall clock against the stored data, so that a clock jump cannot erase the
 * history (a pure function; the scheduler reads the inputs and logs).
 */
#ifndef TW_RETENTION_CLOCK_H
#define TW_RETENTION_CLOCK_H

#include <stdint.h>

/* How far behind the newest stored run the clock may be (an NTP step back)
 * before retention is held. */
#define RETENTION_BEHIND_SLACK_MS INT64_C(600000)

enum retention_verdict {
	RETENTION_RUN,    /* prune, with the cut from the older of now and the newest run */
	RETENTION_BEHIND, /* the clock is behind the newest stored run */
	RETENTION_AHEAD,  /* the clock is far ahead of the newest stored run: a jump */
	RETENTION_HELD,   /* still held after a jump ahead (until held_until_ms) */
};

struct retention_clock {
	int64_t now_ms;        /* the wall clock */
	int64_t newest_ms;     /* the newest run stored before this cycle; 0: none */
	int64_t held_until_ms; /* a hold recorded earlier; 0: none */
	int64_t ahead_max_ms;  /* the longest expected gap between two cycles */
	int64_t hold_max_ms;   /* the longest hold after a jump (retention_raw_days) */
};

/* The verdict; on RETENTION_AHEAD *hold_until gets when the hold ends (now
 * plus the jump, at most hold_max_ms), else it is left alone. */
enum retention_verdict retention_check(const struct retention_clock *c, int64_t *hold_until);

/* Why retention does not run, for the journal ("" for RETENTION_RUN). */
const char *retention_verdict_text(enum retention_verdict v);

#endif
