/*
 * detection: regression detection over the stored history (doc/regression.md).
 * After each cycle, and once at start, reads each key figure's history
 * since its last event from the store, runs the pure method of
 * daemon/detect.h on the runs not judged yet, and records the events found.
 * The bridge between daemon/store.h and daemon/detect.h.
 */
#ifndef TW_DETECTION_H
#define TW_DETECTION_H

#include <stdint.h>

#include <jansson.h>

struct store;
struct detect_config;

/* The store's state key holding the last run (or recommendation) judged
 * for a metric is this prefix and the metric's name. */
#define DETECTION_STATE_PREFIX "detect_through."

/* Judges every key figure's runs and every recommendation stored since the
 * last call and records the events. *found (may be NULL) gets a new array
 * of the events recorded by this call, oldest change first. 0 or -errno
 * (store_last_error() says why); what was recorded before a failure stays. */
int detection_run(struct store *st, const struct detect_config *c, int64_t now_ms, json_t **found);

/* One journal message for an event, with its kind's MESSAGE_ID
 * (DETECT_MESSAGE_ID_STEP or _FLIP) and the fields EVENT_KIND=, METRIC=,
 * CHANGE_PCT=, P_VALUE=, FINGERPRINT_DIFF= and EVENT_ID=; a step also has
 * PROBE= (its figure's probe) and RUN_ID= (the first run after it). */
void detection_log(const json_t *event);

#endif
