/*
 * fuzz_config: arbitrary bytes as a threadwatchd configuration file
 * (config_parse_buffer). A crash, a sanitizer report, a rejection without a
 * "<buffer>:LINE:" message, or an accepted file whose effective values
 * (config_print) do not parse back to the same values is a bug.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "fuzz.h"

/* The effective values with the origin comments and secrets left out. */
static char *values(const struct config *c)
{
	char *text = NULL, *out, *line, *save = NULL;
	size_t len = 0, n = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		abort();
	config_print(c, f);
	fclose(f);
	out = calloc(1, len + 1);
	if (!out)
		abort();
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *origin = strstr(line, " # ");
		size_t keep;

		if (line[0] == '#' || !strncmp(line, "token = ", 8))
			continue;
		/* the origin comment is the last " # " of the line */
		for (char *p = origin; p; p = strstr(p + 1, " # "))
			origin = p;
		keep = origin ? (size_t)(origin - line) : strlen(line);
		while (keep && line[keep - 1] == ' ')
			keep--;
		memcpy(out + n, line, keep);
		n += keep;
		out[n++] = '\n';
	}
	free(text);
	return out;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct config c, again;
	char err[512] = "", err2[512] = "", *first, *second, *printed = NULL;
	size_t printed_len = 0;
	FILE *f;
	int r;

	config_init(&c);
	r = config_parse_buffer((const char *)data, size, &c, err, sizeof(err));
	if (r < 0) {
		if (r != -EINVAL || strncmp(err, "<buffer>:", 9) != 0)
			abort(); /* every rejection names the line */
		config_free(&c);
		return 0;
	}
	/* Accepted: the printed values are a file that parses to the same. */
	f = open_memstream(&printed, &printed_len);
	if (!f)
		abort();
	config_print(&c, f);
	fclose(f);
	config_init(&again);
	if (config_parse_buffer(printed, printed_len, &again, err2, sizeof(err2)) < 0) {
		fprintf(stderr, "printed values do not parse: %s\n%s", err2, printed);
		abort();
	}
	first = values(&c);
	second = values(&again);
	if (strcmp(first, second)) {
		fprintf(stderr, "round trip differs:\n%s---\n%s", first, second);
		abort();
	}
	free(first);
	free(second);
	free(printed);
	config_free(&again);
	config_free(&c);
	return 0;
}
