/*
 * schedp: what the scheduler's files share (scheduler.c: the plan, the
 * thread, the API handshake and the published state; sched_cycle.c: one probe
 * cycle, from the quiet-host guard to the end of the cycle; sched_probes.c:
 * which probes a cycle runs). Private to them, as chrony's localp.h is to
 * its local clock.
 *
 * The lock protocol. `lock` guards every field of struct sched below it
 * but `stop_flag` (a sig_atomic_t the runner polls) and `st` (the store,
 * which has its own lock). The scheduler thread holds `lock` while it
 * plans and waits (on `wake`), and lets go of it for anything slow: a
 * probe, a store write, the quiet-host guard's reading, the fingerprint.
 * So the seam with sched_cycle.c is: sched_run_cycle() is called and
 * returns with `lock` held, and each step inside it takes and drops it
 * around what it touches (sched_set_probe(), the status, the plan).
 * Functions named *_locked expect it held. API callers take it only in
 * sched_trigger() and sched_get_status(), never while holding another lock
 * of the scheduler's; the HTTP trigger holds its own trigger_lock around
 * sched_trigger() (that order, never the reverse). With `lock` held the
 * scheduler may take health.c's lock (publishing its status), nothing
 * else. `changed` may be called with `lock` held, so it only writes to the
 * main loop's wake pipe.
 */
#ifndef TW_SCHEDP_H
#define TW_SCHEDP_H

#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <time.h>

#include <jansson.h>

#include "config.h"
#include "scheduler.h"
#include "store.h"

#define FP_CHECK_S 60.0     /* fingerprint re-check period */
#define GUARD_POLL_S 5.0    /* quiet-host guard: how often the host is looked at */
#define GUARD_SAMPLE_S 3.0  /* ... and the first busy-time sample */
#define TRIGGER_WAIT_S 10.0 /* how long the API waits for the scheduler */
#define STEP_GRACE_S 120.0  /* bound of a step without its own (store, fingerprint) */
#define PROBE_GRACE_S 30.0  /* beyond a probe's own time limit */
#define RETENTION_BATCH 1000
#define MAX_OUTPUT ((size_t)4 << 20)

struct sched {
	pthread_mutex_t lock;
	pthread_cond_t wake;   /* the scheduler waits on it */
	pthread_cond_t answer; /* API callers wait on it */
	pthread_t thread;
	int started;
	struct store *st;
	struct config cfg; /* the latest; each cycle works on a copy */
	sched_changed_fn *changed;
	void *ctx;
	volatile sig_atomic_t stop_flag; /* read by the runner */
	int stop;

	/* the plan, in CLOCK_MONOTONIC seconds */
	double next_due, next_fp_check, alive_until;
	double last_end;
	int have_last_end;
	const char *due_why; /* "start", "retry" or "fingerprint": why next_due is soon */
	int replanned;       /* the plan changed outside the thread: publish it */

	/* the API handshake */
	int api_pending;
	uint64_t api_seq, api_done_seq;
	int api_result;
	int64_t api_cycle_id;

	/* only the scheduler's thread touches these */
	json_t *fp, *identity;
	int trigger_enabled;
	int retention_held; /* the last verdict held retention (logged once) */

	struct sched_status status;
};

/* A CLOCK_MONOTONIC time in seconds as a timespec for a timed wait. */
static inline struct timespec sched_mono_ts(double t)
{
	struct timespec ts;

	if (t > 1e15)
		t = 1e15;
	ts.tv_sec = (time_t)t;
	ts.tv_nsec = (long)((t - (double)ts.tv_sec) * 1e9);
	return ts;
}

/* scheduler.c: the state the main loop and the API read, and the plan. */
void sched_notify(struct sched *s);
void sched_promise(struct sched *s, double seconds);
void sched_publish(struct sched *s);
/* Only the status in memory (daemon/health.h), no store write; with the
 * lock held, while a cycle waits for a quiet host. */
void sched_publish_health_locked(struct sched *s);
void sched_step(struct sched *s);
void sched_set_probe(struct sched *s, const char *name, double bound_s);
void sched_plan_next_locked(struct sched *s, double from, double delay);
int sched_refresh_fingerprint(struct sched *s, int record, int *stored);
int sched_is_builtin(const char *name); /* sched_probes.c */

/* sched_cycle.c: one cycle, and what the thread does between cycles. */
void sched_detect_regressions(struct sched *s, const struct config *c);
void sched_run_cycle(struct sched *s, const char *why);
void sched_write_textfile(const struct config *c, struct store *st);

#endif
