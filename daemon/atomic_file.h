/*
 * atomic_file: replaces a file whole, so a reader never sees half of it
 * and a symlink planted at its name or at a temporary name is never
 * followed.
 */
#ifndef TW_ATOMIC_FILE_H
#define TW_ATOMIC_FILE_H

#include <stddef.h>
#include <sys/types.h>

/* Writes len bytes to a new temporary file in path's directory (mkostemp:
 * O_EXCL, so never through a symlink), syncs it, gives it `mode` and
 * renames it over path (which replaces a symlink there rather than
 * following it). 0 or -errno; the temporary file is removed on failure. */
int atomic_file_write(const char *path, const char *data, size_t len, mode_t mode);

#endif
