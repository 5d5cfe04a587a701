/*
 * fuzz_protocol: the probe-document validator (protocol_parse) on arbitrary
 * bytes. Every rejection carries a message; every accepted document reads
 * back through the convenience readers and survives a dump and re-parse.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "fuzz.h"
#include "protocol.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[512] = "", err2[512] = "";
	json_t *doc = NULL, *again = NULL, *pts;
	char *text;

	if (protocol_parse((const char *)data, size, &doc, err, sizeof(err)) < 0) {
		if (doc || !err[0])
			abort();
		return 0;
	}
	if (protocol_validate(doc, err, sizeof(err)) != 0)
		abort();
	if (strcmp(protocol_status(doc), "ok") && strcmp(protocol_status(doc), "skipped") &&
	    strcmp(protocol_status(doc), "error"))
		abort();
	(void)protocol_scalar(doc, "low_ns");
	pts = protocol_series(doc, "pair_ratio");
	if (pts && !json_is_array(pts))
		abort();
	text = json_dumps(doc, JSON_COMPACT);
	if (!text)
		abort();
	if (protocol_parse(text, strlen(text), &again, err2, sizeof(err2)) < 0) {
		fprintf(stderr, "accepted document fails after a round trip: %s\n", err2);
		abort();
	}
	if (!json_equal(doc, again))
		abort();
	free(text);
	json_decref(again);
	json_decref(doc);
	return 0;
}
