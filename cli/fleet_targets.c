/*
 * fleet_targets: the hosts `threadwatch fleet` asks, and `--file FILE`.
 * The file is either one URL a line (# starts a comment) or a Prometheus
 * file_sd file, JSON or YAML ([{"targets": [...], "labels": {...}}]), told
 * apart by its first character that is not white space or a comment: '['
 * is JSON, '-' is YAML, anything else a URL list. Both file_sd parsers hand
 * each group to fleet_sd_group(), which holds the rules Prometheus applies
 * to targets and label names.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "file_read.h"
#include "errbuf.h"
#include "fleetp.h"
#include "xmalloc.h"

#define FLEET_MAX_FILE (16u << 20) /* bytes of --file */

void fleet_targets_add(struct fleet_targets *t, const char *url, const char *origin, json_t *labels)
{
	struct fleet_target *x;

	t->v = xreallocarray(t->v, t->n + 1, sizeof(*t->v));
	x = &t->v[t->n++];
	x->url = xstrdup(url);
	x->origin = xstrdup(origin);
	x->scheme = NULL;
	x->labels = labels ? labels : json_object();
}

void fleet_targets_free(struct fleet_targets *t)
{
	for (size_t i = 0; t && i < t->n; i++) {
		free(t->v[i].url);
		free(t->v[i].origin);
		free(t->v[i].scheme);
		json_decref(t->v[i].labels);
	}
	if (t) {
		free(t->v);
		t->v = NULL;
		t->n = 0;
	}
}

/* Prometheus's label names: [a-zA-Z_][a-zA-Z0-9_]*. */
static int label_name_ok(const char *s)
{
	if (!*s || strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_0123456789") !=
	               strlen(s))
		return 0;
	return !(*s >= '0' && *s <= '9');
}

int fleet_sd_group(struct fleet_targets *t, json_t *targets, json_t *labels, const char *origin,
                   char *why, size_t wlen)
{
	const char *key, *scheme = NULL;
	json_t *v, *shown = json_object();
	size_t i;

	if (!json_is_array(targets)) {
		json_decref(shown);
		return errbuf_set(why, wlen, -EINVAL, "%s: \"targets\" must be a list of HOST:PORT",
		                  origin);
	}
	if (labels && !json_is_object(labels)) {
		json_decref(shown);
		return errbuf_set(why, wlen, -EINVAL,
		                  "%s: \"labels\" must be a map of names to values", origin);
	}
	json_object_foreach(labels, key, v)
	{
		if (!label_name_ok(key) || !json_is_string(v)) {
			json_decref(shown);
			return errbuf_set(why, wlen, -EINVAL, "%s: label \"%s\": %s", origin, key,
			                  json_is_string(v) ? "a name is [a-zA-Z_][a-zA-Z0-9_]*"
			                                    : "the value must be a string");
		}
		if (!strcmp(key, "__scheme__"))
			scheme = json_string_value(v);
		else if (strncmp(key, "__", 2)) /* __* labels are Prometheus's own */
			json_object_set(shown, key, v);
	}
	if (scheme && strcmp(scheme, "http") && strcmp(scheme, "https")) {
		json_decref(shown);
		return errbuf_set(why, wlen, -EINVAL, "%s: __scheme__ \"%s\": http or https",
		                  origin, scheme);
	}
	json_array_foreach(targets, i, v)
	{
		const char *s = json_string_value(v);

		if (!s || !*s || s[strcspn(s, " \t\r\n")]) {
			json_decref(shown);
			return errbuf_set(
			    why, wlen, -EINVAL,
			    "%s: target %zu is not a HOST:PORT (a string without spaces)", origin,
			    i + 1);
		}
		fleet_targets_add(t, s, origin, json_deep_copy(shown));
		t->v[t->n - 1].scheme = scheme ? xstrdup(scheme) : NULL;
	}
	json_decref(shown);
	return 0;
}

/* One URL a line; blank lines and # comments (at the start of a line or
 * after white space) are skipped. buf is changed. */
static int url_list(const char *path, char *buf, struct fleet_targets *t, char *why, size_t wlen)
{
	char origin[64 + 4096], *line, *next, *p, *end;
	unsigned lineno = 0;

	for (line = buf; line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		lineno++;
		for (p = line; *p; p++)
			if (*p == '#' && (p == line || p[-1] == ' ' || p[-1] == '\t')) {
				*p = '\0';
				break;
			}
		p = line + strspn(line, " \t\r");
		end = p + strcspn(p, " \t\r");
		if (*p == '\0')
			continue;
		if (end[strspn(end, " \t\r")] != '\0')
			return errbuf_set(why, wlen, -EINVAL,
			                  "%s:%u: one URL a line, not several words", path, lineno);
		*end = '\0';
		snprintf(origin, sizeof(origin), "%s:%u", path, lineno);
		fleet_targets_add(t, p, origin, NULL);
	}
	return 0;
}

/* The whole file, NUL-terminated, in *buf: a text file of at most
 * FLEET_MAX_FILE bytes. */
static int slurp(const char *path, char **buf, size_t *len, char *why, size_t wlen)
{
	int rc = file_read_all(path, FLEET_MAX_FILE, buf, len);

	if (rc == -EFBIG)
		return errbuf_set(why, wlen, rc, "%s: larger than %u MiB", path,
		                  FLEET_MAX_FILE >> 20);
	if (rc < 0)
		return errbuf_set(why, wlen, rc, "cannot read \"%s\": %s", path, strerror(-rc));
	if (memchr(*buf, '\0', *len)) {
		free(*buf);
		*buf = NULL;
		return errbuf_set(why, wlen, -EINVAL, "%s: a NUL byte: not a text file", path);
	}
	return 0;
}

/* The first character that is not white space or in a # comment line. */
static char first_char(const char *p)
{
	for (;;) {
		p += strspn(p, " \t\r\n");
		if (*p != '#')
			return *p;
		p += strcspn(p, "\n");
	}
}

int fleet_file_read(const char *path, struct fleet_targets *t, char *why, size_t wlen)
{
	size_t len = 0, before = t->n;
	char *buf = NULL, c;
	int rc;

	rc = slurp(path, &buf, &len, why, wlen);
	if (rc < 0)
		return rc;
	c = first_char(buf);
	if (c == '[' || c == '{')
		rc = fleet_sd_json(path, buf, len, t, why, wlen);
	else if (c == '-')
		rc = fleet_sd_yaml(path, buf, t, why, wlen);
	else
		rc = url_list(path, buf, t, why, wlen);
	free(buf);
	if (rc == 0 && t->n == before)
		rc = errbuf_set(why, wlen, -EINVAL, "%s: no targets in it", path);
	return rc;
}
