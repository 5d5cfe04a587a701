/*
 * scheduler: the scheduler thread of threadwatchd, its plan (monotonic
 * deadlines for the next cycle and the next fingerprint check), the API
 * trigger handshake and the state it publishes. One cycle is sched_cycle.c's;
 * schedp.h is what the two share.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "config.h"
#include "detection.h"
#include "fingerprint.h"
#include "sched_guard.h"
#include "health.h"
#include "log.h"
#include "metrics.h"
#include "schedp.h"
#include "scheduler.h"
#include "store.h"
#include "xmalloc.h"

/* Backoff of the retries of a failed or interrupted cycle, in seconds: the
 * first retry comes a minute after it, the second five, every later one
 * half an hour (each capped at the interval). Soon enough that a host
 * rebooted during its first cycle has data within minutes, slow enough
 * that a cycle failing for good does not keep the host busy. */
static const double retry_delays[] = {60, 300, 1800};

/* --- small readers ------------------------------------------------------- */

static double rand01(void)
{
	uint64_t x;

	if (getrandom(&x, sizeof(x), GRND_NONBLOCK) != (ssize_t)sizeof(x))
		x = clock_ns() * 0x9E3779B97F4A7C15ULL;
	return (double)(x >> 11) * 0x1.0p-53;
}

double sched_steal_pct(const struct sys_cpu_jiffies *before, const struct sys_cpu_jiffies *after)
{
	if (after->total <= before->total || after->steal < before->steal)
		return 0;
	return 100.0 * (double)(after->steal - before->steal) /
	       (double)(after->total - before->total);
}

double sched_start_delay(int64_t now_ms, int64_t last_ms, int have_last, double interval_s)
{
	double age;

	if (!have_last)
		return 0;
	age = (double)(now_ms - last_ms) / 1000.0;
	if (age < 0 || age >= interval_s)
		return 0;
	return interval_s - age;
}

double sched_retry_delay(unsigned retry, double interval_s)
{
	size_t n = sizeof(retry_delays) / sizeof(retry_delays[0]);

	if (retry == 0)
		return interval_s;
	return fmin(retry_delays[retry <= n ? retry - 1 : n - 1], interval_s);
}

/* --- state shared with the main loop and the API ---------------------------- */

void sched_notify(struct sched *s)
{
	if (s->changed)
		s->changed(s->ctx);
}

/* Called with the lock held: the deadline by which the thread promises to
 * come back. */
void sched_promise(struct sched *s, double seconds)
{
	s->alive_until = clock_mono_s() + seconds;
}

/* Marks the start of a step without a bound of its own. */
void sched_step(struct sched *s)
{
	pthread_mutex_lock(&s->lock);
	sched_promise(s, STEP_GRACE_S);
	pthread_mutex_unlock(&s->lock);
}

void sched_publish(struct sched *s);

/* The probe running now, in the status and (when it changed) for the API. */
void sched_set_probe(struct sched *s, const char *name, double bound_s)
{
	int differs;

	pthread_mutex_lock(&s->lock);
	differs = strcmp(s->status.probe, name ? name : "") != 0;
	snprintf(s->status.probe, sizeof(s->status.probe), "%s", name ? name : "");
	sched_promise(s, bound_s);
	pthread_mutex_unlock(&s->lock);
	sched_notify(s);
	if (differs)
		sched_publish(s);
}

static int64_t next_cycle_ms_locked(const struct sched *s)
{
	return clock_wall_ms() + (int64_t)llround((s->next_due - clock_mono_s()) * 1000.0);
}

/* Plans the next cycle delay seconds after from, plus a random splay: the
 * configured one for a regular cycle, for the first one after start and
 * for one after a host change (a fleet upgraded or rebooted at once does
 * not probe in step), the same share of its delay for a retry (a retry due
 * in a minute stays near a minute). */
void sched_plan_next_locked(struct sched *s, double from, double delay)
{
	double splay = config_splay_seconds(&s->cfg);

	if (s->status.retry)
		splay *= sched_retry_delay(s->status.retry, s->cfg.interval) / s->cfg.interval;
	s->next_due = from + delay + rand01() * splay;
	s->status.next_cycle_ms = next_cycle_ms_locked(s);
}

/* A cycle due now for `why` (a host change), within the splay; never later
 * than the cycle already planned. */
static void plan_soon_locked(struct sched *s, const char *why)
{
	double due = s->next_due;

	sched_plan_next_locked(s, clock_mono_s(), 0);
	if (due < s->next_due) {
		s->next_due = due;
		s->status.next_cycle_ms = next_cycle_ms_locked(s);
	}
	s->due_why = why;
	s->replanned = 1;
	log_notice("The host changed; a cycle is due in %.0f s, within the splay",
	           fmax(0, s->next_due - clock_mono_s()));
}

