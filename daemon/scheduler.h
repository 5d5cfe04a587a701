/*
 * scheduler (prefix sched_): threadwatchd's probe-cycle scheduler. A thread of its own that
 * runs a cycle (every probe, one after another, each in its own process
 * via the runner; then the recommendation, the headroom and retention) at
 * start when the last cycle is older than the interval, every interval
 * plus a random splay, at once when the host's fingerprint changes, and
 * when the HTTP API asks. A failed or interrupted cycle (a stop or a
 * reboot in the middle, even a crash) is retried with backoff instead:
 * after 1 min, 5 min, then every 30 min, never later than the interval. All waiting is on
 * CLOCK_MONOTONIC, so a step of the wall clock neither starts a storm of cycles nor stalls them.
 */
#ifndef TW_SCHEDULER_H
#define TW_SCHEDULER_H

#include <stddef.h>
#include <stdint.h>

#include "cycle_status.h"
#include "health.h"

struct config;
struct store;
struct sched;

/* MESSAGE_ID of the journal message that ends each cycle (fields
 * CYCLE_ID=, CYCLE_STATUS=). */
#define SCHED_MESSAGE_ID_CYCLE "b1f3c5e0a6d94e2c8d7f41a9c3e6b270"

/* What the main loop shows in STATUS= and the watchdog looks at. */
struct sched_status {
	int running;                   /* a cycle is going (including its quiet-host wait) */
	int waiting_for_load;          /* ... and it is waiting for a quiet host, */
	struct health_wait wait;       /* ... for this (measure "" otherwise) */
	int64_t cycle_id;              /* the running cycle, else the last one (0: none) */
	char probe[65];                /* the probe running now, or "" */
	int64_t last_cycle_ms;         /* end of the last cycle, Unix ms (0: none) */
	enum cycle_status last_status; /* CYCLE_NONE until a cycle ended */
	int64_t next_cycle_ms;         /* the next planned cycle, Unix ms */
	unsigned retry;                /* the next cycle retries failed or interrupted ones:
	                                  its number (1, 2, ...); 0: a regular cycle */
	unsigned cycles;               /* cycles finished since start */
};

/* Called (from the scheduler's thread) whenever the status changed. */
typedef void sched_changed_fn(void *ctx);

/* Prepares the scheduler on the writable store: reads the last cycle and
 * the fingerprint and plans the first cycle. The configuration is copied.
 * 0 or -errno. */
int sched_new(const struct config *cfg, struct store *st, sched_changed_fn *changed, void *ctx,
              struct sched **out);
/* Starts the scheduler's thread. 0 or -errno. */
int sched_start(struct sched *s);
/* Applies a reloaded configuration from the next cycle on; a new interval
 * re-plans the next cycle. */
void sched_reconfigure(struct sched *s, const struct config *cfg);
/* Kills the running probe, lets the cycle record what it has, and joins the
 * thread. Accepts NULL and a scheduler that never started. */
void sched_stop(struct sched *s);
void sched_free(struct sched *s);

/* http_hooks.trigger: asks for a cycle now, from any thread. 0 with the new
 * cycle's id; -EBUSY while a cycle is going; -ETIMEDOUT when the scheduler
 * did not pick it up in time; -ESHUTDOWN while stopping; or the store's
 * -errno when the cycle could not be recorded. */
int sched_trigger(void *ctx, int64_t *cycle_id);

void sched_get_status(struct sched *s, struct sched_status *out);
/* 1 while the scheduler's thread keeps its own deadline (it is waiting
 * for a planned time, or in a step with a bound such as the probe's time
 * limit); 0 when it is stuck. The watchdog is fed only while this holds. */
int sched_alive(struct sched *s);

/* --- parts with no state, for the unit tests ------------------------------ */

/* Seconds until the first cycle after start: 0 when there was no cycle,
 * when it is older than the interval, or when it lies in the future (the
 * clock stepped back); otherwise what is left of the interval. */
double sched_start_delay(int64_t now_ms, int64_t last_ms, int have_last, double interval_s);

/* Seconds from the end of a failed or interrupted cycle to retry number
 * `retry` (1, 2, ...): 60, 300, then 1800 each time, at most interval_s;
 * retry 0 (a regular cycle) gets the interval. */
double sched_retry_delay(unsigned retry, double interval_s);

/* Steal time between two readings of /proc/stat's sum of all CPUs
 * (sys_cpu_total()), in percent of all CPU time (0 when no time passed). */
struct sys_cpu_jiffies;
double sched_steal_pct(const struct sys_cpu_jiffies *before, const struct sys_cpu_jiffies *after);

/* Probe names: [a-z0-9_-], 1 to 64 characters. */
int sched_probe_name_ok(const char *name);

/* The probes of one cycle: every built-in probe of the catalogue
 * (catalog_probes, lib/catalog.c) from probe_dir, then every regular file
 * of probes_d in name order. An entry with `skip` set is not run (the
 * reason says why, for the log); a built-in that is missing keeps a path so
 * that its run records the error. */
struct sched_probe {
	char *name;
	char *path;
	const char *skip;
};
/* 0, or -errno when probes_d cannot be listed (the built-ins are still
 * returned; a missing probes_d is not an error). */
int sched_discover(const char *probe_dir, const char *probes_d, struct sched_probe **list,
                   size_t *n);
void sched_probes_free(struct sched_probe *list, size_t n);

#endif
