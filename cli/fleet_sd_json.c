/*
 * fleet_sd_json: Prometheus file_sd as JSON, a list of groups
 * [{"targets": ["host:port", ...], "labels": {"k": "v"}}, ...]. The list is
 * walked here one group at a time (jansson reads each group and says how
 * many bytes it took), so that every message names the line of its group.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "errbuf.h"
#include "fleetp.h"

/* The line of byte off of buf (1-based). */
static unsigned line_at(const char *buf, size_t off)
{
	unsigned line = 1;

	for (size_t i = 0; i < off; i++)
		line += buf[i] == '\n';
	return line;
}

static size_t skip_ws(const char *buf, size_t len, size_t off)
{
	while (off < len && strchr(" \t\r\n", buf[off]))
		off++;
	return off;
}

/* One group at buf + off; *used is the bytes it took. */
static int one_group(const char *path, const char *buf, size_t len, size_t off, size_t *used,
                     struct fleet_targets *t, char *why, size_t wlen)
{
	json_error_t err;
	json_t *g =
	    json_loadb(buf + off, len - off,
	               JSON_DISABLE_EOF_CHECK | JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, &err);
	char origin[4200];
	const char *key;
	json_t *v;
	int rc;

	snprintf(origin, sizeof(origin), "%s:%u", path, line_at(buf, off));
	if (!g)
		return errbuf_set(why, wlen, -EINVAL, "%s:%u: %s", path,
		                  line_at(buf, off) + (unsigned)err.line - 1, err.text);
	*used = (size_t)err.position;
	if (!json_is_object(g)) {
		json_decref(g);
		return errbuf_set(
		    why, wlen, -EINVAL,
		    "%s: a group is an object {\"targets\": [...], \"labels\": {...}}", origin);
	}
	json_object_foreach(g, key, v)
	{
		if (strcmp(key, "targets") && strcmp(key, "labels")) {
			rc = errbuf_set(why, wlen, -EINVAL,
			                "%s: unknown key \"%s\" (a group has targets and labels)",
			                origin, key);
			json_decref(g); /* key lives in g */
			return rc;
		}
	}
	rc = fleet_sd_group(t, json_object_get(g, "targets"), json_object_get(g, "labels"), origin,
	                    why, wlen);
	json_decref(g);
	return rc;
}

int fleet_sd_json(const char *path, const char *buf, size_t len, struct fleet_targets *t, char *why,
                  size_t wlen)
{
	size_t off = skip_ws(buf, len, 0), used;
	int rc;

	if (off >= len || buf[off] != '[')
		return errbuf_set(why, wlen, -EINVAL,
		                  "%s:%u: file_sd JSON is a list of groups: [{\"targets\": [...]}]",
		                  path, line_at(buf, off));
	off = skip_ws(buf, len, off + 1);
	if (off < len && buf[off] == ']')
		return errbuf_set(why, wlen, -EINVAL, "%s: no targets in it", path);
	for (;;) {
		rc = one_group(path, buf, len, off, &used, t, why, wlen);
		if (rc < 0)
			return rc;
		off = skip_ws(buf, len, off + used);
		if (off < len && buf[off] == ',') {
			off = skip_ws(buf, len, off + 1);
			continue;
		}
		if (off < len && buf[off] == ']')
			break;
		return errbuf_set(why, wlen, -EINVAL, "%s:%u: expected ',' or ']' after a group",
		                  path, line_at(buf, off));
	}
	off = skip_ws(buf, len, off + 1);
	if (off < len)
		return errbuf_set(why, wlen, -EINVAL, "%s:%u: text after the list of groups", path,
		                  line_at(buf, off));
	return 0;
}
