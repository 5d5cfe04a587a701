/*
 * gzip: compresses buffers and reads gzipped files through zlib (see
 * gzip.h).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "gzip.h"
#include "xmalloc.h"

int gzip_compress(const unsigned char *in, size_t n, int level, unsigned char **out, size_t *out_n)
{
	z_stream z;
	unsigned char *buf;
	uLong cap;
	int rc;

	memset(&z, 0, sizeof(z));
	/* 16 + 15 window bits: a gzip wrapper rather than zlib's. */
	if (deflateInit2(&z, level, Z_DEFLATED, 16 + 15, 9, Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	cap = deflateBound(&z, (uLong)n);
	buf = xmalloc(cap);
	z.next_in = (unsigned char *)(uintptr_t)in;
	z.avail_in = (uInt)n;
	z.next_out = buf;
	z.avail_out = (uInt)cap;
	rc = deflate(&z, Z_FINISH);
	*out_n = z.total_out;
	deflateEnd(&z);
	if (rc != Z_STREAM_END) {
		free(buf);
		return -EIO;
	}
	*out = buf;
	return 0;
}

int gzip_read_file(const char *path, size_t max, char **out)
{
	gzFile f = gzopen(path, "rb");
	size_t len = 0;
	char *buf;
	int n, r = 0;

	if (!f)
		return errno ? -errno : -ENOMEM;
	buf = xmalloc(max + 1);
	while ((n = gzread(f, buf + len, (unsigned)(max + 1 - len))) > 0) {
		len += (size_t)n;
		if (len > max) {
			r = -EFBIG;
			break;
		}
	}
	if (n < 0)
		r = -EIO;
	gzclose(f);
	if (r < 0) {
		free(buf);
		return r;
	}
	buf[len] = '\0';
	*out = buf;
	return 0;
}
