/*
 * observe_text: the observer's document as a table, top-like, dearest
 * workload first, with each finding's cause and fix under it. Every name
 * comes from other users (a comm, a cgroup path, a unit), so each is
 * escaped: the text holds no control byte, and a name no byte outside
 * ASCII.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "escape.h"
#include "observe.h"
#include "xmalloc.h"

#define NAME_COLS 30

static double num(const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);

	return json_is_number(v) ? json_number_value(v) : NAN;
}

/* A figure in a column, "-" when it was not seen. */
static void col(FILE *f, double v, const char *fmt)
{
	if (isnan(v))
		fprintf(f, " %8s", "-");
	else
		fprintf(f, fmt, v);
}

static char *esc(const char *s)
{
	return escape_text(s ? s : "", s ? strlen(s) : 0);
}

/* Our own sentences (findings, causes, fixes) keep their UTF-8 ("µs"),
 * but a text with a control character, C0, DEL or C1, is escaped whole. */
static char *esc_prose(const char *s)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");

	for (; *p; p++)
		if (*p < 0x20 || *p == 0x7f || (*p == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f))
			return esc(s);
	return xstrdup(s ? s : "");
}

/* The workload's name as the table shows it, escaped. */
static char *display_name(const json_t *w)
{
	const char *kind = json_string_value(json_object_get(w, "kind"));
	const char *name = !strcmp(kind ? kind : "", "unit")     ? "unit"
	                   : !strcmp(kind ? kind : "", "cgroup") ? "cgroup"
	                                                         : "comm";
	char *e = esc(json_string_value(json_object_get(w, name))), *out;
	size_t n = strlen(e);

	if (json_array_size(json_object_get(w, "pids")) == 1 && !strcmp(name, "comm")) {
		xasprintf(
		    &out, "%s[%lld]", e,
		    (long long)json_integer_value(json_array_get(json_object_get(w, "pids"), 0)));
		free(e);
		e = out;
		n = strlen(e);
	}
	if (n > NAME_COLS)
		strcpy(e + NAME_COLS - 3, "...");
	return e;
}

static void row(FILE *f, const json_t *w)
{
	const json_t *sw = json_object_get(w, "switches_per_s"), *st = json_object_get(w, "stacks");
	const json_t *c = json_object_get(w, "costs");
	char *name = display_name(w);

	fprintf(f, "%-*s", NAME_COLS, name);
	col(f, num(w, "processes"), " %8.0f");
	col(f, num(w, "threads"), " %8.0f");
	col(f, num(w, "creates_per_s"), " %8.1f");
	col(f, num(w, "exits_per_s"), " %8.1f");
	col(f, num(sw, "total"), " %8.1f");
	col(f, num(w, "migrations_per_s"), " %8.1f");
	col(f, num(st, "count"), " %8.0f");
	col(f, num(st, "thp_backed"), " %8.0f");
	col(f, num(c, "cpu_share") * 100, " %7.3f%%");
	fputc('\n', f);
	free(name);
}

static void findings(FILE *f, const json_t *w)
{
	const json_t *x;
	size_t i;

	json_array_foreach(json_object_get(w, "findings"), i, x)
	{
		char *name = display_name(w);
		char *t = esc_prose(json_string_value(json_object_get(x, "finding")));
		char *c = esc_prose(json_string_value(json_object_get(x, "cause")));
		char *fx = esc_prose(json_string_value(json_object_get(x, "fix")));

		fprintf(f, "\n%s: %s\n  cause: %s\n  fix: %s\n", name, t, c, fx);
		free(name);
		free(t);
		free(c);
		free(fx);
	}
}

static void header(FILE *f, const json_t *doc)
{
	const json_t *m = json_object_get(doc, "mechanisms");
	const json_t *cr = json_object_get(m, "creates");

	fprintf(f, "threadwatch workloads: %.1f s window, %zu workloads\n", num(doc, "window_s"),
	        json_array_size(json_object_get(doc, "workloads")));
	if (!json_is_true(json_object_get(cr, "available"))) {
		char *why = esc(json_string_value(json_object_get(cr, "why")));

		fprintf(f, "creates and exits not seen: %s\n", why);
		free(why);
	}
	fprintf(f, "\n%-*s %8s %8s %8s %8s %8s %8s %8s %8s %8s\n", NAME_COLS, "WORKLOAD", "PROCS",
	        "THREADS", "CREATE/s", "EXIT/s", "SWITCH/s", "MIGR/s", "STACKS", "THP", "CPU");
}

char *obs_text(const json_t *doc, size_t top)
{
	const json_t *list = json_object_get(doc, "workloads"), *w, *o;
	char *buf = NULL;
	size_t len = 0, i;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	header(f, doc);
	json_array_foreach(list, i, w)
	{
		if (top && i >= top)
			break;
		row(f, w);
	}
	if (top && json_array_size(list) > top)
		fprintf(f, "(%zu more; --top N shows more)\n", json_array_size(list) - top);
	json_array_foreach(list, i, w)
	{
		if (top && i >= top)
			break;
		findings(f, w);
	}
	o = json_object_get(doc, "observer");
	fprintf(f,
	        "\nthe observer itself: %.3f s of CPU over %.1f s (%.3f%% of one CPU), %lld "
	        "thread reads\n",
	        num(o, "cpu_s"), num(o, "wall_s"), num(o, "share_of_cpu") * 100,
	        (long long)json_integer_value(json_object_get(o, "threads_read")));
	fclose(f);
	return buf;
}
