/*
 * runner: runs one probe as a child in its own process group, at the
 * requested CPU and I/O priority, on the requested CPUs, under a CLOCK_MONOTONIC deadline, with its
 * stdout and stderr bounded. Whatever happens (missing binary, exec failure,
 * crash, hang, flood of output, bad document) ends as a result with a
 * reason, and no process of the group outlives the run.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "escape.h"
#include "failure.h"
#include "placement.h"
#include "runner_env.h"
#include "protocol.h"
#include "runner.h"
#include "xmalloc.h"

#define DEFAULT_TIMEOUT_S 30.0
#define DEFAULT_MAX_OUTPUT ((size_t)4 << 20)
#define STDERR_TAIL 4096 /* bytes of stderr kept for the reason */
#define TERM_GRACE_S 0.5 /* SIGTERM, then SIGKILL after this */
#define DRAIN_S 1.0      /* reading what is left after the probe exited */
#define STOP_TICK_MS 50  /* how often the stop flag is looked at */
#define CHUNK 65536

#define IOPRIO_CLASS_SHIFT 13
#define IOPRIO_CLASS_IDLE 3
#define IOPRIO_WHO_PROCESS 1

/* Why the runner ended the probe itself. */
enum runner_kill { KILL_NONE, KILL_TIMEOUT, KILL_OUTPUT, KILL_STOP };

struct run_state {
	pid_t pid;
	int out_fd, err_fd, pid_fd;
	char *out;
	size_t out_len, out_cap, max_output;
	char err_tail[2 * STDERR_TAIL];
	size_t err_len;
	enum runner_kill killed;
	int exited;
	int term_sent, kill_sent;
	double term_at;
};

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

const char *const runner_sched_names[] = {"normal", "idle", "priced", NULL};

void runner_sched_for(enum runner_sched asked, int nice, int priced, enum runner_sched *sched,
                      int *nice_out)
{
	*sched = asked;
	*nice_out = nice;
	if (asked != RUNNER_SCHED_PRICED)
		return;
	*sched = priced ? RUNNER_SCHED_NORMAL : RUNNER_SCHED_IDLE;
	if (priced)
		*nice_out = RUNNER_NICE_PRICED;
}
const char *const runner_cpus_names[] = {"all", "quiet", NULL};

int runner_cpu_parse(const char *text, struct runner_cpu *out)
{
	char *end;
	long n;

	for (int i = 0; runner_cpus_names[i]; i++)
		if (!strcmp(text, runner_cpus_names[i])) {
			*out = (struct runner_cpu){.how = (enum runner_cpus)i, .cpu = -1};
			return 0;
		}
	if (*text < '0' || *text > '9')
		return -EINVAL;
	errno = 0;
	n = strtol(text, &end, 10);
	if (*end || errno || n > RUNNER_CPU_MAX)
		return -EINVAL;
	*out = (struct runner_cpu){.how = RUNNER_CPUS_ONE, .cpu = (int)n};
	return 0;
}

struct runner_cpu runner_cpu_for(const struct runner_cpu *configured, int own_cpus)
{
	if (own_cpus && configured->how == RUNNER_CPUS_QUIET)
		return (struct runner_cpu){RUNNER_CPUS_ALL, -1};
	return *configured;
}

void runner_cpu_format(const struct runner_cpu *c, char *buf, size_t len)
{
	if (c->how == RUNNER_CPUS_ONE)
		snprintf(buf, len, "%d", c->cpu);
	else
		snprintf(buf, len, "%s", runner_cpus_names[c->how]);
}

