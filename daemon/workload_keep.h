/*
 * workload_keep: what threadwatchd keeps of each observer window. The
 * window is priced at the costs of the latest recommendation's inputs (the
 * probes' figures when it was computed), cut to `top` workloads plus one
 * row, "other", that sums the rest, so that the store
 * and /metrics grow with `top`, not with the host's processes; each kept
 * workload gets its ref, name and figures (lib/catalog_workloads.c).
 */
#ifndef TW_WORKLOAD_KEEP_H
#define TW_WORKLOAD_KEEP_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "store.h"

/* The kept form of a priced window (workloads dearest first), a new
 * reference: its fields but "workloads", "seen" (the workloads it had),
 * and "workloads": `top` of them in their order (the dearest half of the
 * places, then those with a finding, a problem named however cheap, then
 * the dearest others), each with "ref", "name" and "figures" added; then
 * "other" ({"key", "ref", "kind": "other", "name": "other", "workloads":
 * how many it sums, "figures": their sums}) when any were left out. A
 * workload without a key, whose key is longer than WKEEP_KEY_MAX, or of a
 * kind other than unit, cgroup or process is summed into "other". */
#define WKEEP_KEY_MAX 16384
json_t *wkeep_trim(const json_t *priced, size_t top);

/* Prices a copy of `window` (as the observer handed it) at the latest
 * stored recommendation's inputs (unpriced when there is none yet), keeps
 * it as above and stores it as the window that ended at now_ms. 0 or
 * -errno (the store's reason in store_last_error()). */
int wkeep_take(struct store *st, const json_t *window, size_t top, int64_t now_ms);

#endif
