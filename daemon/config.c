/*
 * config: the table of threadwatchd's configuration keys and everything the
 * table drives: the value types (parse, format, range), the file parser, the
 * per-key setter used for command-line flags, the checks between keys and
 * the generated help and documentation.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include "errbuf.h"
#include "file_read.h"
#include "secret_file.h"
#include "config.h"
#include "configp.h"
#include "defaults.h"
#include "detect.h"
#include "sched_guard.h"
#include "protocol.h"
#include "tls.h"
#include "runner.h"
#include "xmalloc.h"

#ifndef TW_PROBEDIR
#define TW_PROBEDIR "/usr/local/lib/threadwatch/probes"
#endif
#ifndef TW_PROBESDDIR
#define TW_PROBESDDIR "/usr/local/lib/threadwatch/probes.d"
#endif
#ifndef TW_DYGRAPHS_DIR
#define TW_DYGRAPHS_DIR "/usr/share/javascript/dygraphs"
#endif

#define CONFIG_MAX_FILE (1024 * 1024)

static const char *const log_levels[] = {"err", "warning", "notice", "info", "debug", NULL};

/* Keys renamed since a release: the old name still reads as the new one,
 * so that an old file keeps working. */
static const struct {
	const char *old, *name;
} renamed[] = {
    {"load_threshold", "guard_loadavg_per_cpu_max"},
    {"load_wait_max", "guard_wait_max"},
};

#define OFF(f) offsetof(struct config, f)
#define DAY 86400.0

