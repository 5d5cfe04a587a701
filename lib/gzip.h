/*
 * gzip: the one zlib wrapper. Compresses a buffer into a gzip member (the
 * daemon's Content-Encoding: gzip) and reads a file that may be gzipped
 * (the kernel's /proc/config.gz) whole.
 */
#ifndef TW_GZIP_H
#define TW_GZIP_H

#include <stddef.h>

/* gzip-compresses a buffer at zlib `level` (1..9): 0 with a malloc'd
 * *out, or -errno. */
int gzip_compress(const unsigned char *in, size_t n, int level, unsigned char **out, size_t *out_n);

/* Reads `path`, gzipped or plain (zlib reads a plain file as it is), into
 * a malloc'd NUL-terminated *out of at most `max` bytes: 0, -EFBIG when
 * longer, or -errno. */
int gzip_read_file(const char *path, size_t max, char **out);

#endif
