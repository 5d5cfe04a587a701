/*
 * fleet_conn: how daemons are asked, shared by `fleet` and the commands that
 * ask one daemon (`status`, `recommend --from`): the connection options
 * (--timeout, --cacert, --insecure, --token, --token-over-http), a target's
 * base URL, and one daemon asked alone over fleet_ask()'s request path.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "errbuf.h"
#include "fleetp.h"
#include "units.h"
#include "xmalloc.h"

#define FLEET_MAX_TIMEOUT_S 3600.0
#define FLEET_MIN_TIMEOUT_S 0.01
#define FLEET_MAX_TOKEN 4096

/* --- the options ------------------------------------------------------------ */

int fleet_set_timeout(void *ctx, const char *v, char *why, size_t wlen)
{
	struct fleet_conn_args *a = ctx;

	(void)why, (void)wlen;
	if (units_parse_duration(v, &a->timeout_s) < 0 || a->timeout_s < FLEET_MIN_TIMEOUT_S ||
	    a->timeout_s > FLEET_MAX_TIMEOUT_S)
		return -EINVAL;
	return 0;
}

int fleet_set_cacert(void *ctx, const char *path, char *why, size_t wlen)
{
	struct fleet_conn_args *a = ctx;
	FILE *f = fopen(path, "re");

	if (!f)
		return errbuf_set(why, wlen, -errno, "cannot read \"%s\": %s", path,
		                  strerror(errno));
	fclose(f);
	free(a->cacert);
	a->cacert = xstrdup(path);
	return 0;
}

/* The first line of PATH, which only its owner and group may read. */
int fleet_set_token(void *ctx, const char *path, char *why, size_t wlen)
{
	struct fleet_conn_args *a = ctx;
	char buf[FLEET_MAX_TOKEN + 2];
	FILE *f = fopen(path, "re");
	struct stat st;
	size_t len;

	if (!f || fstat(fileno(f), &st) < 0) {
		int e = errno;

		if (f)
			fclose(f);
		return errbuf_set(why, wlen, -e, "cannot read \"%s\": %s", path, strerror(e));
	}
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = '\0';
	fclose(f);
	if (S_ISREG(st.st_mode) && (st.st_mode & S_IROTH))
		return errbuf_set(why, wlen, -EPERM,
		                  "\"%s\" is readable by everyone: chmod o-r it, it is a secret",
		                  path);
	len = strcspn(buf, "\r\n");
	if (len > FLEET_MAX_TOKEN)
		return errbuf_set(why, wlen, -EINVAL, "\"%s\": a token is at most %d bytes", path,
		                  FLEET_MAX_TOKEN);
	buf[len] = '\0';
	if (len == 0)
		return errbuf_set(why, wlen, -EINVAL, "\"%s\": the first line is empty", path);
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)buf[i] <= ' ' || buf[i] == 0x7f)
			return errbuf_set(why, wlen, -EINVAL,
			                  "\"%s\": a token has no spaces or control characters",
			                  path);
	free(a->token);
	a->token = xstrdup(buf);
	return 0;
}

int fleet_conn_args_apply(const struct fleet_conn_args *a, struct fleet_conn *c, char *why,
                          size_t wlen)
{
	if (a->insecure && a->cacert)
		return errbuf_set(why, wlen, -EINVAL,
		                  "--cacert and --insecure contradict each other");
	c->timeout_s = a->timeout_s;
	c->cacert = a->cacert;
	c->insecure = a->insecure;
	c->token = a->token;
	c->token_over_http = a->token_over_http;
	return 0;
}

void fleet_conn_args_free(struct fleet_conn_args *a)
{
	free(a->cacert);
	free(a->token);
	a->cacert = a->token = NULL;
}

/* --- the URL ----------------------------------------------------------------- */

/* A target without a scheme gets the default one, and without a port as
 * well the daemon's (a URL with a scheme keeps its scheme's port). */
