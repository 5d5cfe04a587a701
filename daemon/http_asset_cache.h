/*
 * http_asset_cache: files served from a directory on disk (the /dygraphs files), read
 * and gzip-compressed once and kept while the file stays the same (its
 * device, inode, size and modification time), rather than compressed
 * again for every request.
 */
#ifndef TW_HTTP_ASSET_CACHE_H
#define TW_HTTP_ASSET_CACHE_H

#include <stddef.h>

#include "http_asset.h"

struct http_asset_cache;

/* A cache of at most `max` files below `dir`. Never fails. */
struct http_asset_cache *http_asset_cache_new(const char *dir, size_t max);
/* Accepts NULL. */
void http_asset_cache_free(struct http_asset_cache *ac);

/* Calls fn with the asset for `rel` (http_asset_from_file()'s rules), under the
 * cache's lock: fn must copy what it keeps. Reads the file on a miss or
 * when it changed. fn's result, or -errno from http_asset_from_file(). */
int http_asset_cache_with(struct http_asset_cache *ac, const char *rel,
                          int (*fn)(const struct http_asset *a, void *ctx), void *ctx);

#endif
