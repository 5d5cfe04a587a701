/*
 * test_runner: the runner against small shell-script probes that behave
 * well and badly: a good document, skipped and error documents, a hang, a
 * crash, a flood of output, a grandchild left running, a missing and a
 * non-executable binary, JSON of the wrong shape, empty output, the stop
 * flag, and the priorities applied in the child.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "tmpdir.h"

#include "placement.h"
#include "protocol.h"
#include "runner.h"

/* The start of a valid document from probe `name` (a string literal). */
#define DOC_HEAD(name)                                                                             \
	"{\"probe\":\"" name "\",\"protocol\":1,\"started_at\":\"2026-01-01T00:00:00Z\","          \
	"\"started_unix\":1,\"duration_s\":0.1,"

/* Writes an executable shell script `name` with `body`, returns its path. */
static char *script(const char *name, mode_t mode, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static char *script(const char *name, mode_t mode, const char *fmt, ...)
{
	char *path;
	FILE *f;
	va_list ap;

	assert_true(asprintf(&path, "%s/%s", tmpdir, name) > 0);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("#!/bin/sh\n", f);
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fclose(f);
	assert_int_equal(chmod(path, mode), 0);
	return path;
}

static void run(const char *path, const char *name, double timeout_s, struct runner_result *r)
{
	char *argv[] = {(char *)(uintptr_t)name, NULL};
	struct runner_opts o = {.timeout_s = timeout_s};

	assert_int_equal(runner_run(path, argv, &o, r), 0);
}

static void expect_error(const struct runner_result *r, const char *expect)
{
	assert_int_equal(r->status, RUNNER_ERROR);
	assert_null(r->doc);
	assert_non_null(r->reason);
	if (!strstr(r->reason, expect))
		fail_msg("expected \"%s\" in \"%s\"", expect, r->reason);
}

/* A process that is gone or a zombie (reaped by whoever adopted it) no
 * longer runs. Waits up to 5 s for the kill to take effect. */
static int still_running(pid_t pid)
{
	for (int i = 0; i < 100; i++) {
		char path[64], buf[512], *p;
		FILE *f;
		size_t n;

		snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
		f = fopen(path, "r");
		if (!f)
			return 0;
		n = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
		buf[n] = '\0';
		p = strrchr(buf, ')');
		if (!p || p[1] == '\0' || p[2] == 'Z' || p[2] == 'X')
			return 0;
		usleep(50000);
	}
	return 1;
}

static pid_t read_pid(const char *file)
{
	char path[256];
	FILE *f;
	int pid = 0;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, file);
	f = fopen(path, "r");
	assert_non_null(f);
	assert_int_equal(fscanf(f, "%d", &pid), 1);
	fclose(f);
	return (pid_t)pid;
}

static void test_ok(void **state)
{
	struct runner_result r;
	char *p = script("good", 0755,
	                 "printf '%%s\\n' '" DOC_HEAD(
	                     "good") "\"status\":\"ok\",\"reason\":null,"
	                             "\"scalars\":{\"low_ns\":{\"value\":812,\"unit\":\"ns\"}}}'\n"
	                             "echo 'a warning' >&2\n");

	(void)state;
	run(p, "good", 10, &r);
	assert_int_equal(r.status, RUNNER_OK);
	assert_null(r.reason);
	assert_non_null(r.doc);
	assert_true(protocol_scalar(r.doc, "low_ns") == 812);
	assert_int_equal(r.exit_code, 0);
	assert_int_equal(r.term_signal, 0);
	assert_true(r.output_len > 0 && r.output[r.output_len] == '\0');
	assert_true(r.wall_s > 0 && r.cpu_s >= 0);
	assert_true(r.started_unix_ms > 1600000000000LL);
	assert_string_equal(r.err_tail, "a warning\n");
	runner_result_clear(&r);
	runner_result_clear(NULL);
	free(p);
}