/* The keys, in the order of the documentation. */
static const struct cfg_key keys[] = {
    {"listen_address", T_ADDRESS, 0, 0, TW_DEFAULT_LISTEN_ADDRESS,
     "Address the HTTP server listens on (an IPv4 or IPv6 literal). Ignored under socket "
     "activation; the packaged service has a network namespace of its own "
     "(PrivateNetwork=yes), so there change the socket unit's ListenStream= instead.",
     OFF(listen_address), F_RESTART, NULL},
    {"port", T_INT, 0, 65535, TW_STR(TW_DEFAULT_PORT),
     "TCP port of the HTTP server; 0 picks a free port (see --port-file).", OFF(port), F_RESTART,
     NULL},
    {"database", T_PATH, 0, 0, "",
     "SQLite database file. Empty: threadwatch.db in --state-dir, else in $STATE_DIRECTORY, "
     "else in ./var.",
     OFF(database), F_RESTART | F_EMPTY_OK, NULL},
    {"interval", T_DURATION, 1, 365 * DAY, "6h", "Time between probe cycles.", OFF(interval), 0,
     NULL},
    {"splay", T_SPAN, 0, 50, "10%",
     "Random delay added to every automatic cycle so that a fleet does not probe in step: "
     "after each interval, the first cycle after start and the cycle after a host change "
     "wait up to splay, a retry up to the same share of its backoff; a percentage of "
     "interval (at most 50%) or a duration no longer than interval.",
     OFF(splay), 0, NULL},
    {"quick", T_BOOL, 0, 0, "no", "Pass --quick to the probes: short, less precise runs.",
     OFF(quick), 0, NULL},
    {"probe_dir", T_PATH, 0, 0, TW_PROBEDIR,
     "Directory of the built-in probes (`threadwatch run --help` lists them); a "
     "colon-separated list is searched in order.",
     OFF(probe_dir), F_BUILD, NULL},
    {"probes_d", T_PATH, 0, 0, TW_PROBESDDIR,
     "Directory of extra probes: every executable in it that speaks the probe protocol runs "
     "in each cycle. Empty: none.",
     OFF(probes_d), F_BUILD | F_EMPTY_OK, NULL},
    {"probe_timeout", T_DURATION, 1, DAY, "15m",
     "Wall-clock limit of one probe run; an overrun is killed and recorded as an error.",
     OFF(probe_timeout), 0, NULL},
    {"probes_disabled", T_PROBES, 0, 0, "",
     "Built-in probes (ctxsw) and probe arms (ctxsw.selector) that do not run, separated by "
     "commas or spaces: the escape hatch while a probe crashes on this host. A disabled probe "
     "is shown as disabled, not failed, and does not make a cycle partial; a disabled arm is "
     "passed to its probe as --skip-arm ARM. Empty: every probe runs.",
     OFF(probes_disabled), F_EMPTY_OK, NULL},
    {"guard", T_CHOICE, 0, 0, "auto",
     "Quiet-host guard: what a scheduled cycle looks at before it starts. auto: CPU pressure "
     "(psi) where the kernel has it, else busy CPU time (busy), else the load average "
     "(loadavg); off: never wait.",
     OFF(guard), 0, guard_mode_names},
    {"guard_cpu_pressure_max", T_DOUBLE, 0, 100, "10",
     "Quiet-host guard (psi): a cycle waits while the share of the last 10 s in which some "
     "runnable task waited for a CPU (/proc/pressure/cpu, some avg10, percent) is above this.",
     OFF(guard_cpu_pressure_max), 0, NULL},
    {"guard_cpu_busy_max", T_DOUBLE, 0, 100, "50",
     "Quiet-host guard (busy): a cycle waits while the busy share of all CPU time over the "
     "last few seconds (/proc/stat, percent), threadwatchd's own processes left out, is above "
     "this.",
     OFF(guard_cpu_busy_max), 0, NULL},
    {"guard_loadavg_per_cpu_max", T_DOUBLE, 0, 1000, "0.7",
     "Quiet-host guard (loadavg, the last resort): a cycle waits while the 1-minute load "
     "average per CPU is above this. Formerly load_threshold.",
     OFF(guard_loadavg_per_cpu_max), 0, NULL},
    {"guard_wait_max", T_DURATION, 0, DAY, "1h",
     "Longest wait of the quiet-host guard; the cycle then runs anyway and records the wait. "
     "Formerly load_wait_max.",
     OFF(guard_wait_max), 0, NULL},
    {"nice", T_INT, 0, 19, RUNNER_NICE_DEFAULT_STR,
     "Niceness added for the probes (they also run in the idle I/O class).", OFF(nice), 0, NULL},
    {"probe_sched", T_CHOICE, 0, 0, "priced",
     "CPU scheduling policy of the probes. idle: SCHED_IDLE, so that any other task preempts "
     "them at once and a neighbour's latency does not wait for them (nice then does not "
     "matter); normal: SCHED_OTHER at the niceness above; priced: SCHED_IDLE, but the "
     "probes whose times price the services (ctxsw, handoff, createscale) at SCHED_OTHER, "
     "nice 19, since a switch between SCHED_IDLE threads costs about a fifth more than "
     "between the normal threads they price.",
     OFF(probe_sched), 0, runner_sched_names},
    {"probe_cpu", T_CPU, 0, RUNNER_CPU_MAX, "quiet",
     "Where the probes run. quiet: each probe is pinned to the one allowed CPU that has taken "
     "the fewest interrupts (never CPU 0 when another is allowed), so its memory-map changes "
     "send no TLB shootdowns to the other CPUs and a neighbour keeps them to itself; a CPU "
     "number: that CPU; all: every CPU threadwatchd may use.",
     OFF(probe_cpu), 0, NULL},
    {"retention_raw_days", T_INT, 1, 36500, "30",
     "Days to keep raw probe documents and series points. Ages count back from the older of "
     "now and the newest stored run; retention runs only after a cycle that stored runs, and "
     "is held (logged once, threadwatch_retention_held) while the wall clock is behind the "
     "stored data or has jumped far ahead of it.",
     OFF(retention_raw_days), 0, NULL},
    {"retention_samples_days", T_INT, 1, 36500, "730",
     "Days to keep scalar samples (at least retention_raw_days).", OFF(retention_samples_days), 0,
     NULL},
    {"token", T_STRING, 16, 256, "",
     "Token that POST /api/v1/runs must present (Authorization: Bearer TOKEN), 16 to 256 "
     "visible ASCII characters. Empty: POST is off.",
     OFF(token), F_RESTART | F_SECRET | F_EMPTY_OK, NULL},
    {"token_file", T_PATH, 0, 0, "",
     "File whose first line is the token (instead of token); a relative name is looked up "
     "in $CREDENTIALS_DIRECTORY first (LoadCredential=).",
     OFF(token_file), F_RESTART | F_EMPTY_OK, NULL},
    {"metrics_token", T_STRING, 16, 256, "",
     "Token that GET /metrics must present (Authorization: Bearer TOKEN), 16 to 256 visible "
     "ASCII characters, for a Prometheus server that scrapes from another host. Empty: "
     "/metrics is open like the rest of the API.",
     OFF(metrics_token), F_RESTART | F_SECRET | F_EMPTY_OK, NULL},
    {"metrics_token_file", T_PATH, 0, 0, "",
     "File whose first line is metrics_token (instead of metrics_token); a relative name is "
     "looked up in $CREDENTIALS_DIRECTORY first (LoadCredential=).",
     OFF(metrics_token_file), F_RESTART | F_EMPTY_OK, NULL},
    {"read_token", T_STRING, 16, 256, "",
     "Token that every route but /healthz needs (Authorization: Bearer TOKEN, or the cookie "
     "that GET /?token=TOKEN sets for the dashboard), 16 to 256 visible ASCII characters; "
     "/metrics takes metrics_token instead when that is set. Empty: reading is open.",
     OFF(read_token), F_RESTART | F_SECRET | F_EMPTY_OK, NULL},
    {"read_token_file", T_PATH, 0, 0, "",
     "File whose first line is read_token (instead of read_token); a relative name is "
     "looked up in $CREDENTIALS_DIRECTORY first (LoadCredential=).",
     OFF(read_token_file), F_RESTART | F_EMPTY_OK, NULL},
    {"tls_cert", T_PATH, 0, 0, "",
     "PEM certificate for HTTPS (with tls_key); relative names are looked up in "
     "$CREDENTIALS_DIRECTORY first. Empty: plain HTTP. SIGHUP re-reads the file (and tls_key): "
     "new connections get the new certificate, and a bad pair keeps the one served; another "
     "name takes effect on restart.",
     OFF(tls_cert), F_RESTART | F_EMPTY_OK, NULL},
    {"tls_key", T_PATH, 0, 0, "",
     "PEM private key for HTTPS; relative names are looked up in $CREDENTIALS_DIRECTORY "
     "first. Re-read on SIGHUP with tls_cert.",
     OFF(tls_key), F_RESTART | F_EMPTY_OK, NULL},
    {"tls_priorities", T_STRING, 1, 512, TLS_PRIORITIES_DEFAULT,
     "GnuTLS priority string for HTTPS: the protocol versions and ciphers offered (see "
     "gnutls_priority_init(3)). The default is Mozilla's intermediate profile: TLS 1.2 and "
     "1.3 only, forward secrecy (ECDHE) and AEAD ciphers (AES-GCM, ChaCha20-Poly1305) only, "
     "in the server's order.",
     OFF(tls_priorities), F_RESTART, NULL},
    {"max_connections", T_INT, 1, 65536, "256", "Most HTTP connections at once.",
     OFF(max_connections), F_RESTART, NULL},
    {"per_ip_limit", T_INT, 0, 65536, "64",
     "Most HTTP connections at once from one address other than loopback (loopback clients, "
     "such as the health checks and a local Prometheus, are bounded by max_connections and "
     "http_header_timeout); 0: no limit.",
     OFF(per_ip_limit), F_RESTART, NULL},
    {"http_timeout", T_DURATION, 1, 3600, "30s", "An idle HTTP connection is closed after this.",
     OFF(http_timeout), F_RESTART, NULL},
    {"http_header_timeout", T_DURATION, 1, 3600, "10s",
     "A connection whose request headers are not complete this long after it opened (or "
     "after its previous request) is closed, however steadily it sends.",
     OFF(http_header_timeout), F_RESTART, NULL},
    {"trigger_min_interval", T_DURATION, 0, DAY, "60s",
     "Least time between two cycles started over POST /api/v1/runs; one asked for sooner "
     "gets 429 with Retry-After. 0: no spacing.",
     OFF(trigger_min_interval), F_RESTART, NULL},
    {"allowed_hosts", T_STRING, 0, 4096, "",
     "Host names the HTTP server answers besides localhost, the loopback addresses and the "
     "address it listens on (any IP address when that is a wildcard), separated by commas or "
     "spaces; another Host gets 421, against DNS rebinding. *: any Host (behind a proxy that "
     "checks it).",
     OFF(allowed_hosts), F_RESTART | F_EMPTY_OK, NULL},
    {"http_threads", T_INT, 1, 64, "2", "HTTP worker threads.", OFF(http_threads), F_RESTART, NULL},
    {"http_memory_limit", T_SIZE, 16384, 64 * 1048576.0, "128K",
     "Memory one HTTP connection may use for its request.", OFF(http_memory_limit), F_RESTART,
     NULL},
    {"dygraphs_dir", T_PATH, 0, 0, TW_DYGRAPHS_DIR,
     "Where the dashboard's charting library (Debian's libjs-dygraphs) is served from.",
     OFF(dygraphs_dir), F_RESTART | F_BUILD, NULL},
    {"textfile_path", T_PATH, 0, 0, "",
     "After each cycle, write the /metrics text to this file (mode 0644) for node_exporter's "
     "textfile collector. Under the packaged unit use /run/threadwatch/threadwatch.prom and "
     "link it into the collector's directory. Empty: off.",
     OFF(textfile_path), F_EMPTY_OK, NULL},
    {"observer_socket", T_PATH, 0, 0, "auto",
     "A Unix socket on which threadwatch-observer, the privileged observer of which services "
     "pay for threads, hands each window to the daemon (taken from root or the daemon's own "
     "user only). It feeds the headroom's process with the most mappings, which a sandboxed "
     "daemon cannot see. auto: observer.sock in the runtime directory systemd gives the "
     "daemon ($RUNTIME_DIRECTORY: /run/threadwatch under the packaged unit), off without one. "
     "Empty: off.",
     OFF(observer_socket), F_RESTART | F_EMPTY_OK, NULL},
    {"workloads_top", T_INT, 1, 1000, "20",
     "Workloads kept of each observer window, the dearest first; the rest are summed into one, "
     "\"other\". It bounds the store's growth and the /metrics series (a family has at most "
     "this many plus one).",
     OFF(workloads_top), F_RESTART, NULL},
    {"retention_workloads_days", T_INT, 1, 36500, "14",
     "Days to keep the workloads' windows (about 1.8 MiB a day at workloads_top = 20 and 60 s "
     "windows, measured; see doc/workloads.md).",
     OFF(retention_workloads_days), 0, NULL},
    {"workload_threads", T_INT, 1, 10000000, TW_STR(TW_DEFAULT_THREADS),
     "Recommendation input: the threads the host's workload creates.", OFF(workload_threads), 0,
     NULL},
    {"workload_stack_size", T_SIZE, 16384, 1073741824.0, "8M",
     "Recommendation input: the stack size of those threads.", OFF(workload_stack_size), 0, NULL},
    {"workload_switches_per_thread", T_DOUBLE, -1, 1e12, "-1",
     "Recommendation input: context switches per thread over its life; -1: unknown.",
     OFF(workload_switches_per_thread), 0, NULL},
    {"workload_creates_per_second", T_DOUBLE, 0, 1e9, "0",
     "Recommendation input, thread churn: threads the workload creates per second while "
     "workload_threads stay alive; each create beyond the window pays the extra cost again. "
     "0: no churn, each thread created once.",
     OFF(workload_creates_per_second), 0, NULL},
    {"workload_switches_per_second", T_DOUBLE, -1, 1e15, "-1",
     "Recommendation input, with workload_creates_per_second: context switches per second of "
     "all the workload's threads together; -1: unknown.",
     OFF(workload_switches_per_second), 0, NULL},
    {"detect_k", T_INT, 1, 64, TW_STR(DETECT_K_DEFAULT),
     "Regression detection, fast path: a change that comes with a host fingerprint change "
     "(an upgrade) is reported once it held for this many runs since the change.",
     OFF(detect_k), 0, NULL},
    {"detect_k_sustained", T_INT, 1, 64, TW_STR(DETECT_K_SUSTAINED_DEFAULT),
     "Regression detection, slow path: a change with no host fingerprint change is reported "
     "once it held for this many runs in a row not taken under contention (12: 3 days at "
     "6 h), so that a noisy neighbour's episode passes; at least detect_k.",
     OFF(detect_k_sustained), 0, NULL},
    {"detect_min_effect", T_DOUBLE, 0, 1, TW_STR(DETECT_MIN_EFFECT_DEFAULT),
     "Regression detection: the smallest change reported, relative to the baseline median "
     "(0.05: 5%).",
     OFF(detect_min_effect), 0, NULL},
    {"detect_alpha", T_DOUBLE, 0.000001, 0.5, TW_STR(DETECT_ALPHA_DEFAULT),
     "Regression detection: significance of the Mann-Whitney test of the last detect_k runs "
     "against the baseline; it must be reachable with detect_k and detect_baseline_runs.",
     OFF(detect_alpha), 0, NULL},
    {"detect_baseline_runs", T_INT, 5, 1000, TW_STR(DETECT_BASELINE_DEFAULT),
     "Regression detection: the baseline is the runs since the last host fingerprint change, "
     "at most this many.",
     OFF(detect_baseline_runs), 0, NULL},
    {"log_level", T_CHOICE, 0, 0, "info", "Lowest priority logged.", OFF(log_level), 0, log_levels},
};

