/*
 * sched_cycle: one probe cycle of threadwatchd's scheduler (see schedp.h): the
 * quiet-host guard, each probe in its own process, the runs stored, the
 * recommendation, headroom, regression detection and the upkeep after it.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "catalog.h"
#include "clock.h"
#include "config.h"
#include "detect.h"
#include "detection.h"
#include "sched_guard.h"
#include "headroom.h"
#include "observer_link.h"
#include "health.h"
#include "log.h"
#include "metrics.h"
#include "protocol.h"
#include "recommend.h"
#include "retention_clock.h"
#include "runner.h"
#include "schedp.h"
#include "sysinfo.h"
#include "scheduler.h"
#include "store.h"
#include "xmalloc.h"

/* --- one cycle ------------------------------------------------------------------ */

/* Waits while the host is busy (daemon/sched_guard.h); returns the seconds
 * waited. Called without the lock. */
static double load_guard(struct sched *s, const struct config *c)
{
	const struct guard_limits lim = {c->guard_cpu_pressure_max, c->guard_cpu_busy_max,
	                                 c->guard_loadavg_per_cpu_max};
	double start = clock_mono_s(), waited = 0;
	struct guard g;
	struct guard_look look;
	int logged = 0;

	if (guard_begin(&g, (enum guard_mode)c->guard, NULL) < 0)
		log_warning("The quiet-host guard cannot read its measure (%s); not waiting",
		            guard_mode_name((enum guard_mode)c->guard));
	pthread_mutex_lock(&s->lock);
	while (!s->stop && g.mode != GUARD_OFF) {
		double pause = GUARD_POLL_S;

		pthread_mutex_unlock(&s->lock);
		if (guard_look(&g, &lim, &look) < 0)
			look.busy = 0; /* a reading that failed does not hold the cycle */
		pthread_mutex_lock(&s->lock);
		waited = clock_mono_s() - start;
		if (look.known && !look.busy)
			break;
		if (look.known && waited >= c->guard_wait_max) {
			log_notice(
			    "%s is still %.2f%s after waiting %.0f s; running the cycle anyway",
			    look.measure, look.value, look.unit, waited);
			break;
		}
		if (!look.known)
			pause = GUARD_SAMPLE_S;
		else if (!logged++)
			log_info("%s is %.2f%s, above %.2f; waiting up to %.0f s for a quiet host",
			         look.measure, look.value, look.unit, look.limit,
			         c->guard_wait_max - waited);
		if (look.known) {
			struct health_wait *w = &s->status.wait;

			memset(w, 0, sizeof(*w)); /* compared whole by health */
			snprintf(w->measure, sizeof(w->measure), "%s", look.measure);
			snprintf(w->unit, sizeof(w->unit), "%s", look.unit);
			w->value = look.value;
			w->limit = look.limit;
			w->until_ms =
			    clock_wall_ms() + (int64_t)(1000 * fmax(0, c->guard_wait_max - waited));
			/* Every look goes to the status in memory that the API
			 * reads, the first at once; the first also tells everyone
			 * else (the store, systemd). */
			int first = !s->status.waiting_for_load;

			s->status.waiting_for_load = 1;
			sched_publish_health_locked(s);
			if (first)
				sched_notify(s);
		}
		{
			double until =
			    clock_mono_s() + fmin(pause, fmax(0, c->guard_wait_max - waited));
			struct timespec ts = sched_mono_ts(until);

			sched_promise(s, until - clock_mono_s() + STEP_GRACE_S);
			pthread_cond_timedwait(&s->wake, &s->lock, &ts);
		}
	}
	s->status.waiting_for_load = 0;
	memset(&s->status.wait, 0, sizeof(s->status.wait));
	pthread_mutex_unlock(&s->lock);
	return clock_mono_s() - start;
}

static const char *const store_status[] = {[RUNNER_OK] = "ok",
                                           [RUNNER_SKIPPED] = "skipped",
                                           [RUNNER_ERROR] = "error",
                                           [RUNNER_NOT_APPLICABLE] = "not_applicable"};

