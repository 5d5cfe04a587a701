/*
 * fingerprint_change: a fingerprint difference ("kernel 6.1.0-18-amd64 →
 * 6.1.0-21-amd64; kernel build #1 → #2") named as an event's headline says
 * it: one upgraded component by its name and new version, else the whole
 * difference.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fingerprint_change.h"
#include "xmalloc.h"

#define ARROW " → "

/* The components named alone, with what a newer and an older version of
 * each is called. */
static const struct {
	const char *label, *newer, *older;
} components[] = {
    {"kernel", "kernel upgrade", "kernel downgrade"},
    {"glibc", "glibc upgrade", "glibc downgrade"},
    {"microcode", "microcode update", "microcode downgrade"},
};

/* Parts that go along with another and are not named: a new kernel
 * release comes with a new build string. */
static const char *const companions[] = {"kernel build "};

static int is_companion(const char *part, size_t len)
{
	for (size_t i = 0; i < sizeof(companions) / sizeof(companions[0]); i++) {
		size_t n = strlen(companions[i]);

		if (len >= n && !strncmp(part, companions[i], n))
			return 1;
	}
	return 0;
}

/* The one part of diff that is not a companion, or NULL when there are
 * more (or none). *len gets its length. */
static const char *sole_part(const char *diff, size_t *len)
{
	const char *p = diff, *found = NULL;

	while (*p) {
		const char *end = strstr(p, "; ");
		size_t n = end ? (size_t)(end - p) : strlen(p);

		if (!is_companion(p, n)) {
			if (found)
				return NULL;
			found = p;
			*len = n;
		}
		p += n + (end ? 2 : 0);
	}
	return found;
}

/* "the kernel upgrade to B" for a part "kernel A → B"; NULL otherwise. */
static char *component_name(const char *part, size_t len)
{
	char *s = xstrndup(part, len), *arrow = strstr(s, ARROW), *out = NULL;

	for (size_t i = 0; arrow && i < sizeof(components) / sizeof(components[0]); i++) {
		size_t n = strlen(components[i].label);
		const char *from = s + n + 1, *to = arrow + strlen(ARROW);

		if (strncmp(s, components[i].label, n) || s[n] != ' ' || from > arrow)
			continue;
		*arrow = '\0';
		xasprintf(&out, "the %s to %s",
		          strverscmp(to, from) >= 0 ? components[i].newer : components[i].older,
		          to);
		break;
	}
	free(s);
	return out;
}

char *fingerprint_change_name(const char *diff)
{
	size_t len = 0;
	const char *part = diff ? sole_part(diff, &len) : NULL;
	char *s = part ? component_name(part, len) : NULL;

	if (!s)
		xasprintf(&s, "the host change (%s)", diff ? diff : "unknown");
	return s;
}
