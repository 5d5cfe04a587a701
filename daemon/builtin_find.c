/* builtin_find: looks up an embedded file by name (the table is sorted). */
#include <stdlib.h>
#include <string.h>

#include "builtin.h"

static int cmp(const void *key, const void *elem)
{
	return strcmp(key, ((const struct builtin_file *)elem)->name);
}

const struct builtin_file *builtin_find(const char *name)
{
	return bsearch(name, builtin_files, builtin_count, sizeof(builtin_files[0]), cmp);
}
