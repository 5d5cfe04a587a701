/*
 * fingerprintp: what the fingerprint's files (fingerprint.c,
 * fingerprint_virt.c, fingerprint_caps.c) share and nobody else uses.
 */
#ifndef TW_FINGERPRINTP_H
#define TW_FINGERPRINTP_H

#include <stddef.h>

#include <jansson.h>

#define FP_PATH_MAX 4096

/* A JSON string, or null for NULL and "". New reference. */
json_t *fp_str_or_null(const char *s);

/* Reads the first line of root + path (root "" is this host) into buf,
 * without the newline. 0 or -errno. */
int fp_read_line(const char *root, const char *path, char *buf, size_t len);

/* The value of the first "key : value" line of root/proc/cpuinfo, in a
 * malloc'd string; NULL when there is none. */
char *fp_cpuinfo_field(const char *root, const char *key);

/* Whether the blank-separated word list `words` holds `word`. */
int fp_has_word(const char *words, const char *word);

/* CPUID's hypervisor name (leaf 0x40000000: "kvm", "bhyve", an unlisted
 * signature as it is) into buf: 1, or 0 when the CPU names none. */
int fp_cpuid_hypervisor(char *buf, size_t len);

#endif