char *fleet_base_url(const char *in, const char *scheme_default, char *why, size_t whylen)
{
	CURLU *u = curl_url();
	char *full, *scheme = NULL, *host = NULL, *query = NULL, *frag = NULL, *out = NULL;
	char *port = NULL;
	CURLUcode rc;
	size_t len;

	if (!u)
		abort(); /* out of memory */
	if (strstr(in, "://"))
		full = xstrdup(in);
	else
		xasprintf(&full, "%s://%s", scheme_default, in);
	rc = curl_url_set(u, CURLUPART_URL, full, 0);
	if (rc == CURLUE_OK && !strstr(in, "://") &&
	    curl_url_get(u, CURLUPART_PORT, &port, 0) == CURLUE_NO_PORT)
		rc = curl_url_set(u, CURLUPART_PORT, FLEET_DEFAULT_PORT, 0);
	curl_free(port);
	if (rc != CURLUE_OK) {
		snprintf(why, whylen, "%s", curl_url_strerror(rc));
		goto out;
	}
	curl_url_get(u, CURLUPART_SCHEME, &scheme, 0);
	curl_url_get(u, CURLUPART_HOST, &host, 0);
	curl_url_get(u, CURLUPART_QUERY, &query, 0);
	curl_url_get(u, CURLUPART_FRAGMENT, &frag, 0);
	if (!scheme || (strcmp(scheme, "http") && strcmp(scheme, "https")))
		snprintf(why, whylen, "only http and https URLs are asked");
	else if (!host || !*host)
		snprintf(why, whylen, "no host name");
	else if (query || frag)
		snprintf(why, whylen, "a query or fragment has no place in a daemon's URL");
	else if (curl_url_get(u, CURLUPART_URL, &out, 0) != CURLUE_OK)
		snprintf(why, whylen, "cannot be put together again");
	if (out) {
		char *copy = xstrdup(out);

		curl_free(out);
		out = copy;
		len = strlen(out);
		while (len > 0 && out[len - 1] == '/')
			out[--len] = '\0';
	}
out:
	curl_free(scheme);
	curl_free(host);
	curl_free(query);
	curl_free(frag);
	curl_url_cleanup(u);
	free(full);
	return out;
}

/* --- asking ---------------------------------------------------------------- */

/* What a host holds, freed (the host itself is the caller's). */
static void host_clear(struct fleet_host *h)
{
	free(h->base);
	free(h->body.buf);
	free(h->error);
	json_decref(h->row);
	json_decref(h->workloads);
	for (int s = 0; s < STEP_DONE; s++) {
		json_decref(h->answer[s]);
		json_decref(h->kept[s]);
	}
}

void fleet_hosts_free(struct fleet_host *hosts, size_t n)
{
	for (size_t i = 0; hosts && i < n; i++)
		host_clear(&hosts[i]);
	free(hosts);
}

/* --- one daemon ---------------------------------------------------------------- */

int fleet_one_ask(struct fleet_one *o, const char *url, const char *origin,
                  const struct fleet_conn *c, char *why, size_t wlen)
{
	int r;

	*o = (struct fleet_one){0};
	fleet_targets_add(&o->t, url, origin, NULL);
	o->h.target = &o->t.v[0];
	o->h.base = fleet_base_url(url, "http", why, wlen);
	if (!o->h.base)
		return -EINVAL;
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
		return errbuf_set(why, wlen, -ENOMEM, "cannot initialise libcurl");
	r = fleet_ask(&o->h, 1, c);
	curl_global_cleanup();
	return r < 0 ? errbuf_set(why, wlen, r, "libcurl failed") : 0;
}

void fleet_one_free(struct fleet_one *o)
{
	host_clear(&o->h);
	fleet_targets_free(&o->t);
	*o = (struct fleet_one){0};
}

int fleet_recommendation(const char *url, const char *token, double timeout_s, json_t **out,
                         char *why, size_t wlen)
{
	const struct fleet_conn conn = {.timeout_s = timeout_s,
	                                .concurrency = 1,
	                                .token = token,
	                                .steps = FLEET_STEP(STEP_REC),
	                                .keep = FLEET_STEP(STEP_REC)};
	struct fleet_one o;
	int r = fleet_one_ask(&o, url, "--from", &conn, why, wlen);

	*out = NULL;
	if (r == 0 && o.h.error) {
		r = -EIO;
		/* the daemon's own words may be hostile: no control characters */
		snprintf(why, wlen, "%s", o.h.error);
		fleet_printable(why);
	} else if (r == 0 && !json_is_object(o.h.kept[STEP_REC])) {
		r = -ENOENT;
		snprintf(why, wlen, "it has no recommendation yet (its first cycle has not ended)");
	} else if (r == 0) {
		*out = json_incref(o.h.kept[STEP_REC]);
	}
	fleet_one_free(&o);
	return r;
}
