/* api_format: the API's one formatter, from the store's rows to the bodies
 * of the OpenAPI document (see api_format.h). */
#include <stdint.h>

#include "api_format.h"
#include "clock.h"
#include "jnum.h"

/* The times a body shows a person as well: "X_ms" gets "X_at". */
static const struct {
	const char *ms, *at;
} times[] = {
    {"first_seen_ms", "first_seen_at"}, {"last_seen_ms", "last_seen_at"},
    {"computed_ms", "computed_at"},     {"started_ms", "started_at"},
    {"window_end_ms", "window_end_at"},
};

void api_format_times(json_t *o)
{
	char buf[48];

	for (size_t i = 0; o && i < sizeof(times) / sizeof(times[0]); i++) {
		const json_t *ms = json_object_get(o, times[i].ms);

		if (!json_is_integer(ms))
			continue;
		json_object_set_new(o, times[i].at,
		                    clock_rfc3339_ms(json_integer_value(ms), buf, sizeof(buf)) < 0
		                        ? json_null()
		                        : json_string(buf));
	}
}

void api_format_host(json_t *host)
{
	const json_t *history = json_object_get(host, "history");
	json_t *row;
	size_t i;

	api_format_times(json_object_get(host, "current"));
	json_array_foreach(history, i, row)
	{
		api_format_times(row);
	}
}

/* The row's key figure as one object, or null when the run has none. */
static json_t *key_figure(json_t *run)
{
	json_t *metric = json_object_get(run, "key_metric"), *fig;

	if (!json_is_string(metric))
		return json_null();
	fig = json_object();
	json_object_set(fig, "metric", metric);
	json_object_set(fig, "value", json_object_get(run, "key_value") ?: json_null());
	json_object_set(fig, "unit", json_object_get(run, "key_unit") ?: json_null());
	return fig;
}

void api_format_run(json_t *run)
{
	int64_t t0 = json_integer_value(json_object_get(run, "started_ms")),
	        t1 = json_integer_value(json_object_get(run, "ended_ms"));

	api_format_times(run);
	json_object_set_new(run, "duration_s", jnum(t1 > t0 ? (double)(t1 - t0) / 1e3 : 0));
	json_object_set_new(run, "key_figure", key_figure(run));
	json_object_del(run, "key_metric");
	json_object_del(run, "key_value");
	json_object_del(run, "key_unit");
}

json_t *api_format_runs(struct store_page *page)
{
	json_t *run;
	size_t i;

	json_array_foreach(page->rows, i, run)
	{
		api_format_run(run);
	}
	return json_pack("{s:o, s:o}", "runs", page->rows ? page->rows : json_array(),
	                 "next_cursor", page->more ? json_integer(page->last_id) : json_null());
}

json_t *api_format_events(struct store_page *page)
{
	return json_pack("{s:o, s:b, s:I}", "events", page->rows ? page->rows : json_array(),
	                 "more", page->more, "total", (json_int_t)page->total);
}
