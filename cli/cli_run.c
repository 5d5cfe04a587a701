/*
 * cli_run: `threadwatch run`, which runs probes now, each in its own process
 * through the shared runner, and prints a table or one JSON document with
 * the host fingerprint, every probe's document and the recommendation.
 */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "catalog.h"
#include "cli.h"
#include "errbuf.h"
#include "fingerprint.h"
#include "opt.h"
#include "placement.h"
#include "protocol.h"
#include "recommend.h"
#include "runner.h"
#include "units.h"
#include "xmalloc.h"

#define DEFAULT_TIMEOUT_S 30.0
#define MAX_PROBES 64

struct run_args {
	int quick, json, help;
	const char *progress; /* "threadwatch recommend": say each probe on stderr */
	double timeout_s;     /* 0: each probe's default */
	const char *probe_dir;
	int nice;                /* 0 unless --nice */
	enum runner_sched sched; /* RUNNER_SCHED_NORMAL unless --sched */
	struct runner_cpu cpus;  /* quiet unless --cpu */
};

#define RUN_ARGS_INIT                                                                              \
	{                                                                                          \
		.nice = 0, .sched = RUNNER_SCHED_NORMAL, .cpus = { RUNNER_CPUS_QUIET, -1 }         \
	}

static int set_timeout(void *ctx, const char *v, char *why, size_t wlen)
{
	double t;

	(void)why, (void)wlen;
	if (units_parse_duration(v, &t) < 0 || !(t > 0 && t <= 86400))
		return -EINVAL;
	((struct run_args *)ctx)->timeout_s = t;
	return 0;
}

/* --probe-dir: each colon-separated directory must be one. */
static int set_probe_dir(void *ctx, const char *v, char *why, size_t wlen)
{
	if (!*v)
		return -EINVAL;
	for (const char *p = v; *p; p += strcspn(p, ":"), p += *p == ':') {
		char dir[PATH_MAX];
		struct stat st;
		size_t n = strcspn(p, ":");

		if (!n)
			continue;
		snprintf(dir, sizeof(dir), "%.*s", (int)n, p);
		if (stat(dir, &st) < 0)
			return errbuf_set(why, wlen, -errno, "--probe-dir: \"%s\": %s", dir,
			                  strerror(errno));
		if (!S_ISDIR(st.st_mode))
			return errbuf_set(why, wlen, -ENOTDIR, "--probe-dir: \"%s\": %s", dir,
			                  strerror(ENOTDIR));
	}
	((struct run_args *)ctx)->probe_dir = v;
	return 0;
}

static int set_nice(void *ctx, const char *v, char *why, size_t wlen)
{
	char *end;
	long n;

	errno = 0;
	n = strtol(v, &end, 10);
	if (!*v || *end || errno || n < 0 || n > 19) {
		snprintf(why, wlen, "--nice takes 0 to 19, not \"%s\"", v);
		return -EINVAL;
	}
	((struct run_args *)ctx)->nice = (int)n;
	return 0;
}

static int set_sched(void *ctx, const char *v, char *why, size_t wlen)
{
	for (int i = 0; runner_sched_names[i]; i++)
		if (!strcmp(v, runner_sched_names[i])) {
			((struct run_args *)ctx)->sched = (enum runner_sched)i;
			return 0;
		}
	snprintf(why, wlen, "--sched takes normal, idle or priced, not \"%s\"", v);
	return -EINVAL;
}

/* A CPU number must be one this process may run on: a usage error now,
 * not three failed probes later. */
static int set_cpu(void *ctx, const char *v, char *why, size_t wlen)
{
	struct runner_cpu *c = &((struct run_args *)ctx)->cpus;
	char allowed[256];

	if (runner_cpu_parse(v, c) < 0) {
		snprintf(why, wlen, "--cpu takes quiet, all or a CPU number, not \"%s\"", v);
		return -EINVAL;
	}
	if (c->how != RUNNER_CPUS_ONE || place_cpu_allowed(c->cpu) == 0)
		return 0;
	if (place_allowed_list(allowed, sizeof(allowed)) < 0)
		snprintf(allowed, sizeof(allowed), "?");
	snprintf(why, wlen, "--cpu %d: this process may run only on CPUs %s", c->cpu, allowed);
	return -EINVAL;
}