static void test_skipped_and_error_documents(void **state)
{
	struct runner_result r;
	char *skip = script(
	    "skip", 0755,
	    "printf '%%s' '" DOC_HEAD("skip") "\"status\":\"skipped\",\"reason\":\"not x86\"}'\n");
	char *err =
	    script("err", 0755,
	           "printf '%%s' '" DOC_HEAD("err") "\"status\":\"error\",\"reason\":\"low FS base "
	                                            "was high\"}'\nexit 1\n");
	char *na =
	    script("na", 0755,
	           "printf '%%s' '" DOC_HEAD("na") "\"status\":\"not_applicable\",\"reason\":"
	                                           "\"no MAP_32BIT window\"}'\n");
	char *liar =
	    script("liar", 0755, "printf '%%s' '" DOC_HEAD("liar") "\"status\":\"ok\"}'\nexit 3\n");
	char *other = script("other", 0755,
	                     "printf '%%s' '" DOC_HEAD("someone-else") "\"status\":\"ok\"}'\n");

	(void)state;
	run(skip, "skip", 10, &r);
	assert_int_equal(r.status, RUNNER_SKIPPED);
	assert_string_equal(r.reason, "not x86");
	assert_non_null(r.doc);
	runner_result_clear(&r);

	run(na, "na", 10, &r);
	assert_int_equal(r.status, RUNNER_NOT_APPLICABLE);
	assert_string_equal(r.reason, "no MAP_32BIT window");
	assert_non_null(r.doc);
	runner_result_clear(&r);

	run(err, "err", 10, &r);
	expect_error(&r, "low FS base was high");
	assert_int_equal(r.exit_code, 1);
	runner_result_clear(&r);

	run(liar, "liar", 10, &r);
	expect_error(&r, "exited with status 3 after reporting \"ok\"");
	runner_result_clear(&r);

	run(other, "other", 10, &r);
	expect_error(&r, "document is from probe \"someone-else\", expected \"other\"");
	runner_result_clear(&r);
	free(skip);
	free(na);
	free(err);
	free(liar);
	free(other);
}

/* Whether `env` output (one NAME=value per line) holds NAME. */
static int has_var(const char *out, const char *name)
{
	size_t n = strlen(name);

	for (const char *l = out; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL)
		if (!strncmp(l, name, n) && l[n] == '=')
			return 1;
	return 0;
}

/* A probe starts with the allow-listed variables only: no credentials,
 * no systemd sockets, no secrets the daemon was started with. */
static void test_minimal_environment(void **state)
{
	static const char *const drop[] = {"CREDENTIALS_DIRECTORY", "NOTIFY_SOCKET", "LISTEN_FDS",
	                                   "LISTEN_PID", "TW_SECRET_TOKEN"};
	static const char *const keep[] = {"PATH", "LANG",       "LC_ALL",         "TZ",
	                                   "HOME", "LD_PRELOAD", "STATE_DIRECTORY"};
	struct runner_result r;
	char *p = script("envdump", 0755, "env\n");

	(void)state;
	for (size_t i = 0; i < sizeof(drop) / sizeof(drop[0]); i++)
		setenv(drop[i], "leaked", 1);
	setenv("LANG", "C.UTF-8", 1);
	setenv("LC_ALL", "C", 1);
	setenv("TZ", "UTC", 1);
	setenv("HOME", "/nonexistent", 1);
	setenv("LD_PRELOAD", "", 1);
	setenv("STATE_DIRECTORY", "/nonexistent", 1);
	run(p, "envdump", 10, &r);
	for (size_t i = 0; i < sizeof(drop) / sizeof(drop[0]); i++) {
		if (has_var(r.output, drop[i]))
			fail_msg("%s reached the probe: %s", drop[i], r.output);
		unsetenv(drop[i]);
	}
	for (size_t i = 0; i < sizeof(keep) / sizeof(keep[0]); i++)
		if (!has_var(r.output, keep[i]))
			fail_msg("%s did not reach the probe: %s", keep[i], r.output);
	unsetenv("LD_PRELOAD");
	unsetenv("STATE_DIRECTORY");
	runner_result_clear(&r);
	free(p);
}

