/*
 * threadwatchd: the threadwatch daemon. Reads the configuration, opens the
 * store (a writable handle for the scheduler, a read-only one for the HTTP
 * threads), starts the HTTP server and the scheduler as a chain of steps
 * undone in mirrored order, and runs the main loop: signals (stop, reload),
 * systemd's STATUS= and the watchdog.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <sysexits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "atomic_file.h"
#include "clock.h"
#include "config.h"
#include "http.h"
#include "log.h"
#include "netns.h"
#include "observer_link.h"
#include "opt.h"
#include "runner.h"
#include "scheduler.h"
#include "secret_file.h"
#include "tls.h"
#include "store.h"
#include "systemd.h"
#include "workload_keep.h"
#include "xmalloc.h"

#define IDLE_WAKE_S 60.0 /* main loop period without a watchdog */
#define STUCK_RETRY_S 1.0

static volatile sig_atomic_t sig_stop, sig_reload;

/* --- command line ------------------------------------------------------------ */

enum action { ACT_RUN, ACT_HELP, ACT_VERSION, ACT_DOC, ACT_FILE };

struct key_set {
	char *key, *value, *origin;
};

struct opts {
	const char *config_file; /* NULL: the default file, which may be missing */
	const char *state_dir;
	const char *port_file;
	int foreground; /* the default; the flag is kept for old scripts */
	int detach;
	int check_config;
	enum action action;
	struct key_set *sets; /* --key=value, applied over the file */
	size_t n_sets;
};

enum flag_kind { FLAG_STR, FLAG_BOOL, FLAG_ACTION };

static const struct daemon_flag {
	const char *name;
	enum flag_kind kind;
	const char *arg;
	size_t offset; /* FLAG_STR, FLAG_BOOL: into struct opts */
	enum action action;
	const char *help;
} flags[] = {
    {"config", FLAG_STR, "FILE", offsetof(struct opts, config_file), ACT_RUN,
     "configuration file (default " CONFIG_DEFAULT_FILE "; when that is missing, the "
     "defaults apply)"},
    {"state-dir", FLAG_STR, "DIR", offsetof(struct opts, state_dir), ACT_RUN,
     "directory of the database when database= is empty (default: $STATE_DIRECTORY, else "
     "./var)"},
    {"port-file", FLAG_STR, "FILE", offsetof(struct opts, port_file), ACT_RUN,
     "write the bound port to FILE once listening (for --port=0)"},
    {"foreground", FLAG_BOOL, NULL, offsetof(struct opts, foreground), ACT_RUN,
     "stay in the foreground (the default; kept for old scripts)"},
    {"detach", FLAG_BOOL, NULL, offsetof(struct opts, detach), ACT_RUN,
     "fork into the background once ready, for an init without supervision; the command "
     "returns 0 when the daemon serves, 1 when it could not start"},
    {"check-config", FLAG_BOOL, NULL, offsetof(struct opts, check_config), ACT_RUN,
     "validate the configuration, print the effective values and exit (0: valid; 78, "
     "EX_CONFIG: not)"},
    {"dump-config-doc", FLAG_ACTION, NULL, 0, ACT_DOC,
     "print the configuration keys as a Markdown table and exit"},
    {"dump-config-file", FLAG_ACTION, NULL, 0, ACT_FILE,
     "print the documented default configuration file and exit"},
    {"help", FLAG_ACTION, NULL, 0, ACT_HELP, "show this help and exit"},
    {"version", FLAG_ACTION, NULL, 0, ACT_VERSION, "show the version and exit"},
};

#define N_FLAGS (sizeof(flags) / sizeof(flags[0]))

static void usage(FILE *f)
{
	fprintf(f, "usage: threadwatchd [OPTIONS] [--KEY=VALUE...]\n\n"
	           "The threadwatch daemon: runs the probes on a schedule, keeps their history\n"
	           "and serves the dashboard, a JSON API and Prometheus /metrics.\n\nOptions:\n");
	for (size_t i = 0; i < N_FLAGS; i++) {
		char name[64];

		snprintf(name, sizeof(name), "--%s%s%s", flags[i].name, flags[i].arg ? "=" : "",
		         flags[i].arg ? flags[i].arg : "");
		fprintf(f, "  %s\n      %s\n", name, flags[i].help);
	}
	fprintf(f, "\nConfiguration keys, as flags or as `key = value` in the file (flags win;\n"
	           "a boolean flag alone means yes; a flag's dashes are the key's underscores,\n"
	           "and --listen_address is accepted too):\n");
	config_print_flags(f);
}

