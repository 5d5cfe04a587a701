/*
 * metrics: the Prometheus text exposition of what the store knows
 * (GET /metrics and node_exporter's textfile collector), driven by one
 * table of metric definitions (its own rows and the probe metrics of the
 * catalogue, lib/catalog.h): threadwatch_ names in base units.
 */
#ifndef TW_METRICS_H
#define TW_METRICS_H

#include <stddef.h>

#include <jansson.h>

struct store;
struct metrics_procself;

/* Formats a store_read_snapshot() object. Never fails; *text is malloc'd
 * and NUL-terminated, *len its length. */
void metrics_format(const json_t *snapshot, char **text, size_t *len);

/* Appends the process_* families of `self` to a metrics_format() text
 * (*text and *len as that returned them). */
void metrics_format_process(const struct metrics_procself *self, char **text, size_t *len);

/* Reads the snapshot, adds the members of `extra` (NULL: none; the HTTP
 * server's own figures, such as tls/cert_expiry_s), formats it and adds
 * the process_* families of this process (left out when /proc cannot be
 * read), for GET /metrics. 0 or the store's -errno. */
int metrics_render(struct store *st, const json_t *extra, char **text, size_t *len);

/* Writes the store's exposition, without process_* (node_exporter has its
 * own and refuses a second family of the same name), to `path` atomically (a temporary file in the
 * same directory, then rename), as node_exporter's textfile collector wants. 0 or -errno. */
int metrics_write_file(struct store *st, const char *path);

#endif
