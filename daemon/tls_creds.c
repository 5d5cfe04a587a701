/* tls_creds: the certificate chain and key new HTTPS handshakes get (see tls_creds.h). */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <gnutls/gnutls.h>
#include <gnutls/abstract.h>

#include "clock.h"
#include "errbuf.h"
#include "tls.h"
#include "tls_creds.h"
#include "xmalloc.h"

/* The longest chain taken: the certificate and its intermediates. */
#define TLS_MAX_CHAIN 16

struct tls_creds {
	gnutls_pcert_st chain[TLS_MAX_CHAIN];
	unsigned n;
	gnutls_privkey_t key;
	int64_t not_after;
	double replaced;        /* CLOCK_MONOTONIC s when another took its place; 0: served */
	struct tls_creds *next; /* served: the set this one replaced */
};

/* The set new handshakes get; its ->next list holds the sets it replaced,
 * which a handshake in progress may still be using. */
static pthread_mutex_t serve_lock = PTHREAD_MUTEX_INITIALIZER;
static struct tls_creds *serving;

static gnutls_datum_t datum(const char *text)
{
	return (gnutls_datum_t){(unsigned char *)(uintptr_t)text, (unsigned)strlen(text)};
}

static int import_chain(struct tls_creds *c, const char *pem)
{
	gnutls_datum_t d = datum(pem);

	c->n = TLS_MAX_CHAIN;
	if (gnutls_pcert_list_import_x509_raw(c->chain, &c->n, &d, GNUTLS_X509_FMT_PEM, 0) < 0 ||
	    c->n == 0) {
		c->n = 0;
		return -EINVAL;
	}
	return 0;
}

static int key_id(gnutls_pubkey_t pub, unsigned char *id, size_t *len)
{
	return gnutls_pubkey_get_key_id(pub, GNUTLS_KEYID_USE_SHA256, id, len) < 0 ? -EINVAL : 0;
}

/* Whether the private key is the one whose public half the first
 * certificate carries: their key IDs (SHA-256 of the public key) agree. */
static int key_matches(const struct tls_creds *c)
{
	gnutls_pubkey_t pub;
	unsigned char a[64], b[64];
	size_t la = sizeof(a), lb = sizeof(b);
	int r = -EKEYREJECTED;

	if (gnutls_pubkey_init(&pub) < 0)
		return -ENOMEM;
	if (gnutls_pubkey_import_privkey(pub, c->key, 0, 0) >= 0 && key_id(pub, a, &la) == 0 &&
	    key_id(c->chain[0].pubkey, b, &lb) == 0 && la == lb && !memcmp(a, b, la))
		r = 0;
	gnutls_pubkey_deinit(pub);
	return r;
}

static int import_key(struct tls_creds *c, const char *pem)
{
	gnutls_datum_t d = datum(pem);

	if (gnutls_privkey_init(&c->key) < 0)
		return -ENOMEM;
	return gnutls_privkey_import_x509_raw(c->key, &d, GNUTLS_X509_FMT_PEM, NULL, 0) < 0
	           ? -EINVAL
	           : 0;
}

int tls_creds_new(const char *cert_pem, const char *key_pem, struct tls_creds **out, char *err,
                  size_t errlen)
{
	struct tls_creds *c = xcalloc(1, sizeof(*c));
	int r;

	if (import_chain(c, cert_pem) < 0 || tls_cert_not_after(cert_pem, &c->not_after) < 0)
		r = errbuf_set(err, errlen, -EINVAL,
		               "the certificate is not a PEM X.509 certificate");
	else if ((r = import_key(c, key_pem)) < 0)
		r = errbuf_set(err, errlen, r, "the key is not an unencrypted PEM private key");
	else if ((r = key_matches(c)) < 0)
		r = errbuf_set(err, errlen, r, "the key does not belong to the certificate");
	else {
		*out = c;
		return 0;
	}
	tls_creds_free(c);
	return r;
}

int64_t tls_creds_not_after(const struct tls_creds *c)
{
	return c->not_after;
}

int tls_creds_same(const struct tls_creds *a, const struct tls_creds *b)
{
	if (a->n != b->n)
		return 0;
	for (unsigned i = 0; i < a->n; i++)
		if (a->chain[i].cert.size != b->chain[i].cert.size ||
		    memcmp(a->chain[i].cert.data, b->chain[i].cert.data, a->chain[i].cert.size))
			return 0;
	return 1;
}

void tls_creds_free(struct tls_creds *c)
{
	if (!c)
		return;
	for (unsigned i = 0; i < c->n; i++)
		gnutls_pcert_deinit(&c->chain[i]);
	if (c->key)
		gnutls_privkey_deinit(c->key);
	free(c);
}

/* Takes the set equal to c out of the list, or NULL. Lock held. */
static struct tls_creds *unlink_same_locked(const struct tls_creds *c)
{
	for (struct tls_creds **p = &serving; *p; p = &(*p)->next)
		if (tls_creds_same(*p, c)) {
			struct tls_creds *found = *p;

			*p = found->next;
			found->next = NULL;
			return found;
		}
	return NULL;
}

/* Frees the replaced sets no handshake can hold any more. Lock held. */
static void prune_locked(double now, double grace_s)
{
	struct tls_creds **p = serving ? &serving->next : &serving;

	while (*p) {
		struct tls_creds *c = *p;

		if (c->replaced > 0 && now - c->replaced > grace_s) {
			*p = c->next;
			tls_creds_free(c);
		} else {
			p = &c->next;
		}
	}
}

void tls_creds_serve(struct tls_creds *c, double grace_s)
{
	double now = clock_mono_s();
	struct tls_creds *same;

	pthread_mutex_lock(&serve_lock);
	/* A pair served before (two pairs swapped back and forth) is the
	 * same set again: one copy of each pair, however many reloads. */
	same = unlink_same_locked(c);
	if (same) {
		tls_creds_free(c);
		c = same;
	}
	if (serving)
		serving->replaced = now;
	c->replaced = 0;
	c->next = serving;
	serving = c;
	prune_locked(now, grace_s);
	pthread_mutex_unlock(&serve_lock);
}

const struct tls_creds *tls_creds_serving(void)
{
	const struct tls_creds *c;

	pthread_mutex_lock(&serve_lock);
	c = serving;
	pthread_mutex_unlock(&serve_lock);
	return c;
}

void tls_creds_unserve(void)
{
	struct tls_creds *c, *next;

	pthread_mutex_lock(&serve_lock);
	c = serving;
	serving = NULL;
	pthread_mutex_unlock(&serve_lock);
	for (; c; c = next) {
		next = c->next;
		tls_creds_free(c);
	}
}

int tls_creds_retrieve(gnutls_session_t session, const gnutls_datum_t *req_ca_dn, int nreqs,
                       const gnutls_pk_algorithm_t *pk_algos, int pk_algos_length,
                       gnutls_pcert_st **pcert, unsigned int *pcert_length, gnutls_privkey_t *pkey)
{
	struct tls_creds *c;

	(void)session, (void)req_ca_dn, (void)nreqs, (void)pk_algos, (void)pk_algos_length;
	pthread_mutex_lock(&serve_lock);
	c = serving;
	pthread_mutex_unlock(&serve_lock);
	if (!c)
		return -1;
	*pcert = c->chain;
	*pcert_length = c->n;
	*pkey = c->key;
	return 0;
}