static void add_set(struct opts *o, const char *key, const char *value)
{
	struct key_set *ks;

	o->sets = xreallocarray(o->sets, o->n_sets + 1, sizeof(*o->sets));
	ks = &o->sets[o->n_sets++];
	ks->key = xstrdup(key);
	ks->value = xstrdup(value);
	xasprintf(&ks->origin, "--%s", key);
}

static void opts_free(struct opts *o)
{
	for (size_t i = 0; i < o->n_sets; i++) {
		free(o->sets[i].key);
		free(o->sets[i].value);
		free(o->sets[i].origin);
	}
	free(o->sets);
}

/* The getopt_long(3) table: the daemon's own flags (val FLAG_VAL + row,
 * -h for --help), then every configuration key (val KEY_VAL + key row). */
#define FLAG_VAL 256
#define KEY_VAL 512
#define N_LONGOPTS (N_FLAGS + 2 * CONFIG_MAX_KEYS + 1)

static void build_longopts(struct option *lo)
{
	size_t n = 0;

	for (size_t i = 0; i < N_FLAGS; i++)
		lo[n++] =
		    (struct option){flags[i].name, flags[i].arg ? required_argument : no_argument,
		                    NULL, flags[i].action == ACT_HELP ? 'h' : FLAG_VAL + (int)i};
	n += config_options(lo + n, N_LONGOPTS - 1 - n, KEY_VAL);
	lo[n] = (struct option){0};
}

static void apply_flag(struct opts *o, const struct daemon_flag *df, const char *value)
{
	if (df->kind == FLAG_STR)
		*(const char **)((char *)o + df->offset) = value;
	else if (df->kind == FLAG_BOOL)
		*(int *)((char *)o + df->offset) = 1;
	else if (o->action == ACT_RUN)
		o->action = df->action;
}

/* 0, or -EINVAL after printing why (a usage error). */
static int parse_args(int argc, char **argv, struct opts *o)
{
	struct option lo[N_LONGOPTS];
	char err[256];
	int c;

	build_longopts(lo);
	while ((c = opt_next(argc, argv, ":h", lo, err, sizeof(err))) != -1) {
		const char *key = config_option_key(c, KEY_VAL);

		if (c == '?' || c == ':') {
			log_err("%s (see --help)", err);
			return -EINVAL;
		}
		if (key)
			add_set(o, key, optarg ? optarg : "yes");
		else if (c == 'h')
			o->action = o->action == ACT_RUN ? ACT_HELP : o->action;
		else
			apply_flag(o, &flags[c - FLAG_VAL], optarg);
	}
	if (optind < argc) {
		log_err("Unexpected argument \"%s\" (see --help)", argv[optind]);
		return -EINVAL;
	}
	return 0;
}

/* A daemon run from a build tree (build/threadwatchd beside build/probes/)
 * uses those probes unless probe_dir was set; an installed one has no
 * probes beside it and keeps the packaged directory. */
static int probes_beside(struct config *c, char *err, size_t errlen)
{
	static const char *const builtins[] = {"ctxsw", "threads", "map32"};
	char *dir, origin[64];
	int r;

	if (config_origin(c, "probe_dir"))
		return 0;
	dir = runner_probes_beside_exe(builtins, sizeof(builtins) / sizeof(builtins[0]));
	if (!dir)
		return 0;
	snprintf(origin, sizeof(origin), "beside the executable");
	r = config_set(c, "probe_dir", dir, origin, err, errlen);
	free(dir);
	return r;
}

/* tls_priorities as GnuTLS reads it: a config error, not a failure to
 * serve, so that --check-config finds it too. */
