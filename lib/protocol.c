/*
 * protocol: parses one probe document and checks every field against the
 * protocol (probes/PROTOCOL.md, version 1). The checks are tables: the
 * top-level fields with their checkers, the units, the per-section limits.
 * Every rejection names the offending field as a dotted path
 * ("scalars.low_ns.value: not a number").
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "catalog.h"
#include "errbuf.h"
#include "protocol.h"

#define MAX_SCALARS 1024
#define MAX_SERIES 256
#define MAX_PARAMS 256
#define MAX_INFO 1024
#define MAX_PATH 256

/* Where the error text goes (errbuf_set). */
struct verr {
	char *buf;
	size_t len;
};

/* A printable excerpt of untrusted text for an error message. */
static const char *excerpt(const char *s, char *out, size_t outlen)
{
	size_t i;

	for (i = 0; s[i] && i + 1 < outlen && i < 40; i++) {
		unsigned char c = (unsigned char)s[i];
		out[i] = (c < 0x20 || c >= 0x7f || c == '"' || c == '\\') ? '?' : (char)c;
	}
	out[i] = '\0';
	if (s[i] && i >= 40 && outlen > i + 4)
		strcpy(out + i, "...");
	return out;
}

/* A probe may use any unit of the catalogue's list (lib/catalog.c). */
static int unit_known(const char *u)
{
	for (size_t i = 0; catalog_units[i]; i++)
		if (!strcmp(u, catalog_units[i]))
			return 1;
	return 0;
}

/* Probe names: [a-z0-9_-]; metric, param and info names: [A-Za-z0-9_.-]. */
static int name_ok(const char *s, int metric)
{
	size_t n = strlen(s);

	if (n == 0 || n > PROTOCOL_MAX_NAME)
		return 0;
	for (const char *p = s; *p; p++) {
		char c = *p;
		if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-')
			continue;
		if (metric && ((c >= 'A' && c <= 'Z') || c == '.'))
			continue;
		return 0;
	}
	return 1;
}

static int check_name(const char *section, const char *name, int metric, struct verr *e)
{
	char ex[48];

	if (name_ok(name, metric))
		return 0;
	return errbuf_set(e->buf, e->len, -EINVAL,
	                  "%s: invalid name \"%s\" (1..%d characters of %s)", section,
	                  excerpt(name, ex, sizeof(ex)), PROTOCOL_MAX_NAME,
	                  metric ? "A-Z a-z 0-9 _ . -" : "a-z 0-9 _ -");
}

static int check_number(const json_t *v, const char *path, struct verr *e)
{
	if (!json_is_number(v))
		return errbuf_set(e->buf, e->len, -EINVAL, "%s: not a number", path);
	if (!isfinite(json_number_value(v)))
		return errbuf_set(e->buf, e->len, -EINVAL, "%s: not a finite number", path);
	return 0;
}

static int check_string(const json_t *v, const char *path, int nonempty, struct verr *e)
{
	if (!json_is_string(v))
		return errbuf_set(e->buf, e->len, -EINVAL, "%s: not a string", path);
	if (nonempty && json_string_length(v) == 0)
		return errbuf_set(e->buf, e->len, -EINVAL, "%s: empty", path);
	if (json_string_length(v) > PROTOCOL_MAX_STRING)
		return errbuf_set(e->buf, e->len, -EINVAL, "%s: longer than %d bytes", path,
		                  PROTOCOL_MAX_STRING);
	if (strlen(json_string_value(v)) != json_string_length(v))
		return errbuf_set(e->buf, e->len, -EINVAL, "%s: contains a NUL character", path);
	return 0;
}

static int check_object(const json_t *v, const char *path, size_t max, struct verr *e)
{
	if (!json_is_object(v))
		return errbuf_set(e->buf, e->len, -EINVAL, "%s: not an object", path);
	if (json_object_size(v) > max)
		return errbuf_set(e->buf, e->len, -EINVAL, "%s: more than %zu entries", path, max);
	return 0;
}