#define N_KEYS (sizeof(keys) / sizeof(keys[0]))
_Static_assert(sizeof(keys) / sizeof(keys[0]) <= CONFIG_MAX_KEYS, "raise CONFIG_MAX_KEYS");

/* --- helpers ------------------------------------------------------------ */

static void *field(struct config *c, const struct cfg_key *k)
{
	return (char *)c + k->offset;
}

static const void *cfield(const struct config *c, const struct cfg_key *k)
{
	return (const char *)c + k->offset;
}

/* A value as it may appear in a message: printable, at most ~48 bytes. */
const char *config_shown(const char *s, char *buf, size_t len)
{
	size_t i = 0, max = len > 52 ? 48 : len - 4;

	for (; *s && i < max; s++)
		buf[i++] = isprint((unsigned char)*s) ? *s : '?';
	if (*s) {
		memcpy(buf + i, "...", 3);
		i += 3;
	}
	buf[i] = '\0';
	return buf;
}

char *config_trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

/* The key's range as text for the docs ("" when there is none). */
static void describe_range(const struct cfg_key *k, char *buf, size_t len)
{
	buf[0] = '\0';
	if (config_types[k->type].range)
		config_types[k->type].range(k, buf, len);
}

/* A value as it must be written in a file: quoted when the parser would
 * otherwise trim it, take it for a quoted one or cut a comment from it. */
