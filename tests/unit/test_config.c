/*
 * test_config: threadwatchd's configuration table. Defaults, every value
 * type with its units and ranges, the file syntax (comments, quotes,
 * duplicates, NUL bytes) with file:line messages, flags with dashes, the
 * derived values (database, token_file, credentials) and the checks
 * between keys, copies, restart-only keys and printing that parses back.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "tmpdir.h"

#include "config.h"
#include "defaults.h"
#include "detect.h"
#include "tls.h"

/* Parses text on top of the defaults; returns the result, c filled. */
static int parse(struct config *c, const char *text, char *err, size_t errlen)
{
	config_init(c);
	return config_parse_named(text, strlen(text), "t.conf", c, err, errlen);
}

static void expect_error(const char *text, const char *needle)
{
	struct config c;
	char err[512] = "";

	assert_int_equal(parse(&c, text, err, sizeof(err)), -EINVAL);
	if (!strstr(err, needle))
		fail_msg("\"%s\" not in \"%s\"", needle, err);
	config_free(&c);
}

static void test_defaults(void **state)
{
	struct config c;

	(void)state;
	config_init(&c);
	assert_string_equal(c.listen_address, "127.0.0.1");
	assert_int_equal(c.port, 8437);
	assert_true(c.port < 9100 || c.port > 9999);
	assert_true(c.interval == 6 * 3600);
	assert_true(c.splay.is_percent && c.splay.value == 10);
	assert_true(fabs(config_splay_seconds(&c) - 2160) < 1e-9);
	assert_false(c.quick);
	assert_string_equal(c.database, "");
	assert_string_equal(c.token, "");
	assert_true(c.guard_loadavg_per_cpu_max == 0.7);
	assert_int_equal(c.guard, 0); /* auto */
	assert_int_equal(c.probe_cpu.how, RUNNER_CPUS_QUIET);
	assert_true(c.guard_cpu_pressure_max == 10);
	assert_true(c.guard_cpu_busy_max == 50);
	assert_true(c.workload_stack_size == 8u << 20);
	assert_true(c.workload_switches_per_thread == -1);
	assert_int_equal(config_log_priority(&c), 6 /* LOG_INFO */);
	for (int i = 0; i < CONFIG_MAX_KEYS; i++)
		assert_null(c.origin[i]);
	config_free(&c);
	config_free(NULL);
}

static void test_types_values(void **state)
{
	struct config c;
	char err[512] = "";

	(void)state;
	assert_int_equal(parse(&c,
	                       "interval = 1h30m\n"
	                       "load_wait_max = 500ms\n"
	                       "probe_timeout = 90\n"
	                       "splay = 90s\n"
	                       "quick = On\n"
	                       "workload_stack_size = 2MiB\n"
	                       "http_memory_limit = 64K\n"
	                       "load_threshold = 1.5\n"
	                       "workload_switches_per_thread = 1e6\n"
	                       "listen_address = ::1\n"
	                       "log_level = debug\n"
	                       "probe_cpu = 3\n"
	                       "nice = 0\n",
	                       err, sizeof(err)),
	                 0);
	assert_true(c.interval == 5400);
	/* the old names of the guard's keys still read (renamed[]) */
	assert_true(fabs(c.guard_wait_max - 0.5) < 1e-12);
	assert_true(c.probe_timeout == 90);
	assert_true(!c.splay.is_percent && c.splay.value == 90);
	assert_true(config_splay_seconds(&c) == 90);
	assert_true(c.quick);
	assert_true(c.workload_stack_size == 2u << 20);
	assert_true(c.http_memory_limit == 64u << 10);
	assert_true(c.guard_loadavg_per_cpu_max == 1.5);
	assert_true(c.workload_switches_per_thread == 1e6);
	assert_string_equal(c.listen_address, "::1");
	assert_int_equal(config_log_priority(&c), 7 /* LOG_DEBUG */);
	assert_int_equal(c.nice, 0);
	assert_int_equal(c.probe_cpu.how, RUNNER_CPUS_ONE);
	assert_int_equal(c.probe_cpu.cpu, 3);
	assert_string_equal(c.origin[3], "t.conf:1"); /* interval is the 4th key */
	config_free(&c);
}