/* A probe's reason and stderr are escaped: a newline or an escape
 * sequence cannot forge a log line or drive a terminal. */
static void test_probe_text_escaped(void **state)
{
	struct runner_result r;
	char *doc = script(
	    "forger", 0755,
	    "printf '%%s' '" DOC_HEAD("forger") "\"status\":\"error\",\"reason\":"
	                                        "\"bad\\nCycle 1 finished: ok\\u001b[2J\\\\\"}'\n"
	                                        "exit 1\n");
	char *err =
	    script("stderrforger", 0755,
	           "printf 'x\\033]0;title\\007 y\\rCycle 1 finished: ok\\n' >&2\nexit 2\n");

	(void)state;
	run(doc, "forger", 10, &r);
	expect_error(&r, "bad\\nCycle 1 finished: ok\\x1b[2J\\\\");
	runner_result_clear(&r);
	run(err, "stderrforger", 10, &r);
	expect_error(&r, "(stderr: x\\x1b]0;title\\x07 y\\rCycle 1 finished: ok)");
	runner_result_clear(&r);
	free(doc);
	free(err);
}

static void test_hang_is_killed(void **state)
{
	struct runner_result r;
	/* Ignores SIGTERM, so only the SIGKILL that follows ends it; its
	 * child sleeps too and must die with the group. */
	char *p = script("hang", 0755,
	                 "trap '' TERM\nsleep 1000 &\necho $! > %s/hang.pid\n"
	                 "while :; do sleep 0.1; done\n",
	                 tmpdir);

	(void)state;
	run(p, "hang", 1, &r);
	expect_error(&r, "killed after the 1 s time limit");
	assert_true(r.wall_s >= 1.0 && r.wall_s < 2.0);
	assert_int_equal(r.term_signal, SIGKILL);
	assert_false(still_running(read_pid("hang.pid")));
	runner_result_clear(&r);
	free(p);
}

static void test_crash(void **state)
{
	struct runner_result r;
	char *p = script("crash", 0755, "ulimit -c 0\necho 'about to crash' >&2\nkill -SEGV $$\n");

	(void)state;
	run(p, "crash", 10, &r);
	expect_error(&r, "crashed with SIGSEGV");
	assert_non_null(strstr(r.reason, "about to crash"));
	assert_int_equal(r.term_signal, SIGSEGV);
	assert_int_equal(r.exit_code, -1);
	runner_result_clear(&r);
	free(p);
}

static void test_output_limit(void **state)
{
	struct runner_result r;
	char *p = script("flood", 0755, "head -c 10485760 /dev/zero | tr '\\0' x\n");

	(void)state;
	run(p, "flood", 20, &r);
	expect_error(&r, "output exceeds 4194304 bytes");
	assert_int_equal(r.output_len, 4194304);
	assert_int_equal(r.output[r.output_len], '\0');
	runner_result_clear(&r);
	free(p);
}

static void test_small_output_limit(void **state)
{
	struct runner_result r;
	char *argv[] = {"small", NULL};
	struct runner_opts o = {.timeout_s = 10, .max_output = 100};
	char *p = script("small", 0755, "yes garbage\n");

	(void)state;
	assert_int_equal(runner_run(p, argv, &o, &r), 0);
	expect_error(&r, "output exceeds 100 bytes");
	assert_int_equal(r.output_len, 100);
	runner_result_clear(&r);
	free(p);
}

static void test_stderr_flood(void **state)
{
	struct runner_result r;
	/* 8 MiB on stderr must neither block the probe nor be kept whole. */
	char *p = script("noisy", 0755,
	                 "head -c 8388608 /dev/zero | tr '\\0' e >&2\n"
	                 "printf '%%s' '" DOC_HEAD("noisy") "\"status\":\"ok\"}'\n");

	(void)state;
	run(p, "noisy", 20, &r);
	assert_int_equal(r.status, RUNNER_OK);
	runner_result_clear(&r);
	free(p);
}