/* In the child between fork and exec: only async-signal-safe calls. */
static void __attribute__((noreturn))
child_exec(const char *path, char *const argv[], char *const envp[], const struct runner_opts *o,
           const cpu_set_t *pin, int out_w, int err_w, int status_w)
{
	struct sigaction sa;
	sigset_t none;
	int err, devnull;

	setpgid(0, 0);
	/* The caller may block or ignore signals; a probe starts clean. */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_DFL;
	for (int s = 1; s < NSIG; s++)
		sigaction(s, &sa, NULL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);

	devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (devnull < 0 || dup2(devnull, 0) < 0 || dup2(out_w, 1) < 0 || dup2(err_w, 2) < 0)
		goto fail;
	/* Every descriptor but the status pipe is closed now, before the
	 * priority drops: a SCHED_IDLE child on a busy host may wait seconds
	 * for its exec, and must not hold the caller's database lock (an
	 * flock shared with the caller's descriptor) or sockets meanwhile,
	 * least of all after the caller was killed and restarts. */
	if (status_w < 3) {
		close_range(3, ~0U, 0);
	} else {
		if (status_w > 3)
			close_range(3, (unsigned)status_w - 1, 0);
		close_range((unsigned)status_w + 1, ~0U, 0);
	}
	/* Priorities are best effort: a probe at normal priority still
	 * measures something. */
	if (o->nice > 0 && nice(o->nice) == -1) {
		/* ignored */
	}
	if (o->idle_io)
		syscall(SYS_ioprio_set, IOPRIO_WHO_PROCESS, 0,
		        IOPRIO_CLASS_IDLE << IOPRIO_CLASS_SHIFT);
	/* SCHED_IDLE: a waking task of any other policy preempts the probe at
	 * once (check_preempt_wakeup_fair()), and wake-up placement counts a
	 * CPU running only SCHED_IDLE tasks as idle (sched_idle_cpu()), so a
	 * neighbour's latency does not wait for a probe's slice. Inherited by
	 * every thread the probe creates. */
	/* PRICED left unresolved (runner_sched_for() not called): the gentler. */
	if (o->sched == RUNNER_SCHED_IDLE || o->sched == RUNNER_SCHED_PRICED) {
		struct sched_param prio0 = {.sched_priority = 0};

		if (sched_setscheduler(0, SCHED_IDLE, &prio0) < 0) {
			/* ignored, as nice: the probe still measures */
		}
	}
	/* Unlike the priorities, a pin the caller asked for is kept or the
	 * run fails: the CPU was checked against the caller's set. */
	if (pin && sched_setaffinity(0, sizeof(*pin), pin) < 0) {
		err = -errno; /* negative: the pin failed, not the exec */
		goto report;
	}
	execve(path, argv, envp);
fail:
	err = errno;
report:
	if (write(status_w, &err, sizeof(err)) < 0) {
		/* nothing left to tell the parent with */
	}
	_exit(127);
}

/* Reads the exec status pipe: 0 when exec succeeded (EOF), else the errno
 * the child reported (negated when it could not pin itself). */
static int read_exec_status(int fd)
{
	int err = 0;
	ssize_t n;

	do
		n = read(fd, &err, sizeof(err));
	while (n < 0 && errno == EINTR);
	return n == (ssize_t)sizeof(err) ? err : 0;
}

static void kill_group(struct run_state *st, int sig)
{
	/* The group leader stays a zombie until reaped, so its pid (= the
	 * group id) cannot be reused while we signal. */
	kill(-st->pid, sig);
}

static void terminate(struct run_state *st, enum runner_kill why, double now)
{
	if (st->killed == KILL_NONE)
		st->killed = why;
	if (!st->term_sent) {
		kill_group(st, SIGTERM);
		st->term_sent = 1;
		st->term_at = now;
	}
}

static void read_stdout(struct run_state *st, double now)
{
	ssize_t n;

	for (;;) {
		if (st->out_cap - st->out_len < CHUNK) {
			st->out_cap = st->out_cap * 2 > st->out_len + CHUNK + 1
			                  ? st->out_cap * 2
			                  : st->out_len + CHUNK + 1;
			st->out = xrealloc(st->out, st->out_cap);
		}
		n = read(st->out_fd, st->out + st->out_len, CHUNK);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (n == 0 || errno != EAGAIN)
				close_fd(&st->out_fd);
			return;
		}
		st->out_len += (size_t)n;
		if (st->out_len > st->max_output) {
			/* Keep what fits, stop reading and end the probe. */
			st->out_len = st->max_output;
			close_fd(&st->out_fd);
			terminate(st, KILL_OUTPUT, now);
			kill_group(st, SIGKILL);
			st->kill_sent = 1;
			return;
		}
	}
}

