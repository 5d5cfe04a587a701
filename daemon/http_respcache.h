/*
 * http_respcache: finished response bodies of the HTTP API, kept while the data
 * they were read from is unchanged. Rebuilding a JSON answer from SQLite
 * costs far more than sending it; a body is reused as long as the store's
 * data version (store_data_version) still matches.
 */
#ifndef TW_HTTP_RESPCACHE_H
#define TW_HTTP_RESPCACHE_H

#include <stddef.h>
#include <stdint.h>

struct http_respcache;

/* A cache of `slots` entries; bodies over max_body bytes are not kept. */
struct http_respcache *http_respcache_new(unsigned slots, size_t max_body);
/* Accepts NULL. */
void http_respcache_free(struct http_respcache *rc);

/* On a hit at exactly `version`, a malloc'd copy of the body in *body and
 * 0; -ENOENT otherwise. */
int http_respcache_get(struct http_respcache *rc, const char *key, int64_t version, char **body,
                       size_t *len);
/* Keeps a copy of body under key at version, replacing what the slot held. */
void http_respcache_put(struct http_respcache *rc, const char *key, int64_t version,
                        const char *body, size_t len);

#endif