static void test_grandchild_does_not_survive(void **state)
{
	struct runner_result r;
	char *p = script("forker", 0755,
	                 "sleep 1000 &\necho $! > %s/gc.pid\n"
	                 "sleep 1000 >/dev/null 2>&1 &\necho $! > %s/gc2.pid\n"
	                 "printf '%%s' '" DOC_HEAD("forker") "\"status\":\"ok\"}'\n",
	                 tmpdir, tmpdir);

	(void)state;
	run(p, "forker", 10, &r);
	assert_int_equal(r.status, RUNNER_OK);
	/* Returned long before the sleeps would have ended on their own. */
	assert_true(r.wall_s < 10);
	assert_false(still_running(read_pid("gc.pid")));
	assert_false(still_running(read_pid("gc2.pid")));
	runner_result_clear(&r);
	free(p);
}

static void test_missing_and_not_executable(void **state)
{
	struct runner_result r;
	char *missing, *noexec = script("noexec", 0644, "echo hi\n");
	char *badinterp;

	(void)state;
	assert_true(asprintf(&missing, "%s/does-not-exist", tmpdir) > 0);
	run(missing, "does-not-exist", 10, &r);
	expect_error(&r, "not found");
	assert_non_null(strstr(r.reason, missing));
	assert_int_equal(r.exit_code, 127);
	runner_result_clear(&r);

	run(noexec, "noexec", 10, &r);
	expect_error(&r, "is not executable: Permission denied");
	runner_result_clear(&r);

	/* exec fails with ENOEXEC for a file that is no program at all. */
	badinterp = script("junk", 0755, "x");
	{
		FILE *f = fopen(badinterp, "w");
		assert_non_null(f);
		fputs("\x7f"
		      "ELF garbage",
		      f);
		fclose(f);
	}
	run(badinterp, "junk", 10, &r);
	expect_error(&r, "cannot execute");
	runner_result_clear(&r);
	free(missing);
	free(noexec);
	free(badinterp);
}

static void test_bad_documents(void **state)
{
	static const struct {
		const char *name, *body, *expect;
	} cases[] = {
	    {"shape", "echo '{\"hello\": 1}'\n", "invalid document: document: unknown field"},
	    {"array", "echo '[1, 2, 3]'\n", "invalid document: document: not a JSON object"},
	    {"badvalue",
	     "printf '%s' '" DOC_HEAD("badvalue") "\"status\":\"ok\",\"scalars\":{\"low_ns\":{"
	                                          "\"value\":\"fast\",\"unit\":\"ns\"}}}'\n",
	     "invalid document: scalars.low_ns.value: not a number"},
	    {"garbage", "echo 'Segmentation fault'\n",
	     "invalid document: document: not valid JSON"},
	    {"empty", "exit 0\n", "empty output"},
	    {"blank", "printf '\\n\\n  \\n'\n", "empty output"},
	    {"failed", "echo 'no permission to pin' >&2\nexit 3\n",
	     "exited with status 3 without a document (stderr: no permission to pin)"},
	    {"failedjunk", "echo junk\nexit 4\n", "exited with status 4; invalid document"},
	    /* Bytes that are not printable text never reach a reason. */
	    {"binerr", "printf '\\377\\001bad\\n' >&2\nexit 5\n",
	     "exited with status 5 without a document (stderr: \\xff\\x01bad)"},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct runner_result r;
		char *p = script(cases[i].name, 0755, "%s", cases[i].body);

		run(p, cases[i].name, 10, &r);
		expect_error(&r, cases[i].expect);
		runner_result_clear(&r);
		free(p);
	}
}

static volatile sig_atomic_t stop_flag;

static void *set_stop(void *arg)
{
	(void)arg;
	usleep(200000);
	stop_flag = 1;
	return NULL;
}

