/*
 * tls: what the daemon reads from its own certificate, through GnuTLS
 * (the library libmicrohttpd is built on); the only module that calls it.
 */
#ifndef TW_TLS_H
#define TW_TLS_H

#include <stdint.h>

/* The notAfter of the first certificate in a PEM text, as a Unix time in
 * seconds. 0, -EINVAL when it is not a certificate, -ENOMEM. */
int tls_cert_not_after(const char *pem, int64_t *unix_s);

/* Whether GnuTLS takes a priority string (tls_priorities). 0 or -EINVAL,
 * with the offending part in *where (a pointer into prio) when known. */
int tls_priorities_check(const char *prio, const char **where);

#endif
