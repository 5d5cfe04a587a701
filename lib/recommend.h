/*
 * recommend: should this host use low (MAP_32BIT) thread stacks? A pure
 * function from the recommendation inputs (documented in
 * doc/recommendation.md) to a verdict with its reasons and the arithmetic
 * behind them. Shared by the CLI and the daemon.
 */
#ifndef TW_RECOMMEND_H
#define TW_RECOMMEND_H

#include <stddef.h>

#include <jansson.h>

#include "failure.h"

/* The model's constants (doc/recommendation.md). */
#define REC_GUARD_BYTES 4096.0          /* guard page under every stack */
#define REC_VMAS_PER_THREAD 2.0         /* a stack and its guard */
#define REC_STRONG_RATIO 0.95           /* a benefit of at least 5% */
#define REC_DEFAULT_MARGIN 0.02         /* equivalence margin of the switch ratio */
#define REC_DEFAULT_WINDOW 1073741824.0 /* x86-64 MAP_32BIT: 0x40000000-0x80000000 */
#define REC_MAX_WINDOW 4294967296.0     /* MAP_32BIT addresses lie below 4 GiB */
#define REC_MAX_THREADS 4194304.0       /* the kernel's PID_MAX_LIMIT */
#define REC_MAX_POINTS 100000           /* points per curve */

/* What the operator expects; switches_per_thread < 0 means unknown. */
struct rec_workload {
	double threads;             /* default 10000 */
	double stack_bytes;         /* default 8388608 */
	double switches_per_thread; /* default unknown (-1) */
	/* thread churn: creates per second (<= 0: none, the default) and the
	 * workload's context switches per second (< 0: unknown) */
	double creates_per_second, switches_per_second;
};
void rec_workload_default(struct rec_workload *w);

/* Builds the inputs object from the latest probe documents (any may be
 * NULL) and the host fingerprint (may be NULL). New reference. */
json_t *rec_inputs_build(const json_t *fingerprint, const json_t *ctxsw_doc,
                         const json_t *map32_doc, const json_t *threads_doc,
                         const struct rec_workload *w);

/* Adds what result.costs reads to the inputs: inputs.createscale,
 * inputs.handoff and inputs.stackmem from those probes' latest documents
 * (any may be NULL: no section), or {"unmeasured": "STATUS: REASON"}
 * for a document that is not ok. */
void rec_inputs_costs(json_t *inputs, const json_t *createscale, const json_t *handoff,
                      const json_t *stackmem);

/* 1 when the recommendation reads this probe's figures (ctxsw, map32,
 * threads). */
int rec_inputs_needed(const char *probe);

/* Notes in the inputs that a probe the recommendation needs (ctxsw, map32,
 * threads) failed in its latest run (run_id, t_ms: < 0 unknown), or that
 * the configuration disabled it. 0, or -ENOENT for a probe it does not
 * need (nothing is noted). */
int rec_inputs_note_failed(json_t *inputs, const char *probe, const struct failure *f,
                           const char *reason, long long run_id, long long t_ms);
int rec_inputs_note_disabled(json_t *inputs, const char *probe);

/* Validates the inputs and computes the result object:
 *   {verdict, confidence, sentence, reasons: [..], figures: {..},
 *    failed_probes: [..], disabled_probes: [..]}.
 * Returns NULL with a message naming the field in err (-EINVAL semantics)
 * when the inputs are malformed. */
json_t *rec_compute(const json_t *inputs, char *err, size_t errlen);

/* The result as readable text (malloc'd). */
char *rec_text(const json_t *result);

#endif