/* Only the listed keys may appear in `obj`. */
static int check_keys(json_t *obj, const char *path, const char *const *allowed, struct verr *e)
{
	const char *key;
	json_t *v;
	char ex[48];

	json_object_foreach(obj, key, v)
	{
		const char *const *a;
		for (a = allowed; *a; a++)
			if (!strcmp(*a, key))
				break;
		if (!*a)
			return errbuf_set(e->buf, e->len, -EINVAL, "%s: unknown field \"%s\"", path,
			                  excerpt(key, ex, sizeof(ex)));
	}
	return 0;
}

static int check_probe(json_t *v, struct verr *e)
{
	char ex[48];

	if (!json_is_string(v))
		return errbuf_set(e->buf, e->len, -EINVAL, "probe: not a string");
	if (!name_ok(json_string_value(v), 0) ||
	    strlen(json_string_value(v)) != json_string_length(v))
		return errbuf_set(e->buf, e->len, -EINVAL,
		                  "probe: invalid name \"%s\" (1..%d characters of a-z 0-9 _ -)",
		                  excerpt(json_string_value(v), ex, sizeof(ex)), PROTOCOL_MAX_NAME);
	return 0;
}

static int check_protocol(json_t *v, struct verr *e)
{
	if (!json_is_integer(v))
		return errbuf_set(e->buf, e->len, -EINVAL, "protocol: not an integer");
	if (json_integer_value(v) != PROTOCOL_VERSION)
		return errbuf_set(e->buf, e->len, -EINVAL,
		                  "protocol: unsupported version %lld (this build reads %d)",
		                  (long long)json_integer_value(v), PROTOCOL_VERSION);
	return 0;
}

static int check_status(json_t *v, struct verr *e)
{
	const char *s = json_string_value(v);

	if (!json_is_string(v))
		return errbuf_set(e->buf, e->len, -EINVAL, "status: not a string");
	if (strcmp(s, "ok") && strcmp(s, "skipped") && strcmp(s, "error") &&
	    strcmp(s, "not_applicable"))
		return errbuf_set(
		    e->buf, e->len, -EINVAL,
		    "status: must be \"ok\", \"skipped\", \"not_applicable\" or \"error\"");
	return 0;
}

static int check_reason(json_t *v, struct verr *e)
{
	if (json_is_null(v))
		return 0;
	return check_string(v, "reason", 1, e);
}