/* The options of `threadwatch run`; the parser and the usage text. */
static const struct opt run_opts[] = {
    {"quick", 0, NULL, "short runs (each probe's --quick)", NULL, offsetof(struct run_args, quick)},
    {"json", 0, NULL, "print one JSON document instead of a table", NULL,
     offsetof(struct run_args, json)},
    {"timeout", 0, "DURATION",
     "time limit per probe, such as 30s or 2m, up to 1d (default: per probe)", set_timeout, 0},
    {"probe-dir", 0, "DIR", "where the probe executables are (colon-separated)", set_probe_dir, 0},
    {"sched", 0, "POLICY",
     "normal (default, at --nice), idle (SCHED_IDLE: any other task goes first) or priced "
     "(the daemon's: idle, but ctxsw, handoff and createscale at nice 19)",
     set_sched, 0},
    {"nice", 0, "N",
     "niceness added for the probes, 0..19 (default 0; the daemon's is " RUNNER_NICE_DEFAULT_STR
     ")",
     set_nice, 0},
    {"cpu", 0, "CPU",
     "quiet (default: each probe on the allowed CPU with the fewest interrupts, as in the "
     "daemon), all (any allowed CPU) or a CPU number",
     set_cpu, 0},
    {"help", 'h', NULL, "show this help", NULL, offsetof(struct run_args, help)},
};

#define N_OPTS (sizeof(run_opts) / sizeof(run_opts[0]))

static void usage(FILE *f)
{
	fprintf(f, "usage: threadwatch run [OPTIONS] [--] [PROBE...]\n\n" CLI_SUMMARY_RUN "\n"
	           "Probes:");
	for (size_t i = 0; i < catalog_n_probes; i++)
		fprintf(f, " %s (%g s)", catalog_probes[i].name, catalog_probes[i].timeout_s);
	fprintf(f, "; default: those installed.\n\nOptions:\n");
	opt_usage(f, run_opts, N_OPTS);
	fprintf(f,
	        "\nThe probe directory is --probe-dir, else $THREADWATCH_PROBE_DIR, else\n"
	        "probes/ beside this program when it holds probes, else %s.\n",
	        TW_PROBEDIR);
}

/* Parses options and collects probe names; -EINVAL with a message on
 * stderr for anything it does not know. */
static int parse_args(int argc, char **argv, struct run_args *a, const char **names, size_t *n)
{
	char err[256];
	int first = opt_parse(argc, argv, run_opts, N_OPTS, a, err, sizeof(err));

	if (first < 0) {
		fprintf(stderr, "threadwatch run: %s\n", err);
		return -EINVAL;
	}
	if (argc - first > MAX_PROBES) {
		fprintf(stderr, "threadwatch run: more than %d probes\n", MAX_PROBES);
		return -EINVAL;
	}
	for (*n = 0; first < argc; first++)
		names[(*n)++] = argv[first];
	return 0;
}

/* --probe-dir, $THREADWATCH_PROBE_DIR, probes/ beside the executable (a
 * build tree), or the installed directory. malloc'd. */
static char *probe_dirs(const struct run_args *a)
{
	const char *env = getenv("THREADWATCH_PROBE_DIR");
	const char *names[16];
	size_t n = 0;
	char *beside;

	if (a->probe_dir)
		return xstrdup(a->probe_dir);
	if (env && *env)
		return xstrdup(env);
	for (size_t i = 0; i < catalog_n_probes && n < 16; i++)
		names[n++] = catalog_probes[i].name;
	beside = runner_probes_beside_exe(names, n);
	return beside ? beside : xstrdup(TW_PROBEDIR);
}

static int probe_name_ok(const char *s)
{
	size_t n = strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789_-");

	return n > 0 && n <= PROTOCOL_MAX_NAME && s[n] == '\0';
}

static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
	(void)sig;
	stop_flag = 1;
}

/* Where a probe's executable is: found in the directories, or (for a
 * built-in one that is not installed) where it should have been, so the
 * runner reports it missing. */