static void test_type_errors(void **state)
{
	(void)state;
	expect_error("port = 8437x\n", "t.conf:1: port: \"8437x\" is not an integer");
	expect_error("port = -1\n", "out of range 0..65535");
	expect_error("port = 99999999999999999999\n", "not an integer");
	expect_error("nice = 20\n", "out of range 0..19");
	expect_error("interval = 0\n", "out of range 1s..365d");
	expect_error("interval = 6 h\n", "not a duration");
	expect_error("interval = -1h\n", "not a duration");
	expect_error("interval = h\n", "not a duration");
	expect_error("interval = 1h 30\n", "not a duration");
	expect_error("interval = inf\n", "not a duration");
	expect_error("load_threshold = nan\n", "not a number");
	expect_error("load_threshold = 0x10\n", "not a number");
	expect_error("load_threshold = 1001\n", "out of range");
	expect_error("quick = maybe\n", "not a boolean");
	expect_error("guard = load\n", "\"load\" is not one of: auto, psi, busy, loadavg, off");
	expect_error("guard_cpu_pressure_max = 101\n", "out of range 0..100");
	expect_error("probe_cpu = first\n", "\"first\" is not quiet, all or a CPU number 0..8191");
	expect_error("probe_cpu = -1\n", "is not quiet, all or a CPU number");
	expect_error("probe_cpu = 8192\n", "is not quiet, all or a CPU number");
	expect_error("log_level = loud\n", "not one of: err, warning, notice, info, debug");
	expect_error("workload_stack_size = 8X\n", "not a size");
	expect_error("workload_stack_size = 1K\n", "out of range 16K..1G");
	expect_error("splay = 60%\n", "out of range 0%..50%");
	expect_error("splay = x%\n", "not a percentage");
	expect_error("splay = soon\n", "neither a percentage");
	expect_error("splay = 400d\n", "longer than 365d");
	expect_error("listen_address = localhost\n", "not an IPv4 or IPv6 address");
	expect_error("listen_address =\n", "not an IPv4 or IPv6 address");
	expect_error("log_level = loud\n", "not one of");
	expect_error("token = short\n", "16 to 256 characters");
	expect_error("token = \"abcdefghijklmnop qrstuvwxyz\"\n", "not allowed");
	expect_error("probe_dir =\n", "must not be empty");
	expect_error("probe_dir = /a\tb\n", "control character");
}

static void test_syntax(void **state)
{
	struct config c;
	char err[512] = "";

	(void)state;
	assert_int_equal(parse(&c,
	                       "# comment\n"
	                       "\n"
	                       "   \t\n"
	                       "  port=1  \r\n"
	                       "textfile_path = /a#b # a comment\n"
	                       "token = \"abcdefghijklmnop#q\"   # quoted, then a comment\n"
	                       "database = \"  spaced  \"\n"
	                       "probes_d =\n"
	                       "probe_dir = /x # trailing",
	                       err, sizeof(err)),
	                 0);
	assert_int_equal(c.port, 1);
	assert_string_equal(c.textfile_path, "/a#b");
	assert_string_equal(c.token, "abcdefghijklmnop#q");
	assert_string_equal(c.database, "  spaced  ");
	assert_string_equal(c.probes_d, "");
	assert_string_equal(c.probe_dir, "/x");
	config_free(&c);

	expect_error("port = 1\nprot = 2\n", "t.conf:2: unknown key \"prot\"");
	expect_error("probe-dir = /x\n", "unknown key"); /* dashes only on the command line */
	expect_error("a\nport = 1\n", "t.conf:1: expected \"key = value\"");
	expect_error("port = 1\n\n# x\nport = 2\n", "t.conf:4: port is already set on line 1");
	expect_error("token = \"abcdefghijklmnopq\n", "closing quote is missing");
	expect_error("token = \"abcdefghijklmnopq\" x\n", "text after the closing quote");
}