static int digits(const char *s, int n)
{
	for (int i = 0; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return 0;
	return 1;
}

/* RFC 3339: 2026-12-03T07:51:56[.123]Z or with a +hh:mm / -hh:mm offset. */
static int check_started_at(json_t *v, struct verr *e)
{
	const char *s = json_string_value(v);
	size_t n;

	if (!json_is_string(v))
		return errbuf_set(e->buf, e->len, -EINVAL, "started_at: not a string");
	n = strlen(s);
	if (n < 20 || n > 40 || !digits(s, 4) || s[4] != '-' || !digits(s + 5, 2) || s[7] != '-' ||
	    !digits(s + 8, 2) || (s[10] != 'T' && s[10] != 't') || !digits(s + 11, 2) ||
	    s[13] != ':' || !digits(s + 14, 2) || s[16] != ':' || !digits(s + 17, 2))
		goto bad;
	s += 19;
	if (*s == '.') {
		s++;
		if (!digits(s, 1))
			goto bad;
		while (*s >= '0' && *s <= '9')
			s++;
	}
	if ((*s == 'Z' || *s == 'z') && s[1] == '\0')
		return 0;
	if ((*s == '+' || *s == '-') && digits(s + 1, 2) && s[3] == ':' && digits(s + 4, 2) &&
	    s[6] == '\0')
		return 0;
bad:
	return errbuf_set(e->buf, e->len, -EINVAL, "started_at: not an RFC 3339 time");
}

static int check_started_unix(json_t *v, struct verr *e)
{
	int r = check_number(v, "started_unix", e);

	if (r < 0)
		return r;
	if (json_number_value(v) < 0)
		return errbuf_set(e->buf, e->len, -EINVAL, "started_unix: negative");
	return 0;
}

static int check_duration(json_t *v, struct verr *e)
{
	int r = check_number(v, "duration_s", e);

	if (r < 0)
		return r;
	if (json_number_value(v) < 0)
		return errbuf_set(e->buf, e->len, -EINVAL, "duration_s: negative");
	return 0;
}

/* params and info: flat maps of numbers, strings, booleans and nulls. */
static int check_flat(json_t *v, const char *section, size_t max, struct verr *e)
{
	const char *key;
	json_t *val;
	char path[MAX_PATH];
	int r;

	if ((r = check_object(v, section, max, e)) < 0)
		return r;
	json_object_foreach(v, key, val)
	{
		if ((r = check_name(section, key, 1, e)) < 0)
			return r;
		snprintf(path, sizeof(path), "%s.%s", section, key);
		if (json_is_string(val))
			r = check_string(val, path, 0, e);
		else if (json_is_number(val))
			r = check_number(val, path, e);
		else if (!json_is_boolean(val) && !json_is_null(val))
			r = errbuf_set(e->buf, e->len, -EINVAL,
			               "%s: must be a number, string, boolean or null", path);
		if (r < 0)
			return r;
	}
	return 0;
}

static int check_params(json_t *v, struct verr *e)
{
	return check_flat(v, "params", MAX_PARAMS, e);
}

static int check_info(json_t *v, struct verr *e)
{
	return check_flat(v, "info", MAX_INFO, e);
}

static int check_unit(const json_t *v, const char *path, struct verr *e)
{
	char ex[48];

	if (!json_is_string(v))
		return errbuf_set(e->buf, e->len, -EINVAL, "%s: not a string", path);
	if (!unit_known(json_string_value(v)))
		return errbuf_set(e->buf, e->len, -EINVAL, "%s: unknown unit \"%s\"", path,
		                  excerpt(json_string_value(v), ex, sizeof(ex)));
	return 0;
}

static int check_scalars(json_t *v, struct verr *e)
{
	static const char *const keys[] = {"value", "unit", NULL};
	const char *key;
	json_t *sc;
	char path[MAX_PATH], sub[MAX_PATH + 8];
	int r;

	if ((r = check_object(v, "scalars", MAX_SCALARS, e)) < 0)
		return r;
	json_object_foreach(v, key, sc)
	{
		if ((r = check_name("scalars", key, 1, e)) < 0)
			return r;
		snprintf(path, sizeof(path), "scalars.%s", key);
		if (!json_is_object(sc))
			return errbuf_set(e->buf, e->len, -EINVAL, "%s: not an object", path);
		if ((r = check_keys(sc, path, keys, e)) < 0)
			return r;
		snprintf(sub, sizeof(sub), "%s.value", path);
		if (!json_object_get(sc, "value"))
			return errbuf_set(e->buf, e->len, -EINVAL, "%s: missing", sub);
		if ((r = check_number(json_object_get(sc, "value"), sub, e)) < 0)
			return r;
		snprintf(sub, sizeof(sub), "%s.unit", path);
		if (!json_object_get(sc, "unit"))
			return errbuf_set(e->buf, e->len, -EINVAL, "%s: missing", sub);
		if ((r = check_unit(json_object_get(sc, "unit"), sub, e)) < 0)
			return r;
	}
	return 0;
}

static int check_points(json_t *pts, const char *path, struct verr *e)
{
	double last_x = -INFINITY;
	size_t i;
	json_t *pt;

	if (!json_is_array(pts))
		return errbuf_set(e->buf, e->len, -EINVAL, "%s: not an array", path);
	if (json_array_size(pts) > PROTOCOL_MAX_SERIES_POINTS)
		return errbuf_set(e->buf, e->len, -EINVAL, "%s: more than %d points", path,
		                  PROTOCOL_MAX_SERIES_POINTS);
	json_array_foreach(pts, i, pt)
	{
		const json_t *x = json_array_get(pt, 0), *y = json_array_get(pt, 1);

		if (!json_is_array(pt) || json_array_size(pt) != 2)
			return errbuf_set(e->buf, e->len, -EINVAL, "%s[%zu]: not an [x, y] pair",
			                  path, i);
		if (!json_is_number(x) || !isfinite(json_number_value(x)))
			return errbuf_set(e->buf, e->len, -EINVAL,
			                  "%s[%zu]: x is not a finite number", path, i);
		if (!json_is_number(y) || !isfinite(json_number_value(y)))
			return errbuf_set(e->buf, e->len, -EINVAL,
			                  "%s[%zu]: y is not a finite number", path, i);
		if (json_number_value(x) < last_x)
			return errbuf_set(e->buf, e->len, -EINVAL,
			                  "%s[%zu]: x decreases (%g after %g)", path, i,
			                  json_number_value(x), last_x);
		last_x = json_number_value(x);
	}
	return 0;
}

static int check_series(json_t *v, struct verr *e)
{
	static const char *const keys[] = {"x_unit", "y_unit", "points", NULL};
	static const char *const fields[] = {"x_unit", "y_unit"};
	const char *key;
	json_t *se;
	char path[MAX_PATH], sub[MAX_PATH + 8];
	int r;

	if ((r = check_object(v, "series", MAX_SERIES, e)) < 0)
		return r;
	json_object_foreach(v, key, se)
	{
		if ((r = check_name("series", key, 1, e)) < 0)
			return r;
		snprintf(path, sizeof(path), "series.%s", key);
		if (!json_is_object(se))
			return errbuf_set(e->buf, e->len, -EINVAL, "%s: not an object", path);
		if ((r = check_keys(se, path, keys, e)) < 0)
			return r;
		for (size_t i = 0; i < 2; i++) {
			const json_t *u = json_object_get(se, fields[i]);
			snprintf(sub, sizeof(sub), "%s.%s", path, fields[i]);
			if (!u)
				return errbuf_set(e->buf, e->len, -EINVAL, "%s: missing", sub);
			if ((r = check_unit(u, sub, e)) < 0)
				return r;
		}
		snprintf(sub, sizeof(sub), "%s.points", path);
		if (!json_object_get(se, "points"))
			return errbuf_set(e->buf, e->len, -EINVAL, "%s: missing", sub);
		if ((r = check_points(json_object_get(se, "points"), sub, e)) < 0)
			return r;
	}
	return 0;
}

/* Fields of a built-in probe whose meaning the rest of threadwatch relies
 * on (the ctxsw equivalence and A/A figures): a scalar's unit
 * and range, a CI whose bounds must be in order, an info string with a
 * fixed set of values. Absent fields are not required here; only their
 * form is checked. */
static const struct scalar_rule {
	const char *probe, *name, *unit;
	double min, max; /* inclusive, unless open */
	int open, whole;
} scalar_rules[] = {
    {"ctxsw", "equivalence_margin", "ratio", 0, 0.5, 1, 0},
    {"ctxsw", "equivalent", "bool", 0, 1, 0, 1},
    {"ctxsw", "aa_equivalent", "bool", 0, 1, 0, 1},
    {"ctxsw", "selector_equivalent", "bool", 0, 1, 0, 1},
    {"ctxsw", "aa_ratio", "ratio", 0, INFINITY, 1, 0},
    {"ctxsw", "selector_ratio", "ratio", 0, INFINITY, 1, 0},
};

static const struct ci_rule {
	const char *probe, *lo, *hi;
} ci_rules[] = {
    {"ctxsw", "ratio_ci_lo", "ratio_ci_hi"},
    {"ctxsw", "ratio_ci90_lo", "ratio_ci90_hi"},
    {"ctxsw", "aa_ratio_ci_lo", "aa_ratio_ci_hi"},
    {"ctxsw", "selector_ratio_ci_lo", "selector_ratio_ci_hi"},
};

static const struct enum_rule {
	const char *probe, *name;
	const char *values[4];
} enum_rules[] = {
    {"ctxsw", "order", {"abba", "random", NULL}},
    {"ctxsw", "cycles_source", {"perf", "tsc", "none", NULL}},
};

#define N_RULES(t) (sizeof(t) / sizeof((t)[0]))

static int check_scalar_rule(const json_t *sc, const struct scalar_rule *r, struct verr *e)
{
	const json_t *v = json_object_get(json_object_get(sc, r->name), "value");
	const char *unit = json_string_value(json_object_get(json_object_get(sc, r->name), "unit"));
	double d;

	if (!v)
		return 0;
	d = json_number_value(v);
	if (strcmp(unit, r->unit))
		return errbuf_set(e->buf, e->len, -EINVAL, "scalars.%s.unit: must be \"%s\"",
		                  r->name, r->unit);
	if (r->whole && d != floor(d))
		return errbuf_set(e->buf, e->len, -EINVAL,
		                  "scalars.%s.value: must be a whole number", r->name);
	if (r->open ? !(d > r->min && d < r->max) : !(d >= r->min && d <= r->max))
		return errbuf_set(e->buf, e->len, -EINVAL,
		                  "scalars.%s.value: must lie in %s%g, %g%s", r->name,
		                  r->open ? "(" : "[", r->min, r->max, r->open ? ")" : "]");
	return 0;
}

static int check_enum_rule(const json_t *info, const struct enum_rule *r, struct verr *e)
{
	const json_t *v = json_object_get(info, r->name);
	char list[96] = "";

	if (!v)
		return 0;
	for (const char *const *a = r->values; *a; a++) {
		if (json_is_string(v) && !strcmp(json_string_value(v), *a))
			return 0;
		snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s",
		         a == r->values ? "" : ", ", *a);
	}
	return errbuf_set(e->buf, e->len, -EINVAL, "info.%s: must be one of %s", r->name, list);
}

