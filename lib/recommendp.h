/*
 * recommendp: what the recommendation's files (recommend.c,
 * recommend_inputs.c, recommend_text.c) share and nobody else uses.
 */
#ifndef TW_RECOMMENDP_H
#define TW_RECOMMENDP_H

#include <jansson.h>

/* A JSON number for a figure: an integer when it is one, null when it is
 * not finite. New reference. */
json_t *rec_jnum(double v);

/* The probes the recommendation reads (NULL-terminated). */
extern const char *const rec_probes[];

/* inputs.failed_probes (failure_json() objects) and inputs.disabled_probes
 * (names), checked (recommend_failed.c). */
struct rec_failed {
	json_t *failed, *disabled;
};
/* 0, or -EINVAL naming the field in err; clear f either way. */
int rec_failed_parse(const json_t *inputs, struct rec_failed *f, char *err, size_t errlen);
void rec_failed_clear(struct rec_failed *f);
/* "ctxsw's last run failed: REASON" or "ctxsw is disabled in the
 * configuration (probes_disabled)" into buf, or NULL when it is neither. */
const char *rec_failed_why(const struct rec_failed *f, const char *probe, char *buf, size_t len);
/* Sets result.failed_probes and result.disabled_probes, and tells each of
 * those probes but `named` (which the rule already names; may be NULL) at
 * the front of the reasons and in the sentence. */
void rec_failed_apply(const struct rec_failed *f, const json_t *inputs, json_t *result,
                      const char *named);

/* inputs.arch (recommend_arch.c): *arch is NULL when absent; 0, or
 * -EINVAL naming the field in err. */
int rec_arch_parse(const json_t *inputs, const char **arch, char *err, size_t errlen);
/* 1 when low stacks can exist on arch (x86-64, or unknown). */
int rec_arch_applies(const char *arch);
/* Sets result.applicable; where low stacks cannot exist, the verdict is
 * high (strong, rule not_applicable) and the sentence says why. */
void rec_arch_apply(const char *arch, json_t *result);

#endif