static void test_stop_flag(void **state)
{
	struct runner_result r;
	char *argv[] = {"slow", NULL};
	struct runner_opts o = {.timeout_s = 60, .stop = &stop_flag};
	char *p = script("slow", 0755, "sleep 1000\n");
	pthread_t t;

	(void)state;
	stop_flag = 0;
	assert_int_equal(pthread_create(&t, NULL, set_stop, NULL), 0);
	assert_int_equal(runner_run(p, argv, &o, &r), 0);
	pthread_join(t, NULL);
	expect_error(&r, "stopped before it finished");
	/* Far less than the 60 s limit. */
	assert_true(r.wall_s < 5);
	runner_result_clear(&r);
	free(p);
}

static void test_priorities(void **state)
{
	struct runner_result r;
	char *argv[] = {"prio", NULL};
	struct runner_opts o = {.timeout_s = 10, .nice = 5, .idle_io = 1};
	/* the policy is field 41 of /proc/PID/stat (proc_pid_stat(); comm
	 * "sh" holds no space): 5 is SCHED_IDLE */
	char *p = script("prio", 0755,
	                 "n=$(nice)\nio=$(ionice -p $$ | cut -d: -f1)\n"
	                 "pol=$(cut -d' ' -f41 /proc/$$/stat)\n"
	                 "printf '" DOC_HEAD("prio") "\"status\":\"ok\",\"info\":{\"nice\":%%s,"
	                                             "\"io\":\"%%s\",\"policy\":%%s}}' "
	                                             "\"$n\" \"$io\" \"$pol\"\n");
	int expect = getpriority(PRIO_PROCESS, 0) + 5;

	(void)state;
	if (expect > 19)
		expect = 19;
	for (int idle = 0; idle <= 1; idle++) {
		json_t *info;

		o.sched = idle ? RUNNER_SCHED_IDLE : RUNNER_SCHED_NORMAL;
		assert_int_equal(runner_run(p, argv, &o, &r), 0);
		if (r.status != RUNNER_OK)
			fail_msg("prio probe: %s", r.reason);
		info = json_object_get(r.doc, "info");
		assert_int_equal((int)json_number_value(json_object_get(info, "nice")), expect);
		assert_string_equal(json_string_value(json_object_get(info, "io")), "idle");
		/* SCHED_IDLE when asked, else the caller's own policy */
		assert_int_equal((int)json_number_value(json_object_get(info, "policy")),
		                 idle ? SCHED_IDLE : sched_getscheduler(0));
		runner_result_clear(&r);
	}
	free(p);
}

/* priced: SCHED_IDLE at the asked niceness, but a priced probe at
 * SCHED_OTHER, nice 19; the other policies stand for every probe. */
static void test_sched_for(void **state)
{
	enum runner_sched s;
	int n;

	(void)state;
	runner_sched_for(RUNNER_SCHED_PRICED, 10, 1, &s, &n);
	assert_int_equal(s, RUNNER_SCHED_NORMAL);
	assert_int_equal(n, 19);
	runner_sched_for(RUNNER_SCHED_PRICED, 10, 0, &s, &n);
	assert_int_equal(s, RUNNER_SCHED_IDLE);
	assert_int_equal(n, 10);
	for (int priced = 0; priced <= 1; priced++) {
		runner_sched_for(RUNNER_SCHED_IDLE, 3, priced, &s, &n);
		assert_true(s == RUNNER_SCHED_IDLE && n == 3);
		runner_sched_for(RUNNER_SCHED_NORMAL, 0, priced, &s, &n);
		assert_true(s == RUNNER_SCHED_NORMAL && n == 0);
	}
	assert_string_equal(runner_sched_names[RUNNER_SCHED_PRICED], "priced");
}

/* Runs the "where" probe, which reports the CPUs it may run on as the
 * kernel lists them (Cpus_allowed_list in /proc/PID/status). */
static char *run_where(const char *path, const struct runner_opts *o, struct runner_result *r)
{
	char *argv[] = {"where", NULL};

	assert_int_equal(runner_run(path, argv, o, r), 0);
	if (r->status != RUNNER_OK)
		return NULL;
	return strdup(
	    json_string_value(json_object_get(json_object_get(r->doc, "info"), "allowed")));
}

