/*
 * fuzz_fleet_sd: arbitrary bytes as a `threadwatch fleet --file` file_sd
 * file, through both readers (cli/fleet_sd_json.c and fleet_sd_yaml.c, as
 * fleet_file_read() calls them). A crash, a sanitizer report, a rejection
 * without a "fuzz:" message, or an accepted file with a target that is
 * empty or holds white space, a label that is not a string, or an origin
 * other than "fuzz:LINE" is a bug.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fleetp.h"
#include "fuzz.h"

/* The invariants of an accepted file. */
static void check(const struct fleet_targets *t)
{
	for (size_t i = 0; i < t->n; i++) {
		const struct fleet_target *x = &t->v[i];
		const char *key;
		json_t *v;

		if (!*x->url || x->url[strcspn(x->url, " \t\r\n")] ||
		    strncmp(x->origin, "fuzz:", 5) || !json_is_object(x->labels))
			abort();
		if (x->scheme && strcmp(x->scheme, "http") && strcmp(x->scheme, "https"))
			abort();
		json_object_foreach(x->labels, key, v)
		{
			if (!json_is_string(v) || !strncmp(key, "__", 2))
				abort();
		}
	}
}

static void one(const uint8_t *data, size_t size, int yaml)
{
	struct fleet_targets t = {0};
	char why[512] = "", *buf = malloc(size + 1);
	int rc;

	if (!buf)
		abort();
	memcpy(buf, data, size);
	buf[size] = '\0';
	rc = yaml ? fleet_sd_yaml("fuzz", buf, &t, why, sizeof(why))
	          : fleet_sd_json("fuzz", buf, size, &t, why, sizeof(why));
	if (rc < 0 && strncmp(why, "fuzz", 4))
		abort();
	if (rc == 0)
		check(&t);
	fleet_targets_free(&t);
	free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (memchr(data, '\0', size)) /* fleet_file_read() refuses those first */
		return 0;
	one(data, size, 0);
	one(data, size, 1);
	return 0;
}