static void quote_value(const char *v, char *buf, size_t len)
{
	size_t n = strlen(v);
	int q = !n || isspace((unsigned char)v[0]) || isspace((unsigned char)v[n - 1]) ||
	        v[0] == '"' || v[0] == '#';

	for (size_t i = 1; i < n && !q; i++)
		q = v[i] == '#' && isspace((unsigned char)v[i - 1]);
	snprintf(buf, len, q ? "\"%s\"" : "%s", v);
}

/* --- keys ------------------------------------------------------------------ */

static int same_name(const char *key, const char *name, int dashes_ok)
{
	while (*key && (*key == *name || (dashes_ok && *key == '_' && *name == '-'))) {
		key++;
		name++;
	}
	return !*key && !*name;
}

static int key_index(const char *name, int dashes_ok)
{
	for (size_t i = 0; i < sizeof(renamed) / sizeof(renamed[0]); i++)
		if (same_name(renamed[i].old, name, dashes_ok))
			name = renamed[i].name;
	for (size_t i = 0; i < N_KEYS; i++)
		if (same_name(keys[i].name, name, dashes_ok))
			return (int)i;
	return -1;
}

const char *config_key_name(const char *name)
{
	int i = key_index(name, 1);

	return i < 0 ? NULL : keys[i].name;
}

#define N_RENAMED (sizeof(renamed) / sizeof(renamed[0]))

/* The dashed spellings of the keys' names and of their former names, for
 * config_options(). */
static char dashed_names[CONFIG_MAX_KEYS + N_RENAMED][48];

/* Adds --NAME and, when it has an underscore, its dashed twin for key i. */
static size_t add_option(struct option *out, size_t n, size_t max, const char *name, size_t i,
                         char *dashed, size_t dlen, int base)
{
	struct option o = {name, keys[i].type == T_BOOL ? optional_argument : required_argument,
	                   NULL, base + (int)i};

	if (n < max)
		out[n++] = o;
	if (!strchr(name, '_'))
		return n;
	snprintf(dashed, dlen, "%s", name);
	for (char *p = dashed; *p; p++)
		if (*p == '_')
			*p = '-';
	o.name = dashed;
	if (n < max)
		out[n++] = o;
	return n;
}

