/* jpath: a value by a path of object keys (see jpath.h). */
#include <stdint.h>
#include <string.h>

#include "jpath.h"

json_t *jpath_get(const json_t *v, const char *path)
{
	json_t *out = (json_t *)(uintptr_t)v; /* borrowed, as json_object_get() gives */
	char key[128];

	while (out && *path) {
		size_t n = strcspn(path, "/");

		if (n >= sizeof(key))
			return NULL;
		memcpy(key, path, n);
		key[n] = '\0';
		out = json_object_get(out, key);
		path += n + (path[n] == '/');
	}
	return out;
}