static int check_priorities(const struct config *c, char *err, size_t errlen)
{
	const char *where;

	if (tls_priorities_check(c->tls_priorities, &where) == 0)
		return 0;
	snprintf(err, errlen, "%s: tls_priorities: GnuTLS does not take \"%s\"%s%s%s",
	         config_origin(c, "tls_priorities"), c->tls_priorities, where ? " (at \"" : "",
	         where ? where : "", where ? "\")" : "");
	return -EINVAL;
}

/* The configuration from the file and the command line. 0 or -errno with a
 * message in err; c is freed on failure. */
static int build_config(const struct opts *o, struct config *c, char *err, size_t errlen)
{
	const char *path = o->config_file ? o->config_file : CONFIG_DEFAULT_FILE;
	char *dropins, *warnings = NULL;
	int r;

	config_init(c);
	r = config_load_file(path, c, err, errlen);
	if (r == -ENOENT && !o->config_file)
		r = 0; /* no configuration at all: the defaults */
	xasprintf(&dropins, "%s%s", path, CONFIG_DROPIN_SUFFIX);
	if (r >= 0)
		r = config_load_dropins(dropins, c, o->check_config, &warnings, err, errlen);
	for (char *w = warnings, *nl; w && *w; w = nl + 1) {
		nl = strchrnul(w, '\n');
		log_warning("%.*s", (int)(nl - w), w);
		if (!*nl)
			break;
	}
	free(warnings);
	free(dropins);
	for (size_t i = 0; r >= 0 && i < o->n_sets; i++)
		r = config_set(c, o->sets[i].key, o->sets[i].value, o->sets[i].origin, err, errlen);
	if (r >= 0)
		r = probes_beside(c, err, errlen);
	if (r >= 0)
		r = config_resolve(c, o->state_dir, err, errlen);
	if (r >= 0)
		r = check_priorities(c, err, errlen);
	if (r < 0)
		config_free(c);
	return r;
}

/* --- the daemon ---------------------------------------------------------------- */

struct daemon {
	const struct opts *opts;
	struct config boot; /* as started: what the HTTP server and the store use */
	struct config cfg;  /* the latest good one (SIGHUP) */
	int wake[2];
	int ready_fd;   /* detaching: tells the waiting parent that we are up */
	int start_exit; /* a start that failed: its exit status when not 1 */
	sigset_t saved_mask, run_mask;
	struct store *st, *ro;
	struct sched *sched;
	struct http_config http_cfg;
	struct http_hooks hooks;
	struct http_server *http;
	unsigned port;
	int listen_fds; /* read first thing in main(), before any fork */
	int socket_activated;
	unsigned long long wd_usec;
	double next_ping;
	int stuck_logged;
	int keep_failing; /* the last observer window was not stored (the link's thread) */
	char status[256];
};

static void on_signal(int sig)
{
	if (sig == SIGHUP)
		sig_reload = 1;
	else
		sig_stop = sig;
}

static int up_signals(struct daemon *d)
{
	struct sigaction sa = {.sa_handler = on_signal}, ign = {.sa_handler = SIG_IGN};
	static const int sigs[] = {SIGTERM, SIGINT, SIGHUP};
	sigset_t block;

	sigemptyset(&sa.sa_mask);
	sigemptyset(&block);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		sigaction(sigs[i], &sa, NULL);
		sigaddset(&block, sigs[i]);
	}
	sigaction(SIGPIPE, &ign, NULL);
	/* Only the main loop's ppoll() lets them in; every thread started
	 * from here on inherits the block. */
	pthread_sigmask(SIG_BLOCK, &block, &d->saved_mask);
	d->run_mask = d->saved_mask;
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigdelset(&d->run_mask, sigs[i]);
	return 0;
}

static void down_signals(struct daemon *d)
{
	pthread_sigmask(SIG_SETMASK, &d->saved_mask, NULL);
}

static void on_sched_change(void *ctx)
{
	struct daemon *d = ctx;
	char c = 1;

	if (write(d->wake[1], &c, 1) < 0) {
		/* the pipe is full: the main loop wakes anyway */
	}
}

static int up_wake(struct daemon *d)
{
	if (pipe2(d->wake, O_NONBLOCK | O_CLOEXEC) < 0) {
		log_err("Failed to create a pipe: %s", strerror(errno));
		return -errno;
	}
	return 0;
}

