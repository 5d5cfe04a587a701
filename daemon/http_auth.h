/*
 * http_auth: the tokens' checks, kept apart from libmicrohttpd: a bearer
 * compared in time that depends only on the secret's length, and the
 * cookie the dashboard gets for read_token (a MAC of its expiry under the
 * token, with a lifetime). Pure: no I/O.
 */
#ifndef TW_HTTP_AUTH_H
#define TW_HTTP_AUTH_H

#include <stdint.h>

/* The name of the read_token cookie. */
#define HTTP_AUTH_COOKIE "tw_read"

/* Whether `given` equals `secret`, in time that depends only on the
 * secret's length. */
int http_auth_equal(const char *given, const char *secret);

/* Whether an Authorization header value is "Bearer SECRET" (the scheme in
 * any case). NULL is not. */
int http_auth_bearer(const char *authorization, const char *secret);

/* How long a read cookie is good for, in seconds (its Max-Age). */
#define HTTP_AUTH_COOKIE_S (12 * 3600)

/* The read cookie for a secret, good until `expires` (Unix seconds):
 * "EXPIRES.MAC", the MAC an HMAC-SHA256 of the expiry under the secret,
 * in lower-case hex, so that the cookie neither holds nor reveals the
 * token and stops working when it expires. malloc'd, or NULL when the MAC
 * could not be computed. */
char *http_auth_cookie(const char *secret, int64_t expires);

/* Whether a cookie value is one http_auth_cookie() made for this secret
 * and has not expired at `now` (Unix seconds); the MAC is compared in
 * constant time. */
int http_auth_cookie_ok(const char *cookie, const char *secret, int64_t now);

#endif