/* ", on CPU N" for a pinned run, else "". */
static const char *pinned_to(int cpu, char *buf, size_t len)
{
	if (cpu < 0)
		return "";
	snprintf(buf, len, ", on CPU %d", cpu);
	return buf;
}

/* The probe's arguments: its name, --quick, and --skip-arm ARM for each
 * of its arms that probes_disabled lists. argv has room for 9. */
static void probe_argv(const struct config *c, const char *name, char **argv)
{
	const struct catalog_probe *b = catalog_probe_find(name);
	size_t n = 0;

	argv[n++] = (char *)(uintptr_t)name;
	if (c->quick)
		argv[n++] = "--quick";
	for (size_t i = 0; b && i < 3 && b->arms[i]; i++)
		if (config_disabled(c, name, b->arms[i])) {
			argv[n++] = "--skip-arm";
			argv[n++] = (char *)(uintptr_t)b->arms[i];
		}
	argv[n] = NULL;
}

/* Runs one probe and stores the run. 0, or the store's -errno; *good is
 * set when the probe gave its answer (ok, or skipped or not applicable
 * with a reason) and it
 * was stored. */
static int run_one(struct sched *s, const struct config *c, int64_t cycle_id,
                   const struct sched_probe *p, int64_t *run_id, int *good)
{
	char name[PROTOCOL_MAX_NAME + 1], *argv[9];
	const struct catalog_probe *b = catalog_probe_find(p->name);
	struct runner_opts o = {.timeout_s = c->probe_timeout,
	                        .max_output = MAX_OUTPUT,
	                        .idle_io = 1,
	                        .cpus = runner_cpu_for(&c->probe_cpu, b && b->own_cpus),
	                        .stop = &s->stop_flag};
	struct sys_cpu_jiffies before = {0, 0, 0}, after = {0, 0, 0};
	struct runner_result res;
	char on[32];
	struct store_run run;
	char *refused = NULL;
	double load = 0;
	int r;

	runner_sched_for((enum runner_sched)c->probe_sched, c->nice, b && b->priced, &o.sched,
	                 &o.nice);
	snprintf(name, sizeof(name), "%s", p->name);
	probe_argv(c, name, argv);
	if (sys_loadavg1("/proc/loadavg", &load) < 0)
		load = 0;
	sys_cpu_total("/proc/stat", &before);
	sched_set_probe(s, p->name, c->probe_timeout + PROBE_GRACE_S);
	r = runner_run(p->path, argv, &o, &res);
	if (r < 0)
		log_run(LOG_ERR, p->name, 0, "Failed to start the probe: %s", strerror(-r));
	sys_cpu_total("/proc/stat", &after);
	sched_set_probe(s, p->name, STEP_GRACE_S);

	run = (struct store_run){
	    .probe = p->name,
	    .cycle_id = cycle_id,
	    .started_ms = res.started_unix_ms,
	    .ended_ms = res.started_unix_ms + (int64_t)llround(res.wall_s * 1000.0),
	    .status = store_status[res.status],
	    .reason = res.reason,
	    .failure = &res.failure,
	    .term_signal = res.term_signal,
	    .doc = res.doc,
	    .raw = res.doc ? NULL : res.output,
	    .loadavg1 = load,
	    .steal_pct = sched_steal_pct(&before, &after),
	    .cpu_s = res.cpu_s,
	};
	r = store_run_insert(s->st, &run, run_id);
	if (r == -EINVAL && run.doc) {
		/* The store refused a document the runner accepted: keep the run
		 * as an error with the store's reason and the raw output. */
		xasprintf(&refused, "the store refused the document: %s", store_last_error());
		run.status = "error";
		run.reason = refused;
		failure_set(&res.failure, FAILURE_ERROR, 0);
		run.doc = NULL;
		run.raw = res.output;
		res.status = RUNNER_ERROR;
		r = store_run_insert(s->st, &run, run_id);
	}
	*good = r >= 0 && res.status != RUNNER_ERROR;
	if (r < 0)
		log_run(LOG_ERR, p->name, 0, "Failed to store the run: %s", store_last_error());
	else if (res.status == RUNNER_OK)
		log_run(LOG_INFO, p->name, *run_id, "Probe %s ok in %.1f s%s", p->name, res.wall_s,
		        pinned_to(res.cpu, on, sizeof(on)));
	else
		log_run(LOG_WARNING, p->name, *run_id, "Probe %s %s: %s", p->name,
		        store_status[res.status], run.reason ? run.reason : "(no reason)");
	runner_result_clear(&res);
	free(refused);
	return r;
}

