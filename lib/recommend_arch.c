/*
 * recommend_arch: the architecture the recommendation is for
 * (inputs.arch). Low stacks exist only on x86-64: elsewhere
 * (arm64) there is no MAP_32BIT window and no segment selector, so the
 * question does not arise and the result says it is not applicable.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "errbuf.h"
#include "recommendp.h"
#include "xmalloc.h"

int rec_arch_parse(const json_t *inputs, const char **arch, char *err, size_t errlen)
{
	const json_t *v = json_object_get(inputs, "arch");

	*arch = NULL;
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_string(v) || !*json_string_value(v))
		return errbuf_set(err, errlen, -EINVAL, "arch: must be a string");
	*arch = json_string_value(v);
	return 0;
}

int rec_arch_applies(const char *arch)
{
	return !arch || !strcmp(arch, "x86_64");
}

void rec_arch_apply(const char *arch, json_t *result)
{
	json_t *reasons = json_object_get(result, "reasons");
	char *s = NULL;

	json_object_set_new(result, "applicable", json_boolean(rec_arch_applies(arch)));
	if (rec_arch_applies(arch))
		return;
	xasprintf(&s,
	          "Low thread stacks are not applicable on this architecture (%s): every thread "
	          "keeps glibc's default stack.",
	          arch);
	json_object_set_new(result, "sentence", json_string(s));
	free(s);
	xasprintf(&s,
	          "%s has no MAP_32BIT window (the flag exists only on x86-64) and no segment "
	          "selectors, so map32, the threads probe's low policy and the ctxsw selector arm "
	          "are not applicable.",
	          arch);
	if (json_is_array(reasons))
		json_array_insert_new(reasons, 0, json_string(s));
	free(s);
	json_object_set_new(result, "verdict", json_string("high"));
	json_object_set_new(result, "confidence", json_string("strong"));
	json_object_set_new(result, "rule", json_string("not_applicable"));
}