size_t config_options(struct option *out, size_t max, int base)
{
	size_t n = 0;

	for (size_t i = 0; i < N_KEYS; i++)
		n = add_option(out, n, max, keys[i].name, i, dashed_names[i],
		               sizeof(dashed_names[i]), base);
	/* A renamed key's former name is a flag too (--load-threshold). */
	for (size_t r = 0; r < N_RENAMED; r++)
		n = add_option(out, n, max, renamed[r].old, (size_t)key_index(renamed[r].name, 0),
		               dashed_names[N_KEYS + r], sizeof(dashed_names[0]), base);
	return n;
}

const char *config_option_key(int val, int base)
{
	return val >= base && (size_t)(val - base) < N_KEYS ? keys[val - base].name : NULL;
}

static int set_key(struct config *c, size_t i, const char *value, const char *origin, char *err,
                   size_t errlen)
{
	const struct cfg_key *k = &keys[i];
	char why[256];
	int r;

	r = config_types[k->type].parse(k, value, field(c, k), why, sizeof(why));
	if (r < 0) {
		if (origin[0] == '-')
			errbuf_set(err, errlen, 0, "%s: %s", origin, why);
		else
			errbuf_set(err, errlen, 0, "%s: %s: %s", origin, k->name, why);
		return -EINVAL;
	}
	free(c->origin[i]);
	c->origin[i] = xstrdup(origin);
	return 0;
}

int config_set(struct config *c, const char *key, const char *value, const char *origin, char *err,
               size_t errlen)
{
	int i = key_index(key, 1);
	char b[64];

	if (i < 0) {
		errbuf_set(err, errlen, 0, "%s: unknown key \"%s\"", origin,
		           config_shown(key, b, sizeof(b)));
		return -EINVAL;
	}
	return set_key(c, (size_t)i, value, origin, err, errlen);
}

void config_init(struct config *c)
{
	char err[256];

	memset(c, 0, sizeof(*c));
	for (size_t i = 0; i < N_KEYS; i++) {
		int r = config_types[keys[i].type].parse(&keys[i], keys[i].def, field(c, &keys[i]),
		                                         err, sizeof(err));

		if (r < 0) {
			fprintf(stderr, "threadwatch: bad default of %s: %s\n", keys[i].name, err);
			abort();
		}
	}
}

void config_free(struct config *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < N_KEYS; i++) {
		if (config_types[keys[i].type].is_string) {
			char **s = field(c, &keys[i]);

			free(*s);
			*s = NULL;
		}
		free(c->origin[i]);
		c->origin[i] = NULL;
	}
}

void config_copy(struct config *dst, const struct config *src)
{
	memcpy(dst, src, sizeof(*dst));
	for (size_t i = 0; i < N_KEYS; i++) {
		if (config_types[keys[i].type].is_string) {
			char **s = field(dst, &keys[i]);

			if (*s)
				*s = xstrdup(*s);
		}
		if (src->origin[i])
			dst->origin[i] = xstrdup(src->origin[i]);
	}
}

/* --- the file parser ------------------------------------------------------- */

/* Splits the value part of a line: an optional "quoted value", then an
 * optional comment. Returns the value or NULL with a reason. */
static char *extract_value(char *v, const char **why)
{
	v = config_trim(v);
	if (*v == '"') {
		char *end = strchr(v + 1, '"'), *rest;

		if (!end) {
			*why = "the closing quote is missing";
			return NULL;
		}
		*end = '\0';
		rest = config_trim(end + 1);
		if (*rest && *rest != '#') {
			*why = "text after the closing quote";
			return NULL;
		}
		return v + 1;
	}
	for (char *p = v; *p; p++)
		if (*p == '#' && (p == v || isspace((unsigned char)p[-1]))) {
			*p = '\0';
			break;
		}
	return config_trim(v);
}

/* Unknown keys in a drop-in are noted in *warn (one line each) and
 * skipped when warn is set; elsewhere they are errors. */
static int parse_line(char *line, const char *name, unsigned lineno, unsigned *seen,
                      struct config *c, char **warn, char *err, size_t errlen)
{
	char *s = config_trim(line), *eq, *key, *value, origin[PATH_MAX + 32], b[64];
	const char *why = NULL;
	int i;

	if (!*s || *s == '#')
		return 0;
	eq = strchr(s, '=');
	if (!eq) {
		errbuf_set(err, errlen, 0, "%s:%u: expected \"key = value\", got \"%s\"", name,
		           lineno, config_shown(s, b, sizeof(b)));
		return -EINVAL;
	}
	*eq = '\0';
	key = config_trim(s);
	i = key_index(key, 0);
	if (i < 0 && warn) {
		char *more;

		xasprintf(&more, "%s%s:%u: unknown key \"%s\", ignored\n", *warn ? *warn : "", name,
		          lineno, config_shown(key, b, sizeof(b)));
		free(*warn);
		*warn = more;
		return 0;
	}
	if (i < 0) {
		errbuf_set(err, errlen, 0, "%s:%u: unknown key \"%s\"", name, lineno,
		           config_shown(key, b, sizeof(b)));
		return -EINVAL;
	}
	if (seen[i]) {
		errbuf_set(err, errlen, 0, "%s:%u: %s is already set on line %u", name, lineno,
		           keys[i].name, seen[i]);
		return -EINVAL;
	}
	seen[i] = lineno;
	value = extract_value(eq + 1, &why);
	if (!value) {
		errbuf_set(err, errlen, 0, "%s:%u: %s: %s", name, lineno, keys[i].name, why);
		return -EINVAL;
	}
	snprintf(origin, sizeof(origin), "%s:%u", name, lineno);
	return set_key(c, (size_t)i, value, origin, err, errlen);
}

