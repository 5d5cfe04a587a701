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

/* The default tls_priorities: Mozilla's "intermediate" profile in GnuTLS
 * terms. TLS 1.2 and 1.3; in 1.2, ECDHE key exchange only (forward
 * secrecy: no static RSA), AEAD ciphers only (AES-GCM, ChaCha20-Poly1305:
 * no CBC, so no SHA-1 MAC), in the server's order. The master copy: the
 * config key and the HTTP server both use it. */
#define TLS_PRIORITIES_DEFAULT                                                                     \
	"NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2:-KX-ALL:+ECDHE-ECDSA:+ECDHE-RSA:"              \
	"-CIPHER-ALL:+AES-256-GCM:+AES-128-GCM:+CHACHA20-POLY1305:-MAC-ALL:+AEAD:%SERVER_"         \
	"PRECEDENCE"

/* HSTS for every HTTPS answer: two years, as Mozilla's guidelines say. */
#define TLS_HSTS "max-age=63072000"

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