static void read_stderr(struct run_state *st)
{
	ssize_t n;

	for (;;) {
		if (st->err_len >= sizeof(st->err_tail)) {
			memmove(st->err_tail, st->err_tail + STDERR_TAIL,
			        st->err_len - STDERR_TAIL);
			st->err_len -= STDERR_TAIL;
		}
		n = read(st->err_fd, st->err_tail + st->err_len,
		         sizeof(st->err_tail) - st->err_len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (n == 0 || errno != EAGAIN)
				close_fd(&st->err_fd);
			return;
		}
		st->err_len += (size_t)n;
	}
}

/* Has the probe (the group leader) exited? Leaves it a zombie so that its
 * pid stays reserved until the group has been killed. */
static int leader_exited(struct run_state *st)
{
	siginfo_t si;

	memset(&si, 0, sizeof(si));
	if (waitid(P_PID, (id_t)st->pid, &si, WEXITED | WNOHANG | WNOWAIT) < 0)
		return errno == ECHILD;
	return si.si_pid == st->pid;
}

static void watch(struct run_state *st, const struct runner_opts *o, double start)
{
	double deadline = start + o->timeout_s, drain_until = 0;

	for (;;) {
		struct pollfd pfd[3];
		nfds_t n = 0;
		double now = clock_mono_s(), wait_s;
		int timeout_ms;

		if (o->stop && *o->stop && !st->exited)
			terminate(st, KILL_STOP, now);
		if (now >= deadline && !st->exited)
			terminate(st, KILL_TIMEOUT, now);
		if (st->term_sent && !st->kill_sent && now >= st->term_at + TERM_GRACE_S) {
			kill_group(st, SIGKILL);
			st->kill_sent = 1;
		}
		if (!st->exited && leader_exited(st)) {
			st->exited = 1;
			/* No grandchild survives the probe. */
			kill_group(st, SIGKILL);
			drain_until = now + DRAIN_S;
		}
		if (st->exited && ((st->out_fd < 0 && st->err_fd < 0) || now >= drain_until))
			return;

		wait_s = st->exited ? drain_until - now : deadline - now;
		if (st->term_sent && !st->exited)
			wait_s =
			    st->kill_sent ? STOP_TICK_MS / 1e3 : st->term_at + TERM_GRACE_S - now;
		if (o->stop || st->pid_fd < 0)
			wait_s = wait_s < STOP_TICK_MS / 1e3 ? wait_s : STOP_TICK_MS / 1e3;
		if (wait_s > 1.0) /* keeps the milliseconds in an int */
			wait_s = 1.0;
		timeout_ms = wait_s <= 0 ? 0 : (int)(wait_s * 1e3) + 1;

		if (st->out_fd >= 0)
			pfd[n++] = (struct pollfd){.fd = st->out_fd, .events = POLLIN};
		if (st->err_fd >= 0)
			pfd[n++] = (struct pollfd){.fd = st->err_fd, .events = POLLIN};
		if (st->pid_fd >= 0 && !st->exited)
			pfd[n++] = (struct pollfd){.fd = st->pid_fd, .events = POLLIN};
		if (poll(pfd, n, timeout_ms) < 0 && errno != EINTR)
			return;
		if (st->out_fd >= 0)
			read_stdout(st, clock_mono_s());
		if (st->err_fd >= 0)
			read_stderr(st);
	}
}

/* A copy of n bytes of probe output that is safe to log and to put in
 * JSON: printable ASCII, newlines and tabs; anything else becomes '?'. */
static char *printable(const char *s, size_t n)
{
	char *out = xmalloc(n + 1);

	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		out[i] = (c >= 0x20 && c < 0x7f) || c == '\n' || c == '\t' ? (char)c : '?';
	}
	out[n] = '\0';
	return out;
}