/* Runs every probe; returns the cycle's status. */
static enum cycle_status run_probes(struct sched *s, const struct config *c, int64_t cycle_id)
{
	struct sched_probe *list;
	unsigned ran = 0, good = 0;
	size_t n;
	int r;

	r = sched_discover(c->probe_dir, c->probes_d, &list, &n);
	if (r < 0)
		log_warning("Failed to list the probes directory \"%s\": %s, ignoring", c->probes_d,
		            strerror(-r));
	for (size_t i = 0; i < n && !s->stop_flag; i++) {
		int64_t run_id = 0;
		int ok = 0;

		if (list[i].skip) {
			log_debug("Probes directory entry \"%s\": %s, ignoring", list[i].path,
			          list[i].skip);
			continue;
		}
		if (sched_is_builtin(list[i].name) && config_disabled(c, list[i].name, NULL)) {
			log_debug("Probe %s is disabled (probes_disabled), not running it",
			          list[i].name);
			continue;
		}
		run_one(s, c, cycle_id, &list[i], &run_id, &ok);
		ran++;
		good += ok != 0;
	}
	sched_probes_free(list, n);
	sched_set_probe(s, NULL, STEP_GRACE_S);
	if (!s->stop_flag && good < ran)
		log_warning("%u of %u probes failed this cycle", ran - good, ran);
	return cycle_status_of(ran, good, s->stop_flag != 0);
}

/* 1 when some probe the recommendation needs has figures or failed (and
 * is not disabled): else a verdict would rest on assumptions alone. */
static int rec_grounded(const struct config *c, const json_t *docs, const json_t *failed)
{
	const char *key;
	json_t *v;

	json_object_foreach((json_t *)(uintptr_t)docs, key, v) if (rec_inputs_needed(key)) return 1;
	json_object_foreach((json_t *)(uintptr_t)failed, key, v)
	{
		if (rec_inputs_needed(key) && !config_disabled(c, key, NULL))
			return 1;
	}
	return 0;
}

/* Notes in the inputs the needed probes that are disabled or whose latest
 * run failed; a failed run joins the runs the recommendation came from. */
static void note_unavailable(const struct config *c, const json_t *failed, json_t *inputs,
                             json_t *ids)
{
	const char *key;
	json_t *f;
	char id_key[PROTOCOL_MAX_NAME + 16];

	for (size_t i = 0; i < catalog_n_probes; i++)
		if (config_disabled(c, catalog_probes[i].name, NULL))
			rec_inputs_note_disabled(inputs, catalog_probes[i].name);
	json_object_foreach((json_t *)(uintptr_t)failed, key, f)
	{
		json_t *id = json_object_get(f, "run_id");
		struct failure what;

		if (failure_parse_json(f, &what, key, NULL, 0) < 0)
			failure_set(&what, FAILURE_ERROR, 0);
		if (config_disabled(c, key, NULL) ||
		    rec_inputs_note_failed(
		        inputs, key, &what, json_string_value(json_object_get(f, "reason")),
		        json_integer_value(id), json_integer_value(json_object_get(f, "t_ms"))) < 0)
			continue;
		snprintf(id_key, sizeof(id_key), "%s failed", key);
		json_object_set(ids, id_key, id);
	}
}

