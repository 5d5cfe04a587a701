/*
 * workload_key: a workload's ref and name (see workload_key.h).
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "workload_key.h"
#include "xmalloc.h"

void wkey_ref(const char *key, char ref[WKEY_REF_LEN])
{
	uint64_t h = UINT64_C(14695981039346656037);

	for (const unsigned char *p = (const unsigned char *)key; *p; p++) {
		h ^= *p;
		h *= UINT64_C(1099511628211);
	}
	snprintf(ref, WKEY_REF_LEN, "%016llx", (unsigned long long)h);
}

int wkey_ref_ok(const char *s)
{
	size_t n = strspn(s, "0123456789abcdef");

	return n == WKEY_REF_LEN - 1 && s[n] == '\0';
}

char *wkey_name(const json_t *w)
{
	/* the field that names each kind, as the observer keys it */
	static const struct {
		const char *kind, *field;
	} by_kind[] = {{"unit", "unit"}, {"cgroup", "cgroup"}, {"process", "comm"}};
	const char *kind = json_string_value(json_object_get(w, "kind"));
	const char *mgr = json_string_value(json_object_get(w, "manager"));
	char *name;

	for (size_t i = 0; kind && i < sizeof(by_kind) / sizeof(by_kind[0]); i++) {
		const char *v = json_string_value(json_object_get(w, by_kind[i].field));

		if (strcmp(kind, by_kind[i].kind) || !v || !v[0])
			continue;
		if (i == 0 && mgr && mgr[0])
			xasprintf(&name, "%s/%s", mgr, v);
		else
			name = xstrdup(v);
		return name;
	}
	/* never "other", which names the rest: the key says what it is */
	return xstrdup(json_string_value(json_object_get(w, "key")) ?: "?");
}
