/*
 * store: the only module that touches SQLite. Opens and migrates the
 * database (sql/schema.sql and sql/NNN-*.sql, embedded), writes each probe
 * run in one transaction, and answers the reads that the API, /metrics and
 * the scheduler need. Every function returns 0 or -errno; a handle is
 * safe to use from several threads (calls are serialised per handle).
 *
 * Times are Unix milliseconds (int64_t). Metric names are "probe.scalar",
 * for example "ctxsw.ratio". Every failing call also leaves a one-line
 * message for a person in store_last_error().
 */
#ifndef TW_STORE_H
#define TW_STORE_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "failure.h"
#include "store_query.h"

struct store;

enum store_flags {
	STORE_READONLY = 1 << 0, /* no schema changes, no writes, no lock */
};

/* Opens (creating and migrating when writable) the database at `path`.
 * A writer holds an exclusive flock on "<path>.lock" (with its pid in it)
 * until store_close(). An existing file is checked (header, quick_check)
 * before anything is written to it; a refused file is left untouched.
 * Errors, with a message in err:
 *   -EBUSY    another threadwatchd holds the database;
 *   -ENOTSUP  the schema is newer than this build knows (user_version);
 *   -EBADMSG  the file is not a database or is damaged (never repaired);
 *   -errno    anything else. */
int store_open(const char *path, int flags, struct store **out, char *err, size_t errlen);
void store_close(struct store *st);

/* The message of the calling thread's last failed store call ("" if none);
 * valid until that thread's next store call. */
const char *store_last_error(void);

/* One probe run as the scheduler or the CLI saw it. */
struct store_run {
	const char *probe;
	int64_t cycle_id; /* 0 when not part of a cycle */
	int64_t started_ms;
	int64_t ended_ms;
	const char *status; /* "ok", "skipped", "error" */
	const char *reason; /* NULL for ok */
	/* for an error: what it was (NULL: an error of no known kind) */
	const struct failure *failure;
	int term_signal;   /* a crash's signal number, else 0 */
	const json_t *doc; /* the validated document, or NULL */
	const char *raw;   /* raw output when there is no valid document (may be NULL) */
	double loadavg1;   /* load average seen at start */
	double steal_pct;  /* CPU steal during the run, percent */
	double cpu_s;
	size_t raw_len; /* bytes of raw (it may hold NULs); 0: strlen(raw) */
};
/* Inserts the run, its scalar samples and its series points in one
 * transaction; on any failure nothing is stored. An error run keeps no
 * document: its raw output (or the document as text) is kept, truncated
 * to 64 KiB, and it gets no samples or points. -EINVAL names a bad field;
 * -ENOSPC when the disk is full. */
int store_run_insert(struct store *st, const struct store_run *run, int64_t *run_id);

/* Cycles group runs; trigger is "start", "interval", "retry", "fingerprint", "api". */
int store_cycle_begin(struct store *st, int64_t now_ms, const char *trigger, double waited_s,
                      int64_t *cycle_id);
int store_cycle_end(struct store *st, int64_t cycle_id, int64_t now_ms, const char *status);
/* Ends every cycle that has no status (its process died during it) as
 * interrupted at now_ms; *n (may be NULL) says how many. 0 or -errno. */
int store_cycles_interrupt(struct store *st, int64_t now_ms, int64_t *n);
/* The last finished cycle's end time; -ENOENT when there is none. */
int store_last_cycle(struct store *st, int64_t *ended_ms);

/* Records the fingerprint; a new row only when its identity changed.
 * *changed is set to 1 when a new row was written. */
int store_fingerprint_record(struct store *st, const json_t *fp, int64_t now_ms, int *changed);

int store_recommendation_insert(struct store *st, int64_t now_ms, const json_t *inputs,
                                const json_t *result, const int64_t *run_ids, size_t n_runs);
int store_headroom_record(struct store *st, int64_t now_ms, const json_t *headroom);

/* The latest ok document of each probe: {"ctxsw": doc, ...}, and their
 * run ids: {"ctxsw": 12, ...}. */
int store_latest_docs(struct store *st, json_t **docs, json_t **run_ids);

/* Each probe whose latest run is an error, as {"ctxsw": {"run_id",
 * "t_ms" (its start), "reason"}, ...}. */
int store_latest_failures(struct store *st, json_t **out);

/* Deletes raw documents and series points older than raw_days and samples
 * older than samples_days, `batch` rows per transaction. Runs older than
 * samples_days go with their samples; recommendations and headroom records
 * older than raw_days go too. The latest ok run of each probe and the
 * latest recommendation and headroom are always kept. days <= 0: keep
 * forever; batch <= 0: 1000. The ages count back from the older of now_ms
 * and the newest stored run. */
