/*
 * protocol: the reader side of the probe protocol (probes/PROTOCOL.md).
 * Parses and validates one probe document before anything stores it.
 */
#ifndef TW_PROTOCOL_H
#define TW_PROTOCOL_H

#include <stddef.h>

#include <jansson.h>

#define PROTOCOL_VERSION 1
#define PROTOCOL_MAX_SERIES_POINTS 100000
#define PROTOCOL_MAX_NAME 64
#define PROTOCOL_MAX_BYTES 4194304 /* a document larger than this is rejected */
#define PROTOCOL_MAX_DEPTH 16      /* nesting of objects and arrays */
#define PROTOCOL_MAX_STRING 4096   /* reason, params and info strings */

/* Parses `len` bytes of probe output (one JSON document, surrounding white
 * space allowed) and validates it. On success stores a new reference in
 * *doc and returns 0; otherwise returns -EINVAL and writes a one-line
 * reason naming the offending field into err. */
int protocol_parse(const char *buf, size_t len, json_t **doc, char *err, size_t errlen);

/* Validates an already parsed document. 0 or -EINVAL with a reason. */
int protocol_validate(const json_t *doc, char *err, size_t errlen);

/* Convenience readers for a validated document. */
const char *protocol_status(const json_t *doc); /* "ok", "skipped", "not_applicable", "error" */
/* The scalar's value, or NAN when absent. */
double protocol_scalar(const json_t *doc, const char *name);
/* The series' points array ([[x, y], ...]) or NULL. */
json_t *protocol_series(const json_t *doc, const char *name);

#endif
