/*
 * http_framing: which requests threadwatchd's HTTP server takes, by their
 * framing and target (see httpp.h): RFC 9112's rules that libmicrohttpd
 * 0.9.75 leaves to the application, checked before any body is read.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include <microhttpd.h>

#include "api.h"
#include "http_asset_cache.h"
#include "http.h"
#include "httpp.h"
#include "http_host.h"
#include "log.h"

/* A header's name and how many times the request carries it. */
struct hcount {
	const char *name;
	unsigned n;
};

static enum MHD_Result count_header(void *cls, enum MHD_ValueKind kind, const char *key,
                                    const char *value)
{
	struct hcount *want = cls;

	(void)kind;
	(void)value;
	want->n += !strcasecmp(key, want->name);
	return MHD_YES;
}

static unsigned header_count(struct ctx *c, const char *name)
{
	struct hcount want = {name, 0};

	MHD_get_connection_values(c->conn, MHD_HEADER_KIND, count_header, &want);
	return want.n;
}

/* What is wrong with the request's framing or Host, as a status and a
 * message; 0 when nothing is. Framing a proxy and this server could read
 * two ways is request smuggling; a Host that is not ours is a page from
 * another site that reached this address (DNS rebinding). */
/* RFC 9110's tchar: what a header name is made of. */
static int is_tchar(unsigned char ch)
{
	return (ch >= '0' && ch <= '9') || ((ch | 0x20) >= 'a' && (ch | 0x20) <= 'z') ||
	       (ch && strchr("!#$%&'*+-.^_`|~", ch));
}

static enum MHD_Result bad_name(void *cls, enum MHD_ValueKind kind, const char *key,
                                const char *value)
{
	(void)kind;
	(void)value;
	for (const unsigned char *p = (const unsigned char *)key; *p; p++)
		if (!is_tchar(*p)) {
			*(int *)cls = 1;
			return MHD_NO;
		}
	return *key ? MHD_YES : (*(int *)cls = 1, MHD_NO);
}

/* A header whose name is not a token: "Content-Length : 5" (RFC 9112
 * section 5.1: whitespace between a field name and its colon MUST get
 * 400), which libmicrohttpd 0.9.75 keeps as a header of another name, so
 * that a proxy and this server would frame the request two ways. */
static int has_bad_name(struct ctx *c)
{
	int bad = 0;

	MHD_get_connection_values(c->conn, MHD_HEADER_KIND, bad_name, &bad);
	return bad;
}

/* An absolute-form target's authority, which wins over Host (RFC 9112
 * section 3.2.2): 0 when allowed or absent, else the status. */
static unsigned authority_error(struct ctx *c)
{
	char auth[256];
	int r = c->uri ? api_target_authority(c->uri, auth, sizeof(auth)) : 0;

	if (r < 0)
		return MHD_HTTP_BAD_REQUEST;
	return r > 0 && !http_host_allowed(c->srv->hosts, auth) ? MHD_HTTP_MISDIRECTED_REQUEST : 0;
}

static unsigned framing_error(struct ctx *c, const char **why)
{
	unsigned hosts = header_count(c, "Host"), bad;

	*why = "a header name with whitespace or another character a name may not have";
	if (has_bad_name(c))
		return MHD_HTTP_BAD_REQUEST;
	*why = "more than one Host header";
	if (hosts > 1)
		return MHD_HTTP_BAD_REQUEST;
	*why = "more than one Transfer-Encoding header";
	if (header_count(c, "Transfer-Encoding") > 1)
		return MHD_HTTP_BAD_REQUEST;
	*why = "the request target's authority is not one this server answers for (see "
	       "allowed_hosts), or is malformed";
	if ((bad = authority_error(c)))
		return bad;
	*why = "an HTTP/1.1 request needs a Host header";
	if (!hosts && strcmp(c->version, MHD_HTTP_VERSION_1_0))
		return MHD_HTTP_BAD_REQUEST;
	*why = "Content-Length twice or with Transfer-Encoding";
	if (header_count(c, "Content-Length") > 1 ||
	    (http_header(c, "Content-Length") && http_header(c, "Transfer-Encoding")))
		return MHD_HTTP_BAD_REQUEST;
	*why = "this server does not answer for that Host (see allowed_hosts)";
	if (hosts && !http_host_allowed(c->srv->hosts, http_header(c, "Host")))
		return MHD_HTTP_MISDIRECTED_REQUEST;
	return 0;
}