int store_retention(struct store *st, int64_t now_ms, int raw_days, int samples_days, int batch);
/* Deletes workload windows (and their rows) older than `days`, keeping the
 * latest window, then the workloads no window names any more; batch as
 * above. The age counts from now_ms. */
int store_workloads_retention(struct store *st, int64_t now_ms, int days, int batch);

/* The workloads' history (store_workloads.c). A window as
 * daemon/workload_keep.c keeps it: {"window_s", "seen" (workloads the
 * observer saw), "workloads": [{"key", "ref", "kind", "name", "figures":
 * {NAME: number | null} of lib/catalog_workloads.c, ...}] dearest first,
 * the last one "other" when any were left out, ...}, stored in one
 * transaction: a row per workload and the whole as the latest. -EINVAL
 * when a workload lacks one of those. */
int store_workloads_record(struct store *st, int64_t now_ms, const json_t *doc);
/* The latest window as stored, with "window_end_ms" (its end), "window_s" and
 * "seen" set from its row. -ENOENT when none is stored. */
int store_workloads_latest(struct store *st, json_t **out);
/* When the latest stored window ended (Unix ms), 0 when none is stored. */
int store_workloads_latest_ms(struct store *st, int64_t *ms);
/* One figure of one workload over a range, in buckets of step_ms counted
 * from since_ms (only buckets with a number): {"ref", "key", "kind",
 * "name", "metric", "unit", "since_ms", "until_ms", "step_ms", "points":
 * [{"t" (newest window in the bucket), "bucket_ms", "min", "avg", "max",
 * "n"}]}. -ENOENT for an unknown ref, -EINVAL for an unknown figure or a
 * bad range. */
struct store_workload_series {
	const char *ref, *metric;
	int64_t since_ms, until_ms, step_ms;
};
int store_workloads_series(struct store *st, const struct store_workload_series *q, json_t **out);
/* When the newest run started (Unix ms, 0 when none), leaving out the runs
 * of cycle except_cycle_id (0: none left out). */
int store_newest_run_ms(struct store *st, int64_t except_cycle_id, int64_t *ms);

/* Reads (each *out is a new reference): rows of columns, times as Unix ms
 * ("*_ms"). The API's formatter (daemon/api_format.h) makes the bodies of
 * the OpenAPI document of them. -ENOENT when there is nothing to return.
 *
 * host: {"current": {"id", "first_seen_ms", "last_seen_ms",
 *        "fingerprint": {...}},
 *        "history": [{"id", "first_seen_ms", "last_seen_ms",
 *        "diff": "kernel a → b" | null, "identity": {...}}]}
 *        (history newest first; diff is null on the first row) */
int store_read_host(struct store *st, json_t **out);
/* recommendation: the stored result ({verdict, confidence, sentence,
 * reasons, figures}) plus "id", "computed_ms", "inputs" and "run_ids":
 * [..]. */
int store_read_recommendation(struct store *st, json_t **out);
/* One page of a listing: its rows, whether more match beyond it, the id of
 * its last row (where the next page starts) and, where counted, how many
 * match in all (-1: not counted). */
struct store_page {
	json_t *rows;
	int more;
	int64_t last_id;
	int64_t total;
};
/* runs: rows newest first, each {"id", "probe", "status", "reason",
 * "cycle_id" (or null), "started_ms", "ended_ms", "failure", "signal"} and,
 * when its probe has a key figure recorded for the run, "key_metric",
 * "key_value" and "key_unit". since/until filter started_ms (both
 * inclusive). An empty page is not an error; -EINVAL for a limit outside
 * 1..500. */
int store_read_runs(struct store *st, const struct store_runs_query *q, struct store_page *page);
/* run: the fields above plus "params", "loadavg1", "steal_pct", "cpu_s"
 * (null when unknown), "pruned_ms" (when retention dropped the document
 * and points, or null), "samples": [{"metric", "value", "unit"}],
 * "series": {name: {"x_unit", "y_unit", "points": [[x, y], ...]}},
 * "doc": the document as parsed JSON | null, "raw": text | null. */
int store_read_run(struct store *st, int64_t id, json_t **out);
/* series: samples of `metric` with since_ms <= t < until_ms, in buckets of
 * step_ms counted from since_ms (only buckets holding samples):
 * {"metric", "unit", "since_ms", "until_ms", "step_ms",
 *  "points": [{"t" (bucket start, ms), "min", "avg", "max", "n"}],
 *  "markers": [{"t", "diff"}] (host fingerprint changes in the range)}.
 * -EINVAL for a bad range or step, -ENOENT for an unknown metric. */
