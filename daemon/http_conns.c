/*
 * http_conns: header deadline and per-address limit (see http_conns.h).
 */
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "clock.h"
#include "http_conns.h"
#include "http_host.h"
#include "xmalloc.h"

#define SWEEP_NS 500000000L

struct conn {
	const void *key; /* NULL: a free slot */
	int fd;
	int loopback;
	unsigned char addr[16];
	double since; /* CLOCK_MONOTONIC s: when the wait for headers or body began */
	int waiting;  /* a wait with a deadline (enum wait) */
	int eof_seen; /* sweeps in a row that found the peer's FIN during a body */
};

/* What a connection waits for. */
enum wait { WAIT_NONE, WAIT_HEADERS, WAIT_BODY };

/* A body's peer closed when two sweeps in a row (half a second apart) see
 * its FIN: a body that had arrived whole is handed on within that. */
#define EOF_SWEEPS 2

struct http_conns {
	pthread_mutex_t lock;
	pthread_cond_t wake;
	pthread_t thread;
	int stop;
	unsigned max, per_ip;
	double deadline;
	struct conn *c;
};

/* The peer address as 16 bytes (IPv4 mapped); zeros when unknown. */
static void peer_bytes(const struct sockaddr *sa, unsigned char out[16])
{
	memset(out, 0, 16);
	if (sa && sa->sa_family == AF_INET6) {
		memcpy(out, &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr, 16);
	} else if (sa && sa->sa_family == AF_INET) {
		out[10] = out[11] = 0xff;
		memcpy(out + 12, &((const struct sockaddr_in *)(const void *)sa)->sin_addr, 4);
	}
}

static struct conn *find(struct http_conns *ct, const void *key)
{
	for (unsigned i = 0; i < ct->max; i++)
		if (ct->c[i].key == key)
			return &ct->c[i];
	return NULL;
}

/* Whether the peer has closed its side and nothing of it is left unread:
 * a peek finds the end of the stream. */
static int peer_closed(int fd)
{
	char b;

	return recv(fd, &b, 1, MSG_PEEK | MSG_DONTWAIT) == 0;
}

/* Shuts down the sockets whose headers or body are overdue, and those
 * whose peer closed while its body was due (the body can never come; as
 * nginx ends a request whose client closed early). Lock held. */
static void sweep_locked(struct http_conns *ct)
{
	double now = clock_mono_s();

	for (unsigned i = 0; i < ct->max; i++) {
		struct conn *c = &ct->c[i];

		if (!c->key || c->waiting == WAIT_NONE)
			continue;
		if (c->waiting == WAIT_BODY)
			c->eof_seen = peer_closed(c->fd) ? c->eof_seen + 1 : 0;
		if (now - c->since > ct->deadline || c->eof_seen >= EOF_SWEEPS) {
			shutdown(c->fd, SHUT_RDWR);
			c->waiting = WAIT_NONE;
		}
	}
}

static void *sweeper(void *arg)
{
	struct http_conns *ct = arg;
	struct timespec ts;

	pthread_mutex_lock(&ct->lock);
	while (!ct->stop) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_nsec += SWEEP_NS;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&ct->wake, &ct->lock, &ts);
		sweep_locked(ct);
	}
	pthread_mutex_unlock(&ct->lock);
	return NULL;
}

int http_conns_new(unsigned max, unsigned per_ip, double deadline_s, struct http_conns **out)
{
	struct http_conns *ct = xcalloc(1, sizeof(*ct));
	pthread_condattr_t ca;
	int r;

	ct->max = max ? max : 1;
	ct->per_ip = per_ip;
	ct->deadline = deadline_s;
	ct->c = xcalloc(ct->max, sizeof(*ct->c));
	pthread_mutex_init(&ct->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&ct->wake, &ca);
	pthread_condattr_destroy(&ca);
	r = pthread_create(&ct->thread, NULL, sweeper, ct);
	if (r) {
		pthread_cond_destroy(&ct->wake);
		pthread_mutex_destroy(&ct->lock);
		free(ct->c);
		free(ct);
		return -r;
	}
	*out = ct;
	return 0;
}

void http_conns_free(struct http_conns *ct)
{
	if (!ct)
		return;
	pthread_mutex_lock(&ct->lock);
	ct->stop = 1;
	pthread_cond_signal(&ct->wake);
	pthread_mutex_unlock(&ct->lock);
	pthread_join(ct->thread, NULL);
	pthread_cond_destroy(&ct->wake);
	pthread_mutex_destroy(&ct->lock);
	free(ct->c);
	free(ct);
}

/* How many connections come from this address. Lock held. */
static unsigned count_locked(struct http_conns *ct, const unsigned char addr[16])
{
	unsigned n = 0;

	for (unsigned i = 0; i < ct->max; i++)
		n += ct->c[i].key && !memcmp(ct->c[i].addr, addr, 16);
	return n;
}

int http_conns_add(struct http_conns *ct, const void *key, int fd, const struct sockaddr *peer)
{
	struct conn n = {
	    .key = key, .fd = fd, .loopback = http_addr_loopback(peer), .waiting = WAIT_HEADERS};
	struct conn *slot;
	int r = 0;

	peer_bytes(peer, n.addr);
	n.since = clock_mono_s();
	pthread_mutex_lock(&ct->lock);
	slot = find(ct, NULL);
	if (!slot)
		r = -ENFILE;
	else if (!n.loopback && ct->per_ip && count_locked(ct, n.addr) >= ct->per_ip)
		r = -EMFILE;
	else
		*slot = n;
	pthread_mutex_unlock(&ct->lock);
	return r;
}

/* Starts the connection's wait of kind `w` (its deadline from now). */
static void set_wait(struct http_conns *ct, const void *key, enum wait w)
{
	struct conn *c;

	pthread_mutex_lock(&ct->lock);
	c = find(ct, key);
	if (c) {
		c->waiting = w;
		c->since = clock_mono_s();
		c->eof_seen = 0;
	}
	pthread_mutex_unlock(&ct->lock);
}

void http_conns_headers(struct http_conns *ct, const void *key, int done)
{
	set_wait(ct, key, done ? WAIT_NONE : WAIT_HEADERS);
}

void http_conns_body(struct http_conns *ct, const void *key)
{
	set_wait(ct, key, WAIT_BODY);
}

void http_conns_remove(struct http_conns *ct, const void *key)
{
	struct conn *c;

	pthread_mutex_lock(&ct->lock);
	c = find(ct, key);
	if (c)
		*c = (struct conn){0};
	pthread_mutex_unlock(&ct->lock);
}
