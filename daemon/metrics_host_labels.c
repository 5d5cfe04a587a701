/*
 * metrics_host_labels: a fingerprint's cohort labels for /metrics (see
 * metrics_host_labels.h). One table row per label: where its value is in the
 * fingerprint and how it is reduced.
 */
#include <stdio.h>
#include <string.h>

#include "metrics_host_labels.h"

#define UNKNOWN "unknown"

/* The mitigation words, in summary order. A vulnerabilities file's text
 * is "Not affected", "Vulnerable[: ...]" or "Mitigation: MAIN[; NAME:
 * STATUS]...": the word is in the summary when the named file's MAIN
 * clause holds one of `names` as a whole word (not "IBRS" inside
 * "PBRSB-eIBRS: Not affected", a sub-clause of another mitigation), and
 * "vulnerable" when any file starts with "Vulnerable". */
static const struct {
	const char *file;
	const char *names[3];
	const char *word;
} mitigation_words[] = {
    {"meltdown", {"PTI"}, "pti"},
    {"spectre_v2", {"Retpolines", "Retpoline"}, "retpoline"},
    {"spectre_v2", {"IBRS", "eIBRS"}, "ibrs"},
    {NULL, {NULL}, "vulnerable"},
};

#define MITIGATION "Mitigation: "

/* Whether the MAIN clause of a "Mitigation: MAIN; ..." text holds `name`
 * as a whole word (words end at spaces, '/', ',' and ';'). */
static int main_clause_has(const char *text, const char *name)
{
	const char *p, *end;
	size_t n = strlen(name);

	if (strncmp(text, MITIGATION, strlen(MITIGATION)))
		return 0;
	p = text + strlen(MITIGATION);
	end = p + strcspn(p, ";");
	while (p < end) {
		size_t w;

		p += strspn(p, " /,");
		w = strcspn(p, " /,;");
		if (p + w > end)
			w = (size_t)(end - p);
		if (w == n && !strncmp(p, name, n))
			return 1;
		p += w;
	}
	return 0;
}

/* The value at a '/'-separated path of at most two keys, or NULL. */
static json_t *at(const json_t *fp, const char *key, const char *sub)
{
	json_t *v = json_object_get(fp, key);

	return sub ? json_object_get(v, sub) : v;
}

/* s copied into out, bounded: control bytes become '_', and a cut never
 * splits a UTF-8 sequence. */
static void bounded(const char *s, char out[METRICS_HOST_LABEL_MAX + 1])
{
	size_t n = strnlen(s, METRICS_HOST_LABEL_MAX + 1);

	if (n > METRICS_HOST_LABEL_MAX) {
		n = METRICS_HOST_LABEL_MAX;
		while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80)
			n--;
	}
	for (size_t i = 0; i < n; i++)
		out[i] = (unsigned char)s[i] < 0x20 || s[i] == 0x7f ? '_' : s[i];
	out[n] = '\0';
	if (!n)
		strcpy(out, UNKNOWN);
}

/* jansson's iterator takes a non-const object but does not modify it. */
static int mitigation_matches(json_t *vulns, size_t w)
{
	const char *name;
	json_t *v;

	if (mitigation_words[w].file) {
		v = json_object_get(vulns, mitigation_words[w].file);
		for (size_t k = 0; json_is_string(v) && k < 3 && mitigation_words[w].names[k]; k++)
			if (main_clause_has(json_string_value(v), mitigation_words[w].names[k]))
				return 1;
		return 0;
	}
	json_object_foreach(vulns, name, v)
	{
		if (json_is_string(v) && !strncmp(json_string_value(v), "Vulnerable", 10))
			return 1;
	}
	return 0;
}

/* The words of mitigation_words that apply, joined by '+'; "none" when
 * none does, "unknown" without the kernel's vulnerabilities directory. */
static void mitigations(json_t *vulns, char out[METRICS_HOST_LABEL_MAX + 1])
{
	size_t len = 0;

	if (!json_is_object(vulns) || !json_object_size(vulns)) {
		strcpy(out, UNKNOWN);
		return;
	}
	out[0] = '\0';
	for (size_t w = 0; w < sizeof(mitigation_words) / sizeof(mitigation_words[0]); w++)
		if (mitigation_matches(vulns, w))
			len += (size_t)snprintf(out + len, METRICS_HOST_LABEL_MAX + 1 - len, "%s%s",
			                        len ? "+" : "", mitigation_words[w].word);
	if (!len)
		strcpy(out, "none");
}

const char *const host_label_names[METRICS_HOST_LABELS_N] = {
    "kernel", "cpu", "vendor", "virt", "arch", "glibc", "mitigations",
};

/* Each label of host_label_names, in its order: its fingerprint path, and
 * whether it is the mitigations summary rather than a string. */
static const struct {
	const char *key, *sub;
	int summary;
} labels[METRICS_HOST_LABELS_N] = {
    {"kernel", NULL, 0},          {"cpu", "model_name", 0}, {"cpu", "vendor", 0},
    {"virtualization", NULL, 0},  {"arch", NULL, 0},        {"glibc", NULL, 0},
    {"vulnerabilities", NULL, 1},
};

void metrics_host_labels(const json_t *fp,
                         char vals[METRICS_HOST_LABELS_N][METRICS_HOST_LABEL_MAX + 1])
{
	for (size_t i = 0; i < METRICS_HOST_LABELS_N; i++) {
		json_t *v = json_is_object(fp) ? at(fp, labels[i].key, labels[i].sub) : NULL;

		if (labels[i].summary)
			mitigations(v, vals[i]);
		else
			bounded(json_is_string(v) ? json_string_value(v) : "", vals[i]);
	}
}
