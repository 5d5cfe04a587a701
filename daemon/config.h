/*
 * config: threadwatchd's settings. One table of keys (name, type, range,
 * default, help, field) drives the file parser
 * (/etc/threadwatch/threadwatchd.conf, `key = value` lines), the
 * --key=value flags, --help, --check-config and the generated
 * documentation (threadwatchd.conf(5)'s KEYS and the commented default file).
 */
#ifndef TW_CONFIG_H
#define TW_CONFIG_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "runner.h"

#define CONFIG_MAX_KEYS 64
#define CONFIG_DEFAULT_FILE TW_SYSCONFDIR "/threadwatch/threadwatchd.conf"
#define CONFIG_DROPIN_SUFFIX ".d" /* threadwatchd.conf.d/ beside the file */
#define CONFIG_DB_NAME "threadwatch.db"

/* A span that is either a duration or a percentage of another duration
 * (splay: "10%" of the interval or "30m"). */
struct config_span {
	int is_percent;
	double value; /* percent when is_percent, else seconds */
};

struct config {
	char *listen_address;
	int port;
	char *database;
	double interval; /* durations are in seconds */
	struct config_span splay;
	int quick;
	char *probe_dir;
	char *probes_d;
	double probe_timeout;
	char *probes_disabled; /* "ctxsw, ctxsw.selector": see config_disabled() */
	int guard;             /* enum guard_mode (daemon/sched_guard.h) */
	double guard_cpu_pressure_max;
	double guard_cpu_busy_max;
	double guard_loadavg_per_cpu_max;
	double guard_wait_max;
	int nice;
	int probe_sched; /* enum runner_sched (lib/runner.h) */
	struct runner_cpu probe_cpu;
	int retention_raw_days;
	int retention_samples_days;
	char *token;
	char *token_file;
	char *metrics_token;
	char *metrics_token_file;
	char *read_token;
	char *read_token_file;
	char *tls_cert;
	char *tls_key;
	char *tls_priorities;
	int max_connections;
	int per_ip_limit;
	double http_timeout;
	double http_header_timeout;
	double trigger_min_interval;
	char *allowed_hosts;
	int http_threads;
	uint64_t http_memory_limit;
	char *dygraphs_dir;
	char *textfile_path;
	char *observer_socket;
	int workloads_top;            /* observer windows: workloads kept */
	int retention_workloads_days; /* ... and for how long */
	int workload_threads;
	uint64_t workload_stack_size;
	double workload_switches_per_thread;
	double workload_creates_per_second, workload_switches_per_second;
	int detect_k; /* regression detection (lib/detect.h) */
	int detect_k_sustained;
	double detect_min_effect;
	double detect_alpha;
	int detect_baseline_runs;
	int log_level; /* index into the choices; see config_log_priority() */

	/* Where each key got its value: "FILE:LINE", "--key" or NULL (default). */
	char *origin[CONFIG_MAX_KEYS];
};

/* 1 when probes_disabled lists the built-in probe (arm NULL) or its arm
 * ("probe.arm"). */
int config_disabled(const struct config *c, const char *probe, const char *arm);

/* Fills every key with its default. */
void config_init(struct config *c);
/* Frees the strings; the struct may be re-initialised. Accepts NULL. */
void config_free(struct config *c);
/* A deep copy of src into dst (dst is overwritten, not freed). */
void config_copy(struct config *dst, const struct config *src);

/* Parses `key = value` lines from buf (not necessarily NUL-terminated) on top
 * of the values already in c; `name` is used in messages (NULL: "<buffer>").
 * 0, or -EINVAL with "name:line: reason" in err. */
int config_parse_named(const char *buf, size_t len, const char *name, struct config *c, char *err,
                       size_t errlen);
int config_parse_buffer(const char *buf, size_t len, struct config *c, char *err, size_t errlen);

/* Reads and parses a file. -ENOENT when it does not exist (err set), -EINVAL
 * for bad content, other -errno for read errors. */
int config_load_file(const char *path, struct config *c, char *err, size_t errlen);

/* Reads the drop-in directory (threadwatchd.conf.d): each *.conf file in
 * name order over c, so a later file wins. An unknown key is an error when
 * strict (--check-config); otherwise it goes, as "FILE:LINE: ...\n", into
 * *warnings (malloc'd, NULL when none) and is skipped, so that a key from
 * a newer version does not stop the daemon. A missing directory is no
 * error. 0 or -errno with a message in err. */
int config_load_dropins(const char *dir, struct config *c, int strict, char **warnings, char *err,
                        size_t errlen);

/* Is `name` a key? Accepts dashes for underscores ("probe-dir"). Returns
 * the canonical name or NULL. */
const char *config_key_name(const char *name);
/* The keys as getopt_long(3) options (the --key=VALUE flags): each key
 * under its name and, when that has underscores, also with dashes
 * ("probe_dir", "probe-dir"). A boolean's value is optional (--quick alone
 * means yes), the others' required. val is base + the key's row. Writes at
 * most max entries and returns how many; 2 * CONFIG_MAX_KEYS is enough. */
struct option;
size_t config_options(struct option *out, size_t max, int base);
/* The key behind an option's val from config_options(), or NULL. */
const char *config_option_key(int val, int base);

/* Sets one key from text; `origin` names the source for messages and
 * --check-config ("--port", "FILE:LINE"). 0 or -EINVAL with a reason. */
int config_set(struct config *c, const char *key, const char *value, const char *origin, char *err,
               size_t errlen);

/* Where a key got its value ("FILE:LINE", "--key", ...), or NULL for its
 * default or an unknown key. */
const char *config_origin(const struct config *c, const char *key);

/* Checks the rules between keys, fills the derived values (the database
 * path from state_dir or $STATE_DIRECTORY, the token from token_file) and
 * checks that the files named exist. state_dir may be NULL. 0 or -errno
 * with a message naming where the offending key was set. */
int config_resolve(struct config *c, const char *state_dir, char *err, size_t errlen);

/* Names of the keys whose values differ and that only take effect on a
 * restart, comma-separated into buf (empty when none). */
void config_restart_diff(const struct config *a, const struct config *b, char *buf, size_t len);

/* The regression detection settings (detect_* keys). */
struct detect_config;
void config_detect(const struct config *c, struct detect_config *out);

/* Splay in seconds for this configuration. */
double config_splay_seconds(const struct config *c);
/* log_level as a syslog priority (LOG_ERR..LOG_DEBUG). */
int config_log_priority(const struct config *c);

/* The effective values as `key = value` lines (secrets masked), each with
 * where it came from. */
void config_print(const struct config *c, FILE *f);
/* The keys as --key=VALUE flags for --help. */
void config_print_flags(FILE *f);
/* The keys as a Markdown table (gen-config-docs makes threadwatchd.conf(5)'s KEYS of it). */
void config_print_markdown(FILE *f);
/* The documented default configuration file (etc/threadwatchd.conf). */
void config_print_file(FILE *f);

#endif