static void test_cpus(void **state)
{
	struct runner_opts o = {.timeout_s = 10};
	struct runner_result r;
	struct place_cpu quiet;
	char mine[256], want[32], *got, *marker;
	char *p;
	cpu_set_t set;
	int last = -1;

	(void)state;
	assert_true(asprintf(&marker, "%s/where-ran", tmpdir) > 0);
	p = script(
	    "where", 0755,
	    "touch '%s'\nl=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/$$/status)\n"
	    "printf '" DOC_HEAD("where") "\"status\":\"ok\",\"info\":{\"allowed\":\"%%s\"}}' "
	                                 "\"$l\"\n",
	    marker);
	assert_int_equal(place_allowed_list(mine, sizeof(mine)), 0);
	assert_int_equal(sched_getaffinity(0, sizeof(set), &set), 0);
	for (int i = 0; i < CPU_SETSIZE; i++)
		if (CPU_ISSET(i, &set))
			last = i;

	/* zero options: the caller's CPUs, not pinned */
	got = run_where(p, &o, &r);
	assert_non_null(got);
	assert_string_equal(got, mine);
	assert_int_equal(r.cpu, -1);
	free(got);
	runner_result_clear(&r);

	/* quiet: the one CPU placement chooses */
	assert_int_equal(place_quiet_cpu(&quiet), 0);
	o.cpus = (struct runner_cpu){RUNNER_CPUS_QUIET, -1};
	got = run_where(p, &o, &r);
	assert_non_null(got);
	snprintf(want, sizeof(want), "%d", quiet.cpu);
	assert_string_equal(got, want);
	assert_int_equal(r.cpu, quiet.cpu);
	free(got);
	runner_result_clear(&r);

	/* a CPU by number */
	o.cpus = (struct runner_cpu){RUNNER_CPUS_ONE, last};
	got = run_where(p, &o, &r);
	assert_non_null(got);
	snprintf(want, sizeof(want), "%d", last);
	assert_string_equal(got, want);
	assert_int_equal(r.cpu, last);
	free(got);
	runner_result_clear(&r);

	/* a CPU the caller may not use: an error, and the probe never runs */
	unlink(marker);
	o.cpus = (struct runner_cpu){RUNNER_CPUS_ONE, RUNNER_CPU_MAX};
	assert_null(run_where(p, &o, &r));
	expect_error(&r, "CPU 8191 is not one the probes may run on (allowed: ");
	assert_non_null(strstr(r.reason, mine));
	assert_int_equal(access(marker, F_OK), -1);
	runner_result_clear(&r);
	free(marker);
	free(p);
}

/* A pin the kernel refuses, as systemd's SystemCallFilter= refuses a
 * system call: a seccomp filter returning EPERM for sched_setaffinity(2)
 * (kernel/seccomp.c, SECCOMP_RET_ERRNO), installed in a child of the test
 * so that the rest of it keeps the call; the runner's own fork inherits
 * it. The run is an error that names the pin, not the exec. */
static void test_cpu_pin_refused(void **state)
{
	struct sock_filter f[] = {
	    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_sched_setaffinity, 0, 1),
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {.len = sizeof(f) / sizeof(f[0]), .filter = f};
	char *p = script("pinned", 0755, "echo '{}'\n");
	int ws = 0;
	pid_t pid;

	(void)state;
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct runner_opts o = {.timeout_s = 10, .cpus = {RUNNER_CPUS_QUIET, -1}};
		char *argv[] = {"pinned", NULL};
		struct runner_result r;
		int good;

		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
			_exit(3);
		/* qemu-user (the arm64 tier) emulates no seccomp filter */
		if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) < 0)
			_exit(errno == EINVAL ? 77 : 3);
		if (runner_run(p, argv, &o, &r) < 0)
			_exit(4);
		good = r.status == RUNNER_ERROR && r.reason && r.cpu >= 0 &&
		       strstr(r.reason, "cannot pin the probe to CPU ") &&
		       strstr(r.reason, strerror(EPERM));
		if (!good)
			fprintf(stderr, "reason: %s\n", r.reason ? r.reason : "(none)");
		_exit(good ? 0 : 1);
	}
	assert_int_equal(waitpid(pid, &ws, 0), pid);
	assert_true(WIFEXITED(ws));
	free(p);
	if (WEXITSTATUS(ws) == 77) {
		fprintf(stderr, "no seccomp filters here: pinning refused is not checked\n");
		skip();
	}
	assert_int_equal(WEXITSTATUS(ws), 0);
}

