/*
 * scheduler: the scheduler thread of threadwatchd, its plan (monotonic
 * deadlines for the next cycle and the next fingerprint check), the API
 * trigger handshake, and one probe cycle from the quiet-host guard to the
 * published state.
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
#include "events.h"
#include "fingerprint.h"
#include "guard.h"
#include "headroom.h"
#include "health.h"
#include "log.h"
#include "metrics.h"
#include "protocol.h"
#include "recommend.h"
#include "retention_guard.h"
#include "runner.h"
#include "scheduler.h"
#include "store.h"
#include "xmalloc.h"

#define FP_CHECK_S 60.0     /* fingerprint re-check period */
#define GUARD_POLL_S 5.0    /* quiet-host guard: how often the host is looked at */
#define GUARD_SAMPLE_S 3.0  /* ... and the first busy-time sample */
#define TRIGGER_WAIT_S 10.0 /* how long the API waits for the scheduler */
#define STEP_GRACE_S 120.0  /* bound of a step without its own (store, fingerprint) */
#define PROBE_GRACE_S 30.0  /* beyond a probe's own time limit */
#define RETENTION_BATCH 1000
#define MAX_OUTPUT ((size_t)4 << 20)

/* Backoff of the retries of a failed or interrupted cycle, in seconds: the
 * first retry comes a minute after it, the second five, every later one
 * half an hour (each capped at the interval). Soon enough that a host
 * rebooted during its first cycle has data within minutes, slow enough
 * that a cycle failing for good does not keep the host busy. */
static const double retry_delays[] = {60, 300, 1800};
/* The cycle statuses that are retried (others wait for the interval). */
static const char *const retried_statuses[] = {"failed", "interrupted"};

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

/* --- small readers ------------------------------------------------------- */

static double mono_s(void)
{
	return (double)clock_ns() / 1e9;
}

static int64_t wall_ms(void)
{
	return clock_wall_ns() / 1000000;
}

static double rand01(void)
{
	uint64_t x;

	if (getrandom(&x, sizeof(x), GRND_NONBLOCK) != (ssize_t)sizeof(x))
		x = clock_ns() * 0x9E3779B97F4A7C15ULL;
	return (double)(x >> 11) * 0x1.0p-53;
}

static struct timespec mono_ts(double t)
{
	struct timespec ts;

	if (t > 1e15)
		t = 1e15;
	ts.tv_sec = (time_t)t;
	ts.tv_nsec = (long)((t - (double)ts.tv_sec) * 1e9);
	return ts;
}

int sched_read_loadavg(const char *path, double *load1)
{
	return guard_read_loadavg(path, load1);
}

int sched_read_cpu(const char *path, struct sched_cpu *c)
{
	struct guard_cpu g;
	int r = guard_read_cpu(path, &g);

	if (r == 0)
		*c = (struct sched_cpu){g.total, g.steal};
	return r;
}

double sched_steal_pct(const struct sched_cpu *before, const struct sched_cpu *after)
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

int sched_status_retried(const char *status)
{
	for (size_t i = 0; i < sizeof(retried_statuses) / sizeof(retried_statuses[0]); i++)
		if (!strcmp(status, retried_statuses[i]))
			return 1;
	return 0;
}

int sched_probe_name_ok(const char *name)
{
	size_t n = strlen(name);

	if (n < 1 || n > 64)
		return 0;
	return strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789_-") == n;
}

/* --- discovery ------------------------------------------------------------ */

static void add_probe(struct sched_probe **list, size_t *n, const char *name, char *path,
                      const char *skip)
{
	*list = xreallocarray(*list, *n + 1, sizeof(**list));
	(*list)[*n] = (struct sched_probe){xstrdup(name), path, skip};
	(*n)++;
}

static int is_builtin(const char *name)
{
	return catalog_probe_find(name) != NULL;
}