static char *probe_path(const char *dirs, const char *name)
{
	char *p = runner_find_probe(dirs, name);

	if (!p)
		xasprintf(&p, "%.*s/%s", (int)strcspn(dirs, ":"), dirs, name);
	return p;
}

static const char *status_name(enum runner_status s)
{
	static const char *const names[] = {[RUNNER_OK] = "ok",
	                                    [RUNNER_SKIPPED] = "skipped",
	                                    [RUNNER_ERROR] = "error",
	                                    [RUNNER_NOT_APPLICABLE] = "not applicable"};

	return names[s];
}

static void format_value(char *buf, size_t len, double v, const char *unit)
{
	if (!strcmp(unit, "bytes") && v >= 1 << 20)
		snprintf(buf, len, "%.1f MiB", v / (1 << 20));
	else if (!strcmp(unit, "bytes") && v >= 1024)
		snprintf(buf, len, "%.1f KiB", v / 1024);
	else if (!strcmp(unit, "ns"))
		snprintf(buf, len, "%.0f ns", v);
	else if (!strcmp(unit, "per_s"))
		snprintf(buf, len, "%.0f/s", v);
	else if (!strcmp(unit, "ratio") || !strcmp(unit, "slope"))
		snprintf(buf, len, "%.3f", v);
	else if (!strcmp(unit, "address"))
		snprintf(buf, len, "0x%llx", (unsigned long long)v);
	else
		snprintf(buf, len, "%.6g%s%s", v, *unit ? " " : "", unit);
}

static const char *scalar_unit(const json_t *doc, const char *name)
{
	const char *u = json_string_value(
	    json_object_get(json_object_get(json_object_get(doc, "scalars"), name), "unit"));

	return u ? u : "";
}

static void append_figure(char *out, size_t len, const char *label, const char *text)
{
	size_t used = strlen(out);

	snprintf(out + used, len - used, "%s%s %s", used ? ", " : "", label, text);
}

/* One scalar figure of the catalogue as "low 812 ns [800, 820]". */
static void scalar_figure(const struct catalog_metric *k, const json_t *doc, char *out, size_t len)
{
	char v[64], lo[64], hi[64], text[200];
	double x = protocol_scalar(doc, k->scalar);

	if (isnan(x))
		return;
	format_value(v, sizeof(v), x, scalar_unit(doc, k->scalar));
	if (k->ci_lo && !isnan(protocol_scalar(doc, k->ci_lo)) &&
	    !isnan(protocol_scalar(doc, k->ci_hi))) {
		format_value(lo, sizeof(lo), protocol_scalar(doc, k->ci_lo),
		             scalar_unit(doc, k->ci_lo));
		format_value(hi, sizeof(hi), protocol_scalar(doc, k->ci_hi),
		             scalar_unit(doc, k->ci_hi));
		snprintf(text, sizeof(text), "%s [%s, %s]", v, lo, hi);
	} else {
		snprintf(text, sizeof(text), "%s", v);
	}
	append_figure(out, len, k->run_label, text);
}

/* The key figures of one document as "low 812 ns [800, 820], ...": the
 * catalogue's metrics with a run label, then the probe's info entries. */
static void key_figures_text(const char *probe, const json_t *doc, char *out, size_t len)
{
	const struct catalog_probe *p = catalog_probe_find(probe);
	char v[64];

	out[0] = '\0';
	for (size_t i = 0; p && i < catalog_n_metrics; i++)
		if (catalog_metrics[i].run_label && !strcmp(catalog_metrics[i].probe, probe))
			scalar_figure(&catalog_metrics[i], doc, out, len);
	for (size_t i = 0; p && i < 2 && p->info[i]; i++) {
		const char *s =
		    json_string_value(json_object_get(json_object_get(doc, "info"), p->info[i]));
		char label[32];

		snprintf(label, sizeof(label), "%.*s", (int)strcspn(p->info[i], "_"), p->info[i]);
		if (s)
			append_figure(out, len, label, s);
	}
	if (!p) {
		/* A probe of the user's own: its first few scalars. */
		const char *key;
		json_t *sc;
		int shown = 0;

		json_object_foreach(json_object_get(doc, "scalars"), key, sc)
		{
			if (shown++ == 3)
				break;
			format_value(v, sizeof(v), json_number_value(json_object_get(sc, "value")),
			             json_string_value(json_object_get(sc, "unit")));
			append_figure(out, len, key, v);
		}
	}
}

