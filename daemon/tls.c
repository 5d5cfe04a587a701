/* tls: the certificate's expiry and the priority string, read by GnuTLS. */
#include <errno.h>
#include <string.h>

#include <gnutls/gnutls.h>
#include <gnutls/crypto.h>
#include <gnutls/x509.h>

#include "tls.h"

int tls_cert_not_after(const char *pem, int64_t *unix_s)
{
	gnutls_datum_t data = {(unsigned char *)(uintptr_t)pem, (unsigned)strlen(pem)};
	gnutls_x509_crt_t crt;
	time_t t;
	int r = -EINVAL;

	if (gnutls_x509_crt_init(&crt) < 0)
		return -ENOMEM;
	if (gnutls_x509_crt_import(crt, &data, GNUTLS_X509_FMT_PEM) >= 0) {
		t = gnutls_x509_crt_get_expiration_time(crt);
		if (t != (time_t)-1) {
			*unix_s = (int64_t)t;
			r = 0;
		}
	}
	gnutls_x509_crt_deinit(crt);
	return r;
}

int tls_priorities_check(const char *prio, const char **where)
{
	gnutls_priority_t p;

	*where = NULL;
	if (gnutls_priority_init(&p, prio, where) < 0)
		return -EINVAL;
	gnutls_priority_deinit(p);
	return 0;
}

int tls_hmac_sha256(const void *key, size_t klen, const void *msg, size_t mlen,
                    unsigned char out[TLS_HMAC_LEN])
{
	return gnutls_hmac_fast(GNUTLS_MAC_SHA256, key, klen, msg, mlen, out) < 0 ? -EIO : 0;
}