static void test_cpu_parse(void **state)
{
	static const char *const good[][2] = {{"all", "all"}, {"quiet", "quiet"}, {"0", "0"},
	                                      {"7", "7"},     {"8191", "8191"},   {"007", "7"}};
	static const char *const bad[] = {"",   "-1", "8192",  "1x",  " 1",
	                                  "1 ", "+1", "Quiet", "0x1", "99999999999999999999"};
	struct runner_cpu c;
	char buf[32];

	(void)state;
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		assert_int_equal(runner_cpu_parse(good[i][0], &c), 0);
		runner_cpu_format(&c, buf, sizeof(buf));
		assert_string_equal(buf, good[i][1]);
	}
	assert_int_equal(runner_cpu_parse("all", &c), 0);
	assert_int_equal(c.how, RUNNER_CPUS_ALL);
	assert_int_equal(runner_cpu_parse("12", &c), 0);
	assert_int_equal(c.how, RUNNER_CPUS_ONE);
	assert_int_equal(c.cpu, 12);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (runner_cpu_parse(bad[i], &c) != -EINVAL)
			fail_msg("\"%s\" was taken as a CPU", bad[i]);
}

static void test_find_probe(void **state)
{
	char *a, *b, *dirs, *found, *p1 = script("findme", 0755, "exit 0\n");
	char *p2 = script("plain", 0644, "exit 0\n");

	(void)state;
	assert_true(asprintf(&a, "%s/a", tmpdir) > 0);
	assert_int_equal(mkdir(a, 0755), 0);
	assert_true(asprintf(&b, "%s/a/findme", tmpdir) > 0);
	assert_int_equal(mkdir(b, 0755), 0); /* a directory is no probe */
	assert_true(asprintf(&dirs, "/nonexistent::%s:%s", a, tmpdir) > 0);
	found = runner_find_probe(dirs, "findme");
	assert_non_null(found);
	assert_string_equal(found, p1);
	free(found);
	assert_null(runner_find_probe(dirs, "plain"));
	assert_null(runner_find_probe(dirs, "nothing"));
	assert_null(runner_find_probe(dirs, "../findme"));
	assert_null(runner_find_probe(dirs, ""));
	assert_null(runner_find_probe(NULL, "findme"));
	free(a);
	free(b);
	free(dirs);
	free(p1);
	free(p2);
}

static int setup(void **state)
{
	(void)state;
	return tmpdir_make("test_runner");
}

static int teardown(void **state)
{
	(void)state;
	return tmpdir_remove();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_ok),
	    cmocka_unit_test(test_skipped_and_error_documents),
	    cmocka_unit_test(test_minimal_environment),
	    cmocka_unit_test(test_probe_text_escaped),
	    cmocka_unit_test(test_hang_is_killed),
	    cmocka_unit_test(test_crash),
	    cmocka_unit_test(test_output_limit),
	    cmocka_unit_test(test_small_output_limit),
	    cmocka_unit_test(test_stderr_flood),
	    cmocka_unit_test(test_grandchild_does_not_survive),
	    cmocka_unit_test(test_missing_and_not_executable),
	    cmocka_unit_test(test_bad_documents),
	    cmocka_unit_test(test_stop_flag),
	    cmocka_unit_test(test_priorities),
	    cmocka_unit_test(test_cpus),
	    cmocka_unit_test(test_cpu_pin_refused),
	    cmocka_unit_test(test_cpu_parse),
	    cmocka_unit_test(test_sched_for),
	    cmocka_unit_test(test_find_probe),
	};

	return cmocka_run_group_tests_name("runner", tests, setup, teardown);
}
