/*
 * http_host: which Host headers the daemon answers, against DNS rebinding:
 * localhost, the loopback addresses, the address it listens on (any IP
 * literal when that is a wildcard: a rebinding needs a DNS name) and the
 * names of allowed_hosts. Pure: no libmicrohttpd, no sockets.
 */
#ifndef TW_HTTP_HOST_H
#define TW_HTTP_HOST_H

#include <sys/socket.h>

struct http_hosts;

/* The allow-list from allowed_hosts (names or IP literals separated by
 * commas or spaces; "*" allows any Host) and the listening socket's local
 * address (NULL: unknown). 0 or -EINVAL for an entry that is not a host
 * name. *out is freed with http_hosts_free(). */
int http_hosts_new(const char *allowed, const struct sockaddr *listen, struct http_hosts **out);
void http_hosts_free(struct http_hosts *h);

/* Whether a Host header value ("name", "name:port", "[v6]:port") may be
 * answered. */
int http_host_allowed(const struct http_hosts *h, const char *host);

/* Whether an address is a loopback one (127.0.0.0/8, ::1, ::ffff:127.x). */
int http_addr_loopback(const struct sockaddr *sa);

#endif
