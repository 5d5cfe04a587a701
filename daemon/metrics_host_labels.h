/*
 * metrics_host_labels: the cohort labels of threadwatch_host_info (kernel, cpu,
 * vendor, virt, arch, glibc, mitigations) from a host fingerprint
 * (lib/fingerprint.h), each value bounded so that a fleet's label sets
 * stay few and short: at most METRICS_HOST_LABEL_MAX bytes, control characters
 * replaced, "unknown" where the fingerprint says nothing, and the
 * mitigations reduced to a summary from a fixed set of words.
 */
#ifndef TW_METRICS_HOST_LABELS_H
#define TW_METRICS_HOST_LABELS_H

#include <jansson.h>

#define METRICS_HOST_LABEL_MAX 64
#define METRICS_HOST_LABELS_N 7

/* The label names, in the order metrics_host_labels() fills the values. */
extern const char *const host_label_names[METRICS_HOST_LABELS_N];

/* Fills vals[i] with label i's value for fingerprint fp (NULL or not an
 * object: every value "unknown"). Never fails. */
void metrics_host_labels(const json_t *fp,
                         char vals[METRICS_HOST_LABELS_N][METRICS_HOST_LABEL_MAX + 1]);

#endif