static void down_wake(struct daemon *d)
{
	close(d->wake[0]);
	close(d->wake[1]);
}

/* The database's directory (./var or the state directory) is created when
 * missing; the levels above it must exist. */
static void make_parent_dir(const char *path)
{
	char *dir = xstrdup(path), *slash = strrchr(dir, '/');

	if (slash && slash != dir) {
		*slash = '\0';
		if (mkdir(dir, 0750) < 0 && errno != EEXIST)
			log_debug("Failed to create \"%s\": %s, ignoring", dir, strerror(errno));
	}
	free(dir);
}

/* What to do about a database that cannot be opened, by error. */
static const struct {
	int error;
	const char *advice;
} open_advice[] = {
    {-EBUSY, "Stop the other threadwatchd, or set database= to another file."},
    {-ENOTSUP, "To run this version, set database= to another file."},
    {-EBADMSG, "See \"Recovering the database\" in threadwatchd(8), DIAGNOSTICS."},
    {-EROFS, "Make the file and its directory writable by the daemon's user, or set database= "
             "to a file it may write."},
};

static const char *advice_for(int error)
{
	for (size_t i = 0; i < sizeof(open_advice) / sizeof(open_advice[0]); i++)
		if (open_advice[i].error == error)
			return open_advice[i].advice;
	return "";
}

/* How long a busy writer's lock is waited for at start: a daemon that was
 * just killed may still be exiting, or a probe it forked may not yet have
 * reached exec and dropped the inherited descriptor. A second running
 * daemon still holds it after this and is refused. */
#define STORE_LOCK_WAIT_MS 3000

static int open_store(const char *path, int mode, struct store **out)
{
	char err[512] = "";
	int r = store_open(path, mode, out, err, sizeof(err));

	for (int waited = 0; r == -EBUSY && waited < STORE_LOCK_WAIT_MS; waited += 100) {
		struct timespec ts = {0, 100 * 1000 * 1000};

		nanosleep(&ts, NULL);
		err[0] = '\0';
		r = store_open(path, mode, out, err, sizeof(err));
	}
	if (r >= 0)
		return 0;
	if (!err[0])
		snprintf(err, sizeof(err), "\"%s\": %s", path, strerror(-r));
	log_err("Cannot open the database: %s. %s", err, advice_for(r));
	return r;
}

/* store_open() checks an existing file (header and quick_check) before it
 * writes anything, so a damaged database is refused here untouched. */
static int up_store(struct daemon *d)
{
	int r;

	make_parent_dir(d->boot.database);
	r = open_store(d->boot.database, 0, &d->st);
	/* A database the daemon may not write is an output it cannot create
	 * (sysexits.h): every cycle would fail to store its runs. */
	if (r == -EROFS || r == -EACCES)
		d->start_exit = EX_CANTCREAT;
	return r;
}

static void down_store(struct daemon *d)
{
	store_close(d->st);
}

static int up_ro(struct daemon *d)
{
	return open_store(d->boot.database, STORE_READONLY, &d->ro);
}

static void down_ro(struct daemon *d)
{
	store_close(d->ro);
}

static int up_sched(struct daemon *d)
{
	int r = sched_new(&d->cfg, d->st, on_sched_change, d, &d->sched);

	if (r < 0)
		log_err("Failed to prepare the scheduler: %s", strerror(-r));
	return r;
}

static void down_sched(struct daemon *d)
{
	sched_free(d->sched);
}

/* The keys that name files holding secrets. */
static const struct {
	const char *key;
	size_t off;
} secret_files[] = {
    {"token_file", offsetof(struct config, token_file)},
    {"metrics_token_file", offsetof(struct config, metrics_token_file)},
    {"read_token_file", offsetof(struct config, read_token_file)},
    {"tls_key", offsetof(struct config, tls_key)},
};

/* A secret file others may read is worth a warning, not a refusal: the
 * secret is already out, and refusing would only stop the service. */
