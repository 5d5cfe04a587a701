/*
 * http_asset_cache: files below a directory, compressed once (see
 * asset_cache.h).
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "http_asset_cache.h"
#include "xmalloc.h"

struct entry {
	char *rel;
	struct http_asset *a;
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime;
};

struct http_asset_cache {
	pthread_mutex_t lock;
	char *dir;
	size_t max, n, next; /* next: the slot a new file takes when full */
	struct entry *e;
};

struct http_asset_cache *http_asset_cache_new(const char *dir, size_t max)
{
	struct http_asset_cache *ac = xcalloc(1, sizeof(*ac));

	pthread_mutex_init(&ac->lock, NULL);
	ac->dir = xstrdup(dir);
	ac->max = max ? max : 1;
	ac->e = xcalloc(ac->max, sizeof(*ac->e));
	return ac;
}

static void entry_clear(struct entry *e)
{
	free(e->rel);
	http_asset_free(e->a);
	memset(e, 0, sizeof(*e));
}

void http_asset_cache_free(struct http_asset_cache *ac)
{
	if (!ac)
		return;
	for (size_t i = 0; i < ac->n; i++)
		entry_clear(&ac->e[i]);
	free(ac->e);
	free(ac->dir);
	pthread_mutex_destroy(&ac->lock);
	free(ac);
}

static int same_file(const struct entry *e, const struct stat *sb)
{
	return e->dev == sb->st_dev && e->ino == sb->st_ino && e->size == sb->st_size &&
	       e->mtime.tv_sec == sb->st_mtim.tv_sec && e->mtime.tv_nsec == sb->st_mtim.tv_nsec;
}

/* The entry for rel, read again when the file changed; -errno. Lock held. */
static int lookup_locked(struct http_asset_cache *ac, const char *rel, struct entry **out)
{
	struct entry *e = NULL;
	struct stat sb;
	char *path;
	int r;

	if (!http_asset_path_ok(rel))
		return -ENOENT;
	xasprintf(&path, "%s/%s", ac->dir, rel);
	r = stat(path, &sb) < 0 ? -errno : 0;
	free(path);
	if (r < 0)
		return r == -ENOTDIR ? -ENOENT : r;
	for (size_t i = 0; i < ac->n && !e; i++)
		if (!strcmp(ac->e[i].rel, rel))
			e = &ac->e[i];
	if (e && same_file(e, &sb)) {
		*out = e;
		return 0;
	}
	if (!e)
		e = ac->n < ac->max ? &ac->e[ac->n++] : &ac->e[ac->next++ % ac->max];
	entry_clear(e);
	r = http_asset_from_file(ac->dir, rel, 1, &e->a);
	if (r < 0) {
		/* keep the slot valid: an empty name matches no request */
		e->rel = xstrdup("");
		return r;
	}
	e->rel = xstrdup(rel);
	e->dev = sb.st_dev;
	e->ino = sb.st_ino;
	e->size = sb.st_size;
	e->mtime = sb.st_mtim;
	*out = e;
	return 0;
}

int http_asset_cache_with(struct http_asset_cache *ac, const char *rel,
                          int (*fn)(const struct http_asset *a, void *ctx), void *ctx)
{
	struct entry *e;
	int r;

	pthread_mutex_lock(&ac->lock);
	r = lookup_locked(ac, rel, &e);
	if (r >= 0)
		r = fn(e->a, ctx);
	pthread_mutex_unlock(&ac->lock);
	return r;
}