static void recommend(struct sched *s, const struct config *c)
{
	json_t *docs = NULL, *ids = NULL, *failed = NULL, *inputs = NULL, *result = NULL, *v;
	struct rec_workload w;
	int64_t *run_ids = NULL;
	const char *key;
	size_t n = 0;
	char err[256];
	int r;

	r = store_latest_docs(s->st, &docs, &ids);
	if (r < 0) {
		log_warning("Failed to read the latest probe documents: %s; no recommendation "
		            "this cycle",
		            strerror(-r));
		return;
	}
	r = store_latest_failures(s->st, &failed);
	if (r < 0)
		log_warning("Failed to read the latest failed runs: %s, ignoring", strerror(-r));
	if (!rec_grounded(c, docs, failed)) {
		/* Nothing measured yet: a verdict now would rest on assumptions
		 * alone, so there is none (the API says "not enough data yet"). */
		log_notice(
		    "No recommendation yet: not enough data (no probe it needs has answered)");
		goto out;
	}
	rec_workload_default(&w);
	w.threads = c->workload_threads;
	w.stack_bytes = (double)c->workload_stack_size;
	w.switches_per_thread = c->workload_switches_per_thread;
	w.creates_per_second = c->workload_creates_per_second;
	w.switches_per_second = c->workload_switches_per_second;
	inputs =
	    rec_inputs_build(s->fp, json_object_get(docs, "ctxsw"), json_object_get(docs, "map32"),
	                     json_object_get(docs, "threads"), &w);
	rec_inputs_costs(inputs, json_object_get(docs, "createscale"),
	                 json_object_get(docs, "handoff"), json_object_get(docs, "stackmem"));
	note_unavailable(c, failed, inputs, ids);
	result = rec_compute(inputs, err, sizeof(err));
	if (!result) {
		log_warning("Cannot compute a recommendation: %s, ignoring", err);
		goto out;
	}
	run_ids = xcalloc(json_object_size(ids) + 1, sizeof(*run_ids));
	json_object_foreach(ids, key, v) run_ids[n++] = json_integer_value(v);
	r = store_recommendation_insert(s->st, clock_wall_ms(), inputs, result, run_ids, n);
	if (r < 0)
		log_warning("Failed to store the recommendation: %s, ignoring", store_last_error());
	else
		log_info("Recommendation: %s",
		         json_string_value(json_object_get(result, "sentence")) ?: "(no sentence)");
out:
	free(run_ids);
	json_decref(result);
	json_decref(inputs);
	json_decref(docs);
	json_decref(ids);
	json_decref(failed);
}

static void record_headroom(struct sched *s)
{
	struct headroom_sample hs;
	json_t *h, *w, *obs;
	size_t i;
	int r;

	r = headroom_read(&hs);
	if (r < 0)
		log_warning("Failed to scan /proc for VMA counts: %s, ignoring", strerror(-r));
	/* the observer sees every process; this daemon, sandboxed, its own */
	obs = olink_latest(OLINK_FRESH_S);
	if (obs)
		(void)headroom_take_observer(&hs, json_object_get(obs, "largest_vmas"));
	json_decref(obs);
	h = headroom_json(&hs);
	json_array_foreach(json_object_get(h, "warnings"), i, w)
	    log_warning("Headroom: %s", json_string_value(w));
	r = store_headroom_record(s->st, clock_wall_ms(), h);
	if (r < 0)
		log_warning("Failed to store the headroom: %s, ignoring", store_last_error());
	json_decref(h);
}

/* A number the scheduler keeps in the store's state table; 0 when unset. */
static int64_t state_int(struct sched *s, const char *key)
{
	char *v = NULL;
	int64_t n = 0;

	if (store_state_get(s->st, key, &v) == 0 && v)
		n = strtoll(v, NULL, 10);
	free(v);
	return n;
}

static void state_int_set(struct sched *s, const char *key, int64_t n)
{
	char v[32];

	snprintf(v, sizeof(v), "%lld", (long long)n);
	if (store_state_set(s->st, key, v) < 0)
		log_warning("Failed to record %s: %s, ignoring", key, store_last_error());
}

/* Whether the wall clock lets retention run (daemon/retention_clock.h);
 * a hold is logged once, when it begins, and counted for /metrics. */
