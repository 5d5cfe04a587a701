/*
 * fuzz_recommend: arbitrary bytes as recommendation inputs (json_loadb, then
 * rec_compute and rec_text), and the same document as every probe document
 * and the fingerprint of rec_inputs_build. A crash, a sanitizer report, a
 * rejection without a message or a result outside the documented shape is
 * a bug.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "recommend.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int one_of(const json_t *v, const char *const *names)
{
	const char *s = json_string_value(v);

	for (; s && *names; names++)
		if (!strcmp(s, *names))
			return 1;
	return 0;
}

/* The result's shape: the contract the CLI, the store and the API rely on. */
static int result_ok(const json_t *r)
{
	static const char *const verdicts[] = {"low", "high", NULL};
	static const char *const confidences[] = {"strong", "weak", "none", NULL};
	const json_t *reasons = json_object_get(r, "reasons");
	const json_t *v;
	size_t i;

	if (!one_of(json_object_get(r, "verdict"), verdicts) ||
	    !one_of(json_object_get(r, "confidence"), confidences) ||
	    !json_is_string(json_object_get(r, "sentence")) ||
	    !json_is_object(json_object_get(r, "figures")) || !json_array_size(reasons))
		return 0;
	json_array_foreach(reasons, i,
	                   v) if (!json_is_string(v) || !json_string_length(v)) return 0;
	/* low is never argued without figures */
	return !(!strcmp(json_string_value(json_object_get(r, "verdict")), "low") &&
	         !strcmp(json_string_value(json_object_get(r, "confidence")), "none"));
}

static void check(const json_t *inputs)
{
	char err[256] = "";
	json_t *r = rec_compute(inputs, err, sizeof(err));
	char *text, *dump;

	if (!r) {
		if (!err[0])
			abort();
		return;
	}
	if (!result_ok(r))
		abort();
	text = rec_text(r);
	dump = json_dumps(r, 0);
	if (!text || !dump)
		abort();
	free(text);
	free(dump);
	json_decref(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_t *doc = json_loadb((const char *)data, size, 0, NULL), *in;
	struct rec_workload w;

	if (!doc)
		return 0;
	check(doc);
	rec_workload_default(&w);
	in = rec_inputs_build(doc, doc, doc, doc, &w);
	check(in);
	json_decref(in);
	json_decref(doc);
	return 0;
}