static int parse_text(const char *buf, size_t len, const char *name, struct config *c, char **warn,
                      char *err, size_t errlen)
{
	unsigned seen[CONFIG_MAX_KEYS] = {0}, lineno = 0;
	const char *nul = memchr(buf, '\0', len);
	size_t pos = 0;

	if (!name)
		name = "<buffer>";
	if (nul) {
		for (const char *p = buf; p < nul; p++)
			lineno += *p == '\n';
		errbuf_set(err, errlen, 0, "%s:%u: contains a NUL byte", name, lineno + 1);
		return -EINVAL;
	}
	while (pos < len) {
		const char *start = buf + pos, *nl = memchr(start, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - start) : len - pos;
		char *line = xstrndup(start, n);
		int r = parse_line(line, name, ++lineno, seen, c, warn, err, errlen);

		free(line);
		if (r < 0)
			return r;
		pos += n + (nl ? 1 : 0);
	}
	return 0;
}

int config_parse_named(const char *buf, size_t len, const char *name, struct config *c, char *err,
                       size_t errlen)
{
	return parse_text(buf, len, name, c, NULL, err, errlen);
}

int config_parse_buffer(const char *buf, size_t len, struct config *c, char *err, size_t errlen)
{
	return config_parse_named(buf, len, NULL, c, err, errlen);
}

static int load_file(const char *path, struct config *c, char **warn, char *err, size_t errlen)
{
	struct stat st;
	size_t len;
	char *buf;
	int r;

	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
		errbuf_set(err, errlen, 0, "\"%s\" is a directory", path);
		return -EISDIR;
	}
	r = file_read_all(path, CONFIG_MAX_FILE, &buf, &len);
	if (r < 0) {
		if (r == -EFBIG)
			errbuf_set(err, errlen, 0, "\"%s\" is larger than %d bytes", path,
			           CONFIG_MAX_FILE);
		else
			errbuf_set(err, errlen, 0, "Failed to read \"%s\": %s", path, strerror(-r));
		return r;
	}
	r = parse_text(buf, len, path, c, warn, err, errlen);
	free(buf);
	return r;
}

int config_load_file(const char *path, struct config *c, char *err, size_t errlen)
{
	return load_file(path, c, NULL, err, errlen);
}

static int dropin_name(const struct dirent *e)
{
	size_t n = strlen(e->d_name);

	return e->d_name[0] != '.' && n > 5 && !strcmp(e->d_name + n - 5, ".conf");
}

int config_load_dropins(const char *dir, struct config *c, int strict, char **warnings, char *err,
                        size_t errlen)
{
	struct dirent **ents = NULL;
	int n = scandir(dir, &ents, dropin_name, alphasort), r = 0;

	*warnings = NULL;
	if (n < 0) {
		if (errno == ENOENT || errno == ENOTDIR)
			return 0;
		r = -errno;
		errbuf_set(err, errlen, 0, "Failed to list \"%s\": %s", dir, strerror(errno));
		return r;
	}
	for (int i = 0; i < n; i++) {
		char *path;

		xasprintf(&path, "%s/%s", dir, ents[i]->d_name);
		if (r >= 0)
			r = load_file(path, c, strict ? NULL : warnings, err, errlen);
		free(path);
		free(ents[i]);
	}
	free(ents);
	return r;
}

/* --- checks between keys and derived values -------------------------------- */

static const char *origin_of(const struct config *c, const char *key)
{
	int i = key_index(key, 0);

	return i >= 0 && c->origin[i] ? c->origin[i] : "default";
}

const char *config_origin(const struct config *c, const char *key)
{
	int i = key_index(key, 1);

	return i >= 0 ? c->origin[i] : NULL;
}

static int check_readable(struct config *c, const char *key, char **value, char *err, size_t errlen)
{
	char *p;

	if (!*value || !**value)
		return 0;
	p = secret_file_path(*value);
	if (access(p, R_OK) < 0) {
		int e = errno;

		errbuf_set(err, errlen, 0, "%s: %s: cannot read \"%s\": %s", origin_of(c, key), key,
		           p, strerror(e));
		free(p);
		return -e;
	}
	free(*value);
	*value = p;
	return 0;
}

/* Sets the secret `key` from the first line of the file named by
 * `file_key` (token_file, metrics_token_file), which may not be given
 * together with the key itself. */