/* "<title>: thp madvise, pmu none, ..." for one object of the fingerprint. */
static void print_section(const char *title, const json_t *fp, const char *section)
{
	char *text = fingerprint_section_text(fp, section);

	if (text)
		printf("%s: %s\n", title, text);
	free(text);
}

static void print_host(const json_t *fp)
{
	const json_t *cpu = json_object_get(fp, "cpu");
	const char *model = json_string_value(json_object_get(cpu, "model_name"));
	const char *mc = json_string_value(json_object_get(cpu, "microcode"));

	printf("host %s: kernel %s, glibc %s, %s%s%s%s, %lld CPUs, virtualization %s, "
	       "fsgsbase %s\n",
	       json_string_value(json_object_get(fp, "hostname")) ?: "?",
	       json_string_value(json_object_get(fp, "kernel")) ?: "?",
	       json_string_value(json_object_get(fp, "glibc")) ?: "?",
	       model ? model : "unknown CPU", mc ? " (microcode " : "", mc ? mc : "", mc ? ")" : "",
	       (long long)json_integer_value(json_object_get(fp, "ncpus")),
	       json_string_value(json_object_get(fp, "virtualization")) ?: "?",
	       json_is_true(json_object_get(cpu, "fsgsbase")) ? "yes" : "no");
	print_section("host capabilities", fp, "capabilities");
	printf("\n%-11s %-8s %8s  %s\n", "PROBE", "STATUS", "TIME", "KEY FIGURES / REASON");
	fflush(stdout);
}

static void print_row(const char *name, const struct runner_result *r)
{
	char figures[1024];

	if (r->doc && r->status == RUNNER_OK)
		key_figures_text(name, r->doc, figures, sizeof(figures));
	else
		snprintf(figures, sizeof(figures), "%s", r->reason ? r->reason : "");
	printf("%-11s %-8s %6.1f s  %s\n", name, status_name(r->status), r->wall_s, figures);
	fflush(stdout);
}

/* What --json shows for a probe: its document, or an error object. A probe
 * that reported an error itself keeps its own (valid) document. */
static json_t *probe_entry(const char *name, const struct runner_result *r)
{
	json_t *doc = NULL;
	char err[256];

	if (r->doc)
		return json_incref(r->doc);
	if (r->output_len &&
	    protocol_parse(r->output, r->output_len, &doc, err, sizeof(err)) == 0) {
		if (!strcmp(protocol_status(doc), "error") && r->term_signal == 0)
			return doc;
		json_decref(doc);
	}
	return json_pack("{s:s, s:s, s:s, s:s, s:f, s:f, s:o, s:o, s:s*}", "probe", name, "status",
	                 "error", "failure", failure_kind_names[r->failure.kind], "reason",
	                 r->reason ? r->reason : "unknown", "duration_s", r->wall_s, "cpu_s",
	                 r->cpu_s, "exit_code",
	                 r->exit_code >= 0 ? json_integer(r->exit_code) : json_null(), "signal",
	                 r->term_signal ? json_integer(r->term_signal) : json_null(), "stderr",
	                 r->err_tail && *r->err_tail ? r->err_tail : NULL);
}

static int entry_ok(const json_t *doc)
{
	return !strcmp(json_string_value(json_object_get(doc, "status")) ?: "", "ok");
}

static int entry_failed(const json_t *doc)
{
	return !strcmp(json_string_value(json_object_get(doc, "status")) ?: "", "error");
}

/* The recommendation inputs from this run's entries (probe name ->
 * document or error object): the ok documents' figures, and the probes it
 * needs that failed, with their reasons. NULL when no probe it needs gave
 * figures or failed: a verdict would rest on assumptions alone. */
