/*
 * threadwatch-observer: the workload observer (lib/observe) as a service
 * of its own, the one part of threadwatch that holds privileges, and only
 * these: CAP_NET_ADMIN to hear the proc connector, CAP_SYS_PTRACE to read
 * other users' stack mappings. It watches window after window and hands
 * each window's document to threadwatchd over a Unix socket; it serves
 * nothing and listens to nothing, so no client ever talks to it.
 * threadwatchd, sandboxed and blind to other processes, keeps what it gets.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <jansson.h>

#include "observe.h"
#include "opt.h"

#define OBSD_DEFAULT_SOCKET "/run/threadwatch/observer.sock"
#define OBSD_DEFAULT_WINDOW_S 60.0
#define OBSD_MIN_WINDOW_S 1.0
#define OBSD_MAX_WINDOW_S 3600.0
#define OBSD_SEND_TIMEOUT_S 10
/* The first window, and one after threadwatchd did not take the last, is
 * at most this long: a daemon that just started gets a window soon. */
#define OBSD_SHORT_WINDOW_S 10.0

struct obsd_args {
	const char *push;
	double window_s;
	int once, help, by_process, exact_switches, no_bpf, no_event_filter, to_stdout;
	int read_all_threads;
	unsigned long windows; /* stop after this many (0: never) */
};

static volatile int stop_flag;

static void on_signal(int sig)
{
	(void)sig;
	stop_flag = 1;
}

static int set_push(void *ctx, const char *v, char *why, size_t wlen)
{
	(void)why, (void)wlen;
	if (!*v || strlen(v) >= sizeof(((struct sockaddr_un *)0)->sun_path))
		return -EINVAL;
	((struct obsd_args *)ctx)->push = v;
	return 0;
}

static int set_window(void *ctx, const char *v, char *why, size_t wlen)
{
	double s;

	if (opt_set_duration(&s, v, why, wlen) < 0 || s < OBSD_MIN_WINDOW_S ||
	    s > OBSD_MAX_WINDOW_S)
		return -EINVAL;
	((struct obsd_args *)ctx)->window_s = s;
	return 0;
}

static int set_windows(void *ctx, const char *v, char *why, size_t wlen)
{
	char *end;
	unsigned long n;

	(void)why, (void)wlen;
	errno = 0;
	n = strtoul(v, &end, 10);
	if (!*v || *end || errno || n == 0 || n > 1000000 || *v == '-')
		return -EINVAL;
	((struct obsd_args *)ctx)->windows = n;
	return 0;
}

static const struct opt obsd_opts[] = {
    {"push", 0, "SOCKET",
     "threadwatchd's Unix socket each window goes to (default " OBSD_DEFAULT_SOCKET ")", set_push,
     0},
    {"window", 0, "DURATION", "the window, 1s to 1h (default 60s)", set_window, 0},
    {"by-process", 0, NULL, "split every workload by process", NULL,
     offsetof(struct obsd_args, by_process)},
    {"exact-switches", 0, NULL, OBS_HELP_EXACT_SWITCHES, NULL,
     offsetof(struct obsd_args, exact_switches)},
    {"no-bpf", 0, NULL, OBS_HELP_NO_BPF, NULL, offsetof(struct obsd_args, no_bpf)},
    {"read-all-threads", 0, NULL, OBS_HELP_READ_ALL_THREADS, NULL,
     offsetof(struct obsd_args, read_all_threads)},
    {"no-event-filter", 0, NULL, OBS_HELP_NO_EVENT_FILTER, NULL,
     offsetof(struct obsd_args, no_event_filter)},
    {"stdout", 0, NULL,
     "print each window's document as one line of JSON on standard output instead of handing "
     "it on",
     NULL, offsetof(struct obsd_args, to_stdout)},
    {"windows", 0, "N", "stop after N windows (default: until SIGTERM)", set_windows, 0},
    {"once", 0, NULL, "one window, printed as JSON on standard output; nothing is pushed", NULL,
     offsetof(struct obsd_args, once)},
    {"help", 'h', NULL, "show this help", NULL, offsetof(struct obsd_args, help)},
};

#define N_OPTS (sizeof(obsd_opts) / sizeof(obsd_opts[0]))

/* A journal line: sd-daemon(3)'s priority prefix on standard error. */
#define LOG(prio, ...)                                                                             \
	do {                                                                                       \
		fprintf(stderr, "<%d>", prio);                                                     \
		fprintf(stderr, __VA_ARGS__);                                                      \
		fputc('\n', stderr);                                                               \
	} while (0)

/* Writes all of buf; -errno. */
static int write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t w = write(fd, buf, len);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		buf += w;
		len -= (size_t)w;
	}
	return 0;
}

/* Hands one document to threadwatchd and reads its one-line answer
 * ("ok", or "error: WHY"). 0, -errno, or -EPROTO with the answer in why. */
