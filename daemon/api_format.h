/*
 * api_format: the API's one formatter. The store reads rows (times as Unix
 * ms, a run's key figure as its metric, value and unit, a page as rows and
 * whether more follow); this makes of them the bodies the OpenAPI document
 * describes: an RFC 3339 string beside each time a person reads, a run's
 * duration and key figure object, and each list's envelope. So a new
 * endpoint is a query, a row mapping (store_read.c) and a route (api.c).
 */
#ifndef TW_API_FORMAT_H
#define TW_API_FORMAT_H

#include <jansson.h>

#include "store.h"

/* Adds "X_at" (RFC 3339 UTC with milliseconds) beside each integer "X_ms"
 * of o that the table of times names. o may be NULL. */
void api_format_times(json_t *o);
/* host: the times of "current" and of each "history" row. */
void api_format_host(json_t *host);
/* One run row (store_read_runs(), store_read_run()), in place: its times,
 * "duration_s", and "key_figure" ({"metric", "value", "unit"} | null) in
 * place of the row's "key_metric", "key_value" and "key_unit". */
void api_format_run(json_t *run);
/* The runs page: {"runs": [run, ...], "next_cursor": id | null}. Takes
 * page->rows. */
json_t *api_format_runs(struct store_page *page);
/* The events page: {"events": [...], "more": bool, "total": n}. Takes
 * page->rows. */
json_t *api_format_events(struct store_page *page);

#endif