static json_t *inputs_from(const json_t *fp, json_t *entries)
{
	json_t *ok = json_object(), *inputs = NULL, *doc;
	struct rec_workload w;
	const char *name;
	int told = 0;

	json_object_foreach(entries, name, doc)
	{
		if (entry_ok(doc))
			json_object_set(ok, name, doc);
		told |= (entry_ok(doc) || entry_failed(doc)) && rec_inputs_needed(name);
	}
	rec_workload_default(&w);
	if (told)
		inputs =
		    rec_inputs_build(fp, json_object_get(ok, "ctxsw"), json_object_get(ok, "map32"),
		                     json_object_get(ok, "threads"), &w);
	if (inputs)
		rec_inputs_costs(inputs, json_object_get(entries, "createscale"),
		                 json_object_get(entries, "handoff"),
		                 json_object_get(entries, "stackmem"));
	json_object_foreach(entries, name, doc) if (inputs && entry_failed(doc))
	{
		int kind = failure_kind_parse(json_string_value(json_object_get(doc, "failure")));
		struct failure f;

		/* a probe's own error document names no failure: an error */
		failure_set(&f, kind < 0 ? FAILURE_ERROR : (enum failure_kind)kind,
		            (int)json_integer_value(json_object_get(doc, "signal")));
		rec_inputs_note_failed(inputs, name, &f,
		                       json_string_value(json_object_get(doc, "reason")), -1, -1);
	}
	json_decref(ok);
	return inputs;
}

/* The recommendation from the entries of this run. */
static json_t *recommendation(const json_t *fp, json_t *entries, char **text)
{
	json_t *inputs = inputs_from(fp, entries), *result, *out;
	char err[256];

	*text = NULL;
	if (!inputs)
		return json_pack("{s:n, s:n, s:s}", "inputs", "result", "error",
		                 "not enough data yet: no probe produced figures");
	result = rec_compute(inputs, err, sizeof(err));
	*text = result ? rec_text(result) : NULL;
	if (result)
		out = json_pack("{s:o, s:o}", "inputs", inputs, "result", result);
	else
		out = json_pack("{s:o, s:n, s:s}", "inputs", inputs, "result", "error", err);
	return out;
}

/* Runs the named probes one after another; fills *fp_out and *entries_out
 * (probe name -> document or error object). Returns 1 when any failed. */
static int run_probes(const struct run_args *a, const char *dirs, const char **names, size_t n,
                      json_t **fp_out, json_t **entries_out)
{
	json_t *fp = fingerprint_read(), *entries = json_object(), *ctxsw;
	struct runner_opts o = {.idle_io = 1, .cpus = a->cpus, .stop = &stop_flag};
	int failed = 0;

	if (!a->json)
		print_host(fp);
	for (size_t i = 0; i < n && !stop_flag; i++) {
		const struct catalog_probe *b = catalog_probe_find(names[i]);
		char *path = probe_path(dirs, names[i]);
		char *argv[] = {(char *)(uintptr_t)names[i], a->quick ? "--quick" : NULL, NULL};
		struct runner_result r;

		o.timeout_s = a->timeout_s > 0 ? a->timeout_s
		              : b              ? b->timeout_s
		                               : DEFAULT_TIMEOUT_S;
		o.cpus = runner_cpu_for(&a->cpus, b && b->own_cpus);
		runner_sched_for(a->sched, a->nice, b && b->priced, &o.sched, &o.nice);
		if (a->progress)
			fprintf(stderr,
			        "%s: measuring with the %s probe (%zu of %zu, at most %.0f s)...\n",
			        a->progress, names[i], i + 1, n, o.timeout_s);
		if (runner_run(path, argv, &o, &r) < 0)
			failed = 1;
		if (a->progress)
			fprintf(stderr, "%s: %s %s in %.1f s\n", a->progress, names[i],
			        r.status == RUNNER_OK ? "done" : "failed", r.wall_s);
		if (r.status == RUNNER_ERROR)
			failed = 1;
		if (!a->json)
			print_row(names[i], &r);
		json_object_set_new(entries, names[i], probe_entry(names[i], &r));
		runner_result_clear(&r);
		free(path);
	}
	/* What an ok ctxsw run proved in its forked child, as the daemon
	 * records it from its latest ok run. */
	ctxsw = json_object_get(entries, "ctxsw");
	if (strcmp(json_string_value(json_object_get(ctxsw, "status")) ?: "", "ok"))
		ctxsw = NULL;
	fingerprint_add_probed(fp, ctxsw);
	if (!a->json && ctxsw)
		print_section("\nctxsw proved", fp, "probed");
	if (stop_flag) {
		fprintf(stderr, "threadwatch run: interrupted\n");
		failed = 1;
	} else if (failed && a->sched != RUNNER_SCHED_NORMAL)
		fprintf(stderr,
		        "threadwatch run: the probes ran under SCHED_IDLE or nice 19 and yield to "
		        "other tasks; on a busy host --sched normal lets them compete\n");
	*fp_out = fp;
	*entries_out = entries;
	return failed;
}

