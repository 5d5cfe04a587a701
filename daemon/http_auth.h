/*
 * http_auth: the tokens' checks, kept apart from libmicrohttpd: a bearer
 * compared in time that depends only on the secret's length, and the
 * cookie the dashboard gets for read_token (the token hex-encoded, so any
 * visible ASCII token is a valid cookie value). Pure: no I/O.
 */
#ifndef TW_HTTP_AUTH_H
#define TW_HTTP_AUTH_H

/* The name of the read_token cookie. */
#define HTTP_AUTH_COOKIE "tw_read"

/* Whether `given` equals `secret`, in time that depends only on the
 * secret's length. */
int http_auth_equal(const char *given, const char *secret);

/* Whether an Authorization header value is "Bearer SECRET" (the scheme in
 * any case). NULL is not. */
int http_auth_bearer(const char *authorization, const char *secret);

/* The cookie value for a secret: malloc'd, lower-case hex. */
char *http_auth_cookie(const char *secret);

#endif
