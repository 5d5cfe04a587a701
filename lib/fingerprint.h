/*
 * fingerprint: what the host is, read from /proc, /sys, cpuid and glibc.
 * Cheap enough to re-read every minute; changes (a kernel, glibc or
 * microcode upgrade) start a new probe cycle.
 */
#ifndef TW_FINGERPRINT_H
#define TW_FINGERPRINT_H

#include <jansson.h>

/* Reads the fingerprint as a JSON object:
 *   hostname, kernel (release), kernel_version, glibc, arch,
 *   cpu: {vendor, family, model, stepping, microcode, model_name, fsgsbase},
 *   virtualization ("none", "kvm", ...), ncpus,
 *   vulnerabilities: {name: text, ...},
 *   limits: {threads_max, pid_max, nproc_soft, stack_soft, pids_max,
 *            max_map_count, overcommit_memory}
 * Unreadable fields are null. Never fails (returns a new reference). */
json_t *fingerprint_read(void);

/* The subset whose change means "the host changed" (kernel, glibc, cpu and
 * microcode, virtualization, ncpus, vulnerabilities); limits are excluded
 * because they are tuning, not identity. New reference. */
json_t *fingerprint_identity(const json_t *fp);

/* A short text of what differs between two identities, such as
 * "kernel 6.1.0-18 → 6.1.0-21; microcode 0x2b → 0x2c", or NULL when equal.
 * malloc'd. */
char *fingerprint_diff(const json_t *before, const json_t *after);

#endif
