/*
 * http_asset: static files with their MIME type, ETag and gzip copy (see
 * asset.h). The ETag is a 64-bit FNV-1a hash of the bytes, so it changes
 * exactly when the content does.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "http_asset.h"
#include "gzip.h"
#include "xmalloc.h"

struct mime_type {
	const char *ext;
	const char *type;
	int compress;
};

static const struct mime_type mime_types[] = {
    {"html", "text/html; charset=utf-8", 1},
    {"js", "text/javascript; charset=utf-8", 1},
    {"mjs", "text/javascript; charset=utf-8", 1},
    {"css", "text/css; charset=utf-8", 1},
    {"json", "application/json", 1},
    {"map", "application/json", 1},
    {"svg", "image/svg+xml", 1},
    {"txt", "text/plain; charset=utf-8", 1},
    {"png", "image/png", 0},
    {"ico", "image/x-icon", 1},
    {"woff2", "font/woff2", 0},
};

static const struct mime_type *mime_lookup(const char *name)
{
	const char *dot = strrchr(name, '.'), *slash = strrchr(name, '/');

	if (!dot || (slash && slash > dot))
		return NULL;
	for (size_t i = 0; i < sizeof(mime_types) / sizeof(mime_types[0]); i++)
		if (!strcasecmp(dot + 1, mime_types[i].ext))
			return &mime_types[i];
	return NULL;
}

const char *http_asset_mime(const char *name)
{
	const struct mime_type *m = mime_lookup(name);

	return m ? m->type : "application/octet-stream";
}

static uint64_t fnv1a(const unsigned char *p, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (size_t i = 0; i < n; i++) {
		h ^= p[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

/* Fills the ETags and, when it saves something, the gzip copy at `level`
 * (0: none). */
static void asset_finish(struct http_asset *a, const char *name, int level)
{
	const struct mime_type *m = mime_lookup(name);
	uint64_t h = fnv1a(a->data, a->size);

	a->mime = m ? m->type : "application/octet-stream";
	snprintf(a->etag, sizeof(a->etag), "\"%016llx\"", (unsigned long long)h);
	snprintf(a->gz_etag, sizeof(a->gz_etag), "\"%016llx-gz\"", (unsigned long long)h);
	if (!level || !m || !m->compress || a->size < HTTP_ASSET_GZIP_MIN)
		return;
	if (gzip_compress(a->data, a->size, level, &a->gz, &a->gz_size) < 0 ||
	    a->gz_size >= a->size) {
		free(a->gz);
		a->gz = NULL;
	}
}

struct http_asset *http_asset_from_memory(const char *name, const unsigned char *data, size_t size)
{
	struct http_asset *a = xcalloc(1, sizeof(*a));

	a->data = data;
	a->size = size;
	asset_finish(a, name, 9);
	return a;
}

int http_asset_path_ok(const char *rel)
{
	const char *seg = rel;

	if (!*rel || strchr(rel, '\\'))
		return 0;
	for (;;) {
		size_t n = strcspn(seg, "/");

		if (n == 0 || seg[0] == '.')
			return 0;
		if (!seg[n])
			return 1;
		seg += n + 1;
	}
}

static int read_all(int fd, unsigned char *buf, size_t n)
{
	size_t got = 0;

	while (got < n) {
		ssize_t r = read(fd, buf + got, n - got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			return -EIO; /* the file shrank under us */
		got += (size_t)r;
	}
	return 0;
}

int http_asset_from_file(const char *dir, const char *rel, int gzip, struct http_asset **out)
{
	struct http_asset *a;
	struct stat sb;
	char *path;
	int fd, rc;

	if (!http_asset_path_ok(rel))
		return -ENOENT;
	xasprintf(&path, "%s/%s", dir, rel);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	free(path);
	if (fd < 0)
		return errno == ENOTDIR ? -ENOENT : -errno;
	if (fstat(fd, &sb) < 0) {
		rc = -errno;
		goto out_close;
	}
	if (!S_ISREG(sb.st_mode)) {
		rc = -ENOENT;
		goto out_close;
	}
	if ((uintmax_t)sb.st_size > HTTP_ASSET_MAX_FILE) {
		rc = -EFBIG;
		goto out_close;
	}
	a = xcalloc(1, sizeof(*a));
	a->owned = xmalloc((size_t)sb.st_size + 1);
	rc = read_all(fd, a->owned, (size_t)sb.st_size);
	if (rc < 0) {
		http_asset_free(a);
		goto out_close;
	}
	a->data = a->owned;
	a->size = (size_t)sb.st_size;
	asset_finish(a, rel, gzip ? 6 : 0);
	*out = a;
out_close:
	close(fd);
	return rc;
}

void http_asset_free(struct http_asset *a)
{
	if (!a)
		return;
	free(a->gz);
	free(a->owned);
	free(a);
}

/* Is `tok` (length n, surrounding blanks trimmed) equal to `word`? */
static int token_is(const char *tok, size_t n, const char *word)
{
	while (n && (*tok == ' ' || *tok == '\t')) {
		tok++;
		n--;
	}
	while (n && (tok[n - 1] == ' ' || tok[n - 1] == '\t'))
		n--;
	return n == strlen(word) && !strncasecmp(tok, word, n);
}

/* A q-value of zero ("q=0", "q=0.000") in a coding's parameters refuses
 * it. */
static int q_is_zero(const char *params, size_t n)
{
	char buf[64];
	const char *q;

	if (n >= sizeof(buf))
		n = sizeof(buf) - 1;
	memcpy(buf, params, n);
	buf[n] = '\0';
	for (q = strchr(buf, ';'); q; q = strchr(q + 1, ';')) {
		const char *v = q + 1 + strspn(q + 1, " \t");

		if ((v[0] == 'q' || v[0] == 'Q') && v[1] == '=')
			return strtod(v + 2, NULL) <= 0.0;
	}
	return 0;
}

int http_asset_accepts_gzip(const char *ae)
{
	const char *p = ae;

	if (!ae)
		return 0;
	while (*p) {
		size_t n = strcspn(p, ",");
		size_t name_n = strcspn(p, ",;");

		if ((token_is(p, name_n, "gzip") || token_is(p, name_n, "x-gzip") ||
		     token_is(p, name_n, "*")) &&
		    !q_is_zero(p, n))
			return 1;
		p += n;
		if (*p)
			p++;
	}
	return 0;
}

int http_asset_etag_matches(const char *inm, const char *etag)
{
	const char *p = inm;
	size_t elen = strlen(etag);

	if (!inm)
		return 0;
	while (*p) {
		size_t n;

		p += strspn(p, " \t,");
		if (*p == '*')
			return 1;
		/* Weak comparison, as If-None-Match asks for. */
		if (!strncmp(p, "W/", 2))
			p += 2;
		n = strcspn(p, ",");
		while (n && (p[n - 1] == ' ' || p[n - 1] == '\t'))
			n--;
		if (n == elen && !memcmp(p, etag, n))
			return 1;
		p += strcspn(p, ",");
	}
	return 0;
}