static void test_nul_byte(void **state)
{
	static const char text[] = "port = 1\nquick = yes\ndatabase = a\0b\n";
	struct config c;
	char err[512] = "";

	(void)state;
	config_init(&c);
	assert_int_equal(config_parse_buffer(text, sizeof(text) - 1, &c, err, sizeof(err)),
	                 -EINVAL);
	assert_string_equal(err, "<buffer>:3: contains a NUL byte");
	config_free(&c);
}

/* The getopt table: every key once, a dashed twin for each key with an
 * underscore, booleans with an optional value, vals mapping back. */
static void test_options(void **state)
{
	struct option lo[2 * CONFIG_MAX_KEYS];
	size_t n = config_options(lo, 2 * CONFIG_MAX_KEYS, 1000), seen_dash = 0;
	int quick = 0, port = 0, renamed = 0;

	(void)state;
	assert_true(n > 30 && n <= 2 * CONFIG_MAX_KEYS);
	for (size_t i = 0; i < n; i++) {
		const char *key = config_option_key(lo[i].val, 1000);

		assert_non_null(key);
		assert_null(lo[i].flag);
		if (strchr(lo[i].name, '-')) {
			char twin[64];

			seen_dash++;
			/* the twin of the name before it, for the same key */
			snprintf(twin, sizeof(twin), "%s", lo[i - 1].name);
			for (char *p = twin; *p; p++)
				*p = *p == '_' ? '-' : *p;
			assert_string_equal(lo[i].name, twin);
			assert_int_equal(lo[i - 1].val, lo[i].val);
		} else if (strcmp(lo[i].name, key)) {
			/* a renamed key's former name, which old files and
			 * command lines still use */
			assert_true((!strcmp(lo[i].name, "load_threshold") &&
			             !strcmp(key, "guard_loadavg_per_cpu_max")) ||
			            (!strcmp(lo[i].name, "load_wait_max") &&
			             !strcmp(key, "guard_wait_max")));
			renamed++;
		}
		if (!strcmp(lo[i].name, "quick"))
			quick = lo[i].has_arg == optional_argument;
		if (!strcmp(lo[i].name, "port"))
			port = lo[i].has_arg == required_argument;
	}
	assert_true(quick && port);
	assert_true(seen_dash >= 10);
	assert_int_equal(renamed, 2);
	assert_null(config_option_key(999, 1000));
	assert_null(config_option_key(1000 + (int)n, 1000));
	/* a short table is cut, not overrun */
	assert_int_equal(config_options(lo, 3, 1000), 3);
}

