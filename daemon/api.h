/*
 * api: the JSON API under /api/v1. Answers each endpoint from the store,
 * given a request target parsed by daemon/api_parse.h. It knows no HTTP
 * library: daemon/http.c hands it a parsed target and sends back what it
 * returns.
 */
#ifndef TW_API_H
#define TW_API_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "api_parse.h"
#include "store.h"

/* What the handlers may use. */
struct api_ctx {
	struct store *st;
	int trigger_configured; /* a POST token is set */
};

/* An endpoint: returns the HTTP status; on 200 *body is a new reference,
 * otherwise err says why. `arg` is the path capture ("{id}") or "". */
typedef unsigned api_handler_fn(const struct api_ctx *ctx, const struct api_target *t,
                                const char *arg, json_t **body, struct api_error *err);

api_handler_fn api_host, api_recommendation, api_runs, api_run, api_series, api_metrics,
    api_headroom, api_status;
/* GET /api/v1/events: the regression events (store_read_events). */
api_handler_fn api_events;
/* GET /api/v1/catalog: the metric catalogue (catalog_json()). */
api_handler_fn api_catalog;
/* GET /api/v1/workloads and /api/v1/workloads/{ref}/series
 * (api_workloads.c). */
api_handler_fn api_workloads, api_workload_series;

/* Maps a store error to 404 (-ENOENT, with `what` as the message) or 503;
 * the store's own message goes to the log only (err->detail), since it
 * may name tables and files. Returns the status. */
unsigned api_store_error(struct api_error *err, int rc, const char *what);

/* An RFC 9457 problem: {"type": "about:blank", "title", "status", "detail",
 * "error": {"status", "message"}} (the last for 0.1 clients). New reference. */
json_t *api_error_body(const struct api_error *err);
/* The reason phrase of an HTTP status, as the problem's title. */
const char *api_status_title(unsigned status);

#endif