static int push(const char *path, const json_t *doc, char *why, size_t wlen)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct timeval tv = {.tv_sec = OBSD_SEND_TIMEOUT_S};
	char *text = json_dumps(doc, JSON_COMPACT);
	char answer[256];
	ssize_t n;
	int fd, rc;

	why[0] = '\0';
	if (!text)
		return -ENOMEM;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0 ||
	    connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		rc = -errno;
		goto out;
	}
	/* a peer threadwatchd refuses is answered before the window is read:
	 * the write then fails (EPIPE) and the answer says why */
	rc = write_all(fd, text, strlen(text));
	if (rc == 0)
		shutdown(fd, SHUT_WR);
	n = read(fd, answer, sizeof(answer) - 1);
	if (n <= 0) {
		rc = rc < 0 ? rc : n < 0 ? -errno : -EPROTO;
		goto out;
	}
	answer[n] = '\0';
	answer[strcspn(answer, "\n")] = '\0';
	rc = strcmp(answer, "ok") ? -EPROTO : 0;
	if (rc)
		snprintf(why, wlen, "%s", answer);
out:
	if (fd >= 0)
		close(fd);
	free(text);
	return rc;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: threadwatch-observer [OPTIONS]\n\n"
	           "Watches which services pay for threads (threadwatch workloads, window after\n"
	           "window) and hands each window to threadwatchd over its Unix socket. It needs\n"
	           "CAP_NET_ADMIN (the proc connector) and CAP_SYS_PTRACE (other users' stacks);\n"
	           "without them those figures are null, and said why.\n\nOptions:\n");
	opt_usage(f, obsd_opts, N_OPTS);
}

static int run(const struct obsd_args *a)
{
	struct obs_carry *carry = NULL; /* each window's end, the next one's start */
	unsigned long done = 0;
	struct obs_options o = {.window_s = a->window_s,
	                        .by_process = a->by_process,
	                        .exact_switches = a->exact_switches,
	                        .no_bpf = a->no_bpf,
	                        .read_all_threads = a->read_all_threads,
	                        .cn_filter_len = a->no_event_filter ? 0 : obs_cn_filter_len(),
	                        .stop = &stop_flag,
	                        /* taskstats listens within a window alone: a
	                         * thread ending between two would go unseen */
	                        .carry = a->exact_switches ? NULL : &carry};
	int last_rc = 1; /* the last push's outcome, so each change is logged once */
	char err[256], why[256];

	LOG(6, "threadwatch-observer: windows of %g s to %s", a->window_s,
	    a->to_stdout ? "standard output" : a->push);
	while (!stop_flag) {
		json_t *doc;
		int rc;

		o.window_s = last_rc != 0 && a->window_s > OBSD_SHORT_WINDOW_S ? OBSD_SHORT_WINDOW_S
		                                                               : a->window_s;
		doc = obs_observe(&o, err, sizeof(err));
		if (!doc) {
			LOG(3, "threadwatch-observer: %s", err);
			obs_carry_free(carry);
			return 1;
		}
		if (a->once) {
			json_dumpf(doc, stdout, JSON_INDENT(2));
			fputc('\n', stdout);
			json_decref(doc);
			obs_carry_free(carry);
			return fflush(stdout) == 0 ? 0 : 1;
		}
		if (a->to_stdout) {
			rc = json_dumpf(doc, stdout, JSON_COMPACT) == 0 &&
			             fputc('\n', stdout) != EOF && fflush(stdout) == 0
			         ? 0
			         : -EIO;
			json_decref(doc);
			if (rc < 0) {
				LOG(3, "threadwatch-observer: cannot write standard output");
				obs_carry_free(carry);
				return 1;
			}
		} else {
			rc = push(a->push, doc, why, sizeof(why));
			json_decref(doc);
		}
		if (a->windows && ++done >= a->windows)
			break;
		if (rc != last_rc && !a->to_stdout) {
			if (rc == 0)
				LOG(6, "threadwatch-observer: threadwatchd takes the windows");
			else
				LOG(4, "threadwatch-observer: cannot hand the window to %s: %s",
				    a->push, why[0] ? why : strerror(-rc));
		}
		last_rc = rc;
	}
	obs_carry_free(carry);
	return 0;
}

int main(int argc, char **argv)
{
	struct obsd_args a = {.push = OBSD_DEFAULT_SOCKET, .window_s = OBSD_DEFAULT_WINDOW_S};
	struct sigaction sa = {.sa_handler = on_signal};
	char err[256];
	int first = opt_parse(argc, argv, obsd_opts, N_OPTS, &a, err, sizeof(err));

	if (first < 0 || first < argc) {
		fprintf(stderr, "threadwatch-observer: %s\n",
		        first < 0 ? err : "unexpected argument");
		opt_try_help(stderr, "threadwatch-observer");
		return 2;
	}
	if (a.help) {
		usage(stdout);
		return 0;
	}
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	return run(&a);
}
