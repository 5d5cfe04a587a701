/*
 * sched_probes: which probes a cycle runs (see scheduler.h): the built-ins
 * of the catalogue from probe_dir, then the regular files of probes_d.
 */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "catalog.h"
#include "runner.h"
#include "schedp.h"
#include "scheduler.h"
#include "xmalloc.h"

int sched_probe_name_ok(const char *name)
{
	size_t n = strlen(name);

	if (n < 1 || n > 64)
		return 0;
	return strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789_-") == n;
}

static void add_probe(struct sched_probe **list, size_t *n, const char *name, char *path,
                      const char *skip)
{
	*list = xreallocarray(*list, *n + 1, sizeof(**list));
	(*list)[*n] = (struct sched_probe){xstrdup(name), path, skip};
	(*n)++;
}

int sched_is_builtin(const char *name)
{
	return catalog_probe_find(name) != NULL;
}

int sched_discover(const char *probe_dir, const char *probes_d, struct sched_probe **list,
                   size_t *n)
{
	struct dirent **ents = NULL;
	int count, r = 0;

	*list = NULL;
	*n = 0;
	for (size_t i = 0; i < catalog_n_probes; i++) {
		const char *name = catalog_probes[i].name;
		char *path = runner_find_probe(probe_dir, name);

		/* a missing built-in still runs, so that its error is recorded */
		if (!path)
			xasprintf(&path, "%.*s/%s", (int)strcspn(probe_dir, ":"), probe_dir, name);
		add_probe(list, n, name, path, NULL);
	}
	if (!probes_d || !*probes_d)
		return 0;
	count = scandir(probes_d, &ents, NULL, alphasort);
	if (count < 0)
		return errno == ENOENT ? 0 : -errno;
	for (int i = 0; i < count; i++) {
		const char *name = ents[i]->d_name, *skip = NULL;
		struct stat sb;
		char *path;

		if (name[0] == '.' || name[strlen(name) - 1] == '~')
			continue; /* hidden and backup files are not probes */
		xasprintf(&path, "%s/%s", probes_d, name);
		if (stat(path, &sb) < 0 || !S_ISREG(sb.st_mode))
			skip = "not a regular file";
		else if (!sched_probe_name_ok(name))
			skip = "not a probe name ([a-z0-9_-], 1 to 64 characters)";
		else if (sched_is_builtin(name))
			skip = "the name of a built-in probe";
		add_probe(list, n, name, path, skip);
	}
	for (int i = 0; i < count; i++)
		free(ents[i]);
	free(ents);
	return r;
}

void sched_probes_free(struct sched_probe *list, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(list[i].name);
		free(list[i].path);
	}
	free(list);
}