int store_read_series(struct store *st, const char *metric, int64_t since_ms, int64_t until_ms,
                      int64_t step_ms, json_t **out);
int store_read_metric_names(struct store *st, json_t **out); /* [{name, unit}] */
/* headroom: {"computed_ms", "headroom": what was recorded}. */
int store_read_headroom(struct store *st, json_t **out);
/* Everything /metrics needs in one read (keys absent from the store are
 * null or empty, never missing):
 * {"probes": {probe: {"last_run_id", "last_run_ms", "last_status",
 *     "last_duration_s", "last_ok_run_id", "last_ok_ms",
 *     "scalars": {scalar: {"value", "unit"}} of the last ok run}},
 *  "runs_total": {probe: {status: count}} (counters: retention never
 *     lowers them),
 *  "recommendation": {"verdict", "confidence", "computed_ms", "figures"} | null,
 *  "headroom": {"computed_ms", "headroom"} | null,
 *  "last_cycle": {"id", "trigger", "status", "started_ms", "ended_ms",
 *     "duration_s", "waited_s"} | null (the last finished cycle),
 *  "fingerprint": {"id", "first_seen_ms", "last_seen_ms"} | null,
 *  "events": {"total": {metric: count} (a counter: events are never
 *     deleted), "last_detected_ms": ms | null}} */
int store_read_snapshot(struct store *st, json_t **out);

/* Small key/value state the scheduler publishes for the API, such as
 * "next_cycle_ms", "cycle_running" and "trigger_enabled". Values are text. */
int store_state_set(struct store *st, const char *key, const char *value);
int store_state_get(struct store *st, const char *key, char **value); /* -ENOENT */

/* A number that changes whenever committed data that this handle can read
 * changed, whichever connection wrote it: the key of the HTTP response
 * cache. */
int store_data_version(struct store *st, int64_t *version);

/* Runs PRAGMA integrity_check; 0 when "ok", -EBADMSG otherwise. */
int store_check(struct store *st, char *err, size_t errlen);

/* ---- regression events (lib/detect.h, doc/regression.md) ----------- */

/* Records one event, an object as detect_event_json() builds it ("kind",
 * "metric", "t_ms", "detected_ms" and "run_id" or "recommendation_id" are
 * required; the whole object is kept) and sets *event_id (may be NULL) to
 * its id. An event already recorded (the same metric and first run or
 * recommendation) is left as it was and *event_id is 0. -EINVAL names a
 * bad field. */
int store_event_insert(struct store *st, int64_t now_ms, const json_t *event, int64_t *event_id);

/* Where detection of a metric resumes: the first run (or recommendation)
 * of its last event, or 0 when it has none. */
int store_event_last_ref(struct store *st, const char *metric, int64_t *ref_id);

/* events: rows, each an event plus "id" and "recorded_ms", newest change
 * first; more (the limit cut the list) and total (the events that match
 * without the limit) of the page. An empty list is not an error; -EINVAL
 * for a limit outside 1..1000. */
int store_read_events(struct store *st, const struct store_events_query *q,
                      struct store_page *page);

/* One run's value of a key figure and the fingerprint row it ran on (0:
 * unknown). */
struct store_point {
	int64_t run_id, t_ms, fp_id;
	double value;
	double steal_pct, loadavg1; /* the run's readings (NAN: none recorded) */
};
/* The values of a probe's scalar (series NULL) with their runs' contention
 * readings, or of the points of its
 * series whose x lies within x_tol * x of x (one entry per point, so a run
 * may come several times, its points in order), in the ok runs with id >=
 * from_run_id, in run id order; runs without a value are left out. *pts is
 * malloc'd (NULL when *n is 0). */
int store_metric_history(struct store *st, const char *probe, const char *scalar,
                         const char *series, double x, double x_tol, int64_t from_run_id,
                         struct store_point **pts, size_t *n);

/* The id of the ok run of probe that lies `back` ok runs before before_id
 * (0: before_id itself, when it is one), or 0 when there are not that many. */
int store_run_back(struct store *st, const char *probe, int64_t before_id, size_t back,
                   int64_t *run_id);

/* The recommendations with id >= from_id, oldest first: [{"id",
 * "computed_ms", "verdict", "confidence", "fingerprint_id"}]. */
int store_verdict_history(struct store *st, int64_t from_id, json_t **out);

#endif
