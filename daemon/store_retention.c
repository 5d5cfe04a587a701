/*
 * store_retention: deletes what is older than the configured ages, in
 * batches of short transactions, keeping the latest of everything
 * (daemon/store.h, store_retention()).
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
		    B_INT(":cut", c->cut),
		    B_INT(":batch", c->batch),
		    {.name = ":now", .type = BT_INT, .i = c->now, .optional = 1},
		};
		r = stmt_exec(st, c->step->q[i], b, ARRAY_SIZE(b), c->step->what, &c->changed);
	}
	return r;
}

int store_retention(struct store *st, int64_t now_ms, int raw_days, int samples_days, int batch)
{
	struct retention_args c = {.now = now_ms, .batch = batch > 0 ? batch : STORE_BATCH};
	int r;

	for (size_t i = 0; i < ARRAY_SIZE(retention_steps); i++) {
		int days = retention_steps[i].raw ? raw_days : samples_days;

		if (days <= 0)
			continue;
		c.step = &retention_steps[i];
		c.cut = now_ms - days * MS_PER_DAY;
		/* Separate transactions let the scheduler and readers in between. */
		do {
			r = store_call(st, 1, retention_tx, &c);
			if (r < 0)
				return r;
		} while (c.changed >= c.batch);
	}
	return 0;
}
