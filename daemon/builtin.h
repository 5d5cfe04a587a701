/*
 * builtin: files embedded at build time by daemon/tools/mkbuiltin.c: the
 * SQL schema and migrations under sql/ and the dashboard under web/.
 */
#ifndef TW_BUILTIN_H
#define TW_BUILTIN_H

#include <stddef.h>

struct builtin_file {
	const char *name;          /* "sql/schema.sql", "web/index.html" */
	const unsigned char *data; /* NUL-terminated for convenience */
	size_t size;               /* without the terminating NUL */
};

extern const struct builtin_file builtin_files[];
extern const unsigned builtin_count;

/* The embedded file with this name, or NULL. */
const struct builtin_file *builtin_find(const char *name);

#endif