/* The rules of the document's probe, after the generic checks passed. */
static int check_probe_rules(json_t *doc, struct verr *e)
{
	const char *probe = json_string_value(json_object_get(doc, "probe"));
	const json_t *sc = json_object_get(doc, "scalars"), *info = json_object_get(doc, "info");
	int r;

	for (size_t i = 0; i < N_RULES(scalar_rules); i++)
		if (!strcmp(probe, scalar_rules[i].probe) &&
		    (r = check_scalar_rule(sc, &scalar_rules[i], e)) < 0)
			return r;
	for (size_t i = 0; i < N_RULES(ci_rules); i++) {
		const json_t *lo = json_object_get(json_object_get(sc, ci_rules[i].lo), "value");
		const json_t *hi = json_object_get(json_object_get(sc, ci_rules[i].hi), "value");

		if (strcmp(probe, ci_rules[i].probe) || (!lo && !hi))
			continue;
		if (!lo || !hi)
			return errbuf_set(e->buf, e->len, -EINVAL,
			                  "scalars.%s: present without scalars.%s",
			                  lo ? ci_rules[i].lo : ci_rules[i].hi,
			                  lo ? ci_rules[i].hi : ci_rules[i].lo);
		if (json_number_value(lo) > json_number_value(hi))
			return errbuf_set(e->buf, e->len, -EINVAL,
			                  "scalars.%s.value: above scalars.%s.value",
			                  ci_rules[i].lo, ci_rules[i].hi);
	}
	for (size_t i = 0; i < N_RULES(enum_rules); i++)
		if (!strcmp(probe, enum_rules[i].probe) &&
		    (r = check_enum_rule(info, &enum_rules[i], e)) < 0)
			return r;
	return 0;
}