static void warn_secret_modes(const struct config *c)
{
	for (size_t i = 0; i < sizeof(secret_files) / sizeof(secret_files[0]); i++) {
		const char *path = *(char *const *)((const char *)c + secret_files[i].off);
		mode_t mode = 0;

		if (path && path[0] && secret_file_exposed(path, &mode) > 0)
			log_warning("%s \"%s\" is readable by group or others (mode %04o); "
			            "chmod 600 it",
			            secret_files[i].key, path, (unsigned)mode);
	}
}

/* The secrets a flag may carry, and the file key that keeps them out of
 * the command line. */
static const struct {
	const char *key, *file_key;
} flag_secrets[] = {
    {"token", "token_file"},
    {"metrics_token", "metrics_token_file"},
    {"read_token", "read_token_file"},
};

/* A token given as a flag is in /proc/PID/cmdline, which every local user
 * may read (ps): worth a warning, as a secret file others may read is. */
static void warn_flag_secrets(const struct config *c)
{
	for (size_t i = 0; i < sizeof(flag_secrets) / sizeof(flag_secrets[0]); i++) {
		const char *origin = config_origin(c, flag_secrets[i].key);

		if (origin && origin[0] == '-')
			log_warning(
			    "%s was given on the command line (%s): every local user can read "
			    "it with ps; put it in %s (mode 600) or a systemd credential",
			    flag_secrets[i].key, origin, flag_secrets[i].file_key);
	}
}

/* Listening beyond loopback in the clear and with nothing to present. */
static void warn_exposure(const struct config *c, const struct http_server *h)
{
	if (http_beyond_loopback(h) && !c->tls_cert[0] && !c->read_token[0])
		log_warning("Listening beyond loopback without TLS and without read_token: "
		            "anyone who can connect reads the API and the dashboard");
}

/* A service that binds its own socket (no LISTEN_FDS) inside a network
 * namespace of its own (PrivateNetwork=yes) is reachable by nobody: said
 * once, before the bind, which fails outright for a listen_address that
 * exists only on the host. */
static void warn_private_network(const struct daemon *d)
{
	const struct config *c = &d->boot;

	if (d->socket_activated || !getenv("INVOCATION_ID") ||
	    netns_loopback_only("/proc/self/net/dev") <= 0)
		return;
	log_warning("No socket was passed (LISTEN_FDS) and this service's network namespace has "
	            "loopback alone (PrivateNetwork=yes): listen_address %s port %d is bound "
	            "inside it, where nothing outside the service can connect. Start "
	            "threadwatchd.socket, which listens in the host's namespace, or drop "
	            "PrivateNetwork=",
	            c->listen_address, c->port);
}

static int up_http(struct daemon *d)
{
	const struct config *c = &d->boot;
	int n = d->listen_fds, r;

	if (n < 0)
		log_warning("Failed to read the sockets passed (LISTEN_FDS): %s, ignoring",
		            strerror(-n));
	if (n > 1)
		log_warning("%d sockets were passed; using the first, ignoring the rest", n);
	d->socket_activated = n >= 1;
	d->http_cfg = (struct http_config){
	    .address = c->listen_address,
	    .port = (unsigned)c->port,
	    .listen_fd = n >= 1 ? 3 : -1,
	    .max_connections = (unsigned)c->max_connections,
	    .per_ip_limit = (unsigned)c->per_ip_limit,
	    .timeout_s = (unsigned)c->http_timeout,
	    .header_timeout_s = c->http_header_timeout,
	    .trigger_min_interval_s = c->trigger_min_interval,
	    .allowed_hosts = c->allowed_hosts,
	    .memory_limit = (size_t)c->http_memory_limit,
	    .threads = (unsigned)c->http_threads,
	    .token = c->token,
	    .metrics_token = c->metrics_token,
	    .read_token = c->read_token,
	    .tls_cert = c->tls_cert[0] ? c->tls_cert : NULL,
	    .tls_key = c->tls_key[0] ? c->tls_key : NULL,
	    .tls_priorities = c->tls_priorities,
	    .dygraphs_dir = c->dygraphs_dir,
	};
	d->hooks = (struct http_hooks){.trigger = sched_trigger, .ctx = d->sched};
	warn_private_network(d);
	r = http_start(&d->http_cfg, d->ro, &d->hooks, &d->http);
	if (r < 0) {
		if (d->socket_activated)
			log_err("Failed to serve HTTP on the socket passed (LISTEN_FDS): %s",
			        strerror(-r));
		else
			log_err(
			    "Failed to serve HTTP on %s port %d: %s%s", c->listen_address, c->port,
			    strerror(-r),
			    r == -EADDRINUSE
			        ? ". Another threadwatchd (or another program) may hold it: stop "
			          "it, or pick another port with --port 8438 (from the source "
			          "tree: make run RUN_ARGS=\"--port 8438\"), or port= in the "
			          "configuration file"
			        : "");
		return r;
	}
	d->port = http_port(d->http);
	warn_exposure(c, d->http);
	warn_secret_modes(c);
	warn_flag_secrets(c);
	if (d->socket_activated)
		log_notice(
		    "Serving HTTP on the socket passed by the launcher (LISTEN_FDS, port %u)",
		    d->port);
	else
		log_notice("Listening on http%s://%s%s%s:%u/", c->tls_cert[0] ? "s" : "",
		           strchr(c->listen_address, ':') ? "[" : "", c->listen_address,
		           strchr(c->listen_address, ':') ? "]" : "", d->port);
	return 0;
}

