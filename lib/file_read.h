/*
 * file_read: a small file read whole, the one reader the programs share
 * (configuration files, PEM files, file_sd target files).
 */
#ifndef TW_FILE_READ_H
#define TW_FILE_READ_H

#include <stddef.h>

/* Reads `path` into a malloc'd, NUL-terminated *out of *len bytes (len may
 * be NULL): 0, -EFBIG when it holds more than `max` bytes, or -errno. */
int file_read_all(const char *path, size_t max, char **out, size_t *len);

#endif