static int retention_allowed(struct sched *s, const struct config *c, int64_t cycle_id)
{
	struct retention_clock rc = {
	    .now_ms = clock_wall_ms(),
	    .held_until_ms = state_int(s, "retention_held_until_ms"),
	    .ahead_max_ms = (int64_t)((2 * c->interval + c->guard_wait_max + 86400) * 1000),
	    .hold_max_ms = (int64_t)c->retention_raw_days * 86400000,
	};
	enum retention_verdict v;
	int64_t until = 0;

	if (store_newest_run_ms(s->st, cycle_id, &rc.newest_ms) < 0) {
		log_warning("Retention skipped: %s", store_last_error());
		return 0;
	}
	v = retention_check(&rc, &until);
	if (v == RETENTION_AHEAD)
		state_int_set(s, "retention_held_until_ms", until);
	if (v != RETENTION_RUN) {
		if (!s->retention_held)
			log_warning(
			    "Retention held: %s (now %lld ms, newest run %lld ms); nothing is "
			    "deleted until the clock agrees with the stored data",
			    retention_verdict_text(v), (long long)rc.now_ms,
			    (long long)rc.newest_ms);
		state_int_set(s, "retention_skipped_total",
		              state_int(s, "retention_skipped_total") + 1);
	} else if (s->retention_held) {
		log_notice("Retention resumed: the wall clock agrees with the stored data");
	}
	s->retention_held = v != RETENTION_RUN;
	state_int_set(s, "retention_held", s->retention_held);
	return !s->retention_held;
}

/* Retention, only after a cycle that stored what it measured (never after
 * a failed or interrupted one) and when the wall clock agrees with the
 * stored data. */
static void upkeep(struct sched *s, const struct config *c, int64_t cycle_id, int stored)
{
	int r;

	if (!stored || !retention_allowed(s, c, cycle_id))
		return;
	r = store_retention(s->st, clock_wall_ms(), c->retention_raw_days,
	                    c->retention_samples_days, RETENTION_BATCH);
	if (r >= 0)
		r = store_workloads_retention(s->st, clock_wall_ms(), c->retention_workloads_days,
		                              RETENTION_BATCH);
	if (r < 0)
		log_warning("Retention failed: %s, ignoring", store_last_error());
}

/* The /metrics text for node_exporter, once the cycle's end and the next
 * cycle are published, so that the file says what /metrics says. */
void sched_write_textfile(const struct config *c, struct store *st)
{
	int r;

	if (!c->textfile_path[0])
		return;
	r = metrics_write_file(st, c->textfile_path);
	if (r < 0)
		log_warning("Failed to write the textfile \"%s\": %s, ignoring", c->textfile_path,
		            strerror(-r));
}

/* Regression detection over what the store holds (daemon/detection.h); each
 * new event goes to the journal with its kind's MESSAGE_ID. */
void sched_detect_regressions(struct sched *s, const struct config *c)
{
	struct detect_config dc;
	json_t *found = NULL, *ev;
	size_t i;
	int r;

	config_detect(c, &dc);
	r = detection_run(s->st, &dc, clock_wall_ms(), &found);
	if (r < 0)
		log_warning("Regression detection failed: %s, ignoring",
		            store_last_error()[0] ? store_last_error() : strerror(-r));
	json_array_foreach(found, i, ev) detection_log(ev);
	json_decref(found);
}

/* The end of a cycle in the journal: its priority by status (info, warning
 * when partial, error when failed) and CYCLE_ID=, CYCLE_STATUS= fields. */
static void log_cycle_end(int64_t cycle_id, enum cycle_status status)
{
	char id[40], st[48];
	const char *const fields[] = {id, st, NULL};

	snprintf(id, sizeof(id), "CYCLE_ID=%lld", (long long)cycle_id);
	snprintf(st, sizeof(st), "CYCLE_STATUS=%s", cycle_status_name(status));
	log_event(cycle_statuses[status].priority, SCHED_MESSAGE_ID_CYCLE, fields,
	          "Cycle %lld finished: %s", (long long)cycle_id, cycle_status_name(status));
}