static void test_flags(void **state)
{
	struct config c;
	char err[512] = "";

	(void)state;
	assert_string_equal(config_key_name("probe-dir"), "probe_dir");
	assert_string_equal(config_key_name("probe_dir"), "probe_dir");
	assert_null(config_key_name("probe"));
	assert_null(config_key_name("probe_dir_x"));
	config_init(&c);
	assert_int_equal(
	    config_set(&c, "load-threshold", "3", "--load-threshold", err, sizeof(err)), 0);
	assert_true(c.guard_loadavg_per_cpu_max == 3);
	assert_string_equal(config_key_name("load_wait_max"), "guard_wait_max");
	assert_int_equal(config_set(&c, "port", "x", "--port", err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "--port: \"x\" is not an integer");
	assert_int_equal(config_set(&c, "nope", "1", "--nope", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "unknown key"));
	config_free(&c);
}

static void test_copy_and_restart_diff(void **state)
{
	struct config a, b;
	char err[256], diff[256];

	(void)state;
	config_init(&a);
	assert_int_equal(
	    config_set(&a, "token", "abcdefghijklmnopqrstuvwxyz", "--token", err, sizeof(err)), 0);
	config_copy(&b, &a);
	assert_ptr_not_equal(a.token, b.token);
	assert_string_equal(a.token, b.token);
	config_restart_diff(&a, &b, diff, sizeof(diff));
	assert_string_equal(diff, "");
	assert_int_equal(config_set(&b, "interval", "1h", "x:1", err, sizeof(err)), 0);
	config_restart_diff(&a, &b, diff, sizeof(diff));
	assert_string_equal(diff, ""); /* interval applies on reload */
	assert_int_equal(config_set(&b, "port", "1", "x:2", err, sizeof(err)), 0);
	assert_int_equal(config_set(&b, "http_threads", "3", "x:3", err, sizeof(err)), 0);
	config_restart_diff(&a, &b, diff, sizeof(diff));
	assert_string_equal(diff, "port, http_threads");
	config_free(&a);
	assert_string_equal(b.token, "abcdefghijklmnopqrstuvwxyz");
	config_free(&b);
}

static char *write_file(const char *name, const char *text)
{
	char *path;
	FILE *f;

	assert_true(asprintf(&path, "%s/%s", tmpdir, name) > 0);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	return path;
}

static void test_resolve(void **state)
{
	struct config c;
	char err[512] = "", *tok, *cert, *path;

	(void)state;
	/* The database: --state-dir, else $STATE_DIRECTORY (first entry), else var/. */
	config_init(&c);
	assert_int_equal(config_resolve(&c, "/srv/tw", err, sizeof(err)), 0);
	assert_string_equal(c.database, "/srv/tw/threadwatch.db");
	config_free(&c);
	setenv("STATE_DIRECTORY", "/var/lib/threadwatch:/var/lib/other", 1);
	config_init(&c);
	assert_int_equal(config_resolve(&c, NULL, err, sizeof(err)), 0);
	assert_string_equal(c.database, "/var/lib/threadwatch/threadwatch.db");
	config_free(&c);
	unsetenv("STATE_DIRECTORY");
	config_init(&c);
	assert_int_equal(config_resolve(&c, NULL, err, sizeof(err)), 0);
	assert_string_equal(c.database, "var/threadwatch.db");
	config_free(&c);

	/* token_file: its first line; a relative name is a credential. */
	tok = write_file("tok", "  abcdefghijklmnopqrstuvwxyz  \nsecond line\n");
	assert_int_equal(parse(&c, "token_file = tok\n", err, sizeof(err)), 0);
	setenv("CREDENTIALS_DIRECTORY", tmpdir, 1);
	assert_int_equal(config_resolve(&c, NULL, err, sizeof(err)), 0);
	assert_string_equal(c.token, "abcdefghijklmnopqrstuvwxyz");
	assert_string_equal(c.token_file, tok);
	config_free(&c);
	unsetenv("CREDENTIALS_DIRECTORY");

	path = write_file("short", "abc\n");
	assert_int_equal(parse(&c, "token_file = x\n", err, sizeof(err)), 0);
	free(c.token_file);
	c.token_file = strdup(path);
	assert_int_equal(config_resolve(&c, NULL, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "t.conf:1: token_file"));
	assert_non_null(strstr(err, "16 to 256"));
	config_free(&c);
	free(path);

	/* Rules between keys name where the key was set. */
	assert_int_equal(
	    parse(&c, "token = abcdefghijklmnopqrstuvwxyz\ntoken_file = /x\n", err, sizeof(err)),
	    0);
	assert_int_equal(config_resolve(&c, NULL, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "t.conf:2: token_file: token is also set (t.conf:1)"));
	config_free(&c);
	cert = write_file("cert.pem", "x");
	assert_int_equal(parse(&c, "tls_key = /nonexistent/key.pem\n", err, sizeof(err)), 0);
	assert_int_equal(config_set(&c, "tls_cert", cert, "--tls-cert", err, sizeof(err)), 0);
	assert_int_equal(config_resolve(&c, NULL, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "t.conf:1: tls_key: cannot read \"/nonexistent/key.pem\""));
	config_free(&c);
	assert_int_equal(parse(&c, "interval = 10m\nsplay = 11m\n", err, sizeof(err)), 0);
	assert_int_equal(config_resolve(&c, NULL, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "t.conf:2: splay"));
	config_free(&c);
	free(tok);
	free(cert);
}

static void test_print_parses_back(void **state)
{
	struct config c, again;
	char err[512] = "", *text = NULL;
	size_t len = 0;
	FILE *f;

	(void)state;
	assert_int_equal(parse(&c,
	                       "textfile_path = /a #b\n"
	                       "database = \"  x  \"\n"
	                       "interval = 90061\n"
	                       "splay = 12.5%\n"
	                       "load_wait_max = 0.25\n"
	                       "probe_cpu = 007\n"
	                       "workload_stack_size = 1536K\n",
	                       err, sizeof(err)),
	                 0);
	f = open_memstream(&text, &len);
	assert_non_null(f);
	config_print(&c, f);
	fclose(f);
	assert_non_null(strstr(text, "interval = 1d1h1m1s"));
	assert_non_null(strstr(text, "guard_wait_max = 250ms"));
	assert_non_null(strstr(text, "workload_stack_size = 1536K"));
	assert_non_null(strstr(text, "splay = 12.5%"));
	assert_non_null(strstr(text, "probe_cpu = 7 "));
	config_init(&again);
	assert_int_equal(config_parse_buffer(text, len, &again, err, sizeof(err)), 0);
	assert_string_equal(again.textfile_path, "/a");
	assert_string_equal(again.database, "  x  ");
	assert_true(again.interval == 90061);
	assert_true(again.splay.is_percent && again.splay.value == 12.5);
	assert_int_equal(again.probe_cpu.cpu, 7);
	assert_true(again.workload_stack_size == 1536 * 1024);
	free(text);
	config_free(&again);
	config_free(&c);
}

static void test_docs(void **state)
{
	char *text = NULL, *md = NULL;
	size_t len = 0, mdlen = 0;
	FILE *f = open_memstream(&text, &len), *g = open_memstream(&md, &mdlen);
	struct config c;
	char err[512];

	(void)state;
	config_print_file(f);
	fclose(f);
	config_print_markdown(g);
	fclose(g);
	assert_non_null(strstr(text, "\n#interval = 6h\n"));
	assert_non_null(strstr(text, "\n#port = 8437\n"));
	assert_non_null(strstr(md, "| `splay` | percent or duration | `10%` |"));
	/* The documented file itself is a valid (empty) configuration. */
	config_init(&c);
	assert_int_equal(config_parse_buffer(text, len, &c, err, sizeof(err)), 0);
	for (int i = 0; i < CONFIG_MAX_KEYS; i++)
		assert_null(c.origin[i]);
	config_free(&c);
	free(text);
	free(md);
}

/* Writes text to tmpdir/name. */
static void put(const char *name, const char *text)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* threadwatchd.conf.d: *.conf in name order, later files win; an unknown
 * key is a warning with file and line, or an error when strict. */
static void test_dropins(void **state)
{
	char dir[256], err[512] = "", *warn = NULL, where[400];
	struct config c;

	(void)state;
	snprintf(dir, sizeof(dir), "%s/d.conf.d", tmpdir);
	config_init(&c);
	assert_int_equal(config_load_dropins(dir, &c, 1, &warn, err, sizeof(err)), 0);
	assert_null(warn); /* a missing directory is no error */
	assert_int_equal(mkdir(dir, 0755), 0);
	put("d.conf.d/20-b.conf", "interval = 3h\nfuture_key = 1\nnice = 4\n");
	put("d.conf.d/10-a.conf", "interval = 2h\nnice = 3\nquick = yes\n");
	put("d.conf.d/30-c.conf.dpkg-old", "interval = 9h\n");
	put("d.conf.d/.hidden.conf", "interval = 8h\n");
	assert_int_equal(config_load_dropins(dir, &c, 0, &warn, err, sizeof(err)), 0);
	assert_true(c.interval == 3 * 3600);
	assert_int_equal(c.nice, 4);
	assert_true(c.quick);
	snprintf(where, sizeof(where), "%s/20-b.conf:2: unknown key \"future_key\", ignored\n",
	         dir);
	assert_non_null(warn);
	assert_string_equal(warn, where);
	snprintf(where, sizeof(where), "%s/20-b.conf:3", dir);
	assert_string_equal(config_origin(&c, "nice"), where);
	free(warn);
	config_free(&c);

	/* --check-config: the same key is an error */
	config_init(&c);
	assert_int_equal(config_load_dropins(dir, &c, 1, &warn, err, sizeof(err)), -EINVAL);
	assert_null(warn);
	assert_non_null(strstr(err, "20-b.conf:2: unknown key \"future_key\""));
	config_free(&c);

	/* a bad value in a drop-in is an error either way */
	put("d.conf.d/40-d.conf", "nice = 99\n");
	config_init(&c);
	assert_int_equal(config_load_dropins(dir, &c, 0, &warn, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "40-d.conf:1: nice: 99 is out of range"));
	free(warn);
	config_free(&c);
}

static int setup(void **state)
{
	(void)state;
	return tmpdir_make("test_config");
}

static int teardown(void **state)
{
	(void)state;
	return tmpdir_remove();
}

/* probes_disabled: built-in probes and their arms, checked against the
 * catalogue, kept as "a, b", and asked by config_disabled(). */
static void test_probes_disabled(void **state)
{
	struct config c;
	char err[512] = "";

	(void)state;
	config_init(&c);
	assert_string_equal(c.probes_disabled, "");
	assert_false(config_disabled(&c, "ctxsw", NULL));
	config_free(&c);
	assert_int_equal(
	    parse(&c, "probes_disabled = ctxsw,map32  ctxsw.selector\n", err, sizeof(err)), 0);
	assert_string_equal(c.probes_disabled, "ctxsw, map32, ctxsw.selector");
	assert_true(config_disabled(&c, "ctxsw", NULL));
	assert_true(config_disabled(&c, "map32", NULL));
	assert_false(config_disabled(&c, "threads", NULL));
	assert_true(config_disabled(&c, "ctxsw", "selector"));
	assert_false(config_disabled(&c, "ctxsw", "aa"));
	config_free(&c);
	expect_error(
	    "probes_disabled = nosuch\n",
	    "t.conf:1: probes_disabled: \"nosuch\" is not a built-in probe or arm "
	    "(ctxsw, threads, map32, handoff, stackmem, createscale, ctxsw.selector, ctxsw.aa)");
	expect_error("probes_disabled = ctxsw.nosuch\n", "\"ctxsw.nosuch\" is not a built-in");
	expect_error("probes_disabled = map32.selector\n", "\"map32.selector\" is not a built-in");
	expect_error("probes_disabled = ctxsw.\n", "\"ctxsw.\" is not a built-in");
}

/* The table's default texts are the lib/ constants the other
 * programs use, read back through the table's own parsers. */
static void test_defaults_tied(void **state)
{
	struct config c;

	(void)state;
	config_init(&c);
	assert_int_equal(c.port, TW_DEFAULT_PORT);
	assert_int_equal(c.workload_threads, TW_DEFAULT_THREADS);
	assert_int_equal(c.workload_stack_size, TW_DEFAULT_STACK_BYTES);
	assert_int_equal(c.detect_k, DETECT_K_DEFAULT);
	assert_int_equal(c.detect_k_sustained, DETECT_K_SUSTAINED_DEFAULT);
	assert_true(c.detect_min_effect == DETECT_MIN_EFFECT_DEFAULT);
	assert_true(c.detect_alpha == DETECT_ALPHA_DEFAULT);
	assert_int_equal(c.detect_baseline_runs, DETECT_BASELINE_DEFAULT);
	assert_string_equal(c.tls_priorities, TLS_PRIORITIES_DEFAULT);
	config_free(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_defaults_tied),
	    cmocka_unit_test(test_defaults),
	    cmocka_unit_test(test_types_values),
	    cmocka_unit_test(test_type_errors),
	    cmocka_unit_test(test_syntax),
	    cmocka_unit_test(test_nul_byte),
	    cmocka_unit_test(test_options),
	    cmocka_unit_test(test_flags),
	    cmocka_unit_test(test_copy_and_restart_diff),
	    cmocka_unit_test(test_resolve),
	    cmocka_unit_test(test_print_parses_back),
	    cmocka_unit_test(test_docs),
	    cmocka_unit_test(test_dropins),
	    cmocka_unit_test(test_probes_disabled),
	};

	return cmocka_run_group_tests_name("config", tests, setup, teardown);
}