int sched_discover(const char *probe_dir, const char *probes_d, struct sched_probe **list,
                   size_t *n)
{
	struct dirent **ents = NULL;
	int count, r = 0;

	*list = NULL;
	*n = 0;
	for (size_t i = 0; i < catalog_n_probes; i++) {
		const char *name = catalog_probes[i].name;
		char *path = runner_find_probe(probe_dir, name);

		/* a missing built-in still runs, so that its error is recorded */
		if (!path)
			xasprintf(&path, "%.*s/%s", (int)strcspn(probe_dir, ":"), probe_dir, name);
		add_probe(list, n, name, path, NULL);
	}
	if (!probes_d || !*probes_d)
		return 0;
	count = scandir(probes_d, &ents, NULL, alphasort);
	if (count < 0)
		return errno == ENOENT ? 0 : -errno;
	for (int i = 0; i < count; i++) {
		const char *name = ents[i]->d_name, *skip = NULL;
		struct stat sb;
		char *path;

		if (name[0] == '.' || name[strlen(name) - 1] == '~')
			continue; /* hidden and backup files are not probes */
		xasprintf(&path, "%s/%s", probes_d, name);
		if (stat(path, &sb) < 0 || !S_ISREG(sb.st_mode))
			skip = "not a regular file";
		else if (!sched_probe_name_ok(name))
			skip = "not a probe name ([a-z0-9_-], 1 to 64 characters)";
		else if (is_builtin(name))
			skip = "the name of a built-in probe";
		add_probe(list, n, name, path, skip);
	}
	for (int i = 0; i < count; i++)
		free(ents[i]);
	free(ents);
	return r;
}

void sched_probes_free(struct sched_probe *list, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(list[i].name);
		free(list[i].path);
	}
	free(list);
}

/* --- state shared with the main loop and the API ---------------------------- */

static void changed(struct sched *s)
{
	if (s->changed)
		s->changed(s->ctx);
}

/* Called with the lock held: the deadline by which the thread promises to
 * come back. */
static void promise(struct sched *s, double seconds)
{
	s->alive_until = mono_s() + seconds;
}

/* Marks the start of a step without a bound of its own. */
static void step(struct sched *s)
{
	pthread_mutex_lock(&s->lock);
	promise(s, STEP_GRACE_S);
	pthread_mutex_unlock(&s->lock);
}

static void publish(struct sched *s);

/* The probe running now, in the status and (when it changed) for the API. */
static void set_probe(struct sched *s, const char *name, double bound_s)
{
	int differs;

	pthread_mutex_lock(&s->lock);
	differs = strcmp(s->status.probe, name ? name : "") != 0;
	snprintf(s->status.probe, sizeof(s->status.probe), "%s", name ? name : "");
	promise(s, bound_s);
	pthread_mutex_unlock(&s->lock);
	changed(s);
	if (differs)
		publish(s);
}

static int64_t next_cycle_ms_locked(const struct sched *s)
{
	return wall_ms() + (int64_t)llround((s->next_due - mono_s()) * 1000.0);
}

/* Plans the next cycle delay seconds after from, plus a random splay: the
 * configured one for a regular cycle, for the first one after start and
 * for one after a host change (a fleet upgraded or rebooted at once does
 * not probe in step), the same share of its delay for a retry (a retry due
 * in a minute stays near a minute). */
static void plan_next_locked(struct sched *s, double from, double delay)
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

	plan_next_locked(s, mono_s(), 0);
	if (due < s->next_due) {
		s->next_due = due;
		s->status.next_cycle_ms = next_cycle_ms_locked(s);
	}
	s->due_why = why;
	s->replanned = 1;
	log_notice("The host changed; a cycle is due in %.0f s, within the splay",
	           fmax(0, s->next_due - mono_s()));
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
	snprintf(h.last_status, sizeof(h.last_status), "%s", st->last_status);
	snprintf(h.probe, sizeof(h.probe), "%s", st->probe);
	health_set_cycle(&h);
}

