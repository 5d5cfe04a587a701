/*
 * conntrack: the HTTP connections in progress, for what libmicrohttpd
 * 0.9.75 lacks: a deadline for a request's complete headers and body (a
 * slow client is shut down, however steadily it trickles bytes; one that
 * closed its side while its body was due at once) and a per-address limit
 * that leaves loopback out, so that slow clients cannot lock the local
 * health checks and Prometheus out. A thread sweeps every half second. No
 * libmicrohttpd here: the caller passes the socket and its peer.
 */
#ifndef TW_CONNTRACK_H
#define TW_CONNTRACK_H

#include <sys/socket.h>

struct conntrack;

/* max: most connections; per_ip: most from one non-loopback address (0:
 * no limit); deadline_s: the longest wait for a request's headers, and
 * again for its body. 0 or
 * -errno (the thread could not start). */
int conntrack_new(unsigned max, unsigned per_ip, double deadline_s, struct conntrack **out);
/* Stops the sweeper and frees. Accepts NULL. */
void conntrack_free(struct conntrack *ct);

/* A new connection (key: any unique pointer), waiting for its headers.
 * -EMFILE when its address is at the per-address limit, -ENFILE when the
 * table is full: the caller shuts the socket down. */
int conntrack_add(struct conntrack *ct, const void *key, int fd, const struct sockaddr *peer);
/* The connection's headers are complete (done 1), or it waits for the next
 * request's (done 0: the deadline starts again). */
void conntrack_headers(struct conntrack *ct, const void *key, int done);
/* The connection's headers are complete and a body is due: it gets the
 * same deadline, and is shut down as soon as its peer closes (the body can
 * never come). conntrack_headers(done 1) ends the wait. */
void conntrack_body(struct conntrack *ct, const void *key);
/* The connection is closing; call before its socket is closed. */
void conntrack_remove(struct conntrack *ct, const void *key);

#endif
