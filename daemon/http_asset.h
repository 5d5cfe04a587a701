/*
 * http_asset: the static files the daemon serves (the embedded dashboard under
 * web/ and the dygraphs library from its Debian directory), each with its
 * MIME type, a content-hash ETag and a gzip copy. Knows no HTTP library;
 * compresses through lib/gzip.c, the one wrapper of zlib.
 */
#ifndef TW_HTTP_ASSET_H
#define TW_HTTP_ASSET_H

#include <stddef.h>

/* Files larger than this are not served from disk. */
#define HTTP_ASSET_MAX_FILE (16u << 20)
/* Smaller bodies are sent as they are. */
#define HTTP_ASSET_GZIP_MIN 1024

struct http_asset {
	const char *mime;
	const unsigned char *data;
	size_t size;
	char etag[24];     /* "\"0123456789abcdef\"" of the content */
	unsigned char *gz; /* NULL when not worth compressing */
	size_t gz_size;
	char gz_etag[28];     /* the gzip representation's own ETag */
	unsigned char *owned; /* data when read from disk */
};

/* The MIME type for a file name, from a table keyed on the extension. */
const char *http_asset_mime(const char *name);

/* An asset over embedded bytes (not copied), compressed once at the
 * highest level. Never fails. */
struct http_asset *http_asset_from_memory(const char *name, const unsigned char *data, size_t size);
/* Reads `rel` below directory `dir`. Only regular files; a path with a
 * ".." or hidden segment, a backslash or an empty segment is -ENOENT, so
 * nothing outside `dir` is reachable. The gzip copy is made only when
 * `gzip` is set. 0 or -errno (-EFBIG over HTTP_ASSET_MAX_FILE). */
int http_asset_from_file(const char *dir, const char *rel, int gzip, struct http_asset **out);
void http_asset_free(struct http_asset *a);

/* A relative path that cannot leave its directory: no "..", no segment
 * starting with '.', no empty segment, no backslash, not absolute. */
int http_asset_path_ok(const char *rel);

/* Does an Accept-Encoding header (may be NULL) accept gzip? */
int http_asset_accepts_gzip(const char *accept_encoding);
/* Does an If-None-Match header (may be NULL) match this ETag? */
int http_asset_etag_matches(const char *if_none_match, const char *etag);

#endif