/* The top-level fields of a document, in the order they are checked. */
static const struct field {
	const char *name;
	int required;
	int (*check)(json_t *v, struct verr *e);
} fields[] = {
    {"probe", 1, check_probe},
    {"protocol", 1, check_protocol},
    {"status", 1, check_status},
    {"reason", 0, check_reason},
    {"started_at", 1, check_started_at},
    {"started_unix", 1, check_started_unix},
    {"duration_s", 1, check_duration},
    {"params", 0, check_params},
    {"scalars", 0, check_scalars},
    {"series", 0, check_series},
    {"info", 0, check_info},
};

#define N_FIELDS (sizeof(fields) / sizeof(fields[0]))

static int validate(json_t *doc, struct verr *e)
{
	const char *key, *status;
	json_t *v;
	char ex[48];
	size_t i;
	int r;

	if (!json_is_object(doc))
		return errbuf_set(e->buf, e->len, -EINVAL, "document: not a JSON object");
	json_object_foreach(doc, key, v)
	{
		for (i = 0; i < N_FIELDS; i++)
			if (!strcmp(fields[i].name, key))
				break;
		if (i == N_FIELDS)
			return errbuf_set(e->buf, e->len, -EINVAL, "document: unknown field \"%s\"",
			                  excerpt(key, ex, sizeof(ex)));
	}
	for (i = 0; i < N_FIELDS; i++) {
		v = json_object_get(doc, fields[i].name);
		if (!v) {
			if (fields[i].required)
				return errbuf_set(e->buf, e->len, -EINVAL, "%s: missing",
				                  fields[i].name);
			continue;
		}
		if ((r = fields[i].check(v, e)) < 0)
			return r;
	}
	status = json_string_value(json_object_get(doc, "status"));
	v = json_object_get(doc, "reason");
	if (strcmp(status, "ok") && !json_is_string(v))
		return errbuf_set(e->buf, e->len, -EINVAL, "reason: required when status is \"%s\"",
		                  status);
	return check_probe_rules(doc, e);
}

