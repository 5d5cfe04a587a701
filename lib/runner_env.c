/* runner_env: the allow-list of variables a probe inherits. */
#include <stddef.h>
#include <string.h>

#include "runner_env.h"
#include "xmalloc.h"

/* A name is kept when it equals `name`, or starts with it when `prefix`. */
static const struct {
	const char *name;
	int prefix;
} kept[] = {
    {"PATH", 0},
    {"LANG", 0},
    {"LANGUAGE", 0},
    {"LC_", 1},
    {"TZ", 0},
    {"HOME", 0},
    /* systemd's StateDirectory=: where a probe in the unit may write. */
    {"STATE_DIRECTORY", 0},
    /* Test doubles reach probes through the daemon's environment. */
    {"LD_PRELOAD", 0},
#ifdef __SANITIZE_ADDRESS__
    /* Only in a sanitizer build (make check-sanitize), whose probes are
     * sanitized too: without its options, an ASan probe run under a
     * preloaded test double stops at "ASan runtime does not come first". */
    {"ASAN_OPTIONS", 0},
    {"UBSAN_OPTIONS", 0},
    {"LSAN_OPTIONS", 0},
#endif
};

int runner_env_keeps(const char *entry)
{
	const char *eq = strchr(entry, '=');
	size_t len;

	if (!eq)
		return 0;
	len = (size_t)(eq - entry);
	for (size_t i = 0; i < sizeof(kept) / sizeof(kept[0]); i++) {
		size_t n = strlen(kept[i].name);

		if (kept[i].prefix ? len > n && !strncmp(entry, kept[i].name, n)
		                   : len == n && !strncmp(entry, kept[i].name, n))
			return 1;
	}
	return 0;
}

char **runner_env_build(char *const *env)
{
	size_t n = 0, k = 0;
	char **out;

	while (env && env[n])
		n++;
	out = xcalloc(n + 1, sizeof(*out));
	for (size_t i = 0; i < n; i++)
		if (runner_env_keeps(env[i]))
			out[k++] = env[i];
	out[k] = NULL;
	return out;
}
