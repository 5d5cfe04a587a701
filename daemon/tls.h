/*
 * tls: what the daemon reads from its own certificate, and the one MAC it
 * needs, through GnuTLS (the library libmicrohttpd is built on); with
 * tls_creds, the only module that calls it.
 */
#ifndef TW_TLS_H
#define TW_TLS_H

#include <stddef.h>
#include <stdint.h>

#define TLS_HMAC_LEN 32

/* The notAfter of the first certificate in a PEM text, as a Unix time in
 * seconds. 0, -EINVAL when it is not a certificate, -ENOMEM. */
int tls_cert_not_after(const char *pem, int64_t *unix_s);

/* Whether GnuTLS takes a priority string (tls_priorities). 0 or -EINVAL,
 * with the offending part in *where (a pointer into prio) when known. */
int tls_priorities_check(const char *prio, const char **where);

/* HMAC-SHA256 of msg under key into out. 0 or -EIO. */
int tls_hmac_sha256(const void *key, size_t klen, const void *msg, size_t mlen,
                    unsigned char out[TLS_HMAC_LEN]);

#endif
