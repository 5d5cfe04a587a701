/*
 * fleet_sd_yaml: Prometheus file_sd as YAML, in exactly the shapes people
 * and tools write it (no YAML library is linked; anything else is an error
 * that names its line):
 *
 *   - targets:              # a block list, indented or not
 *       - 'host1:9560'
 *     labels:               # a block map
 *       env: prod
 *   - targets: [host2:9560, "host3:9560"]    # flow list
 *     labels: {env: test}                    # flow map
 *
 * Scalars are plain, 'single-quoted' ('' is a quote) or "double-quoted"
 * (\\ \" \/ \t \n); every value is a string. Comments, blank lines, a
 * leading "---" and a trailing "..." are allowed. Not allowed: anchors,
 * tags, multi-line scalars, nested structures, several documents, tabs in
 * indentation.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errbuf.h"
#include "fleetp.h"
#include "xmalloc.h"

struct yline {
	unsigned no;
	int indent;
	char *text; /* without indentation, comment and trailing space */
};

struct yaml {
	const char *path;
	struct yline *l;
	size_t n, i;
	char *why;
	size_t wlen;
};

static int yerr(struct yaml *y, unsigned line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int yerr(struct yaml *y, unsigned line, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return errbuf_set(y->why, y->wlen, -EINVAL, "%s:%u: %s", y->path, line, msg);
}

/* Cuts a comment off a line: '#' at its start or after white space,
 * outside a quoted scalar (a quote opens one only where a scalar starts). */
static void cut_comment(char *s)
{
	char quote = 0;

	for (char *p = s; *p; p++) {
		if ((quote == '"' && *p == '\\' && p[1]) ||
		    (quote == '\'' && *p == '\'' && p[1] == '\''))
			p++; /* an escape, or '' in a single-quoted string */
		else if (quote && *p == quote)
			quote = 0;
		else if (!quote && (*p == '\'' || *p == '"') &&
		         (p == s || strchr(" \t[{,:", p[-1])))
			quote = *p;
		else if (!quote && *p == '#' && (p == s || p[-1] == ' ' || p[-1] == '\t')) {
			*p = '\0';
			return;
		}
	}
}

/* Splits buf into its lines with content. */
static int split_lines(struct yaml *y, char *buf)
{
	unsigned no = 0;
	char *next;

	for (char *line = buf; line; line = next) {
		size_t len;
		int indent;

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		no++;
		indent = (int)strspn(line, " ");
		if (line[indent] == '\t')
			return yerr(y, no, "a tab in the indentation (YAML indents with spaces)");
		cut_comment(line + indent);
		len = strlen(line);
		while (len > (size_t)indent && strchr(" \t\r", line[len - 1]))
			line[--len] = '\0';
		if (line[indent] == '\0')
			continue;
		y->l = xreallocarray(y->l, y->n + 1, sizeof(*y->l));
		y->l[y->n++] = (struct yline){no, indent, line + indent};
	}
	return 0;
}

/* A double-quoted scalar's escape, or 0 for one this parser does not take. */
static char unescape(char c)
{
	static const char from[] = "\\\"/tn", to[] = "\\\"/\t\n";
	const char *p = c ? strchr(from, c) : NULL;

	return p ? to[p - from] : 0;
}

/* The scalar at *p, advancing *p past it. flow: a plain scalar ends at
 * ',', ']' or '}'; key: it ends at ':'. NULL after yerr(). */
static char *scalar(struct yaml *y, unsigned no, const char **p, int flow, int key)
{
	const char *s = *p;
	char *out = xmalloc(strlen(s) + 1), *o = out, q = *s;

	if (q == '\'' || q == '"') {
		for (s++; *s; s++) {
			if (*s == q && q == '\'' && s[1] == '\'') {
				*o++ = *s++; /* '' is one quote */
				continue;
			}
			if (*s == q)
				break;
			if (q == '"' && *s == '\\') {
				if (!(*o++ = unescape(*++s)))
					break;
				continue;
			}
			*o++ = *s;
		}
		if (*s != q) {
			free(out);
			yerr(y, no,
			     *s ? "an escape this reader does not know in a quoted string"
			        : "a quoted string that does not end on its line");
			return NULL;
		}
		*o = '\0';
		*p = s + 1;
		return out;
	}
	if (!*s || strchr("[]{},&*!|>%@`?", *s) || (*s == '-' && (s[1] == ' ' || !s[1]))) {
		free(out);
		yerr(y, no,
		     "expected a string at \"%.40s\" (not a nested list, map, anchor or tag)", s);
		return NULL;
	}
	for (; *s; s++) {
		if (*s == ':' && (s[1] == ' ' || !s[1] || (flow && strchr(",]}", s[1])))) {
			if (key)
				break;
			free(out);
			yerr(y, no, "a map where a string is expected");
			return NULL;
		}
		if (flow && strchr(",]}", *s))
			break;
		*o++ = *s;
	}
	while (o > out && (o[-1] == ' ' || o[-1] == '\t'))
		o--;
	*o = '\0';
	*p = s;
	return out;
}

static const char *skip_sp(const char *p)
{
	return p + strspn(p, " \t");
}

/* One entry at *p, advancing *p past it: "name: value" into a map, "value"
 * into a list; flow: inside [...] or {...}. 0, or -EINVAL after yerr(). */
static int entry(struct yaml *y, unsigned no, const char **p, int flow, json_t *into)
{
	int map = json_is_object(into), rc = 0;
	char *k = NULL, *v;

	if (map) {
		k = scalar(y, no, p, flow, 1);
		if (!k)
			return -EINVAL;
		if (**p != ':') {
			free(k);
			return yerr(y, no, "expected \"name: value\"");
		}
		*p = skip_sp(*p + 1);
	}
	v = scalar(y, no, p, flow, 0);
	if (!v)
		rc = -EINVAL;
	else if (map && json_object_get(into, k))
		rc = yerr(y, no, "a label named twice");
	else if (map)
		json_object_set_new(into, k, json_string(v));
	else
		json_array_append_new(into, json_string(v));
	free(k);
	free(v);
	return rc;
}

/* A flow list [a, 'b'] or map {k: v} taking the rest of the line. */
static int flow(struct yaml *y, unsigned no, const char *p, json_t *into)
{
	int map = json_is_object(into);
	char close = map ? '}' : ']';

	if (*p != (map ? '{' : '['))
		return yerr(y, no, "expected %s or nothing after the colon",
		            map ? "{k: v}" : "[...]");
	for (p = skip_sp(p + 1); *p != close;) {
		if (entry(y, no, &p, 1, into) < 0)
			return -EINVAL;
		p = skip_sp(p);
		if (*p == ',')
			p = skip_sp(p + 1);
		else if (*p != close)
			return yerr(y, no, "expected ',' or '%c'", close);
	}
	if (*skip_sp(p + 1))
		return yerr(y, no, "text after '%c'", close);
	return 0;
}

/* The block list or map under a key at column key_col: its lines are more
 * indented (a list may also be at the key's own column), all alike. */
static int block(struct yaml *y, int key_col, json_t *into)
{
	int map = json_is_object(into), col = -1;
	unsigned key_line = y->l[y->i - 1].no;

	while (y->i < y->n) {
		const struct yline *l = &y->l[y->i];
		int item = l->text[0] == '-' && (l->text[1] == ' ' || !l->text[1]);
		const char *p = map ? l->text : skip_sp(l->text + 1);

		if (l->indent < key_col || (l->indent == key_col && (map || !item)))
			break;
		if (col >= 0 && l->indent != col)
			return yerr(y, l->no, "indented unlike the lines above it");
		col = l->indent;
		if (!map && !item)
			return yerr(y, l->no, "expected \"- HOST:PORT\"");
		if (entry(y, l->no, &p, 0, into) < 0)
			return -EINVAL;
		if (*skip_sp(p))
			return yerr(y, l->no, "text after the value");
		y->i++;
	}
	if (col < 0 && !map)
		return yerr(y, key_line, "targets: expected a list under it or [...]");
	return 0;
}

/* "targets: ..." or "labels: ..." of a group, at column col. */
static int group_key(struct yaml *y, int col, const char *text, json_t **targets, json_t **labels)
{
	unsigned no = y->l[y->i].no;
	const char *p = text;
	char *key = scalar(y, no, &p, 0, 1);
	json_t **slot;
	int rc;

	if (!key)
		return -EINVAL;
	if (*p != ':') {
		free(key);
		return yerr(y, no, "expected \"targets:\" or \"labels:\"");
	}
	slot = !strcmp(key, "targets") ? targets : !strcmp(key, "labels") ? labels : NULL;
	if (!slot || *slot) {
		rc = yerr(y, no,
		          slot ? "\"%s\" twice in one group"
		               : "unknown key \"%s\" (a group has targets and labels)",
		          key);
		free(key);
		return rc;
	}
	*slot = slot == targets ? json_array() : json_object();
	free(key);
	p = skip_sp(p + 1);
	y->i++;
	return *p ? flow(y, no, p, *slot) : block(y, col, *slot);
}

/* One "- targets: ..." group and the keys under it. */
static int group(struct yaml *y, int dash_col, struct fleet_targets *t)
{
	const struct yline *first = &y->l[y->i];
	const char *rest = skip_sp(first->text + 1);
	int col = first->indent + (int)(rest - first->text), rc;
	json_t *targets = NULL, *labels = NULL;
	char origin[4200];

	snprintf(origin, sizeof(origin), "%s:%u", y->path, first->no);
	if (first->text[1] != ' ')
		return yerr(y, first->no, "expected \"- targets:\" to start a group");
	rc = group_key(y, col, rest, &targets, &labels);
	while (rc == 0 && y->i < y->n && y->l[y->i].indent > dash_col) {
		if (y->l[y->i].indent != col) {
			rc = yerr(y, y->l[y->i].no, "indented unlike the keys of its group");
			break;
		}
		rc = group_key(y, col, y->l[y->i].text, &targets, &labels);
	}
	if (rc == 0 && !targets)
		rc = errbuf_set(y->why, y->wlen, -EINVAL, "%s: a group without targets", origin);
	if (rc == 0)
		rc = fleet_sd_group(t, targets, labels, origin, y->why, y->wlen);
	json_decref(targets);
	json_decref(labels);
	return rc;
}

int fleet_sd_yaml(const char *path, char *buf, struct fleet_targets *t, char *why, size_t wlen)
{
	struct yaml y = {.path = path, .why = why, .wlen = wlen};
	int rc = split_lines(&y, buf), dash_col;

	if (rc == 0 && y.n > 0 && !strcmp(y.l[0].text, "---") && y.l[0].indent == 0)
		y.i++;
	if (rc == 0 && y.n > y.i && !strcmp(y.l[y.n - 1].text, "...") && y.l[y.n - 1].indent == 0)
		y.n--;
	dash_col = y.i < y.n ? y.l[y.i].indent : 0;
	while (rc == 0 && y.i < y.n) {
		const struct yline *l = &y.l[y.i];

		if (l->indent != dash_col || l->text[0] != '-')
			rc = yerr(&y, l->no, "expected \"- targets:\" to start a group");
		else
			rc = group(&y, dash_col, t);
	}
	free(y.l);
	return rc;
}
