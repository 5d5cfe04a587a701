/*
 * fleet_cohort: `threadwatch fleet --by FIELD` groups the hosts by a field
 * of their fingerprint (kernel, cpu, virt, mitigations, arch, glibc, or any
 * path such as cpu/vendor) and gives each cohort, per key figure, its host
 * count, median with a bootstrap 95% CI and ratio to the fleet median;
 * cohorts whose CIs do not overlap are flagged with the separating field.
 * `--where FIELD=VALUE` keeps only the hosts whose field has that value.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errbuf.h"
#include "fingerprint.h"
#include "fleetp.h"
#include "stats.h"
#include "xmalloc.h"

#define BOOT_ITERS 2000
#define BOOT_SEED 28

/* The short names and the fingerprint paths they stand for. */
static const struct {
	const char *alias, *path;
} fields[] = {
    {"kernel", "kernel"},     {"cpu", "cpu/model_name"},          {"virt", "virtualization"},
    {"arch", "arch"},         {"mitigations", "vulnerabilities"}, {"glibc", "glibc"},
    {"vendor", "cpu/vendor"},
};

/* The key figures of a row ("figures" of fleet_host_row()): the
 * catalogue's fleet_figures, by their row keys. */
#define N_FIGURES FLEET_N_FIGURES

static const char *field_path(const char *name)
{
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
		if (!strcmp(name, fields[i].alias))
			return fields[i].path;
	return name;
}

int fleet_field_check(const char *name, char *why, size_t wlen)
{
	char names[512] = "";
	size_t top = strcspn(name, "/");

	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
		if (!strcmp(name, fields[i].alias))
			return 0;
	for (size_t i = 0; fingerprint_fields[i]; i++)
		if (strlen(fingerprint_fields[i]) == top &&
		    !strncmp(name, fingerprint_fields[i], top))
			return 0;
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
		snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s",
		         i ? ", " : "", fields[i].alias);
	return errbuf_set(why, wlen, -EINVAL,
	                  "no fingerprint field \"%.*s\": use %s, or a path such as cpu/family "
	                  "under one of the fingerprint's fields (GET /api/v1/host)",
	                  (int)top, name, names);
}

char *fleet_field_value(const json_t *row, const char *name)
{
	const json_t *v = json_object_get(row, "fingerprint");
	char *path = xstrdup(field_path(name)), *save = NULL;

	for (char *k = strtok_r(path, "/", &save); k && v; k = strtok_r(NULL, "/", &save))
		v = json_object_get(v, k);
	free(path);
	if (!v || json_is_null(v))
		return xstrdup("-");
	if (json_is_string(v))
		return xstrdup(json_string_value(v));
	return json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
}

int fleet_where_match(const json_t *row, const char *where)
{
	const char *eq = where ? strchr(where, '=') : NULL;
	char *name, *v;
	int match;

	if (!eq)
		return 1;
	name = xstrndup(where, (size_t)(eq - where));
	v = fleet_field_value(row, name);
	match = !strcmp(v, eq + 1);
	free(name);
	free(v);
	return match;
}

/* The figure's values over the readable rows whose `by` value is `value`
 * (NULL: all); returns how many. */
static size_t collect(const json_t *rows, const char *by, const char *value, const char *fig,
                      double *out)
{
	size_t n = 0, i;
	const json_t *row;

	json_array_foreach(rows, i, row)
	{
		const json_t *v = json_object_get(json_object_get(row, "figures"), fig);
		char *val;

		if (!json_is_number(v))
			continue;
		val = value ? fleet_field_value(row, by) : NULL;
		if (!value || !strcmp(val, value))
			out[n++] = json_number_value(v);
		free(val);
	}
	return n;
}

/* {n, median, ci95: [lo, hi], ratio_to_fleet}, or null without values. */
static json_t *figure_summary(double *v, size_t n, double fleet)
{
	double ci[2];

	if (!n)
		return json_null();
	if (stats_bootstrap_median_ci(v, n, BOOT_ITERS, BOOT_SEED, ci) < 0)
		ci[0] = ci[1] = NAN;
	return json_pack("{s:I, s:f, s:[f, f], s:o}", "n", (json_int_t)n, "median",
	                 stats_median(v, n), "ci95", ci[0], ci[1], "ratio_to_fleet",
	                 fleet > 0 ? json_real(stats_median(v, n) / fleet) : json_null());
}

/* One cohort: {values: {by: value}, hosts, figures: {...}, flags: []}. */
static json_t *cohort_new(const json_t *rows, const char *by, const char *value,
                          const double *fleet, double *buf)
{
	json_t *figs = json_object();
	size_t hosts = 0, na = 0, i;
	const json_t *row;

	json_array_foreach(rows, i, row)
	{
		char *v =
		    json_is_null(json_object_get(row, "error")) ? fleet_field_value(row, by) : NULL;
		int in = v && !strcmp(v, value);

		hosts += in;
		na += in && json_is_false(json_object_get(row, "applicable"));
		free(v);
	}
	for (size_t f = 0; f < N_FIGURES; f++)
		json_object_set_new(
		    figs, fleet_figure_key(f),
		    figure_summary(buf, collect(rows, by, value, fleet_figure_key(f), buf),
		                   fleet[f]));
	return json_pack("{s:{s:s}, s:I, s:o, s:s, s:[]}", "values", by, value, "hosts",
	                 (json_int_t)hosts, "figures", figs, "map32",
	                 hosts && na == hosts ? "not applicable" : "measured", "flags");
}

static const double *ci_of(const json_t *cohort, const char *fig, double *lo, double *hi)
{
	const json_t *s = json_object_get(json_object_get(cohort, "figures"), fig);
	const json_t *ci = json_object_get(s, "ci95");

	if (json_integer_value(json_object_get(s, "n")) < 2 || !json_is_array(ci))
		return NULL;
	*lo = json_number_value(json_array_get(ci, 0));
	*hi = json_number_value(json_array_get(ci, 1));
	return lo;
}

