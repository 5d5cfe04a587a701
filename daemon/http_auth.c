/* http_auth: bearer tokens and the read cookie, compared in constant time. */
#include <string.h>
#include <strings.h>

#include "http_auth.h"
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

char *http_auth_cookie(const char *secret)
{
	static const char hex[] = "0123456789abcdef";
	size_t n = strlen(secret);
	char *out = xmalloc(2 * n + 1);

	for (size_t i = 0; i < n; i++) {
		out[2 * i] = hex[(unsigned char)secret[i] >> 4];
		out[2 * i + 1] = hex[(unsigned char)secret[i] & 15];
	}
	out[2 * n] = '\0';
	return out;
}