/* The status in memory, which the HTTP handlers read whether or not the
 * store can be written (daemon/health.c). */
static void publish_health(const struct sched_status *st)
{
	struct health_cycle h;

	memset(&h, 0, sizeof(h)); /* padding too: health compares whole structs */
	h.running = st->running;
	h.last_cycle_ms = st->last_cycle_ms;
	h.next_cycle_ms = st->next_cycle_ms;
	h.retry = st->retry;
	h.last_status = st->last_status;
	snprintf(h.probe, sizeof(h.probe), "%s", st->probe);
	if (st->waiting_for_load)
		h.wait = st->wait;
	health_set_cycle(&h);
}

void sched_publish_health_locked(struct sched *s)
{
	publish_health(&s->status);
}

/* Publishes the scheduler's state for the API (GET /api/v1/status). */
void sched_publish(struct sched *s)
{
	struct sched_status st;
	char v[9][72];
	const char *keys[] = {"cycle_running",     "cycle_id",      "last_cycle_ms",
	                      "last_cycle_status", "next_cycle_ms", "trigger_enabled",
	                      "current_probe",     "cycles",        "next_cycle_retry"};
	const char *vals[9];
	int r;

	sched_get_status(s, &st);
	publish_health(&st);
	snprintf(v[0], sizeof(v[0]), "%d", st.running);
	snprintf(v[1], sizeof(v[1]), "%lld", (long long)st.cycle_id);
	snprintf(v[2], sizeof(v[2]), "%lld", (long long)st.last_cycle_ms);
	snprintf(v[3], sizeof(v[3]), "%s", cycle_status_name(st.last_status));
	snprintf(v[4], sizeof(v[4]), "%lld", (long long)st.next_cycle_ms);
	snprintf(v[5], sizeof(v[5]), "%d", s->trigger_enabled);
	snprintf(v[6], sizeof(v[6]), "%s", st.probe);
	snprintf(v[7], sizeof(v[7]), "%u", st.cycles);
	snprintf(v[8], sizeof(v[8]), "%u", st.retry);
	for (int i = 0; i < 9; i++)
		vals[i] = v[i];
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		r = store_state_set(s->st, keys[i], vals[i]);
		if (r < 0) {
			log_warning("Failed to publish the scheduler state (%s): %s, ignoring",
			            keys[i], store_last_error());
			break;
		}
	}
}

/* --- the fingerprint -------------------------------------------------------- */

/* The fingerprint with what the latest ok ctxsw run proved in its forked
 * child (the daemon runs nothing risky itself); without one, those stay
 * null. */
static json_t *read_fingerprint(struct sched *s)
{
	json_t *fp = fingerprint_read(), *docs = NULL, *ids = NULL;

	if (store_latest_docs(s->st, &docs, &ids) < 0)
		log_warning("Failed to read the latest ctxsw document: %s; the probed capabilities "
		            "are unknown",
		            store_last_error());
	fingerprint_add_probed(fp, json_object_get(docs, "ctxsw"));
	json_decref(docs);
	json_decref(ids);
	return fp;
}

/* Reads the fingerprint; records it when `record` is set or its identity
 * changed. Returns 1 when the identity differs from the one read before
 * (never on the first reading; fingerprint_diff() decides, so a value
 * learned where it was unknown is no change); *stored is set when the
 * store wrote a new row (the host differs from the last recorded one). */
int sched_refresh_fingerprint(struct sched *s, int record, int *stored)
{
	json_t *fp = read_fingerprint(s), *id = fingerprint_identity(fp);
	char *d = s->identity ? fingerprint_diff(s->identity, id) : NULL;
	int differs = d != NULL, r;

	*stored = 0;
	if (differs)
		log_notice("The host changed: %s", d);
	free(d);
	if (record || differs || (s->identity && !json_equal(id, s->identity))) {
		r = store_fingerprint_record(s->st, fp, clock_wall_ms(), stored);
		if (r < 0)
			log_warning("Failed to record the host fingerprint: %s, ignoring",
			            store_last_error());
	}
	json_decref(s->fp);
	json_decref(s->identity);
	s->fp = fp;
	s->identity = id;
	return differs;
}

/* --- the thread ---------------------------------------------------------------- */