int protocol_validate(const json_t *doc, char *err, size_t errlen)
{
	/* jansson's iterators take a mutable json_t; validation only reads. */
	union {
		const json_t *c;
		json_t *m;
	} u = {doc};
	struct verr e = {err, errlen};

	return validate(u.m, &e);
}

/* Rejects NUL bytes and nesting deeper than PROTOCOL_MAX_DEPTH before the
 * parser sees the text, so a hostile document cannot exhaust the stack. */
static int prescan(const char *buf, size_t len, struct verr *e)
{
	int depth = 0, in_string = 0;

	for (size_t i = 0; i < len; i++) {
		char c = buf[i];

		if (c == '\0')
			return errbuf_set(e->buf, e->len, -EINVAL,
			                  "document: contains a NUL byte at offset %zu", i);
		if (in_string) {
			if (c == '\\')
				i++;
			else if (c == '"')
				in_string = 0;
			continue;
		}
		if (c == '"') {
			in_string = 1;
		} else if (c == '{' || c == '[') {
			if (++depth > PROTOCOL_MAX_DEPTH)
				return errbuf_set(e->buf, e->len, -EINVAL,
				                  "document: nested deeper than %d levels",
				                  PROTOCOL_MAX_DEPTH);
		} else if (c == '}' || c == ']') {
			depth--;
		}
	}
	return 0;
}

int protocol_parse(const char *buf, size_t len, json_t **doc, char *err, size_t errlen)
{
	struct verr e = {err, errlen};
	json_error_t jerr;
	json_t *root;
	int r;

	*doc = NULL;
	if (len > PROTOCOL_MAX_BYTES)
		return errbuf_set(e.buf, e.len, -EINVAL, "document: larger than %d bytes",
		                  PROTOCOL_MAX_BYTES);
	if ((r = prescan(buf, len, &e)) < 0)
		return r;
	/* json_loadb rejects anything after the document except white space. */
	root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!root)
		return errbuf_set(e.buf, e.len, -EINVAL,
		                  "document: not valid JSON: %s (line %d, column %d)", jerr.text,
		                  jerr.line, jerr.column);
	if ((r = validate(root, &e)) < 0) {
		json_decref(root);
		return r;
	}
	*doc = root;
	return 0;
}

const char *protocol_status(const json_t *doc)
{
	return json_string_value(json_object_get(doc, "status"));
}

double protocol_scalar(const json_t *doc, const char *name)
{
	const json_t *v =
	    json_object_get(json_object_get(json_object_get(doc, "scalars"), name), "value");

	return json_is_number(v) ? json_number_value(v) : NAN;
}

json_t *protocol_series(const json_t *doc, const char *name)
{
	json_t *pts =
	    json_object_get(json_object_get(json_object_get(doc, "series"), name), "points");

	return json_is_array(pts) ? pts : NULL;
}