/* What the caller may log: the last STDERR_TAIL bytes of stderr. */
static char *stderr_tail(const struct run_state *st)
{
	size_t keep = st->err_len > STDERR_TAIL ? STDERR_TAIL : st->err_len;

	return printable(st->err_tail + st->err_len - keep, keep);
}

/* The last non-empty line of stderr, for a reason; NULL when there is none. */
static char *stderr_line(const struct run_state *st)
{
	size_t end = st->err_len, begin;

	while (end > 0 && (st->err_tail[end - 1] == '\n' || st->err_tail[end - 1] == '\r' ||
	                   st->err_tail[end - 1] == ' '))
		end--;
	if (end == 0)
		return NULL;
	begin = end;
	while (begin > 0 && st->err_tail[begin - 1] != '\n')
		begin--;
	if (end - begin > 200)
		begin = end - 200;
	return escape_text(st->err_tail + begin, end - begin);
}

static int only_space(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] != ' ' && s[i] != '\n' && s[i] != '\r' && s[i] != '\t')
			return 0;
	return 1;
}

static void set_error(struct runner_result *res, const struct run_state *st, int with_stderr,
                      const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static void set_error(struct runner_result *res, const struct run_state *st, int with_stderr,
                      const char *fmt, ...)
{
	char *msg, *line = with_stderr ? stderr_line(st) : NULL;
	va_list ap;

	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	va_end(ap);
	if (!msg)
		xasprintf(&msg, "out of memory");
	free(res->reason);
	if (line) {
		xasprintf(&res->reason, "%s (stderr: %s)", msg, line);
		free(msg);
	} else {
		res->reason = msg;
	}
	free(line);
	res->status = RUNNER_ERROR;
}

/* The document's reason, escaped for a log line. */
static char *escaped_reason(json_t *doc)
{
	json_t *r = json_object_get(doc, "reason");

	return escape_text(json_string_value(r), json_string_length(r));
}

/* Turns the captured output and the exit status into the result. */
static void judge(struct runner_result *res, const struct run_state *st, const char *name,
                  double timeout_s)
{
	char err[512];
	json_t *doc = NULL;
	const char *status, *probe;

	switch (st->killed) {
	case KILL_TIMEOUT:
		set_error(res, st, 0, "killed after the %g s time limit", timeout_s);
		failure_set(&res->failure, FAILURE_TIMEOUT, 0);
		return;
	case KILL_OUTPUT:
		set_error(res, st, 0, "output exceeds %zu bytes", st->max_output);
		return;
	case KILL_STOP:
		set_error(res, st, 0, "stopped before it finished");
		return;
	case KILL_NONE:
		break;
	}
	if (res->term_signal) {
		failure_set(&res->failure, FAILURE_CRASH, res->term_signal);
		set_error(res, st, 1, "crashed with %s", res->failure.signal);
		return;
	}
	if (only_space(res->output, res->output_len)) {
		if (res->exit_code)
			set_error(res, st, 1, "exited with status %d without a document",
			          res->exit_code);
		else
			set_error(res, st, 1, "empty output");
		return;
	}
	if (protocol_parse(res->output, res->output_len, &doc, err, sizeof(err)) < 0) {
		if (res->exit_code)
			set_error(res, st, 1, "exited with status %d; invalid document: %s",
			          res->exit_code, err);
		else
			set_error(res, st, 0, "invalid document: %s", err);
		return;
	}
	status = protocol_status(doc);
	probe = json_string_value(json_object_get(doc, "probe"));
	if (strcmp(probe, name)) {
		set_error(res, st, 0, "document is from probe \"%s\", expected \"%s\"", probe,
		          name);
	} else if (!strcmp(status, "error")) {
		char *reason = escaped_reason(doc);

		set_error(res, st, 0, "%s", reason);
		free(reason);
	} else if (res->exit_code) {
		set_error(res, st, 1, "exited with status %d after reporting \"%s\"",
		          res->exit_code, status);
	} else {
		res->status = !strcmp(status, "ok")               ? RUNNER_OK
		              : !strcmp(status, "not_applicable") ? RUNNER_NOT_APPLICABLE
		                                                  : RUNNER_SKIPPED;
		if (res->status != RUNNER_OK)
			res->reason = escaped_reason(doc);
		res->doc = json_incref(doc);
	}
	json_decref(doc);
}

static void exec_error(struct runner_result *res, const char *path, int err)
{
	free(res->reason);
	res->status = RUNNER_ERROR;
	if (err < 0)
		xasprintf(&res->reason, "cannot pin the probe to CPU %d: %s", res->cpu,
		          strerror(-err));
	else if (err == ENOENT)
		xasprintf(&res->reason, "probe \"%s\" not found", path);
	else if (err == EACCES)
		xasprintf(&res->reason, "probe \"%s\" is not executable: %s", path, strerror(err));
	else
		xasprintf(&res->reason, "cannot execute \"%s\": %s", path, strerror(err));
}

static int make_pipe(int fds[2], int nonblock_read)
{
	if (pipe2(fds, O_CLOEXEC) < 0)
		return -errno;
	if (nonblock_read && fcntl(fds[0], F_SETFL, O_NONBLOCK) < 0) {
		int r = -errno;
		close(fds[0]);
		close(fds[1]);
		return r;
	}
	return 0;
}

/* The CPU the probe is pinned to: -1 for none (ALL, or QUIET where the
 * affinity cannot be read, since a probe anywhere still measures), else a
 * CPU of the caller's set. -ENODEV when ONE names a CPU outside it. */
static int resolve_cpu(const struct runner_cpu *c, cpu_set_t *set)
{
	struct place_cpu pc;

	if (c->how == RUNNER_CPUS_ALL)
		return -1;
	if (c->how == RUNNER_CPUS_QUIET) {
		if (place_quiet_cpu(&pc) < 0)
			return -1;
	} else {
		if (sched_getaffinity(0, sizeof(*set), set) < 0)
			return -1;
		if (c->cpu < 0 || c->cpu >= CPU_SETSIZE || !CPU_ISSET(c->cpu, set))
			return -ENODEV;
		pc.cpu = c->cpu;
	}
	CPU_ZERO(set);
	CPU_SET(pc.cpu, set);
	return pc.cpu;
}

static void cpu_error(struct runner_result *res, int cpu)
{
	char list[256];

	res->status = RUNNER_ERROR;
	if (place_allowed_list(list, sizeof(list)) < 0)
		snprintf(list, sizeof(list), "unknown");
	xasprintf(&res->reason, "CPU %d is not one the probes may run on (allowed: %s)", cpu, list);
}

int runner_run(const char *path, char *const argv[], const struct runner_opts *opts,
               struct runner_result *res)
{
	cpu_set_t pin;
	struct runner_opts o = {0};
	struct run_state st = {.out_fd = -1, .err_fd = -1, .pid_fd = -1};
	int out[2] = {-1, -1}, err[2] = {-1, -1}, status[2] = {-1, -1}, ws = 0, exec_err, r;
	struct rusage ru;
	double start;
	char **envp = NULL;

	memset(res, 0, sizeof(*res));
	res->exit_code = -1;
	res->started_unix_ms = clock_wall_ms();
	if (opts)
		o = *opts;
	if (!(o.timeout_s > 0))
		o.timeout_s = DEFAULT_TIMEOUT_S;
	if (!o.max_output)
		o.max_output = DEFAULT_MAX_OUTPUT;
	st.max_output = o.max_output;
	res->cpu = resolve_cpu(&o.cpus, &pin);
	if (res->cpu == -ENODEV) {
		cpu_error(res, o.cpus.cpu);
		res->cpu = -1;
		res->output = xstrdup("");
		res->err_tail = xstrdup("");
		return 0;
	}

	if ((r = make_pipe(out, 1)) < 0 || (r = make_pipe(err, 1)) < 0 ||
	    (r = make_pipe(status, 0)) < 0)
		goto fail;
	/* Built before fork: the child may not allocate. */
	envp = runner_env_build(environ);
	start = clock_mono_s();
	st.pid = fork();
	if (st.pid < 0) {
		r = -errno;
		goto fail;
	}
	if (st.pid == 0)
		child_exec(path, argv, envp, &o, res->cpu >= 0 ? &pin : NULL, out[1], err[1],
		           status[1]);
	/* Also here, so the group exists before we might signal it. */
	setpgid(st.pid, st.pid);
	close_fd(&out[1]);
	close_fd(&err[1]);
	close_fd(&status[1]);
	st.out_fd = out[0];
	st.err_fd = err[0];
	out[0] = err[0] = -1;
	st.pid_fd = (int)syscall(SYS_pidfd_open, st.pid, 0);
	exec_err = read_exec_status(status[0]);
	close_fd(&status[0]);

	/* A child whose exec failed exits by itself with 127; otherwise,
	 * whatever happened, nothing of the group may outlive the run. */
	if (!exec_err) {
		watch(&st, &o, start);
		kill_group(&st, SIGKILL);
	}
	while (wait4(st.pid, &ws, 0, &ru) < 0) {
		if (errno != EINTR) {
			memset(&ru, 0, sizeof(ru));
			break;
		}
	}
	res->wall_s = clock_mono_s() - start;
	res->cpu_s = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	             (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
	if (WIFEXITED(ws))
		res->exit_code = WEXITSTATUS(ws);
	else if (WIFSIGNALED(ws))
		res->term_signal = WTERMSIG(ws);
	res->output = st.out ? st.out : xstrdup("");
	res->output[st.out_len] = '\0';
	res->output_len = st.out_len;
	st.out = NULL;
	res->err_tail = stderr_tail(&st);

	if (exec_err)
		exec_error(res, path, exec_err);
	else
		judge(res, &st, argv[0], o.timeout_s);
	r = 0;
fail:
	close_fd(&st.out_fd);
	close_fd(&st.err_fd);
	close_fd(&st.pid_fd);
	for (int i = 0; i < 2; i++) {
		close_fd(&out[i]);
		close_fd(&err[i]);
		close_fd(&status[i]);
	}
	free(st.out);
	free(envp);
	if (r < 0) {
		res->status = RUNNER_ERROR;
		xasprintf(&res->reason, "cannot start the probe: %s", strerror(-r));
	}
	return r;
}

void runner_result_clear(struct runner_result *res)
{
	if (!res)
		return;
	free(res->reason);
	json_decref(res->doc);
	free(res->output);
	free(res->err_tail);
	memset(res, 0, sizeof(*res));
}

char *runner_find_probe(const char *dirs, const char *name)
{
	const char *p = dirs, *colon;
	struct stat sb;
	char *path;

	if (!dirs || !name || !*name || strchr(name, '/') || !strcmp(name, ".") ||
	    !strcmp(name, ".."))
		return NULL;
	for (; *p; p = colon + 1) {
		size_t len;

		colon = strchrnul(p, ':');
		len = (size_t)(colon - p);
		if (len > 0) {
			xasprintf(&path, "%.*s/%s", (int)len, p, name);
			if (stat(path, &sb) == 0 && S_ISREG(sb.st_mode) && access(path, X_OK) == 0)
				return path;
			free(path);
		}
		if (!*colon)
			break;
	}
	return NULL;
}

char *runner_probes_beside_exe(const char *const *names, size_t n)
{
	char exe[PATH_MAX], *slash, *dir, *found;
	ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (len <= 0)
		return NULL;
	exe[len] = '\0';
	slash = strrchr(exe, '/');
	if (!slash)
		return NULL;
	*slash = '\0';
	xasprintf(&dir, "%s/probes", exe);
	for (size_t i = 0; i < n; i++) {
		found = runner_find_probe(dir, names[i]);
		if (found) {
			free(found);
			return dir;
		}
	}
	free(dir);
	return NULL;
}
