/*
 * secret_file: files that hold a secret (a token file, a TLS key): where a
 * name points, their first line, and whether users other than the owner
 * can read them.
 */
#ifndef TW_SECRET_FILE_H
#define TW_SECRET_FILE_H

#include <stddef.h>
#include <sys/types.h>

/* The file a tls_cert, tls_key or *token_file value names: a relative name
 * is a systemd credential when $CREDENTIALS_DIRECTORY holds it, else the
 * name itself. Never NULL; the caller frees it. */
char *secret_file_path(const char *name);
/* The first line of the file (at most max bytes in all), without its end
 * of line, in *line (the caller frees it). 0, or -errno (-EFBIG: larger
 * than max). */
int secret_file_first_line(const char *path, size_t max, char **line);

/* 1 when the group or others may read `path` (its mode in *mode), 0 when
 * only its owner may, -errno when it cannot be looked at. */
int secret_file_exposed(const char *path, mode_t *mode);

#endif
