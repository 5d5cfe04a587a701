/*
 * secret_file: whether a file that holds a secret (a token file, a TLS
 * key) can be read by users other than its owner.
 */
#ifndef TW_SECRET_FILE_H
#define TW_SECRET_FILE_H

#include <sys/types.h>

/* 1 when the group or others may read `path` (its mode in *mode), 0 when
 * only its owner may, -errno when it cannot be looked at. */
int secret_file_exposed(const char *path, mode_t *mode);

#endif
