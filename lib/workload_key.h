/*
 * workload_key: what names a workload outside the observer's document. Its
 * ref, a short hash of its key that fits a URL path segment
 * (/api/v1/workloads/{ref}/series) and stays the same on every host and
 * across a rebuilt database; and its name, the unit, cgroup or comm a
 * person looks for, which /metrics uses as the workload label.
 */
#ifndef TW_WORKLOAD_KEY_H
#define TW_WORKLOAD_KEY_H

#include <stddef.h>

#include <jansson.h>

/* 16 lower-case hex digits and a NUL. */
#define WKEY_REF_LEN 17

/* The ref of a key: FNV-1a 64 of its bytes, in hex. */
void wkey_ref(const char *key, char ref[WKEY_REF_LEN]);
/* 1 when s has a ref's form. */
int wkey_ref_ok(const char *s);
/* The name of a workload of the observer's document (malloc'd), by its
 * kind: a unit's unit ("user@1000.service/app.service" under a user's
 * manager), a cgroup's path, a process's comm; its key for anything else
 * (never "other", the name of the rest summed). */
char *wkey_name(const json_t *w);

#endif