static int load_token_file(struct config *c, const char *key, const char *file_key, char *err,
                           size_t errlen)
{
	int ki = key_index(key, 0);
	char **file = field(c, &keys[key_index(file_key, 0)]), **secret = field(c, &keys[ki]);
	char *buf, why[128], flag[64];
	int r;

	if (!(*file)[0])
		return 0;
	if ((*secret)[0]) {
		errbuf_set(err, errlen, 0, "%s: %s: %s is also set (%s); give one of them",
		           origin_of(c, file_key), file_key, key, origin_of(c, key));
		return -EINVAL;
	}
	r = check_readable(c, file_key, file, err, errlen);
	if (r < 0)
		return r;
	r = secret_file_first_line(*file, 4096, &buf);
	if (r < 0) {
		errbuf_set(err, errlen, 0, "%s: %s: cannot read \"%s\": %s", origin_of(c, file_key),
		           file_key, *file, r == -EFBIG ? "larger than 4096 bytes" : strerror(-r));
		return r;
	}
	snprintf(flag, sizeof(flag), "--%s", key);
	r = set_key(c, (size_t)ki, config_trim(buf), flag, why, sizeof(why));
	free(buf);
	if (r < 0 || !(*secret)[0]) {
		errbuf_set(err, errlen, 0, "%s: %s: the token in \"%s\" %s", origin_of(c, file_key),
		           file_key, *file, r < 0 ? why + strlen(flag) + 2 : "is empty");
		return -EINVAL;
	}
	free(c->origin[ki]);
	c->origin[ki] = xstrdup(file_key);
	return 0;
}

static char *default_database(const char *state_dir)
{
	const char *env = getenv("STATE_DIRECTORY");
	char *p;

	if (state_dir && *state_dir)
		xasprintf(&p, "%s/%s", state_dir, CONFIG_DB_NAME);
	else if (env && *env)
		/* StateDirectory= may list several; the first is ours */
		xasprintf(&p, "%.*s/%s", (int)strcspn(env, ":"), env, CONFIG_DB_NAME);
	else
		xasprintf(&p, "var/%s", CONFIG_DB_NAME);
	return p;
}

void config_detect(const struct config *c, struct detect_config *out)
{
	*out = (struct detect_config){
	    .k = (unsigned)c->detect_k,
	    .k_sustained = (unsigned)c->detect_k_sustained,
	    .min_effect = c->detect_min_effect,
	    .alpha = c->detect_alpha,
	    .baseline_runs = (unsigned)c->detect_baseline_runs,
	};
}

int config_resolve(struct config *c, const char *state_dir, char *err, size_t errlen)
{
	struct detect_config dc;
	char why[256], key[32];
	int r;

	if (!c->splay.is_percent && c->splay.value > c->interval) {
		errbuf_set(err, errlen, 0, "%s: splay: longer than interval",
		           origin_of(c, "splay"));
		return -EINVAL;
	}
	if (c->retention_samples_days < c->retention_raw_days) {
		errbuf_set(err, errlen, 0,
		           "%s: retention_samples_days: %d is less than retention_raw_days %d",
		           origin_of(c, "retention_samples_days"), c->retention_samples_days,
		           c->retention_raw_days);
		return -EINVAL;
	}
	if (c->workload_switches_per_second >= 0 && c->workload_creates_per_second <= 0) {
		errbuf_set(
		    err, errlen, 0,
		    "%s: workload_switches_per_second: needs workload_creates_per_second (a rate "
		    "of "
		    "switches is weighed against a rate of creates)",
		    origin_of(c, "workload_switches_per_second"));
		return -EINVAL;
	}
	config_detect(c, &dc);
	if (detect_config_check(&dc, why, sizeof(why)) < 0) {
		static const char *const detect_keys[] = {
		    "detect_alpha", "detect_k", "detect_baseline_runs", "detect_k_sustained"};
		const char *where;

		/* The message starts with the key it is about; an alpha out of
		 * reach may come from any of the three. */
		snprintf(key, sizeof(key), "%.*s", (int)strcspn(why, ":"), why);
		where = origin_of(c, key);
		for (size_t i = 0; i < 4 && !strcmp(where, "default"); i++)
			where = origin_of(c, detect_keys[i]);
		errbuf_set(err, errlen, 0, "%s: %s", where, why);
		return -EINVAL;
	}
	if (!c->tls_cert[0] != !c->tls_key[0]) {
		errbuf_set(err, errlen, 0, "%s: %s: tls_cert and tls_key must be given together",
		           origin_of(c, c->tls_cert[0] ? "tls_cert" : "tls_key"),
		           c->tls_cert[0] ? "tls_cert" : "tls_key");
		return -EINVAL;
	}
	r = check_readable(c, "tls_cert", &c->tls_cert, err, errlen);
	if (r >= 0)
		r = check_readable(c, "tls_key", &c->tls_key, err, errlen);
	if (r >= 0)
		r = load_token_file(c, "token", "token_file", err, errlen);
	if (r >= 0)
		r = load_token_file(c, "metrics_token", "metrics_token_file", err, errlen);
	if (r >= 0)
		r = load_token_file(c, "read_token", "read_token_file", err, errlen);
	if (r < 0)
		return r;
	if (!c->database[0]) {
		free(c->database);
		c->database = default_database(state_dir);
	}
	return 0;
}

void config_restart_diff(const struct config *a, const struct config *b, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < N_KEYS && n < len; i++) {
		char va[PATH_MAX], vb[PATH_MAX];

		if (!(keys[i].flags & F_RESTART))
			continue;
		config_types[keys[i].type].format(&keys[i], cfield(a, &keys[i]), va, sizeof(va));
		config_types[keys[i].type].format(&keys[i], cfield(b, &keys[i]), vb, sizeof(vb));
		if (strcmp(va, vb))
			n +=
			    (size_t)snprintf(buf + n, len - n, "%s%s", n ? ", " : "", keys[i].name);
	}
}