/* Flags each pair of cohorts (of two hosts or more) whose CIs of a figure
 * do not overlap, on both sides, naming the other cohort and the field. */
static void flag_pairs(json_t *cohorts, const char *by)
{
	for (size_t f = 0; f < N_FIGURES; f++)
		for (size_t i = 0; i < json_array_size(cohorts); i++)
			for (size_t j = 0; j < json_array_size(cohorts); j++) {
				json_t *a = json_array_get(cohorts, i),
				       *b = json_array_get(cohorts, j);
				double alo, ahi, blo, bhi;

				if (i == j || !ci_of(a, fleet_figure_key(f), &alo, &ahi) ||
				    !ci_of(b, fleet_figure_key(f), &blo, &bhi) ||
				    !(ahi < blo || bhi < alo))
					continue;
				json_array_append_new(
				    json_object_get(a, "flags"),
				    json_pack("{s:s, s:s, s:O}", "figure", fleet_figure_key(f),
				              "field", by, "versus",
				              json_object_get(json_object_get(b, "values"), by)));
			}
}

json_t *fleet_cohorts(const json_t *rows, const char *by)
{
	double *buf = xcalloc(json_array_size(rows) + 1, sizeof(double)), fleet[N_FIGURES];
	json_t *cohorts = json_array(), *seen = json_object(), *fleet_j = json_object();
	const json_t *row;
	size_t i;

	for (size_t f = 0; f < N_FIGURES; f++) {
		size_t n = collect(rows, by, NULL, fleet_figure_key(f), buf);

		fleet[f] = n ? stats_median(buf, n) : NAN;
		json_object_set_new(fleet_j, fleet_figure_key(f),
		                    n ? json_real(fleet[f]) : json_null());
	}
	json_array_foreach(rows, i, row)
	{
		char *v;

		if (!json_is_null(json_object_get(row, "error")))
			continue;
		v = fleet_field_value(row, by);
		if (!json_object_get(seen, v)) {
			json_object_set_new(seen, v, json_true());
			json_array_append_new(cohorts, cohort_new(rows, by, v, fleet, buf));
		}
		free(v);
	}
	flag_pairs(cohorts, by);
	json_decref(seen);
	free(buf);
	return json_pack("{s:s, s:s, s:o, s:o}", "by", by, "field", field_path(by), "fleet_median",
	                 fleet_j, "cohorts", cohorts);
}

/* "812 ns [790, 840] x0.25" or "-" */
static void cell(const json_t *s, const char *unit, char *buf, size_t len)
{
	const json_t *ci = json_object_get(s, "ci95");
	const json_t *r = json_object_get(s, "ratio_to_fleet");
	const char *fmt = !strcmp(unit, "ns")      ? "%.0f ns [%.0f, %.0f] x%.2f"
	                  : !strcmp(unit, "bytes") ? "%.0f B [%.0f, %.0f] x%.2f"
	                                           : "%.3f [%.3f, %.3f] x%.2f";

	if (!json_is_object(s)) {
		snprintf(buf, len, "-");
		return;
	}
	snprintf(buf, len, fmt, json_number_value(json_object_get(s, "median")),
	         json_number_value(json_array_get(ci, 0)), json_number_value(json_array_get(ci, 1)),
	         json_is_number(r) ? json_number_value(r) : NAN);
}

/* A string of the report as the terminal may show it: the values came
 * from the hosts (fleet_printable()); malloc'd, "" for none. */
static char *shown(const json_t *v)
{
	return fleet_printable(xstrdup(json_string_value(v) ? json_string_value(v) : ""));
}

void fleet_print_cohorts(const json_t *doc)
{
	char *by = shown(json_object_get(doc, "by"));
	const json_t *c;
	size_t i, k;
	char a[96], b[96];

	printf("%-40s %5s  %-34s  %-30s  %s\n", by, "HOSTS", "CTXSW PER SWITCH [95% CI] xFLEET",
	       "LOW/HIGH RATIO [95% CI] xFLEET", "MAP32");
	json_array_foreach(json_object_get(doc, "cohorts"), i, c)
	{
		const json_t *figs = json_object_get(c, "figures"), *fl;
		char *value = shown(json_object_get(json_object_get(c, "values"), by));
		char *map32 = shown(json_object_get(c, "map32"));

		cell(json_object_get(figs, fleet_figure_key(0)), fleet_figure_unit(0), a,
		     sizeof(a));
		cell(json_object_get(figs, fleet_figure_key(1)), fleet_figure_unit(1), b,
		     sizeof(b));
		printf("%-40.40s %5lld  %-34s  %-30s  %s\n", value,
		       (long long)json_integer_value(json_object_get(c, "hosts")), a, b, map32);
		free(value);
		free(map32);
		/* the figures of the newer probes, a line each where measured */
		for (size_t f = 2; f < N_FIGURES; f++) {
			const json_t *s = json_object_get(figs, fleet_figure_key(f));

			if (!json_is_object(s))
				continue;
			cell(s, fleet_figure_unit(f), a, sizeof(a));
			printf("  %-46s %s\n", fleet_figures[f], a);
		}
		json_array_foreach(json_object_get(c, "flags"), k, fl)
		{
			char *fig = shown(json_object_get(fl, "figure")),
			     *field = shown(json_object_get(fl, "field")),
			     *versus = shown(json_object_get(fl, "versus"));

			printf("  ! %s differs beyond the CIs from %s = %s\n", fig, field, versus);
			free(fig);
			free(field);
			free(versus);
		}
	}
	free(by);
}
