/*
 * httpp: what the HTTP server's files share (http.c: the server, its
 * routes and handlers; http_framing.c: which requests' framing it takes,
 * RFC 9112, and the request-target limits). Private to them.
 */
#ifndef TW_HTTPP_H
#define TW_HTTPP_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include <microhttpd.h>

#include "api.h"
#include "api_parse.h"
#include "http_asset.h"
#include "http_asset_cache.h"
#include "http_conns.h"
#include "http.h"
#include "http_host.h"
#include "http_respcache.h"

/* TLS 1.2 and 1.3 only, when the caller names no priorities. */
/* The largest request body taken (POST /api/v1/runs needs none). */
#define HTTP_MAX_BODY 4096
/* The chart library's files kept compressed (it has a handful). */
#define HTTP_DYGRAPHS_FILES 32
/* The longest request target and the most parameters in it (414 beyond). */
#define HTTP_MAX_TARGET 8192
#define HTTP_MAX_PARAMS 64
/* TLS certificates and keys larger than this are refused. */
#define HTTP_MAX_PEM (1u << 20)
/* The response cache: slots, and the largest body worth keeping. */
#define HTTP_CACHE_SLOTS 64
#define HTTP_CACHE_MAX_BODY (4u << 20)

struct http_server {
	struct MHD_Daemon *mhd;
	struct api_ctx api;
	struct http_hooks hooks;
	char *token;
	char *metrics_token;
	char *read_token;                  /* NULL: reading is open */
	struct http_asset_cache *dygraphs; /* the chart library's directory, or NULL */
	int external_fd;                   /* the socket-activation socket: the caller's to close */
	char *tls_cert, *tls_key;          /* the PEM files, re-read by http_tls_reload() */
	char *tls_priorities;
	int tls;                 /* HTTPS: the certificate comes from tls_creds */
	struct http_asset **web; /* indexed like builtin_files[]; NULL for non-web files */
	struct http_respcache *cache;
	struct http_hosts *hosts; /* the Host allow-list */
	struct http_conns *conns; /* header deadline, per-address limit */
	double tls_grace_s;       /* how long a replaced TLS pair is kept */
	int beyond_loopback;      /* the socket is bound to a non-loopback address */
	pthread_mutex_t extra_lock;
	json_t *extra;      /* what /metrics adds to the store's snapshot */
	unsigned extra_gen; /* bumped when extra changes: part of /metrics' cache key */
	pthread_mutex_t trigger_lock;
	double trigger_min_s; /* trigger_min_interval */
	double trigger_last;  /* CLOCK_MONOTONIC of the last cycle started; < 0: none */
};

/* The request in progress on a connection: its raw target, kept by the URI
 * log callback. It lives as long as the connection (its socket context),
 * because libmicrohttpd does not call the completion callback for a request
 * it refuses before the access handler runs (a target with more query
 * parameters than its memory pool holds, for one): state made per request
 * would leak there. */
struct request {
	char *uri;
	int started;
	int refused; /* the target was over a limit: the connection was shut */
	size_t body;
};

/* What a handler gets. */
struct ctx {
	struct http_server *srv;
	struct MHD_Connection *conn;
	const char *method;
	const char *version;
	const char *uri; /* the raw request target: the response cache's key */
	const struct route *route;
	struct api_target target;
	char cap[API_MAX_CAPTURE];
};

/* Whether a route's answer may come from the response cache: never, when
 * it depends on the stored data alone, or only when the request names its
 * own end ("until"), since without it the range ends now. */
enum route_cache { CACHE_NO, CACHE_DATA, CACHE_UNTIL };

/* Who may use a route. READ: read_token when set (a bearer or the cookie);
 * PAGE: the same, and GET /?token= trades the token for the cookie;
 * METRICS: metrics_token when set, else as READ; OPEN: anyone; SELF: the
 * handler checks its own token. */
enum route_auth { AUTH_READ, AUTH_PAGE, AUTH_METRICS, AUTH_OPEN, AUTH_SELF };

struct route {
	const char *method;
	const char *pattern;
	enum MHD_Result (*handle)(struct ctx *c);
	api_handler_fn *api; /* for h_api */
	const char *file;    /* for h_file: the embedded file */
	int (*exists)(const struct http_server *srv, const char *cap); /* NULL: any match */
	enum route_cache cache;
	enum route_auth auth;
};

struct hdr {
	const char *name, *value;
};

/* A request header's value, or NULL. */
const char *http_header(struct ctx *c, const char *name);
/* An error answer (RFC 9457 problem details) with one extra header. */
enum MHD_Result http_send_error_hdr(struct ctx *c, unsigned status, struct hdr extra,
                                    const char *fmt, ...) __attribute__((format(printf, 4, 5)));
#define send_error(c, status, ...)                                                                 \
	http_send_error_hdr(c, status, (struct hdr){NULL, NULL}, __VA_ARGS__)

/* http_framing.c: looks at a request's headers before any body is read:
 * framing a proxy could read otherwise (400, 501), a Host or an
 * absolute-form authority not ours (421), a body where none belongs or
 * over the limit. An early answer closes the connection. *body says
 * whether a body is due. */
enum MHD_Result http_check_headers(struct ctx *c, int *body);
/* How many parameters a request target carries. */
size_t http_target_params(const char *uri);
/* Answers a target over the limits (414) before libmicrohttpd parses it,
 * and shuts the connection down. */
void http_refuse_target(struct http_server *srv, struct MHD_Connection *conn, size_t len,
                        size_t params);

#endif