static void down_http(struct daemon *d)
{
	http_stop(d->http);
}

static int up_portfile(struct daemon *d)
{
	const char *path = d->opts->port_file;
	char text[16];
	int r;

	if (!path)
		return 0;
	snprintf(text, sizeof(text), "%u\n", d->port);
	r = atomic_file_write(path, text, strlen(text), 0644);
	if (r < 0)
		log_err("Failed to write the port file \"%s\": %s", path, strerror(-r));
	return r;
}

static void down_portfile(struct daemon *d)
{
	if (d->opts->port_file)
		unlink(d->opts->port_file);
}

static int up_thread(struct daemon *d)
{
	int r = sched_start(d->sched);

	if (r < 0)
		log_err("Failed to start the scheduler thread: %s", strerror(-r));
	return r;
}

static void down_thread(struct daemon *d)
{
	sched_stop(d->sched);
}

/* Each observer window, kept in the store (on the link's thread). A
 * failure is logged when it begins and when it ends, not every window. */
static void keep_window(const json_t *doc, void *ctx)
{
	struct daemon *d = ctx;
	int r = wkeep_take(d->st, doc, (size_t)d->boot.workloads_top, clock_wall_ms());

	if (r < 0 && !d->keep_failing)
		log_warning("Failed to store the observer's window: %s; the workloads' history "
		            "has a gap until it succeeds",
		            store_last_error());
	else if (r >= 0 && d->keep_failing)
		log_notice("Storing the observer's windows again");
	d->keep_failing = r < 0;
}

/* observer_socket: a path, "" (off), or "auto": observer.sock in the
 * first runtime directory systemd names, off without one. */
static int up_observer(struct daemon *d)
{
	const char *p = d->boot.observer_socket, *rd = getenv("RUNTIME_DIRECTORY");
	char path[PATH_MAX], err[256];
	int r;

	if (!p || !p[0])
		return 0;
	if (!strcmp(p, "auto")) {
		if (!rd || !rd[0] || rd[0] != '/')
			return 0;
		snprintf(path, sizeof(path), "%.*s/observer.sock", (int)strcspn(rd, ":"), rd);
		p = path;
	}
	r = olink_start(p, keep_window, d, err, sizeof(err));
	if (r < 0)
		log_err("Failed to listen for the observer on \"%s\": %s", p, err);
	return r;
}

static void down_observer(struct daemon *d)
{
	(void)d;
	olink_stop();
}

static int up_ready(struct daemon *d)
{
	char c = 'R';

	systemd_notify("READY=1");
	if (d->ready_fd >= 0) {
		if (write(d->ready_fd, &c, 1) < 0) {
			/* the parent is gone; nothing to tell */
		}
		close(d->ready_fd);
		d->ready_fd = -1;
	}
	d->wd_usec = systemd_watchdog_usec();
	log_info("threadwatchd %s running; database \"%s\"%s", TW_VERSION, d->boot.database,
	         d->wd_usec ? ", watchdog on" : "");
	return 0;
}

static void down_ready(struct daemon *d)
{
	(void)d;
	systemd_notify("STOPPING=1");
}

