/*
 * http: the daemon's HTTP server, the only module that calls
 * libmicrohttpd. Serves the JSON API (daemon/api.c), /metrics
 * (daemon/metrics.c), /healthz and the embedded dashboard, reading only
 * from the store.
 */
#ifndef TW_HTTP_H
#define TW_HTTP_H

#include <stdint.h>

struct store;
struct http_server;

/* What the HTTP side may ask of the scheduler. Called from an HTTP thread. */
struct http_hooks {
	/* Starts a cycle now. 0 with *cycle_id set; -EBUSY while a cycle is
	 * already going (409); -ETIMEDOUT if the scheduler did not pick it up. */
	int (*trigger)(void *ctx, int64_t *cycle_id);
	void *ctx;
};

struct http_config {
	const char *address;           /* default "127.0.0.1" */
	unsigned port;                 /* 0: ephemeral (tests); default from config.c */
	int listen_fd;                 /* >= 0: a socket from socket activation, used as is */
	unsigned max_connections;      /* total */
	unsigned per_ip_limit;         /* from one non-loopback address; 0: none */
	unsigned timeout_s;            /* idle connection timeout */
	double header_timeout_s;       /* a request's headers must be complete by then */
	double trigger_min_interval_s; /* between two POSTed cycles; 0: no spacing */
	const char *allowed_hosts;     /* Host names answered beyond localhost and IPs */
	size_t memory_limit;           /* per connection */
	unsigned threads;              /* thread pool size (1: single epoll thread) */
	const char *token;             /* POST /api/v1/runs token; NULL or "": POST is off */
	const char *metrics_token;     /* GET /metrics token; NULL or "": /metrics is open */
	const char *read_token;        /* every route but /healthz; NULL or "": reading is open */
	const char *tls_cert;          /* PEM file; NULL: plain HTTP */
	const char *tls_key;           /* PEM file */
	const char *tls_priorities;    /* GnuTLS priority string; NULL: TLS 1.2 and 1.3 */
	const char *dygraphs_dir;      /* where libjs-dygraphs lives */
};

/* Starts serving. `st` must be a handle the HTTP threads may use (the
 * daemon opens a second, read-only handle for them). 0 or -errno; the
 * bound port is available from http_port(). */
int http_start(const struct http_config *cfg, struct store *st, const struct http_hooks *hooks,
               struct http_server **out);
unsigned http_port(const struct http_server *srv);
/* Whether the server listens on an address other than loopback (a
 * wildcard included). */
int http_beyond_loopback(const struct http_server *srv);
/* Re-reads tls_cert and tls_key: new handshakes get the new pair, on the
 * same socket; a bad pair leaves the one served. 1 with *not_after set
 * when the certificate changed, 0 when it did not or there is no TLS,
 * -errno with why in err. */
int http_tls_reload(struct http_server *srv, int64_t *not_after, char *err, size_t errlen);
/* Stops accepting, finishes in-flight requests, frees. Accepts NULL. */
void http_stop(struct http_server *srv);

#endif
