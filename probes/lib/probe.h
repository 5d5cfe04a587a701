/*
 * probe: the probe side of the probe protocol (probes/PROTOCOL.md). Builds
 * the one JSON document a probe prints, parses the options every probe
 * shares, and turns the status into the exit code.
 */
#ifndef TW_PROBE_H
#define TW_PROBE_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#define PROBE_PROTOCOL_VERSION 1

/* PROBE_NOT_APPLICABLE: what the probe measures does not exist on this
 * architecture (MAP_32BIT, segment selectors on arm64). */
enum probe_status { PROBE_OK, PROBE_SKIPPED, PROBE_ERROR, PROBE_NOT_APPLICABLE };

struct probe_doc;
struct probe_series;

/* Starts a document for probe `name`; records the start time. */
struct probe_doc *probe_doc_new(const char *name);
void probe_doc_free(struct probe_doc *doc);

/* Parameters the probe ran with (what a re-run would need). */
void probe_param_int(struct probe_doc *doc, const char *name, int64_t v);
void probe_param_double(struct probe_doc *doc, const char *name, double v);
void probe_param_bool(struct probe_doc *doc, const char *name, int v);

/* A named scalar metric with its unit ("ns", "cycles", "ratio", "bytes",
 * "count", "hz", "per_s", "threads", "vmas", "bool", "address", "slope"). */
void probe_scalar(struct probe_doc *doc, const char *name, double value, const char *unit);

/* A named series of (x, y) points; x must be non-decreasing. */
struct probe_series *probe_series_new(struct probe_doc *doc, const char *name, const char *x_unit,
                                      const char *y_unit);
void probe_series_add(struct probe_series *s, double x, double y);

/* Free-form details that are not numbers (addresses as hex, a class name,
 * what stopped a phase). */
void probe_info_str(struct probe_doc *doc, const char *name, const char *v);
void probe_info_num(struct probe_doc *doc, const char *name, double v);
void probe_info_bool(struct probe_doc *doc, const char *name, int v);

/* Sets the status and its reason (printf format; NULL for none). The last
 * call wins; the default is PROBE_OK with no reason. */
void probe_status(struct probe_doc *doc, enum probe_status st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Prints the document on stdout (records the duration) and returns the
 * process exit code: 0 for ok and skipped, 1 for error. */
int probe_emit(struct probe_doc *doc);

/* Options every probe takes. */
#define PROBE_MAX_SKIP_ARMS 8
struct probe_opts {
	int quick;       /* --quick: a short run */
	uint64_t seed;   /* --seed N: bootstrap seed (default 1) */
	int cpu;         /* --cpu N: CPU to pin to (-1: choose) */
	double budget_s; /* --budget S: time budget in seconds (0: probe default) */
	/* --skip-arm NAME (repeatable): arms the operator switched off
	 * (threadwatchd's probes_disabled = probe.arm); the document's params
	 * get them as "skip_arms": "a,b". */
	const char *skip_arms[PROBE_MAX_SKIP_ARMS];
	size_t n_skip_arms;
};

/* 1 when --skip-arm named this arm. */
int probe_skips_arm(const struct probe_opts *opts, const char *arm);

/* Parses argv. Probe-specific options are given as a table; unknown options
 * print usage to stderr and return -EINVAL. */
struct probe_opt_ext {
	const char *name; /* without the leading "--" */
	const char *help;
	int has_arg;
	/* Called with the argument (or NULL); returns 0 or -EINVAL. */
	int (*set)(const char *arg, void *ctx);
	void *ctx;
};
/* The CPU the probe runs pinned to, for params.cpu: --cpu when given, else
 * the one CPU sched_getaffinity(2) allows when the runner pinned the probe
 * to exactly one, else -1 (free to move). */
int probe_cpu_param(const struct probe_opts *opts);

int probe_parse_args(int argc, char **argv, const char *summary, struct probe_opts *opts,
                     const struct probe_opt_ext *ext, size_t n_ext);

#endif
