/* http_auth: bearer tokens and the read cookie, compared in constant time. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "http_auth.h"
#include "tls.h"
#include "xmalloc.h"

int http_auth_equal(const char *given, const char *secret)
{
	size_t glen = strlen(given), slen = strlen(secret);
	unsigned char diff = glen != slen;

	for (size_t i = 0; i < slen; i++)
		diff |= (unsigned char)(secret[i] ^ (i < glen ? given[i] : 0));
	return diff == 0;
}

int http_auth_bearer(const char *authorization, const char *secret)
{
	return authorization && !strncasecmp(authorization, "Bearer ", 7) &&
	       http_auth_equal(authorization + 7, secret);
}

/* The MAC's label: a cookie of another version or purpose never matches. */
#define COOKIE_LABEL "threadwatch read cookie v2 "

static int cookie_mac(const char *secret, int64_t expires, char hex_out[2 * TLS_HMAC_LEN + 1])
{
	static const char hex[] = "0123456789abcdef";
	unsigned char mac[TLS_HMAC_LEN];
	char msg[64];
	int n = snprintf(msg, sizeof(msg), COOKIE_LABEL "%lld", (long long)expires);

	if (tls_hmac_sha256(secret, strlen(secret), msg, (size_t)n, mac) < 0)
		return -EIO;
	for (size_t i = 0; i < TLS_HMAC_LEN; i++) {
		hex_out[2 * i] = hex[mac[i] >> 4];
		hex_out[2 * i + 1] = hex[mac[i] & 15];
	}
	hex_out[2 * TLS_HMAC_LEN] = '\0';
	return 0;
}

char *http_auth_cookie(const char *secret, int64_t expires)
{
	char mac[2 * TLS_HMAC_LEN + 1], *out;

	if (cookie_mac(secret, expires, mac) < 0)
		return NULL;
	xasprintf(&out, "%lld.%s", (long long)expires, mac);
	return out;
}

int http_auth_cookie_ok(const char *cookie, const char *secret, int64_t now)
{
	char mac[2 * TLS_HMAC_LEN + 1], *end;
	long long expires;

	if (!cookie || !secret || !*secret)
		return 0;
	errno = 0;
	expires = strtoll(cookie, &end, 10);
	if (errno || end == cookie || *end != '.' || expires < now ||
	    expires > now + HTTP_AUTH_COOKIE_S + 60)
		return 0;
	if (cookie_mac(secret, expires, mac) < 0)
		return 0;
	return http_auth_equal(end + 1, mac);
}