/* Answers a waiting API caller. Called with the lock held. */
static void answer_locked(struct sched *s, uint64_t seq, int result, int64_t cycle_id)
{
	s->api_result = result;
	s->api_cycle_id = cycle_id;
	s->api_done_seq = seq;
	pthread_cond_broadcast(&s->answer);
}

/* One cycle; called and returns with the lock held. */
void sched_run_cycle(struct sched *s, const char *why)
{
	int api = !strcmp(why, "api");
	uint64_t seq = s->api_seq;
	enum cycle_status status = CYCLE_FAILED;
	unsigned long store_failures = health_store_failures();
	int64_t cycle_id = 0;
	struct config c;
	double waited = 0;
	int r, stored, interrupted;

	s->status.running = 1;
	s->due_why = NULL;
	s->api_pending = 0;
	config_copy(&c, &s->cfg);
	sched_promise(s, STEP_GRACE_S);
	pthread_mutex_unlock(&s->lock);
	sched_notify(s);
	sched_publish(s);

	if (!api)
		waited = load_guard(s, &c);
	sched_refresh_fingerprint(s, 1, &stored);
	r = s->stop_flag ? -ESHUTDOWN
	                 : store_cycle_begin(s->st, clock_wall_ms(), why, waited, &cycle_id);
	pthread_mutex_lock(&s->lock);
	if (api)
		answer_locked(s, seq, r, cycle_id);
	s->status.cycle_id = cycle_id;
	pthread_mutex_unlock(&s->lock);
	if (r == -ESHUTDOWN) {
		status = CYCLE_INTERRUPTED;
		goto done;
	}
	if (r < 0) {
		log_err("Failed to record a new cycle: %s", store_last_error());
		goto done;
	}
	log_info("Cycle %lld started (%s%s)", (long long)cycle_id, why,
	         waited >= 1 ? ", after waiting for a quiet host" : "");
	sched_notify(s);
	sched_publish(s);

	status = run_probes(s, &c, cycle_id);
	interrupted = status == CYCLE_INTERRUPTED;
	/* What ctxsw just proved reaches the host card and /api/v1/host now,
	 * not at the next fingerprint check. */
	sched_refresh_fingerprint(s, 0, &stored);
	if (!interrupted) {
		recommend(s, &c);
		sched_step(s);
		record_headroom(s);
		sched_step(s);
		sched_detect_regressions(s, &c);
	}
	sched_step(s);
	r = store_cycle_end(s->st, cycle_id, clock_wall_ms(), cycle_status_name(status));
	if (r < 0) {
		log_err("Failed to record the end of cycle %lld: %s", (long long)cycle_id,
		        store_last_error());
		status = CYCLE_FAILED;
	} else {
		health_store_cycle_ok(store_failures);
	}
	if (!interrupted) {
		sched_step(s);
		upkeep(s, &c, cycle_id, status != CYCLE_FAILED);
	}
	log_cycle_end(cycle_id, status);
done:
	pthread_mutex_lock(&s->lock);
	s->status.running = 0;
	s->status.probe[0] = '\0';
	s->status.last_cycle_ms = clock_wall_ms();
	s->status.last_status = status;
	s->status.cycles++;
	s->last_end = clock_mono_s();
	s->have_last_end = 1;
	if (!cycle_status_retried(status))
		s->status.retry = 0;
	else if (s->status.retry < UINT_MAX)
		s->status.retry++;
	sched_plan_next_locked(s, s->last_end, sched_retry_delay(s->status.retry, s->cfg.interval));
	if (s->status.retry && !s->stop)
		log_notice("Retrying the cycle in %.0f s (retry %u)", s->next_due - s->last_end,
		           s->status.retry);
	pthread_mutex_unlock(&s->lock);
	sched_publish(s);
	sched_write_textfile(&c, s->st);
	sched_notify(s);
	config_free(&c);
	pthread_mutex_lock(&s->lock);
}
