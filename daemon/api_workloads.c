/*
 * api_workloads: GET /api/v1/workloads (the latest observer window as
 * kept: who pays for threads here, dearest first) and GET
 * /api/v1/workloads/{ref}/series (one figure of one workload over time),
 * from the store (daemon/store.h, store_workloads_*()).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "api.h"
#include "api_format.h"
#include "catalog.h"
#include "clock.h"
#include "workload_key.h"

/* The observer hands a window every 60 s by default. */
#define WORKLOADS_RETRY_S 60
/* A series without 'since' covers the last 30 days. */
#define WORKLOAD_SERIES_DEFAULT_MS (30LL * 86400 * 1000)

static const char *const no_params[] = {NULL};
static const char *const series_params[] = {"metric", "since", "until", "step", NULL};

unsigned api_workloads(const struct api_ctx *ctx, const struct api_target *t, const char *arg,
                       json_t **body, struct api_error *err)
{
	int rc;

	(void)arg;
	if (api_check_params(t, no_params, err) < 0)
		return err->status;
	rc = store_workloads_latest(ctx->st, body);
	if (rc == -ENOENT) {
		err->retry_after_s = WORKLOADS_RETRY_S;
		return api_fail(err, 503,
		                "no workload window stored yet: threadwatch-observer hands "
		                "threadwatchd one at the end of each window (60 s by default); "
		                "is threadwatch-observer running?");
	}
	if (rc < 0)
		return api_store_error(err, rc, "");
	api_format_times(*body);
	return 200;
}

/* The figure names, for a 400 that lists them. */
static void figure_names(char *buf, size_t size)
{
	size_t n = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < catalog_n_workload_metrics && n < size; i++)
		n += (size_t)snprintf(buf + n, size - n, "%s%s", i ? ", " : "",
		                      catalog_workload_metrics[i].name);
}

unsigned api_workload_series(const struct api_ctx *ctx, const struct api_target *t, const char *arg,
                             json_t **body, struct api_error *err)
{
	struct api_series_query q;
	struct store_workload_series s;
	const char *metric;
	char names[200];
	int rc;

	memset(&q, 0, sizeof(q));
	if (!wkey_ref_ok(arg))
		return api_fail(err, 404,
		                "no workload \"%.32s\": a ref is 16 hex digits, as each workload "
		                "of /api/v1/workloads gives it",
		                arg);
	if (api_check_params(t, series_params, err) < 0)
		return err->status;
	metric = api_param_get(t, "metric");
	if (!metric || !catalog_workload_metric_find(metric)) {
		figure_names(names, sizeof(names));
		return api_fail(err, 400, "parameter 'metric' must be one of %s", names);
	}
	if (api_parse_series_range(t, clock_wall_ms(), &q, err) < 0)
		return err->status;
	/* Without 'since': the last WORKLOAD_SERIES_DEFAULT_MS, which holds
	 * the default retention. */
	if (!q.since_given && q.until_ms - q.since_ms > WORKLOAD_SERIES_DEFAULT_MS) {
		q.since_ms = q.until_ms - WORKLOAD_SERIES_DEFAULT_MS;
		if (q.step_auto)
			q.step_ms = WORKLOAD_SERIES_DEFAULT_MS / API_SERIES_AUTO_BUCKETS;
	}
	s = (struct store_workload_series){arg, metric, q.since_ms, q.until_ms, q.step_ms};
	rc = store_workloads_series(ctx->st, &s, body);
	if (rc == -ENOENT)
		return api_fail(err, 404, "no workload \"%s\" has been stored", arg);
	if (rc == -EINVAL)
		return api_fail(err, 400, "parameter 'step' does not fit the range");
	return rc < 0 ? api_store_error(err, rc, "") : 200;
}
