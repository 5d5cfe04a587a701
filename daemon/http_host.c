/*
 * http_host: the Host header allow-list (see http_host.h).
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "http_host.h"
#include "xmalloc.h"

#define HOST_MAX 255

struct http_hosts {
	char **names;
	size_t n;
	int any;             /* "*": every Host */
	int any_ip;          /* listening on a wildcard: every IP literal */
	struct in6_addr ip6; /* the listen address, IPv4 as ::ffff:a.b.c.d */
	int have_ip;
};

/* An address as IPv6 (IPv4 mapped); 0 or -EAFNOSUPPORT. */
static int addr6(const struct sockaddr *sa, struct in6_addr *out)
{
	if (sa->sa_family == AF_INET6) {
		*out = ((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr;
		return 0;
	}
	if (sa->sa_family != AF_INET)
		return -EAFNOSUPPORT;
	memset(out, 0, sizeof(*out));
	out->s6_addr[10] = out->s6_addr[11] = 0xff;
	memcpy(&out->s6_addr[12], &((const struct sockaddr_in *)(const void *)sa)->sin_addr, 4);
	return 0;
}

static int loopback6(const struct in6_addr *a)
{
	return IN6_IS_ADDR_LOOPBACK(a) || (IN6_IS_ADDR_V4MAPPED(a) && a->s6_addr[12] == 127);
}

int http_addr_loopback(const struct sockaddr *sa)
{
	struct in6_addr a;

	return sa && addr6(sa, &a) == 0 && loopback6(&a);
}

/* A literal IPv4 or IPv6 address (no brackets) as IPv6; 0 or -EINVAL. */
static int parse_ip(const char *s, struct in6_addr *out)
{
	struct in_addr v4;

	if (inet_pton(AF_INET6, s, out) == 1)
		return 0;
	if (inet_pton(AF_INET, s, &v4) != 1)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	out->s6_addr[10] = out->s6_addr[11] = 0xff;
	memcpy(&out->s6_addr[12], &v4, 4);
	return 0;
}

/* The host part of a Host value, lower case, without brackets, port or a
 * final dot; -EINVAL when it is malformed. */
static int host_part(const char *v, char *out, size_t size)
{
	const char *end;
	size_t n;

	if (*v == '[') {
		end = strchr(++v, ']');
		if (!end ||
		    (end[1] && (end[1] != ':' || strspn(end + 2, "0123456789") != strlen(end + 2))))
			return -EINVAL;
	} else {
		end = strchr(v, ':');
		if (!end)
			end = v + strlen(v);
		else if (strspn(end + 1, "0123456789") != strlen(end + 1))
			return -EINVAL;
	}
	n = (size_t)(end - v);
	if (n && v[n - 1] == '.')
		n--;
	if (!n || n >= size)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		if (!isalnum((unsigned char)v[i]) && !strchr("-._:", v[i]))
			return -EINVAL;
		out[i] = (char)tolower((unsigned char)v[i]);
	}
	out[n] = '\0';
	return 0;
}

int http_host_allowed(const struct http_hosts *h, const char *host)
{
	char name[HOST_MAX + 1];
	struct in6_addr a;

	if (h && h->any)
		return 1;
	if (!host || host_part(host, name, sizeof(name)) < 0)
		return 0;
	if (!strcmp(name, "localhost"))
		return 1;
	if (parse_ip(name, &a) == 0)
		return loopback6(&a) ||
		       (h && (h->any_ip || (h->have_ip && !memcmp(&a, &h->ip6, sizeof(a)))));
	for (size_t i = 0; h && i < h->n; i++)
		if (!strcmp(name, h->names[i]))
			return 1;
	return 0;
}

/* Adds one allowed_hosts entry. */
static int add_name(struct http_hosts *h, const char *entry, size_t len)
{
	char name[HOST_MAX + 1], text[HOST_MAX + 1];

	if (len == 1 && *entry == '*') {
		h->any = 1;
		return 0;
	}
	if (!len || len > HOST_MAX)
		return -EINVAL;
	memcpy(text, entry, len);
	text[len] = '\0';
	if (host_part(text, name, sizeof(name)) < 0)
		return -EINVAL;
	h->names = xreallocarray(h->names, h->n + 1, sizeof(*h->names));
	h->names[h->n++] = xstrdup(name);
	return 0;
}

int http_hosts_new(const char *allowed, const struct sockaddr *listen, struct http_hosts **out)
{
	struct http_hosts *h = xcalloc(1, sizeof(*h));
	const char *p = allowed ? allowed : "";
	int r = 0;

	while (r == 0 && *(p += strspn(p, ", \t"))) {
		size_t len = strcspn(p, ", \t");

		r = add_name(h, p, len);
		p += len;
	}
	if (r == 0 && listen && addr6(listen, &h->ip6) == 0) {
		h->any_ip =
		    IN6_IS_ADDR_UNSPECIFIED(&h->ip6) ||
		    (IN6_IS_ADDR_V4MAPPED(&h->ip6) && !memcmp(&h->ip6.s6_addr[12], "\0\0\0\0", 4));
		h->have_ip = 1;
	}
	if (r < 0) {
		http_hosts_free(h);
		return r;
	}
	*out = h;
	return 0;
}

void http_hosts_free(struct http_hosts *h)
{
	if (!h)
		return;
	for (size_t i = 0; i < h->n; i++)
		free(h->names[i]);
	free(h->names);
	free(h);
}
