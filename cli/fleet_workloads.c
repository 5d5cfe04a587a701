/*
 * fleet_workloads: `threadwatch fleet --workloads`, the services across the
 * fleet that pay most for threads: every host's kept workloads (its latest
 * observer window, GET /api/v1/workloads) in one list, dearest first, each
 * with its host as the operator named it (see fleetp.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "catalog.h"
#include "fleetp.h"
#include "xmalloc.h"

static double figure(const json_t *row, const char *name)
{
	const json_t *v = json_object_get(json_object_get(row, "figures"), name);

	return json_is_number(v) ? json_number_value(v) : -1;
}

static int dearer(const void *a, const void *b)
{
	const json_t *x = *(json_t *const *)a, *y = *(json_t *const *)b;
	double cx = figure(x, "cpu_share"), cy = figure(y, "cpu_share");

	if (cx != cy)
		return cx < cy ? 1 : -1;
	cx = figure(x, "stack_thp_bytes");
	cy = figure(y, "stack_thp_bytes");
	return (cx < cy) - (cx > cy);
}

/* A workload of a host as a row; NULL for "other" or one not shaped as a
 * workload (a hostile or newer daemon). */
static json_t *row_of(const json_t *host_row, const json_t *w, const char *by)
{
	json_t *row, *kinds = json_array(), *f;
	size_t i;

	if (!json_is_object(w) || !json_is_string(json_object_get(w, "name")) ||
	    !json_is_object(json_object_get(w, "figures")) ||
	    !strcmp(json_string_value(json_object_get(w, "kind")) ?: "other", "other")) {
		json_decref(kinds);
		return NULL;
	}
	json_array_foreach(json_object_get(w, "findings"), i,
	                   f) if (json_is_string(json_object_get(f, "kind")))
	    json_array_append(kinds, json_object_get(f, "kind"));
	row = json_pack("{s:O s:O s:O s:O s:O s:O s:o}", "url", json_object_get(host_row, "url"),
	                "hostname", json_object_get(host_row, "hostname") ?: json_null(), "name",
	                json_object_get(w, "name"), "kind", json_object_get(w, "kind"), "ref",
	                json_object_get(w, "ref") ?: json_null(), "figures",
	                json_object_get(w, "figures"), "findings", kinds);
	if (row && by) {
		char *c = fleet_field_value(host_row, by);

		json_object_set_new(row, "cohort", json_string(c));
		free(c);
	}
	return row;
}

json_t *fleet_workload_rows(const struct fleet_host *hosts, size_t n, const char *by,
                            const char *where)
{
	json_t *list = json_array(), *sorted = json_array(), *w, **v;
	size_t i, m;

	for (size_t h = 0; h < n; h++) {
		if (!hosts[h].row || !fleet_where_match(hosts[h].row, where))
			continue;
		json_array_foreach(hosts[h].workloads, i, w)
		{
			json_t *row = row_of(hosts[h].row, w, by);

			if (row)
				json_array_append_new(list, row);
		}
	}
	m = json_array_size(list);
	v = xcalloc(m + 1, sizeof(*v));
	json_array_foreach(list, i, w) v[i] = w;
	qsort(v, m, sizeof(*v), dearer);
	for (i = 0; i < m; i++)
		json_array_append(sorted, v[i]);
	free(v);
	json_decref(list);
	return sorted;
}

/* A figure as the table shows it, in its catalogue unit. */
static void cell(char *buf, size_t len, const json_t *row, const char *name)
{
	const struct catalog_workload_metric *m = catalog_workload_metric_find(name);
	double v = figure(row, name);

	if (v < 0 || !m)
		snprintf(buf, len, "-");
	else if (!strcmp(m->unit, "share"))
		snprintf(buf, len, "%.3g%%", v * 100);
	else if (!strcmp(m->unit, "bytes"))
		snprintf(buf, len, "%.1fMiB", v / 1048576.0);
	else
		snprintf(buf, len, "%.4g", v);
}

void fleet_print_workloads(const json_t *rows, size_t top)
{
	static const char *const cols[] = {"cpu_share", "threads", "creates_per_second",
	                                   "switches_per_second", "stack_thp_bytes"};
	const json_t *r;
	size_t i;

	printf("%-9s %8s %10s %11s %10s  %-28s %-28s %s\n", "CPU", "THREADS", "CREATES/S",
	       "SWITCHES/S", "THP", "WORKLOAD", "HOST", "FINDINGS");
	json_array_foreach(rows, i, r)
	{
		char c[5][32], *name, *host, *findings, *cohort;
		const json_t *f;
		size_t k, len = 0;

		if (i >= top) {
			printf("(%zu more: --json lists them all)\n", json_array_size(rows) - top);
			break;
		}
		for (k = 0; k < 5; k++)
			cell(c[k], sizeof(c[k]), r, cols[k]);
		name = xstrdup(json_string_value(json_object_get(r, "name")) ?: "");
		host = xstrdup(json_string_value(json_object_get(r, "url")) ?: "");
		cohort = xstrdup(json_string_value(json_object_get(r, "cohort")) ?: "");
		findings = xstrdup("");
		json_array_foreach(json_object_get(r, "findings"), k, f)
		{
			len = strlen(findings);
			findings = xrealloc(findings, len + strlen(json_string_value(f)) + 2);
			sprintf(findings + len, "%s%s", len ? "," : "", json_string_value(f));
		}
		printf("%-9s %8s %10s %11s %10s  %-28s %-28s %s%s%s\n", c[0], c[1], c[2], c[3],
		       c[4], fleet_printable(name), fleet_printable(host),
		       fleet_printable(findings), cohort[0] ? " cohort=" : "",
		       fleet_printable(cohort));
		free(name);
		free(host);
		free(cohort);
		free(findings);
	}
}