/* A Transfer-Encoding this server reads: chunked alone. 0, or the status:
 * 400 when the last coding is not chunked (RFC 9112 section 6.3: the
 * length cannot be known, MUST get 400 and a close), 501 for a coding it
 * does not implement (section 6.1). */
static unsigned te_error(const char *te)
{
	const char *last = strrchr(te, ',');
	size_t n;

	last = last ? last + 1 : te;
	last += strspn(last, " \t");
	n = strcspn(last, " \t");
	if (n != 7 || strncasecmp(last, "chunked", 7) || last[n + strspn(last + n, " \t")])
		return MHD_HTTP_BAD_REQUEST;
	return last != te + strspn(te, " \t") ? MHD_HTTP_NOT_IMPLEMENTED : 0;
}

/* Looks at the headers before any body is read: GET and HEAD take no body,
 * others at most HTTP_MAX_BODY bytes. An early answer closes the
 * connection, so the body is never read. *body says whether one is due. */
enum MHD_Result http_check_headers(struct ctx *c, int *body)
{
	const char *cl = http_header(c, "Content-Length");
	const char *te = http_header(c, "Transfer-Encoding");
	int64_t len = 0;
	const char *why;
	unsigned bad = framing_error(c, &why);

	*body = 0;
	if (bad)
		return send_error(c, bad, "%s", why);
	if (te && (bad = te_error(te)))
		return send_error(c, bad, "Transfer-Encoding \"%s\": %s", te,
		                  bad == MHD_HTTP_BAD_REQUEST ? "its last coding must be chunked"
		                                              : "this server reads chunked alone");
	if (cl && api_parse_int(cl, 0, INT64_MAX, &len) < 0)
		return send_error(c, MHD_HTTP_BAD_REQUEST, "bad Content-Length");
	*body = len > 0 || te;
	if ((len > 0 || te) && (!strcmp(c->method, "GET") || !strcmp(c->method, "HEAD")))
		return send_error(c, MHD_HTTP_BAD_REQUEST, "a %s request must not have a body",
		                  c->method);
	if (len > HTTP_MAX_BODY)
		return send_error(c, MHD_HTTP_CONTENT_TOO_LARGE,
		                  "request body of %lld bytes is over the limit of %d",
		                  (long long)len, HTTP_MAX_BODY);
	return MHD_YES;
}

/* How many parameters a request target may carry: every route takes a
 * handful. libmicrohttpd 0.9.75 parses them into the connection's pool
 * after this callback, and with thousands (60,000 '&') runs out of it and
 * neither answers nor closes. */
size_t http_target_params(const char *uri)
{
	const char *q = strchr(uri, '?');
	size_t n = 0;

	for (; q && *q; q++)
		n += *q == '&' || *q == ';' || *q == '?';
	return n;
}

/* Answers a target over the limits before libmicrohttpd parses it: 414
 * written on the socket (nothing else is on the wire between requests),
 * then the connection is shut down, which frees its slot. A TLS connection
 * is only shut down. */
void http_refuse_target(struct http_server *srv, struct MHD_Connection *conn, size_t len,
                        size_t params)
{
	static const char too_long[] = "HTTP/1.1 414 URI Too Long\r\nConnection: close\r\n"
	                               "Content-Length: 0\r\n\r\n";
	const union MHD_ConnectionInfo *fd =
	    MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);

	if (!fd)
		return;
	if (!srv->tls &&
	    send(fd->connect_fd, too_long, sizeof(too_long) - 1, MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
		log_debug("HTTP: cannot answer 414: %s", strerror(errno));
	shutdown(fd->connect_fd, SHUT_RDWR);
	log_info("HTTP: a request target of %zu bytes with %zu parameters refused (414)", len,
	         params);
}