/* The daemon's set-up steps (up_*: file-local, not module APIs), brought up
 * in this order and down in the reverse. */
static const struct step {
	int (*init)(struct daemon *d);
	void (*fini)(struct daemon *d);
} steps[] = {
    {up_signals, down_signals},   {up_wake, down_wake},
    {up_store, down_store},       {up_ro, down_ro},
    {up_sched, down_sched},       {up_http, down_http},
    {up_portfile, down_portfile}, {up_observer, down_observer},
    {up_thread, down_thread},     {up_ready, down_ready},
};

/* --- the main loop --------------------------------------------------------------- */

static void format_time(int64_t ms, char *buf, size_t len)
{
	time_t t = (time_t)(ms / 1000);
	struct tm tm;

	if (!localtime_r(&t, &tm) || !strftime(buf, len, "%Y-%m-%d %H:%M:%S", &tm))
		snprintf(buf, len, "?");
}

static void update_status(struct daemon *d)
{
	struct sched_status s;
	char text[256], last[32], next[32];

	sched_get_status(d->sched, &s);
	format_time(s.next_cycle_ms, next, sizeof(next));
	if (s.running && s.waiting_for_load)
		snprintf(text, sizeof(text),
		         "Cycle starting: waiting for a quiet host (%s is %.2f%s, above %.2f)",
		         s.wait.measure, s.wait.value, s.wait.unit, s.wait.limit);
	else if (s.running)
		snprintf(text, sizeof(text), "Cycle %lld running%s%s", (long long)s.cycle_id,
		         s.probe[0] ? ": probe " : "", s.probe);
	else if (s.last_cycle_ms) {
		format_time(s.last_cycle_ms, last, sizeof(last));
		snprintf(text, sizeof(text), "Last cycle %s%s%s%s; %s %s", last,
		         s.last_status != CYCLE_NONE ? " (" : "", cycle_status_name(s.last_status),
		         s.last_status != CYCLE_NONE ? ")" : "", s.retry ? "retry" : "next", next);
	} else
		snprintf(text, sizeof(text), "No cycle yet; %s %s", s.retry ? "retry" : "next",
		         next);
	if (strcmp(text, d->status)) {
		snprintf(d->status, sizeof(d->status), "%s", text);
		systemd_notifyf("STATUS=%s", text);
	}
}

/* Feeds the watchdog from an iteration that got here, and only while the
 * scheduler keeps its own deadlines. Returns the seconds to the next
 * feeding. */
static double feed_watchdog(struct daemon *d)
{
	double now = clock_mono_s();

	if (now < d->next_ping)
		return d->next_ping - now;
	if (!sched_alive(d->sched)) {
		if (!d->stuck_logged++)
			log_err("The scheduler made no progress in time; not feeding the watchdog");
		return STUCK_RETRY_S;
	}
	d->stuck_logged = 0;
	systemd_notify("WATCHDOG=1");
	d->next_ping = now + (double)d->wd_usec / 2e6;
	return d->next_ping - now;
}

/* SIGHUP also re-reads the certificate and key (their names are
 * restart-only): new connections get the new pair on the same socket; a
 * bad pair keeps the one served. */
static void reload_tls(struct daemon *d)
{
	char err[PATH_MAX + 128] = "", when[32];
	int64_t not_after = 0;
	int r = http_tls_reload(d->http, &not_after, err, sizeof(err));

	if (r < 0) {
		log_err("Reloading the TLS certificate failed, keeping the one served: %s",
		        err[0] ? err : strerror(-r));
	} else if (r > 0) {
		format_time(not_after * 1000, when, sizeof(when));
		log_notice("Reloaded the TLS certificate from \"%s\" (valid until %s)",
		           d->boot.tls_cert, when);
	}
}

static void reload(struct daemon *d)
{
	struct config c;
	char err[512], restart[512];

	systemd_notify("RELOADING=1");
	reload_tls(d);
	if (build_config(d->opts, &c, err, sizeof(err)) < 0) {
		log_err("Reloading the configuration failed, keeping the old one: %s", err);
	} else {
		config_restart_diff(&d->boot, &c, restart, sizeof(restart));
		if (restart[0])
			log_warning("Changed keys take effect on restart only (%s), ignoring",
			            restart);
		sched_reconfigure(d->sched, &c);
		log_open("threadwatchd", config_log_priority(&c));
		config_free(&d->cfg);
		d->cfg = c;
		log_notice("Reloaded the configuration");
	}
	systemd_notify("READY=1");
}

