/*
 * tls_creds: the certificate chain and private key the HTTPS server hands
 * to each new handshake, replaceable while it serves (SIGHUP). Parsed by
 * GnuTLS; libmicrohttpd asks for them through tls_creds_retrieve().
 */
#ifndef TW_TLS_CREDS_H
#define TW_TLS_CREDS_H

#include <stddef.h>
#include <stdint.h>

#include <gnutls/abstract.h>

struct tls_creds;

/* Parses a PEM certificate chain and a PEM private key, and checks that the
 * key belongs to the first certificate. 0; -EINVAL (not a certificate or
 * not a key), -EKEYREJECTED (the key of another certificate), -ENOMEM,
 * with why in err. */
int tls_creds_new(const char *cert_pem, const char *key_pem, struct tls_creds **out, char *err,
                  size_t errlen);
/* The first certificate's notAfter, as a Unix time in seconds. */
int64_t tls_creds_not_after(const struct tls_creds *c);
/* Whether two sets hold the same certificates (a reload that changed
 * nothing). */
int tls_creds_same(const struct tls_creds *a, const struct tls_creds *b);
/* Accepts NULL. Never for a set that was served (tls_creds_serve). */
void tls_creds_free(struct tls_creds *c);

/* Makes c the set new handshakes get, and takes it over (a pair served
 * before is taken from the list instead of kept twice). A set it replaces
 * is kept for grace_s: a handshake that started with it may still be using
 * it, and no handshake outlives the header deadline, which the caller
 * passes with a margin; older ones are freed then. One set is served per
 * process: the callback libmicrohttpd calls gets no pointer of ours. */
void tls_creds_serve(struct tls_creds *c, double grace_s);
/* The set served now; NULL before the first tls_creds_serve(). */
const struct tls_creds *tls_creds_serving(void);
/* Frees the served set and every replaced one; for after the server
 * stopped. */
void tls_creds_unserve(void);

/* A gnutls_certificate_retrieve_function2 for MHD_OPTION_HTTPS_CERT_CALLBACK:
 * hands out the set served now. */
int tls_creds_retrieve(gnutls_session_t session, const gnutls_datum_t *req_ca_dn, int nreqs,
                       const gnutls_pk_algorithm_t *pk_algos, int pk_algos_length,
                       gnutls_pcert_st **pcert, unsigned int *pcert_length, gnutls_privkey_t *pkey);

#endif
