/*
 * http_conns: the HTTP connections in progress, for what libmicrohttpd
 * 0.9.75 lacks: a deadline for a request's complete headers and body (a
 * slow client is shut down, however steadily it trickles bytes; one that
 * closed its side while its body was due at once) and a per-address limit
 * that leaves loopback out, so that slow clients cannot lock the local
 * health checks and Prometheus out. A thread sweeps every half second. No
 * libmicrohttpd here: the caller passes the socket and its peer.
 */
#ifndef TW_HTTP_CONNS_H
#define TW_HTTP_CONNS_H

#include <sys/socket.h>

struct http_conns;

/* max: most connections; per_ip: most from one non-loopback address (0:
 * no limit); deadline_s: the longest wait for a request's headers, and
 * again for its body. 0 or
 * -errno (the thread could not start). */
int http_conns_new(unsigned max, unsigned per_ip, double deadline_s, struct http_conns **out);
/* Stops the sweeper and frees. Accepts NULL. */
void http_conns_free(struct http_conns *ct);

/* A new connection (key: any unique pointer), waiting for its headers.
 * -EMFILE when its address is at the per-address limit, -ENFILE when the
 * table is full: the caller shuts the socket down. */
int http_conns_add(struct http_conns *ct, const void *key, int fd, const struct sockaddr *peer);
/* The connection's headers are complete (done 1), or it waits for the next
 * request's (done 0: the deadline starts again). */
void http_conns_headers(struct http_conns *ct, const void *key, int done);
/* The connection's headers are complete and a body is due: it gets the
 * same deadline, and is shut down as soon as its peer closes (the body can
 * never come). http_conns_headers(done 1) ends the wait. */
void http_conns_body(struct http_conns *ct, const void *key);
/* The connection is closing; call before its socket is closed. */
void http_conns_remove(struct http_conns *ct, const void *key);

#endif
