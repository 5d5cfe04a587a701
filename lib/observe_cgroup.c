/*
 * observe_cgroup: where a process belongs, read from /proc/PID/cgroup as
 * proc_cgroup_show() (kernel/cgroup/cgroup.c) writes it: one line per
 * hierarchy, "ID:CONTROLLERS:PATH", cgroup v2's as "0::PATH", a named v1
 * hierarchy's controllers as "name=NAME". The unit is found in the path
 * the way systemd's cg_path_get_unit() finds it: slices are skipped, and
 * the first component that is a unit name is the unit; under a user
 * manager (user@UID.service) the next unit is the user's own.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "observep.h"
#include "xmalloc.h"

/* Unit types a process can run in (unit_name_is_valid() takes any of
 * systemd's types; slices hold units, and the rest hold no process). */
static const char *const unit_suffixes[] = {".service", ".scope", ".socket", ".mount", ".swap"};

#define UNIT_NAME_MAX 255 /* systemd's UNIT_NAME_MAX less the NUL */

static int unit_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == ':' || c == '_' || c == '.' || c == '-' || c == '\\';
}

int obs_unit_name_valid(const char *s, size_t n)
{
	size_t at = n, stem;

	if (n == 0 || n > UNIT_NAME_MAX || s[0] == '.')
		return 0;
	for (size_t i = 0; i < sizeof(unit_suffixes) / sizeof(unit_suffixes[0]); i++) {
		size_t k = strlen(unit_suffixes[i]);

		if (n > k && !memcmp(s + n - k, unit_suffixes[i], k)) {
			stem = n - k;
			goto suffixed;
		}
	}
	return 0;
suffixed:
	for (size_t i = 0; i < stem; i++) {
		if (s[i] == '@' && at == n) {
			at = i;
			continue;
		}
		if (!unit_char(s[i]))
			return 0;
	}
	return at != 0; /* "@x.service" has no prefix */
}

static int is_slice(const char *s, size_t n)
{
	return n > 6 && !memcmp(s + n - 6, ".slice", 6);
}

/* cg_unescape(): systemd prefixes "_" to a name that would clash. */
static void unescape(const char **s, size_t *n)
{
	if (*n > 1 && (*s)[0] == '_') {
		(*s)++;
		(*n)--;
	}
}

/* The next unit in path after *pos (a component that is not a slice and
 * names a unit), as a malloc'd copy; NULL when the next non-slice
 * component is not a unit. *pos moves past it. */
static char *next_unit(const char *path, size_t *pos)
{
	const char *p = path + *pos;

	while (*p) {
		const char *c;
		size_t n;

		while (*p == '/')
			p++;
		if (!*p)
			break;
		n = strcspn(p, "/");
		c = p;
		p += n;
		unescape(&c, &n);
		if (is_slice(c, n))
			continue;
		*pos = (size_t)(p - path);
		return obs_unit_name_valid(c, n) ? xstrndup(c, n) : NULL;
	}
	*pos = (size_t)(p - path);
	return NULL;
}

static int user_manager(const char *u)
{
	size_t n = strlen(u);

	return !strncmp(u, "user@", 5) && n > 13 && !strcmp(u + n - 8, ".service");
}

static void find_unit(struct obs_cgroup *cg)
{
	size_t pos = 0;
	char *u = next_unit(cg->path, &pos), *inner;

	if (!u)
		return;
	if (user_manager(u) && (inner = next_unit(cg->path, &pos))) {
		cg->manager = u;
		cg->unit = inner;
		return;
	}
	cg->unit = u;
}

int obs_cgroup_parse(const char *text, struct obs_cgroup *cg)
{
	const char *v2 = NULL, *named = NULL, *line;
	size_t v2n = 0, namedn = 0, lines = 0;

	memset(cg, 0, sizeof(*cg));
	for (line = text; *line; line += strcspn(line, "\n") + (line[strcspn(line, "\n")] != 0)) {
		size_t len = strcspn(line, "\n");
		const char *c1 = memchr(line, ':', len), *c2;

		if (len == 0)
			continue;
		if (!c1 || !(c2 = memchr(c1 + 1, ':', len - (size_t)(c1 + 1 - line))) || c1 == line)
			return -EINVAL;
		for (const char *d = line; d < c1; d++)
			if (*d < '0' || *d > '9')
				return -EINVAL;
		lines++;
		if (c2[1] != '/')
			continue; /* a path outside our cgroup namespace: "/../x" is still '/' */
		if (c1 + 1 == c2 && !strncmp(line, "0:", 2)) {
			v2 = c2 + 1;
			v2n = len - (size_t)(c2 + 1 - line);
		} else if ((size_t)(c2 - c1 - 1) == 12 && !memcmp(c1 + 1, "name=systemd", 12)) {
			named = c2 + 1;
			namedn = len - (size_t)(c2 + 1 - line);
		}
	}
	if (!lines)
		return -EINVAL;
	/* a hybrid host keeps systemd's own tree in name=systemd */
	if (named) {
		cg->path = xstrndup(named, namedn);
		cg->hierarchy = "v1 name=systemd";
	} else if (v2) {
		cg->path = xstrndup(v2, v2n);
		cg->hierarchy = "v2";
	}
	if (cg->path)
		find_unit(cg);
	return 0;
}

void obs_cgroup_free(struct obs_cgroup *cg)
{
	if (!cg)
		return;
	free(cg->path);
	free(cg->unit);
	free(cg->manager);
	memset(cg, 0, sizeof(*cg));
}
