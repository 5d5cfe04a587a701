/*
 * observer_link: the socket threadwatch-observer hands its windows to, and
 * the latest of them (see observer_link.h). One thread takes one
 * connection at a time, each bounded in bytes and time; a peer that is
 * neither root nor this daemon's own user is answered and closed before a
 * byte is read.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "clock.h"
#include "errbuf.h"
#include "log.h"
#include "observer_link.h"
#include "xmalloc.h"

/* How long a peer has to send its window. */
#define OLINK_READ_TIMEOUT_S 10

static struct {
	pthread_mutex_t lock; /* guards latest and latest_at */
	json_t *latest;
	double latest_at; /* clock_mono_s() when it came */
	int fd, stop[2];
	int running;
	olink_window_fn *fn;
	void *ctx;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	pthread_t thread;
} ol = {.lock = PTHREAD_MUTEX_INITIALIZER, .fd = -1, .stop = {-1, -1}};

int olink_check(const json_t *doc, char *err, size_t errlen)
{
	const json_t *w = json_object_get(doc, "window_s"), *v;
	size_t i;

	if (!json_is_object(doc))
		return errbuf_set(err, errlen, -EINVAL, "not a JSON object");
	if (!json_is_number(w) || !(json_number_value(w) > 0))
		return errbuf_set(err, errlen, -EINVAL, "window_s is not a positive number");
	if (!json_is_array(json_object_get(doc, "workloads")))
		return errbuf_set(err, errlen, -EINVAL, "workloads is not an array");
	json_array_foreach(
	    json_object_get(doc, "workloads"), i,
	    v) if (!json_is_object(v)) return errbuf_set(err, errlen, -EINVAL,
	                                                 "workloads[%zu] is not an object", i);
	if (!json_is_object(json_object_get(doc, "mechanisms")))
		return errbuf_set(err, errlen, -EINVAL, "mechanisms is not an object");
	if (!json_is_object(json_object_get(doc, "largest_vmas")))
		return errbuf_set(err, errlen, -EINVAL, "largest_vmas is not an object");
	return 0;
}

/* Reads the peer's whole document into a malloc'd buffer. 0 or -errno
 * (-EFBIG past OLINK_MAX_BYTES). */
static int read_doc(int fd, char **out, size_t *len)
{
	size_t n = 0, cap = 65536;
	char *buf = xmalloc(cap);
	ssize_t r;

	while ((r = read(fd, buf + n, cap - n)) != 0) {
		if (r < 0) {
			if (errno == EINTR)
				continue;
			free(buf);
			return errno == EAGAIN ? -ETIMEDOUT : -errno;
		}
		n += (size_t)r;
		if (n == cap) {
			if (cap >= OLINK_MAX_BYTES) {
				free(buf);
				return -EFBIG;
			}
			cap *= 2;
			buf = xrealloc(buf, cap);
		}
	}
	*out = buf;
	*len = n;
	return 0;
}

static void answer(int fd, const char *text)
{
	if (write(fd, text, strlen(text)) < 0) {
		/* the peer went away: nothing to tell it */
	}
}

/* One connection: who, then what. */
static void take(int fd)
{
	struct ucred cred;
	socklen_t cl = sizeof(cred);
	struct timeval tv = {.tv_sec = OLINK_READ_TIMEOUT_S};
	char err[256], line[300], *buf = NULL;
	json_error_t je;
	json_t *doc;
	size_t len = 0;
	int r;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl) < 0 ||
	    (cred.uid != 0 && cred.uid != geteuid())) {
		answer(fd, "error: only root or threadwatchd's own user may hand a window\n");
		return;
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	r = read_doc(fd, &buf, &len);
	if (r < 0) {
		snprintf(line, sizeof(line), "error: %s\n", strerror(-r));
		answer(fd, line);
		log_warning("Observer window from pid %d not taken: %s", (int)cred.pid,
		            strerror(-r));
		return;
	}
	doc = json_loadb(buf, len, 0, &je);
	free(buf);
	if (!doc || olink_check(doc, err, sizeof(err)) < 0) {
		snprintf(line, sizeof(line), "error: %s\n", doc ? err : je.text);
		answer(fd, line);
		log_warning("Observer window from pid %d not taken: %s", (int)cred.pid,
		            doc ? err : je.text);
		json_decref(doc);
		return;
	}
	pthread_mutex_lock(&ol.lock);
	json_decref(ol.latest);
	ol.latest = json_incref(doc);
	ol.latest_at = clock_mono_s();
	pthread_mutex_unlock(&ol.lock);
	answer(fd, "ok\n");
	if (ol.fn)
		ol.fn(doc, ol.ctx);
	json_decref(doc);
}

static void *loop(void *arg)
{
	(void)arg;
	for (;;) {
		struct pollfd p[2] = {{.fd = ol.fd, .events = POLLIN},
		                      {.fd = ol.stop[0], .events = POLLIN}};
		int c;

		if (poll(p, 2, -1) < 0 && errno != EINTR)
			break;
		if (p[1].revents)
			break;
		if (!(p[0].revents & POLLIN))
			continue;
		c = accept4(ol.fd, NULL, NULL, SOCK_CLOEXEC);
		if (c < 0)
			continue;
		take(c);
		close(c);
	}
	return NULL;
}

int olink_start(const char *path, olink_window_fn *fn, void *ctx, char *err, size_t errlen)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int r;

	if (strlen(path) >= sizeof(sa.sun_path))
		return errbuf_set(err, errlen, -ENAMETOOLONG, "the path is longer than a socket's");
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	ol.fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (ol.fd < 0 || pipe2(ol.stop, O_CLOEXEC) < 0)
		goto fail;
	(void)unlink(path); /* a socket a previous run left */
	if (bind(ol.fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || chmod(path, 0666) < 0 ||
	    listen(ol.fd, 4) < 0)
		goto fail;
	snprintf(ol.path, sizeof(ol.path), "%s", path);
	ol.fn = fn;
	ol.ctx = ctx;
	r = pthread_create(&ol.thread, NULL, loop, NULL);
	if (r) {
		errno = r;
		goto fail;
	}
	ol.running = 1;
	return 0;
fail:
	r = -errno;
	olink_stop();
	return errbuf_set(err, errlen, r, "%s", strerror(-r));
}

void olink_stop(void)
{
	if (ol.running) {
		if (write(ol.stop[1], "x", 1) < 0) {
			/* the pipe cannot fill: one byte */
		}
		pthread_join(ol.thread, NULL);
		ol.running = 0;
	}
	if (ol.fd >= 0)
		close(ol.fd);
	for (int i = 0; i < 2; i++)
		if (ol.stop[i] >= 0)
			close(ol.stop[i]);
	if (ol.path[0])
		unlink(ol.path);
	ol.fd = ol.stop[0] = ol.stop[1] = -1;
	ol.path[0] = '\0';
	pthread_mutex_lock(&ol.lock);
	json_decref(ol.latest);
	ol.latest = NULL;
	pthread_mutex_unlock(&ol.lock);
}

json_t *olink_latest(double max_age_s)
{
	json_t *doc = NULL;

	pthread_mutex_lock(&ol.lock);
	if (ol.latest && clock_mono_s() - ol.latest_at <= max_age_s)
		doc = json_incref(ol.latest);
	pthread_mutex_unlock(&ol.lock);
	return doc;
}
