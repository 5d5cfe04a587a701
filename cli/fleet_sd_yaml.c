/*
 * fleet_sd_yaml: Prometheus file_sd as YAML, read with libyaml (the only
 * file that links it): a list of groups, each a map with "targets" (a list
 * of strings) and "labels" (a map of strings), in any YAML style: block or
 * flow collections, plain, quoted, folded or literal scalars over several
 * lines, anchors and aliases, the !!str tag, comments, "---" and "...".
 * Every value is a string (untagged or !!str); one document. Errors name
 * "PATH:LINE" as libyaml marks it, or the line of the node at fault.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <yaml.h>

#include "errbuf.h"
#include "fleetp.h"

struct ysd {
	const char *path;
	yaml_document_t *doc;
	struct fleet_targets *t;
	char *why;
	size_t wlen;
};

static int yerr(const struct ysd *y, size_t line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int yerr(const struct ysd *y, size_t line, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return errbuf_set(y->why, y->wlen, -EINVAL, "%s:%zu: %s", y->path, line, msg);
}

static size_t line_of(const yaml_node_t *n)
{
	return n->start_mark.line + 1;
}

static yaml_node_t *node(const struct ysd *y, int index)
{
	return yaml_document_get_node(y->doc, index);
}

/* What libyaml could not parse, at the line of the problem. */
static int load_error(const struct ysd *y, const yaml_parser_t *p)
{
	if (p->error == YAML_MEMORY_ERROR)
		return errbuf_set(y->why, y->wlen, -ENOMEM, "%s: out of memory", y->path);
	/* A token the scanner could not finish (a quoted scalar that does not
	 * end) is at fault where it starts. */
	if (p->context && p->error == YAML_SCANNER_ERROR)
		return yerr(y, p->context_mark.line + 1, "%s (%s)", p->problem, p->context);
	if (p->context)
		return yerr(y, p->problem_mark.line + 1, "%s (%s on line %zu)", p->problem,
		            p->context, p->context_mark.line + 1);
	return yerr(y, p->problem_mark.line + 1, "%s", p->problem ? p->problem : "not YAML");
}

/* The text of a string scalar (untagged or !!str, not an empty plain one,
 * which is YAML's null, and without a NUL); NULL for anything else. */
static const char *string_of(const yaml_node_t *n)
{
	const char *v;

	if (!n || n->type != YAML_SCALAR_NODE || strcmp((const char *)n->tag, YAML_STR_TAG))
		return NULL;
	v = (const char *)n->data.scalar.value;
	if (n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE && !n->data.scalar.length)
		return NULL;
	return strlen(v) == n->data.scalar.length ? v : NULL;
}

/* targets: a list of strings, as a JSON array in *out. 0 or -EINVAL. */
static int targets_json(const struct ysd *y, const yaml_node_t *n, size_t line, json_t **out)
{
	if (n->type != YAML_SEQUENCE_NODE)
		return yerr(y, line, "targets: expected a list");
	*out = json_array();
	for (yaml_node_item_t *i = n->data.sequence.items.start; i < n->data.sequence.items.top;
	     i++) {
		const yaml_node_t *item = node(y, *i);
		const char *s = string_of(item);

		if (!s)
			return yerr(y, line_of(item), "expected a string");
		json_array_append_new(*out, json_string(s));
	}
	return 0;
}

/* labels: a map of strings to strings, as a JSON object in *out. */
static int labels_json(const struct ysd *y, const yaml_node_t *n, size_t line, json_t **out)
{
	if (n->type != YAML_MAPPING_NODE)
		return yerr(y, line, "labels: expected a map of names to strings");
	*out = json_object();
	for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top;
	     p++) {
		const yaml_node_t *k = node(y, p->key);
		const char *name = string_of(k), *value = string_of(node(y, p->value));

		if (!name || !value)
			return yerr(y, line_of(k), "expected a string");
		if (json_object_get(*out, name))
			return yerr(y, line_of(k), "a label named twice");
		json_object_set_new(*out, name, json_string(value));
	}
	return 0;
}

