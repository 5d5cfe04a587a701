/*
 * store_retention: deletes what is older than the configured ages, in
 * batches of short transactions, keeping the latest of everything
 * (daemon/store.h, store_retention()). The cut is measured from the older
 * of now and the newest stored run, so that a clock set ahead cannot make
 * the whole history look old.
 */
#include "storep.h"

#define STORE_BATCH 1000
#define MS_PER_DAY INT64_C(86400000)

/* ---- retention ---------------------------------------------------------------- */

/* Each step repeats its statements, one batch per transaction, until a
 * batch comes back short. The last statement's count decides. */
static const struct retention_step {
	enum query q[3];
	size_t n;
	int raw; /* uses the raw_days cut, else the samples_days one */
	const char *what;
} retention_steps[] = {
    {{Q_RET_RUNS}, 1, 0, "deleting old runs and their samples"},
    {{Q_RET_DOCS, Q_RET_SERIES, Q_RET_PRUNE}, 3, 1, "dropping old documents and points"},
    {{Q_RET_RECS}, 1, 1, "deleting old recommendations"},
    {{Q_RET_HEADROOM}, 1, 1, "deleting old headroom records"},
    {{Q_RET_CYCLES}, 1, 0, "deleting old cycles"},
};

struct retention_args {
	const struct retention_step *step;
	int64_t cut, now, batch, changed;
};

static int retention_tx(struct store *st, void *ctx)
{
	struct retention_args *c = ctx;
	int r = 0;

	for (size_t i = 0; r >= 0 && i < c->step->n; i++) {
		const struct bind b[] = {
		    /* optional: the workloads' orphans go whatever their age */
		    {.name = ":cut", .type = BT_INT, .i = c->cut, .optional = 1},
		    B_INT(":batch", c->batch),
		    {.name = ":now", .type = BT_INT, .i = c->now, .optional = 1},
		};
		r = sq_exec(st, c->step->q[i], b, SQ_LEN(b), c->step->what, &c->changed);
	}
	return r;
}

/* One step, a batch per transaction until a batch comes back short:
 * separate transactions let the scheduler and readers in between. */
static int step_run(struct store *st, struct retention_args *c)
{
	int r;

	do {
		r = store_call(st, 1, retention_tx, c);
		if (r < 0)
			return r;
	} while (c->changed >= c->batch);
	return 0;
}

static int newest_tx(struct store *st, void *ctx)
{
	int64_t *v = ctx;
	const struct bind b[] = {B_INT(":cycle_id", v[1])};
	int r = v[1] ? sq_int(st, Q_RET_NEWEST_BEFORE, b, 1, "reading the newest run", v)
	             : sq_int(st, Q_RET_NEWEST, NULL, 0, "reading the newest run", v);

	return r < 0 ? r : 0;
}

int store_newest_run_ms(struct store *st, int64_t except_cycle_id, int64_t *ms)
{
	int64_t v[2] = {0, except_cycle_id};
	int r = store_call(st, 0, newest_tx, v);

	*ms = r < 0 ? 0 : v[0];
	return r;
}

int store_retention(struct store *st, int64_t now_ms, int raw_days, int samples_days, int batch)
{
	struct retention_args c = {.now = now_ms, .batch = batch > 0 ? batch : STORE_BATCH};
	int64_t newest = 0;
	int r;

	r = store_newest_run_ms(st, 0, &newest);
	if (r < 0)
		return r;
	if (newest > 0 && newest < now_ms)
		now_ms = newest;

	for (size_t i = 0; i < SQ_LEN(retention_steps); i++) {
		int days = retention_steps[i].raw ? raw_days : samples_days;

		if (days <= 0)
			continue;
		c.step = &retention_steps[i];
		c.cut = now_ms - days * MS_PER_DAY;
		r = step_run(st, &c);
		if (r < 0)
			return r;
	}
	return 0;
}

/* Windows first (their rows go with them), then the workloads left with
 * no row. */
static const struct retention_step workload_steps[] = {
    {{Q_RET_WL_WINDOWS}, 1, 0, "deleting old workload windows"},
    {{Q_RET_WL_ORPHANS}, 1, 0, "deleting workloads no window names"},
};

int store_workloads_retention(struct store *st, int64_t now_ms, int days, int batch)
{
	struct retention_args c = {.now = now_ms, .batch = batch > 0 ? batch : STORE_BATCH};
	int r;

	if (days <= 0)
		return 0;
	c.cut = now_ms - days * MS_PER_DAY;
	for (size_t i = 0; i < SQ_LEN(workload_steps); i++) {
		c.step = &workload_steps[i];
		r = step_run(st, &c);
		if (r < 0)
			return r;
	}
	return 0;
}
