/*
 * health: the daemon's own state kept in memory, apart from the store, so
 * that /healthz, /api/v1/status and /metrics tell the truth when the store
 * cannot be written or read: the scheduler's live status, and the store's
 * last failure (as node_exporter keeps node_scrape_collector_success in
 * memory rather than in what it scrapes).
 */
#ifndef TW_HEALTH_H
#define TW_HEALTH_H

#include <stddef.h>
#include <stdint.h>

#include "cycle_status.h"

/* What a cycle waits for before its probes run: a quiet host, by the
 * guard's measure against its limit, until it runs anyway. */
struct health_wait {
	char measure[64]; /* "CPU pressure (PSI some avg10)"; "" when not waiting */
	char unit[16];    /* "%" or " per CPU" */
	double value, limit;
	int64_t until_ms; /* when the cycle runs anyway, Unix ms */
};

/* What the scheduler last published (daemon/scheduler.c publish()). */
struct health_cycle {
	int running;                   /* a cycle is going */
	int64_t last_cycle_ms;         /* end of the last cycle, Unix ms (0: none) */
	enum cycle_status last_status; /* CYCLE_NONE until a cycle ended */
	int64_t next_cycle_ms;         /* the next planned cycle, Unix ms */
	char probe[65];                /* the probe running now, or "" */
	unsigned retry;                /* the retry due next, 0: none */
	struct health_wait wait;       /* measure "" unless waiting for a quiet host */
};

/* Replaces the published status; never fails. */
void health_set_cycle(const struct health_cycle *c);
/* 0 with *c, or -ENOENT before the scheduler published anything. */
int health_get_cycle(struct health_cycle *c);

/* Records the outcome `r` (0 or -errno, with the store's message) of a
 * store call: a write that failed for want of space, permission or a
 * working disk, or any call that found the file corrupt (-EBADMSG), marks
 * the store failed and counts a failure. */
void health_store_result(int write, int r, const char *msg);
/* How many failures were recorded so far. */
unsigned long health_store_failures(void);
/* A cycle that began after `since` failures ended with every write
 * stored: the store works again, unless more failures came since or the
 * file was found corrupt (that lasts until a restart on a repaired file).
 * A single small write that fits on a full disk proves nothing, so only
 * a whole cycle clears a failure. */
void health_store_cycle_ok(unsigned long since);
/* 0 while the store works; -errno of its failure with the message in msg. */
int health_store_error(char *msg, size_t len);
/* A failure's -errno in words that name no file ("the disk is full"). */
const char *health_failure_words(int err);

/* A number that changes whenever anything above does: a cached answer
 * built from this state is stale once it moved. */
uint64_t health_version(void);

/* Forgets everything (unit tests). */
void health_reset(void);

#endif