/* The "targets" and "labels" values of a group and the lines of their
 * keys; any other key, or one twice, is an error. */
static int group_keys(const struct ysd *y, const yaml_node_t *g, const yaml_node_t *v[2],
                      size_t line[2])
{
	static const char *const keys[2] = {"targets", "labels"};

	for (yaml_node_pair_t *p = g->data.mapping.pairs.start; p < g->data.mapping.pairs.top;
	     p++) {
		const yaml_node_t *k = node(y, p->key);
		const char *name = string_of(k);
		int i = 0;

		while (i < 2 && !(name && !strcmp(name, keys[i])))
			i++;
		if (i == 2)
			return yerr(y, line_of(k), "unknown key \"%s\"",
			            name ? name : "(not a string)");
		if (v[i])
			return yerr(y, line_of(k), "\"%s\" twice", keys[i]);
		v[i] = node(y, p->value);
		line[i] = line_of(k);
	}
	return 0;
}

static int group(const struct ysd *y, const yaml_node_t *g)
{
	const yaml_node_t *v[2] = {NULL, NULL};
	size_t line[2] = {0, 0};
	json_t *targets = NULL, *labels = NULL;
	char origin[4200];
	int rc;

	if (g->type != YAML_MAPPING_NODE)
		return yerr(y, line_of(g), "expected \"- targets:\": a group is a map");
	rc = group_keys(y, g, v, line);
	if (rc == 0 && !v[0])
		rc = yerr(y, line_of(g), "a group without targets");
	if (rc == 0)
		rc = targets_json(y, v[0], line[0], &targets);
	if (rc == 0 && v[1])
		rc = labels_json(y, v[1], line[1], &labels);
	snprintf(origin, sizeof(origin), "%s:%zu", y->path, line_of(g));
	if (rc == 0)
		rc = fleet_sd_group(y->t, targets, labels, origin, y->why, y->wlen);
	json_decref(targets);
	json_decref(labels);
	return rc;
}

/* The groups of the one document. */
static int groups(const struct ysd *y)
{
	const yaml_node_t *root = yaml_document_get_root_node(y->doc);
	int rc = 0;

	if (!root)
		return 0; /* empty: the caller says "no targets" */
	if (root->type != YAML_SEQUENCE_NODE)
		return yerr(y, line_of(root),
		            "expected \"- targets:\": file_sd YAML is a list of groups");
	for (yaml_node_item_t *i = root->data.sequence.items.start;
	     rc == 0 && i < root->data.sequence.items.top; i++)
		rc = group(y, node(y, *i));
	return rc;
}

/* A second document after the first is an error. */
static int no_second(struct ysd *y, yaml_parser_t *p)
{
	yaml_document_t doc;
	int rc = 0;

	if (!yaml_parser_load(p, &doc))
		return load_error(y, p);
	if (yaml_document_get_root_node(&doc))
		rc = yerr(y, doc.start_mark.line + 1, "expected one document, found a second");
	yaml_document_delete(&doc);
	return rc;
}

int fleet_sd_yaml(const char *path, char *buf, struct fleet_targets *t, char *why, size_t wlen)
{
	yaml_parser_t p;
	yaml_document_t doc;
	struct ysd y = {.path = path, .doc = &doc, .t = t, .why = why, .wlen = wlen};
	int rc;

	if (!yaml_parser_initialize(&p))
		return errbuf_set(why, wlen, -ENOMEM, "%s: out of memory", path);
	yaml_parser_set_input_string(&p, (const unsigned char *)buf, strlen(buf));
	if (!yaml_parser_load(&p, &doc)) {
		rc = load_error(&y, &p);
		yaml_parser_delete(&p);
		return rc;
	}
	rc = groups(&y);
	yaml_document_delete(&doc);
	if (rc == 0)
		rc = no_second(&y, &p);
	yaml_parser_delete(&p);
	return rc;
}
