/*
 * jpath: a value inside a JSON document by a path of object keys
 * ("current/fingerprint/cpu"), the walk /metrics and `fleet` both take.
 */
#ifndef TW_JPATH_H
#define TW_JPATH_H

#include <jansson.h>

/* The value at path (keys separated by '/', each under 128 bytes) below v,
 * or NULL when a key is missing, v is NULL or not an object on the way. A
 * borrowed reference, as json_object_get() gives. */
json_t *jpath_get(const json_t *v, const char *path);

#endif