static void *sched_main(void *arg)
{
	struct sched *s = arg;
	struct config c;

	/* Catch up with a history stored before this start (an upgrade, a
	 * restored or seeded database). */
	pthread_mutex_lock(&s->lock);
	config_copy(&c, &s->cfg);
	sched_promise(s, STEP_GRACE_S);
	pthread_mutex_unlock(&s->lock);
	sched_detect_regressions(s, &c);
	/* node_exporter gets the stored figures from the start, not only
	 * after the next cycle (which may be a whole interval away). */
	sched_write_textfile(&c, s->st);
	config_free(&c);

	pthread_mutex_lock(&s->lock);
	while (!s->stop) {
		double now = clock_mono_s(), until;
		const char *why = s->api_pending      ? "api"
		                  : now < s->next_due ? NULL
		                  : s->due_why        ? s->due_why
		                  : s->status.retry   ? "retry"
		                                      : "interval";
		struct timespec ts;
		int changed_host, stored;

		if (s->replanned) {
			s->replanned = 0;
			pthread_mutex_unlock(&s->lock);
			sched_publish(s);
			pthread_mutex_lock(&s->lock);
			continue;
		}
		if (why) {
			sched_run_cycle(s, why);
			continue;
		}
		if (now >= s->next_fp_check) {
			sched_promise(s, STEP_GRACE_S);
			pthread_mutex_unlock(&s->lock);
			changed_host = sched_refresh_fingerprint(s, 0, &stored);
			pthread_mutex_lock(&s->lock);
			if (changed_host && !s->due_why)
				plan_soon_locked(s, "fingerprint");
			s->next_fp_check = clock_mono_s() + FP_CHECK_S;
			continue;
		}
		until = fmin(s->next_due, s->next_fp_check);
		sched_promise(s, until - now + STEP_GRACE_S);
		ts = sched_mono_ts(until);
		pthread_cond_timedwait(&s->wake, &s->lock, &ts);
	}
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

/* How the previous process left the cycles, from the state it published:
 * the last status, and the number of the retry due next (0: none). A
 * cycle still marked running died with its process (a crash, a kill, a
 * power cut): the next one retries it, *died is set. */
static unsigned restore_retry(struct store *st, enum cycle_status *last_status, int *died)
{
	char *running = NULL, *status = NULL, *retry = NULL, *end;
	unsigned long n = 0;

	store_state_get(st, "cycle_running", &running);
	store_state_get(st, "last_cycle_status", &status);
	store_state_get(st, "next_cycle_retry", &retry);
	if (retry) {
		n = strtoul(retry, &end, 10);
		if (end == retry || *end || n >= UINT_MAX)
			n = 0;
	}
	*died = running && !strcmp(running, "1");
	*last_status = cycle_status_parse(status);
	if (*died)
		n++;
	else if (cycle_status_retried(*last_status))
		n = n ? n : 1;
	else
		n = 0;
	free(running);
	free(status);
	free(retry);
	return (unsigned)n;
}

/* The cycle the previous process did not finish (killed, crashed, a power
 * cut) ended when it died: it is recorded as interrupted, and the last
 * status says so, not the status of the cycle before it. */
static void close_dead_cycles(struct sched *s, int64_t now_ms, int died)
{
	int64_t n = 0;

	if (store_cycles_interrupt(s->st, now_ms, &n) < 0)
		log_warning("Failed to record the unfinished cycle as interrupted: %s, ignoring",
		            store_last_error());
	else if (n > 0)
		log_notice("Recorded %lld unfinished cycle%s as interrupted", (long long)n,
		           n == 1 ? "" : "s");
	if (!died && n <= 0)
		return;
	s->status.last_status = CYCLE_INTERRUPTED;
	s->status.last_cycle_ms = now_ms;
}

int sched_new(const struct config *cfg, struct store *st, sched_changed_fn *on_change, void *ctx,
              struct sched **out)
{
	struct sched *s = xcalloc(1, sizeof(*s));
	pthread_condattr_t ca;
	int64_t last_ms = 0, now_ms;
	double delay;
	int r, have_last, stored, died;

	pthread_mutex_init(&s->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&s->wake, &ca);
	pthread_cond_init(&s->answer, &ca);
	pthread_condattr_destroy(&ca);
	s->st = st;
	s->changed = on_change;
	s->ctx = ctx;
	config_copy(&s->cfg, cfg);
	s->trigger_enabled = cfg->token[0] != '\0';

	r = store_last_cycle(st, &last_ms);
	if (r < 0 && r != -ENOENT) {
		sched_free(s);
		return r;
	}
	have_last = r == 0;
	now_ms = clock_wall_ms();
	s->status.retry = restore_retry(st, &s->status.last_status, &died);
	/* A retry counts from the end of the cycle it retries; one that died
	 * has no end: from now. */
	delay = sched_start_delay(now_ms, died ? now_ms : last_ms, have_last || died,
	                          sched_retry_delay(s->status.retry, cfg->interval));
	s->status.last_cycle_ms = have_last ? last_ms : 0;
	if (have_last) {
		char *prev = NULL;

		/* keep the last cycle's status across a restart (/healthz, STATUS=) */
		if (store_state_get(st, "last_cycle_status", &prev) == 0 && prev)
			s->status.last_status = cycle_status_parse(prev);
		free(prev);
		s->last_end = clock_mono_s() - (double)(now_ms - last_ms) / 1000.0;
		s->have_last_end = 1;
	}
	close_dead_cycles(s, now_ms, died);
	sched_refresh_fingerprint(s, 1, &stored);
	if (s->status.retry)
		log_notice("The last cycle %s; retry %u in %.0f s",
		           died ? "did not finish (the daemon stopped during it)"
		           : s->status.last_status == CYCLE_FAILED ? "failed"
		                                                   : "was interrupted",
		           s->status.retry, delay);
	if (delay == 0)
		s->due_why = s->status.retry ? "retry" : "start";
	else if (stored)
		s->due_why = "fingerprint";
	sched_plan_next_locked(s, clock_mono_s(), s->due_why ? 0 : delay);
	if (s->due_why)
		log_notice("A cycle (%s%s) is due in %.0f s%s", s->due_why,
		           !strcmp(s->due_why, "fingerprint")
		               ? ": the host changed since the last cycle"
		               : "",
		           fmax(0, s->next_due - clock_mono_s()), /* not "-0 s" with no splay */
		           config_splay_seconds(cfg) > 0 ? ", within the splay" : "");
	else
		/* After a restart with history: when the next regular one is. */
		log_notice("The next cycle is due in %.0f s (the interval after the last one)",
		           fmax(0, s->next_due - clock_mono_s()));
	s->next_fp_check = clock_mono_s() + FP_CHECK_S;
	s->alive_until = clock_mono_s() + STEP_GRACE_S;
	*out = s;
	sched_publish(s);
	return 0;
}

int sched_start(struct sched *s)
{
	int r = pthread_create(&s->thread, NULL, sched_main, s);

	if (r)
		return -r;
	s->started = 1;
	return 0;
}

void sched_reconfigure(struct sched *s, const struct config *cfg)
{
	double old;

	pthread_mutex_lock(&s->lock);
	old = s->cfg.interval;
	config_free(&s->cfg);
	config_copy(&s->cfg, cfg);
	if (!s->status.running && cfg->interval != old && !s->due_why) {
		sched_plan_next_locked(s, s->have_last_end ? s->last_end : clock_mono_s(),
		                       sched_retry_delay(s->status.retry, cfg->interval));
		s->replanned = 1; /* the thread publishes it (the API reads the store) */
	}
	pthread_cond_broadcast(&s->wake);
	pthread_mutex_unlock(&s->lock);
	sched_notify(s);
}

void sched_stop(struct sched *s)
{
	if (!s)
		return;
	pthread_mutex_lock(&s->lock);
	s->stop = 1;
	s->stop_flag = 1;
	pthread_cond_broadcast(&s->wake);
	pthread_cond_broadcast(&s->answer);
	pthread_mutex_unlock(&s->lock);
	if (s->started) {
		pthread_join(s->thread, NULL);
		s->started = 0;
	}
}

void sched_free(struct sched *s)
{
	if (!s)
		return;
	sched_stop(s);
	json_decref(s->fp);
	json_decref(s->identity);
	config_free(&s->cfg);
	pthread_cond_destroy(&s->wake);
	pthread_cond_destroy(&s->answer);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

int sched_trigger(void *ctx, int64_t *cycle_id)
{
	struct sched *s = ctx;
	struct timespec ts = sched_mono_ts(clock_mono_s() + TRIGGER_WAIT_S);
	uint64_t seq;
	int r;

	pthread_mutex_lock(&s->lock);
	if (s->stop) {
		pthread_mutex_unlock(&s->lock);
		return -ESHUTDOWN;
	}
	if (s->status.running || s->api_pending) {
		pthread_mutex_unlock(&s->lock);
		return -EBUSY;
	}
	seq = ++s->api_seq;
	s->api_pending = 1;
	pthread_cond_broadcast(&s->wake);
	while (s->api_done_seq != seq && !s->stop)
		if (pthread_cond_timedwait(&s->answer, &s->lock, &ts) == ETIMEDOUT)
			break;
	if (s->api_done_seq == seq) {
		r = s->api_result;
		*cycle_id = s->api_cycle_id;
	} else {
		r = s->stop ? -ESHUTDOWN : -ETIMEDOUT;
		if (s->api_pending && s->api_seq == seq)
			s->api_pending = 0;
	}
	pthread_mutex_unlock(&s->lock);
	return r;
}

void sched_get_status(struct sched *s, struct sched_status *out)
{
	pthread_mutex_lock(&s->lock);
	*out = s->status;
	if (!s->status.running)
		out->next_cycle_ms = next_cycle_ms_locked(s);
	pthread_mutex_unlock(&s->lock);
}

int sched_alive(struct sched *s)
{
	int r;

	pthread_mutex_lock(&s->lock);
	r = !s->started || clock_mono_s() <= s->alive_until;
	pthread_mutex_unlock(&s->lock);
	return r;
}