double config_splay_seconds(const struct config *c)
{
	if (c->splay.is_percent)
		return c->interval * c->splay.value / 100.0;
	return c->splay.value;
}

int config_log_priority(const struct config *c)
{
	return LOG_ERR + c->log_level;
}

/* --- output ---------------------------------------------------------------- */

void config_print(const struct config *c, FILE *f)
{
	fprintf(f, "# threadwatchd: effective configuration\n");
	for (size_t i = 0; i < N_KEYS; i++) {
		const struct cfg_key *k = &keys[i];
		char v[PATH_MAX], q[PATH_MAX + 8], line[2 * PATH_MAX];

		config_types[k->type].format(k, cfield(c, k), v, sizeof(v));
		if ((k->flags & F_SECRET) && v[0])
			snprintf(line, sizeof(line), "#%s = (set, not shown)", k->name);
		else {
			quote_value(v, q, sizeof(q));
			snprintf(line, sizeof(line), "%s = %s", k->name, q);
		}
		fprintf(f, "%-48s # %s\n", line, c->origin[i] ? c->origin[i] : "default");
	}
}

/* Writes text wrapped at `width` columns, each line starting with prefix. */
static void print_wrapped(FILE *f, const char *prefix, const char *text, size_t width)
{
	while (*text) {
		size_t n = strlen(text), cut = n;

		if (n > width) {
			cut = width;
			while (cut > 0 && text[cut] != ' ')
				cut--;
			if (!cut)
				cut = strcspn(text, " ");
		}
		fprintf(f, "%s%.*s\n", prefix, (int)cut, text);
		text += cut;
		while (*text == ' ')
			text++;
	}
}

void config_print_flags(FILE *f)
{
	for (size_t i = 0; i < N_KEYS; i++) {
		const struct cfg_key *k = &keys[i];
		char q[PATH_MAX + 8];

		char flag[48];

		/* the flag as written on a command line: --listen-address */
		snprintf(flag, sizeof(flag), "%s", k->name);
		for (char *p = flag; *p; p++)
			*p = *p == '_' ? '-' : *p;
		quote_value(k->def, q, sizeof(q));
		fprintf(f, "  --%s=%s (default: %s)\n", flag, config_types[k->type].example, q);
		print_wrapped(f, "      ", k->help, 72);
	}
}

void config_print_markdown(FILE *f)
{
	fprintf(f, "| Key | Type | Default | Range | Description |\n");
	fprintf(f, "|-----|------|---------|-------|-------------|\n");
	for (size_t i = 0; i < N_KEYS; i++) {
		const struct cfg_key *k = &keys[i];
		char range[128], q[PATH_MAX + 8];

		describe_range(k, range, sizeof(range));
		quote_value(k->def, q, sizeof(q));
		fprintf(f, "| `%s` | %s | `%s` | %s | %s%s |\n", k->name,
		        config_types[k->type].name, q, range, k->help,
		        (k->flags & F_RESTART) ? " Takes effect on restart." : "");
	}
}

void config_print_file(FILE *f)
{
	static const char *const intro =
	    "threadwatchd.conf: the configuration of threadwatchd, the threadwatch daemon. "
	    "Generated from the daemon's table of keys by `threadwatchd --dump-config-file` "
	    "(`--dump-config-doc` prints the same as Markdown). Every key is shown "
	    "commented out with its default. Lines are `key = value`; a # at the start of "
	    "a line or after white space starts a comment; a value may be put in double "
	    "quotes. Each key can also be given on the command line as --key=VALUE, which "
	    "wins over this file. `threadwatchd --check-config` validates the file and "
	    "prints the effective values; SIGHUP (systemctl reload threadwatchd) re-reads "
	    "it, and a bad file is then ignored with a logged reason. Durations: 500ms, "
	    "90s, 15m, 6h, 1d, 1h30m. Sizes: 4096, 256K, 8M, 1G.";

	print_wrapped(f, "# ", intro, 76);
	for (size_t i = 0; i < N_KEYS; i++) {
		const struct cfg_key *k = &keys[i];
		char range[128], q[PATH_MAX + 8], type[256];

		describe_range(k, range, sizeof(range));
		quote_value(k->def, q, sizeof(q));
		snprintf(type, sizeof(type), "Type: %s%s%s.%s", config_types[k->type].name,
		         range[0] ? ", " : "", range,
		         (k->flags & F_RESTART) ? " Takes effect on restart." : "");
		fprintf(f, "\n");
		print_wrapped(f, "# ", k->help, 76);
		print_wrapped(f, "# ", type, 76);
		fprintf(f, "#%s = %s\n", k->name, q);
	}
}

int config_disabled(const struct config *c, const char *probe, const char *arm)
{
	char want[2 * PROTOCOL_MAX_NAME + 2];
	const char *p = c->probes_disabled ? c->probes_disabled : "";
	size_t n;

	snprintf(want, sizeof(want), "%s%s%s", probe, arm ? "." : "", arm ? arm : "");
	for (; *p; p += n + strspn(p + n, ", ")) {
		n = strcspn(p, ", ");
		if (n == strlen(want) && !strncmp(p, want, n))
			return 1;
	}
	return 0;
}