/* Publishes the scheduler's state for the API (GET /api/v1/status). */
static void publish(struct sched *s)
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
	snprintf(v[3], sizeof(v[3]), "%s", st.last_status);
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
static int refresh_fingerprint(struct sched *s, int record, int *stored)
{
	json_t *fp = read_fingerprint(s), *id = fingerprint_identity(fp);
	char *d = s->identity ? fingerprint_diff(s->identity, id) : NULL;
	int differs = d != NULL, r;

	*stored = 0;
	if (differs)
		log_notice("The host changed: %s", d);
	free(d);
	if (record || differs || (s->identity && !json_equal(id, s->identity))) {
		r = store_fingerprint_record(s->st, fp, wall_ms(), stored);
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

/* --- one cycle ------------------------------------------------------------------ */

/* Waits while the host is busy (daemon/guard.h); returns the seconds
 * waited. Called without the lock. */
static double load_guard(struct sched *s, const struct config *c)
{
	const struct guard_limits lim = {c->guard_cpu_pressure_max, c->guard_cpu_busy_max,
	                                 c->guard_loadavg_per_cpu_max};
	double start = mono_s(), waited = 0;
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
		waited = mono_s() - start;
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
		if (look.known && !s->status.waiting_for_load) {
			s->status.waiting_for_load = 1;
			changed(s);
		}
		{
			double until = mono_s() + fmin(pause, fmax(0, c->guard_wait_max - waited));
			struct timespec ts = mono_ts(until);

			promise(s, until - mono_s() + STEP_GRACE_S);
			pthread_cond_timedwait(&s->wake, &s->lock, &ts);
		}
	}
	s->status.waiting_for_load = 0;
	pthread_mutex_unlock(&s->lock);
	return mono_s() - start;
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
	struct runner_opts o = {.timeout_s = c->probe_timeout,
	                        .max_output = MAX_OUTPUT,
	                        .nice = c->nice,
	                        .idle_io = 1,
	                        .sched = (enum runner_sched)c->probe_sched,
	                        .cpus = c->probe_cpu,
	                        .stop = &s->stop_flag};
	struct sched_cpu before = {0, 0}, after = {0, 0};
	struct runner_result res;
	char on[32];
	struct store_run run;
	char *refused = NULL;
	double load = 0;
	int r;

	snprintf(name, sizeof(name), "%s", p->name);
	probe_argv(c, name, argv);
	if (sched_read_loadavg("/proc/loadavg", &load) < 0)
		load = 0;
	sched_read_cpu("/proc/stat", &before);
	set_probe(s, p->name, c->probe_timeout + PROBE_GRACE_S);
	r = runner_run(p->path, argv, &o, &res);
	if (r < 0)
		log_run(LOG_ERR, p->name, 0, "Failed to start the probe: %s", strerror(-r));
	sched_read_cpu("/proc/stat", &after);
	set_probe(s, p->name, STEP_GRACE_S);

	run = (struct store_run){
	    .probe = p->name,
	    .cycle_id = cycle_id,
	    .started_ms = res.started_unix_ms,
	    .ended_ms = res.started_unix_ms + (int64_t)llround(res.wall_s * 1000.0),
	    .status = store_status[res.status],
	    .reason = res.reason,
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

/* The cycle's status from its probes: ok when every probe gave its answer,
 * failed when none did, partial in between. */
const char *sched_cycle_status(unsigned ran, unsigned good, int interrupted)
{
	if (interrupted)
		return "interrupted";
	if (!ran || !good)
		return "failed";
	return good < ran ? "partial" : "ok";
}

/* Runs every probe; returns the cycle's status. */
static const char *run_probes(struct sched *s, const struct config *c, int64_t cycle_id)
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
		if (is_builtin(list[i].name) && config_disabled(c, list[i].name, NULL)) {
			log_debug("Probe %s is disabled (probes_disabled), not running it",
			          list[i].name);
			continue;
		}
		run_one(s, c, cycle_id, &list[i], &run_id, &ok);
		ran++;
		good += ok != 0;
	}
	sched_probes_free(list, n);
	set_probe(s, NULL, STEP_GRACE_S);
	if (!s->stop_flag && good < ran)
		log_warning("%u of %u probes failed this cycle", ran - good, ran);
	return sched_cycle_status(ran, good, s->stop_flag != 0);
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

		if (config_disabled(c, key, NULL) ||
		    rec_inputs_note_failed(
		        inputs, key, json_string_value(json_object_get(f, "reason")),
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
	note_unavailable(c, failed, inputs, ids);
	result = rec_compute(inputs, err, sizeof(err));
	if (!result) {
		log_warning("Cannot compute a recommendation: %s, ignoring", err);
		goto out;
	}
	run_ids = xcalloc(json_object_size(ids) + 1, sizeof(*run_ids));
	json_object_foreach(ids, key, v) run_ids[n++] = json_integer_value(v);
	r = store_recommendation_insert(s->st, wall_ms(), inputs, result, run_ids, n);
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
	json_t *h, *w;
	size_t i;
	int r;

	r = headroom_read(&hs);
	if (r < 0)
		log_warning("Failed to scan /proc for VMA counts: %s, ignoring", strerror(-r));
	h = headroom_json(&hs);
	json_array_foreach(json_object_get(h, "warnings"), i, w)
	    log_warning("Headroom: %s", json_string_value(w));
	r = store_headroom_record(s->st, wall_ms(), h);
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

/* Whether the wall clock lets retention run (daemon/retention_guard.h);
 * a hold is logged once, when it begins, and counted for /metrics. */
static int retention_allowed(struct sched *s, const struct config *c, int64_t cycle_id)
{
	struct retention_clock rc = {
	    .now_ms = wall_ms(),
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
	r = store_retention(s->st, wall_ms(), c->retention_raw_days, c->retention_samples_days,
	                    RETENTION_BATCH);
	if (r < 0)
		log_warning("Retention failed: %s, ignoring", store_last_error());
}

/* The /metrics text for node_exporter, once the cycle's end and the next
 * cycle are published, so that the file says what /metrics says. */
static void write_textfile(const struct config *c, struct store *st)
{
	int r;

	if (!c->textfile_path[0])
		return;
	r = metrics_write_file(st, c->textfile_path);
	if (r < 0)
		log_warning("Failed to write the textfile \"%s\": %s, ignoring", c->textfile_path,
		            strerror(-r));
}

/* Regression detection over what the store holds (daemon/events.h); each
 * new event goes to the journal with its kind's MESSAGE_ID. */
static void detect_regressions(struct sched *s, const struct config *c)
{
	struct detect_config dc;
	json_t *found = NULL, *ev;
	size_t i;
	int r;

	config_detect(c, &dc);
	r = events_detect(s->st, &dc, wall_ms(), &found);
	if (r < 0)
		log_warning("Regression detection failed: %s, ignoring",
		            store_last_error()[0] ? store_last_error() : strerror(-r));
	json_array_foreach(found, i, ev) events_log(ev);
	json_decref(found);
}

/* The end of a cycle in the journal: its priority by status (info, warning
 * when partial, error when failed) and CYCLE_ID=, CYCLE_STATUS= fields. */
static void log_cycle_end(int64_t cycle_id, const char *status)
{
	char id[40], st[48];
	const char *const fields[] = {id, st, NULL};

	snprintf(id, sizeof(id), "CYCLE_ID=%lld", (long long)cycle_id);
	snprintf(st, sizeof(st), "CYCLE_STATUS=%s", status);
	log_event(!strcmp(status, "ok")       ? LOG_INFO
	          : !strcmp(status, "failed") ? LOG_ERR
	                                      : LOG_WARNING,
	          SCHED_MESSAGE_ID_CYCLE, fields, "Cycle %lld finished: %s", (long long)cycle_id,
	          status);
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
static void run_cycle(struct sched *s, const char *why)
{
	int api = !strcmp(why, "api");
	uint64_t seq = s->api_seq;
	const char *status = "failed";
	unsigned long store_failures = health_store_failures();
	int64_t cycle_id = 0;
	struct config c;
	double waited = 0;
	int r, stored, interrupted;

	s->status.running = 1;
	s->due_why = NULL;
	s->api_pending = 0;
	config_copy(&c, &s->cfg);
	promise(s, STEP_GRACE_S);
	pthread_mutex_unlock(&s->lock);
	changed(s);
	publish(s);

	if (!api)
		waited = load_guard(s, &c);
	refresh_fingerprint(s, 1, &stored);
	r = s->stop_flag ? -ESHUTDOWN : store_cycle_begin(s->st, wall_ms(), why, waited, &cycle_id);
	pthread_mutex_lock(&s->lock);
	if (api)
		answer_locked(s, seq, r, cycle_id);
	s->status.cycle_id = cycle_id;
	pthread_mutex_unlock(&s->lock);
	if (r == -ESHUTDOWN) {
		status = "interrupted";
		goto done;
	}
	if (r < 0) {
		log_err("Failed to record a new cycle: %s", store_last_error());
		goto done;
	}
	log_info("Cycle %lld started (%s%s)", (long long)cycle_id, why,
	         waited >= 1 ? ", after waiting for a quiet host" : "");
	changed(s);
	publish(s);

	status = run_probes(s, &c, cycle_id);
	interrupted = !strcmp(status, "interrupted");
	/* What ctxsw just proved reaches the host card and /api/v1/host now,
	 * not at the next fingerprint check (issue 36). */
	refresh_fingerprint(s, 0, &stored);
	if (!interrupted) {
		recommend(s, &c);
		step(s);
		record_headroom(s);
		step(s);
		detect_regressions(s, &c);
	}
	step(s);
	r = store_cycle_end(s->st, cycle_id, wall_ms(), status);
	if (r < 0) {
		log_err("Failed to record the end of cycle %lld: %s", (long long)cycle_id,
		        store_last_error());
		status = "failed";
	} else {
		health_store_cycle_ok(store_failures);
	}
	if (!interrupted) {
		step(s);
		upkeep(s, &c, cycle_id, strcmp(status, "failed") != 0);
	}
	log_cycle_end(cycle_id, status);
done:
	pthread_mutex_lock(&s->lock);
	s->status.running = 0;
	s->status.probe[0] = '\0';
	s->status.last_cycle_ms = wall_ms();
	snprintf(s->status.last_status, sizeof(s->status.last_status), "%s", status);
	s->status.cycles++;
	s->last_end = mono_s();
	s->have_last_end = 1;
	if (!sched_status_retried(status))
		s->status.retry = 0;
	else if (s->status.retry < UINT_MAX)
		s->status.retry++;
	plan_next_locked(s, s->last_end, sched_retry_delay(s->status.retry, s->cfg.interval));
	if (s->status.retry && !s->stop)
		log_notice("Retrying the cycle in %.0f s (retry %u)", s->next_due - s->last_end,
		           s->status.retry);
	pthread_mutex_unlock(&s->lock);
	publish(s);
	write_textfile(&c, s->st);
	changed(s);
	config_free(&c);
	pthread_mutex_lock(&s->lock);
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
	promise(s, STEP_GRACE_S);
	pthread_mutex_unlock(&s->lock);
	detect_regressions(s, &c);
	/* node_exporter gets the stored figures from the start, not only
	 * after the next cycle (which may be a whole interval away). */
	write_textfile(&c, s->st);
	config_free(&c);

	pthread_mutex_lock(&s->lock);
	while (!s->stop) {
		double now = mono_s(), until;
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
			publish(s);
			pthread_mutex_lock(&s->lock);
			continue;
		}
		if (why) {
			run_cycle(s, why);
			continue;
		}
		if (now >= s->next_fp_check) {
			promise(s, STEP_GRACE_S);
			pthread_mutex_unlock(&s->lock);
			changed_host = refresh_fingerprint(s, 0, &stored);
			pthread_mutex_lock(&s->lock);
			if (changed_host && !s->due_why)
				plan_soon_locked(s, "fingerprint");
			s->next_fp_check = mono_s() + FP_CHECK_S;
			continue;
		}
		until = fmin(s->next_due, s->next_fp_check);
		promise(s, until - now + STEP_GRACE_S);
		ts = mono_ts(until);
		pthread_cond_timedwait(&s->wake, &s->lock, &ts);
	}
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

/* How the previous process left the cycles, from the state it published:
 * the last status, and the number of the retry due next (0: none). A
 * cycle still marked running died with its process (a crash, a kill, a
 * power cut): the next one retries it, *died is set. */
static unsigned restore_retry(struct store *st, char *last_status, size_t size, int *died)
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
	snprintf(last_status, size, "%s", status ? status : "");
	if (*died)
		n++;
	else if (status && sched_status_retried(status))
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
	snprintf(s->status.last_status, sizeof(s->status.last_status), "interrupted");
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
	now_ms = wall_ms();
	s->status.retry =
	    restore_retry(st, s->status.last_status, sizeof(s->status.last_status), &died);
	/* A retry counts from the end of the cycle it retries; one that died
	 * has no end: from now. */
	delay = sched_start_delay(now_ms, died ? now_ms : last_ms, have_last || died,
	                          sched_retry_delay(s->status.retry, cfg->interval));
	s->status.last_cycle_ms = have_last ? last_ms : 0;
	if (have_last) {
		char *prev = NULL;

		/* keep the last cycle's status across a restart (/healthz, STATUS=) */
		if (store_state_get(st, "last_cycle_status", &prev) == 0 && prev)
			snprintf(s->status.last_status, sizeof(s->status.last_status), "%s", prev);
		free(prev);
		s->last_end = mono_s() - (double)(now_ms - last_ms) / 1000.0;
		s->have_last_end = 1;
	}
	close_dead_cycles(s, now_ms, died);
	refresh_fingerprint(s, 1, &stored);
	if (s->status.retry)
		log_notice("The last cycle %s; retry %u in %.0f s",
		           died ? "did not finish (the daemon stopped during it)"
		           : !strcmp(s->status.last_status, "failed") ? "failed"
		                                                      : "was interrupted",
		           s->status.retry, delay);
	if (delay == 0)
		s->due_why = s->status.retry ? "retry" : "start";
	else if (stored)
		s->due_why = "fingerprint";
	plan_next_locked(s, mono_s(), s->due_why ? 0 : delay);
	if (s->due_why)
		log_notice("A cycle (%s%s) is due in %.0f s%s", s->due_why,
		           !strcmp(s->due_why, "fingerprint")
		               ? ": the host changed since the last cycle"
		               : "",
		           fmax(0, s->next_due - mono_s()), /* not "-0 s" with no splay */
		           config_splay_seconds(cfg) > 0 ? ", within the splay" : "");
	else
		/* After a restart with history: when the next regular one is. */
		log_notice("The next cycle is due in %.0f s (the interval after the last one)",
		           fmax(0, s->next_due - mono_s()));
	s->next_fp_check = mono_s() + FP_CHECK_S;
	s->alive_until = mono_s() + STEP_GRACE_S;
	*out = s;
	publish(s);
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
		plan_next_locked(s, s->have_last_end ? s->last_end : mono_s(),
		                 sched_retry_delay(s->status.retry, cfg->interval));
		s->replanned = 1; /* the thread publishes it (the API reads the store) */
	}
	pthread_cond_broadcast(&s->wake);
	pthread_mutex_unlock(&s->lock);
	changed(s);
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
	struct timespec ts = mono_ts(mono_s() + TRIGGER_WAIT_S);
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
	r = !s->started || mono_s() <= s->alive_until;
	pthread_mutex_unlock(&s->lock);
	return r;
}