static int main_loop(struct daemon *d)
{
	char drain[64];

	while (!sig_stop) {
		struct pollfd pfd = {.fd = d->wake[0], .events = POLLIN};
		double timeout = IDLE_WAKE_S;
		struct timespec ts;

		if (sig_reload) {
			sig_reload = 0;
			reload(d);
		}
		update_status(d);
		if (d->wd_usec)
			timeout = feed_watchdog(d);
		ts.tv_sec = (time_t)timeout;
		ts.tv_nsec = (long)((timeout - (double)ts.tv_sec) * 1e9);
		if (ppoll(&pfd, 1, &ts, &d->run_mask) < 0 && errno != EINTR) {
			log_err("ppoll failed: %s", strerror(errno));
			return -errno;
		}
		while (read(d->wake[0], drain, sizeof(drain)) > 0)
			;
	}
	log_info("Received %s, stopping", strsignal(sig_stop));
	return 0;
}

static int run(struct daemon *d)
{
	size_t done = 0, n = sizeof(steps) / sizeof(steps[0]);
	int r = 0;

	for (; done < n; done++)
		if ((r = steps[done].init(d)) < 0)
			break;
	if (r >= 0)
		r = main_loop(d);
	while (done-- > 0)
		steps[done].fini(d);
	return r < 0 ? (d->start_exit ? d->start_exit : 1) : 0;
}

/* With --detach only (a new-style daemon stays in the foreground): forks
 * into the background; the parent exits once the child is ready (0) or
 * gone (1). The passed sockets were taken before, so the child keeps them
 * whatever LISTEN_PID said. */
static int detach(struct daemon *d)
{
	int p[2];
	pid_t pid;
	char c;
	int fd;

	if (!d->opts->detach)
		return 0;
	if (pipe2(p, O_CLOEXEC) < 0 || (pid = fork()) < 0) {
		log_err("Failed to detach: %s", strerror(errno));
		return -errno;
	}
	if (pid > 0) {
		close(p[1]);
		_exit(read(p[0], &c, 1) == 1 ? 0 : 1);
	}
	close(p[0]);
	d->ready_fd = p[1];
	setsid();
	fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (fd >= 0) {
		dup2(fd, 0);
		dup2(fd, 1);
		close(fd);
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct opts o = {0};
	struct daemon d = {.opts = &o, .ready_fd = -1, .wake = {-1, -1}};
	char err[1024];
	int r;

	/* Before anything could fork: sd_listen_fds() checks LISTEN_PID
	 * against our pid and unsets LISTEN_*, so the probes inherit none. */
	d.listen_fds = systemd_listen_fds();
	log_open("threadwatchd", LOG_INFO);
	if (parse_args(argc, argv, &o) < 0) {
		opts_free(&o);
		return 2;
	}
	if (o.action != ACT_RUN) {
		if (o.action == ACT_HELP)
			usage(stdout);
		else if (o.action == ACT_VERSION)
			printf("threadwatchd %s\n", TW_VERSION);
		else if (o.action == ACT_DOC)
			config_print_markdown(stdout);
		else
			config_print_file(stdout);
		opts_free(&o);
		return 0;
	}
	if (build_config(&o, &d.boot, err, sizeof(err)) < 0) {
		log_err("%s", err);
		opts_free(&o);
		return EX_CONFIG; /* the unit's RestartPreventExitStatus= */
	}
	if (o.check_config) {
		config_print(&d.boot, stdout);
		config_free(&d.boot);
		opts_free(&o);
		return 0;
	}
	log_open("threadwatchd", config_log_priority(&d.boot));
	config_copy(&d.cfg, &d.boot);
	r = detach(&d) < 0 ? 1 : run(&d);
	config_free(&d.cfg);
	config_free(&d.boot);
	opts_free(&o);
	return r;
}