static int run_all(const struct run_args *a, const char *dirs, const char **names, size_t n)
{
	json_t *fp, *entries, *rec, *root;
	char *text = NULL;
	int failed = run_probes(a, dirs, names, n, &fp, &entries);

	rec = recommendation(fp, entries, &text);
	if (a->json) {
		root = json_pack("{s:O, s:O, s:O}", "fingerprint", fp, "probes", entries,
		                 "recommendation", rec);
		json_dumpf(root, stdout, JSON_INDENT(2));
		fputc('\n', stdout);
		json_decref(root);
	} else if (text) {
		printf("\n%s\n", text);
	} else {
		printf("\nno recommendation: %s\n",
		       json_string_value(json_object_get(rec, "error")) ?: "unknown");
	}
	free(text);
	json_decref(rec);
	json_decref(entries);
	json_decref(fp);
	return failed;
}

/* The built-in probes present in dirs, in their default order. */
static size_t builtin_present(const char *dirs, const char **names)
{
	size_t n = 0;

	for (size_t i = 0; i < catalog_n_probes; i++) {
		char *p = runner_find_probe(dirs, catalog_probes[i].name);
		if (p)
			names[n++] = catalog_probes[i].name;
		free(p);
	}
	return n;
}

int cli_run_inputs(int quick, const char *progress, json_t **inputs)
{
	struct run_args a = RUN_ARGS_INIT;
	const char *names[MAX_PROBES];
	char *dirs = probe_dirs(&a);
	size_t n = builtin_present(dirs, names);
	json_t *fp, *entries;

	a.quick = quick;
	a.json = 1;
	a.progress = progress;
	if (n == 0) {
		fprintf(stderr, "threadwatch: no probes found in \"%s\"\n", dirs);
		free(dirs);
		return -ENOENT;
	}
	run_probes(&a, dirs, names, n, &fp, &entries);
	*inputs = inputs_from(fp, entries);
	if (!*inputs)
		fprintf(stderr, "threadwatch: not enough data yet: no probe produced figures\n");
	json_decref(entries);
	json_decref(fp);
	free(dirs);
	return stop_flag ? -EINTR : *inputs ? 0 : -ENODATA;
}

int cli_run(int argc, char **argv)
{
	struct run_args a = RUN_ARGS_INIT;
	const char *names[MAX_PROBES];
	size_t n = 0;
	char *dirs;
	struct sigaction sa;
	int rc;

	if (parse_args(argc, argv, &a, names, &n) < 0) {
		opt_try_help(stderr, "threadwatch run");
		return 2;
	}
	if (a.help) {
		usage(stdout);
		return 0;
	}
	dirs = probe_dirs(&a);
	for (size_t i = 0; i < n; i++) {
		char *p = probe_name_ok(names[i]) ? runner_find_probe(dirs, names[i]) : NULL;
		if (!p && !catalog_probe_find(names[i])) {
			fprintf(stderr, "threadwatch run: unknown probe \"%s\" (not in \"%s\")\n",
			        names[i], dirs);
			opt_try_help(stderr, "threadwatch run");
			free(dirs);
			return 2;
		}
		free(p);
	}
	if (n == 0) {
		n = builtin_present(dirs, names);
		if (n == 0) {
			fprintf(stderr, "threadwatch run: no probes found in \"%s\"\n", dirs);
			free(dirs);
			return 1;
		}
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	rc = run_all(&a, dirs, names, n) ? 1 : 0;
	free(dirs);
	return rc;
}
