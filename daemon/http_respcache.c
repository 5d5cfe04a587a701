/*
 * http_respcache: a small direct-mapped cache of response bodies keyed by the
 * request target and validated by the store's data version. One mutex;
 * lookups copy the body out, so callers own what they send.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "http_respcache.h"
#include "xmalloc.h"

struct slot {
	char *key;
	int64_t version;
	char *body;
	size_t len;
};

struct http_respcache {
	pthread_mutex_t lock;
	struct slot *slots;
	unsigned n;
	size_t max_body;
};

/* FNV-1a: the slot a key lives in. */
static unsigned slot_of(const struct http_respcache *rc, const char *key)
{
	uint64_t h = 14695981039346656037ull;

	for (const unsigned char *p = (const unsigned char *)key; *p; p++)
		h = (h ^ *p) * 1099511628211ull;
	return (unsigned)(h % rc->n);
}

struct http_respcache *http_respcache_new(unsigned slots, size_t max_body)
{
	struct http_respcache *rc = xcalloc(1, sizeof(*rc));

	pthread_mutex_init(&rc->lock, NULL);
	rc->n = slots ? slots : 1;
	rc->slots = xcalloc(rc->n, sizeof(*rc->slots));
	rc->max_body = max_body;
	return rc;
}

void http_respcache_free(struct http_respcache *rc)
{
	if (!rc)
		return;
	for (unsigned i = 0; i < rc->n; i++) {
		free(rc->slots[i].key);
		free(rc->slots[i].body);
	}
	free(rc->slots);
	pthread_mutex_destroy(&rc->lock);
	free(rc);
}

int http_respcache_get(struct http_respcache *rc, const char *key, int64_t version, char **body,
                       size_t *len)
{
	struct slot *s = &rc->slots[slot_of(rc, key)];
	int r = -ENOENT;

	pthread_mutex_lock(&rc->lock);
	if (s->key && s->version == version && !strcmp(s->key, key)) {
		*body = xmalloc(s->len + 1);
		memcpy(*body, s->body, s->len + 1);
		*len = s->len;
		r = 0;
	}
	pthread_mutex_unlock(&rc->lock);
	return r;
}

void http_respcache_put(struct http_respcache *rc, const char *key, int64_t version,
                        const char *body, size_t len)
{
	struct slot *s = &rc->slots[slot_of(rc, key)];
	char *k, *b;

	if (len > rc->max_body)
		return;
	k = xstrdup(key);
	b = xmalloc(len + 1);
	memcpy(b, body, len);
	b[len] = '\0';
	pthread_mutex_lock(&rc->lock);
	free(s->key);
	free(s->body);
	s->key = k;
	s->body = b;
	s->len = len;
	s->version = version;
	pthread_mutex_unlock(&rc->lock);
}
