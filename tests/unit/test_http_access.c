/*
 * test_http_access: who reaches the real HTTP server (daemon/http.c) and
 * how: a socket handed over as by socket activation, bind errors, IPv6,
 * TLS, the read token and its cookie, and the spacing of triggered
 * cycles. Same fixture as test_http_server (http_fixture.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <time.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <curl/curl.h>
#include <jansson.h>

#include "builtin.h"
#include "http.h"
#include "metrics.h"
#include "store.h"

#include "http_fixture.h"

/* Socket activation: the server uses the socket it is given and leaves it
 * open when it stops. */
static void test_listen_fd(void **state)
{
	struct fixture *f = *state;
	struct http_config cfg = {.listen_fd = -1, .threads = 1};
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof(sa);
	struct http_server *srv;
	struct fixture other = *f;
	struct reply r;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(fd, 16), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &len), 0);
	cfg.listen_fd = fd;
	assert_int_equal(http_start(&cfg, f->ro, NULL, &srv), 0);
	assert_int_equal(http_port(srv), ntohs(sa.sin_port));
	other.port = http_port(srv);
	fetch(&other, "/healthz", &r);
	assert_int_equal(r.status, 200);
	reply_free(&r);
	/* No token: POST is off. */
	struct opts post = {.method = "POST", .headers = {"Authorization: Bearer " TOKEN}};
	fetch_opts(&other, "/api/v1/runs", &post, &r);
	expect_error(&r, 403, "no token");
	reply_free(&r);
	fetch(&other, "/api/v1/status", &r);
	assert_true(json_is_false(get(r.json, "trigger_enabled")));
	reply_free(&r);
	http_stop(srv);
	assert_true(fcntl(fd, F_GETFD) >= 0);
	close(fd);
}

static void test_bind_errors(void **state)
{
	struct fixture *f = *state;
	struct http_config cfg = {.address = "127.0.0.1", .port = f->port, .listen_fd = -1};
	struct http_server *srv = NULL;

	assert_int_equal(http_start(&cfg, f->ro, NULL, &srv), -EADDRINUSE);
	cfg.port = 0;
	cfg.address = "not an address";
	assert_true(http_start(&cfg, f->ro, NULL, &srv) < 0);
	cfg.address = "127.0.0.1";
	cfg.tls_cert = "/nonexistent/cert.pem";
	cfg.tls_key = "/nonexistent/key.pem";
	assert_int_equal(http_start(&cfg, f->ro, NULL, &srv), -ENOENT);
	cfg.tls_key = NULL;
	assert_int_equal(http_start(&cfg, f->ro, NULL, &srv), -EINVAL);
	http_stop(NULL);
}

/* An IPv6 listen address, where the host has IPv6. */
static void test_ipv6(void **state)
{
	struct fixture *f = *state;
	struct http_config cfg = {.address = "::1", .listen_fd = -1, .threads = 1};
	struct opts v6 = {.host = "[::1]"};
	struct http_server *srv;
	struct fixture other = *f;
	struct reply r;
	int rc = http_start(&cfg, f->ro, NULL, &srv);

	if (rc == -EADDRNOTAVAIL || rc == -EAFNOSUPPORT) {
		print_message("no IPv6 loopback here; not tested\n");
		skip();
	}
	assert_int_equal(rc, 0);
	other.port = http_port(srv);
	fetch_opts(&other, "/healthz", &v6, &r);
	assert_int_equal(r.status, 200);
	reply_free(&r);
	http_stop(srv);
}

static void test_tls(void **state)
{
	struct fixture *f = *state;
	struct http_config cfg = {.address = "127.0.0.1", .listen_fd = -1, .threads = 1};
	struct http_server *srv;
	struct fixture other = *f;
	char cert[160], key[160], cmd[768];
	struct reply r;

	snprintf(cert, sizeof(cert), "%s/cert.pem", f->dir);
	snprintf(key, sizeof(key), "%s/key.pem", f->dir);
	snprintf(cmd, sizeof(cmd),
	         "openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=127.0.0.1 "
	         "-addext subjectAltName=IP:127.0.0.1 -keyout '%s' -out '%s' >/dev/null 2>&1",
	         key, cert);
	if (system(cmd) != 0) {
		print_message("openssl is not available; TLS not tested\n");
		skip();
	}
	cfg.tls_cert = cert;
	cfg.tls_key = key;
	assert_int_equal(http_start(&cfg, f->ro, NULL, &srv), 0);
	other.port = http_port(srv);
	struct opts tls = {.scheme = "https", .cainfo = cert};
	fetch_opts(&other, "/api/v1/host", &tls, &r);
	assert_int_equal(r.status, 200);
	assert_string_equal(json_string_value(get(r.json, "current.fingerprint.hostname")),
	                    "testhost");
	reply_free(&r);
	/* The certificate's notAfter: about two days from now. */
	fetch_opts(&other, "/metrics", &tls, &r);
	assert_int_equal(r.status, 200);
	const char *m = strstr(r.body, "\nthreadwatch_tls_cert_expiry_timestamp_seconds ");
	assert_non_null(m);
	double expiry =
	    strtod(m + strlen("\nthreadwatch_tls_cert_expiry_timestamp_seconds "), NULL);
	assert_true(fabs(expiry - ((double)time(NULL) + 2 * 86400)) < 3600);
	reply_free(&r);
	http_stop(srv);
}

/* read_token: every route but /healthz needs the token, as a bearer or as
 * the cookie that GET /?token= sets; a wrong one is 401 problem+json. */
static void test_read_token(void **state)
{
	struct fixture *f = *state;
	struct http_config cfg = {.address = "127.0.0.1",
	                          .listen_fd = -1,
	                          .threads = 1,
	                          .token = TOKEN,
	                          .read_token = READ_TOKEN};
	static const char *const closed[] = {"/api/v1/host", "/api/v1/runs",        "/metrics", "/",
	                                     "/app.js",      "/api/v1/openapi.json"};
	struct opts bearer = {.headers = {"Authorization: Bearer " READ_TOKEN}},
	            wrong = {.headers = {"Authorization: Bearer " READ_TOKEN "x"}},
	            post = {.method = "POST", .headers = {"Authorization: Bearer " TOKEN}};
	struct http_server *srv;
	struct fixture other = *f;
	char cookie[256], buf[256];
	struct reply r;

	assert_int_equal(http_start(&cfg, f->ro, NULL, &srv), 0);
	other.port = http_port(srv);
	fetch(&other, "/healthz", &r);
	assert_int_equal(r.status, 200);
	reply_free(&r);
	for (size_t i = 0; i < sizeof(closed) / sizeof(closed[0]); i++) {
		fetch(&other, closed[i], &r);
		expect_error(&r, 401, "Authorization");
		assert_non_null(hdr(&r, "WWW-Authenticate", buf, sizeof(buf)));
		reply_free(&r);
		fetch_opts(&other, closed[i], &wrong, &r);
		expect_error(&r, 401, "wrong token");
		reply_free(&r);
		fetch_opts(&other, closed[i], &bearer, &r);
		assert_int_equal(r.status, 200);
		reply_free(&r);
	}
	/* POST keeps its own token. */
	fetch_opts(&other, "/api/v1/runs", &post, &r);
	assert_int_not_equal(r.status, 401);
	reply_free(&r);
	/* The dashboard's way in: a cookie for the browser, then a redirect. */
	fetch(&other, "/?token=" READ_TOKEN_Q "x", &r);
	expect_error(&r, 401, "wrong token");
	reply_free(&r);
	fetch(&other, "/?token=" READ_TOKEN_Q, &r);
	assert_int_equal(r.status, 303);
	assert_string_equal(hdr(&r, "Location", buf, sizeof(buf)), "/");
	assert_non_null(hdr(&r, "Set-Cookie", buf, sizeof(buf)));
	assert_non_null(strstr(buf, "HttpOnly"));
	assert_non_null(strstr(buf, "SameSite=Strict"));
	assert_null(strstr(buf, READ_TOKEN));
	snprintf(cookie, sizeof(cookie), "Cookie: %.*s", (int)strcspn(buf, ";"), buf);
	reply_free(&r);
	struct opts with_cookie = {.headers = {cookie}};
	fetch_opts(&other, "/api/v1/status", &with_cookie, &r);
	assert_int_equal(r.status, 200);
	reply_free(&r);
	struct opts bad_cookie = {.headers = {"Cookie: tw_read=00ff"}};
	fetch_opts(&other, "/api/v1/status", &bad_cookie, &r);
	expect_error(&r, 401, "wrong token");
	reply_free(&r);
	http_stop(srv);
}

static int trigger_always(void *ctx, int64_t *cycle_id)
{
	(void)ctx;
	*cycle_id = 9;
	return 0;
}

/* trigger_min_interval: a second cycle started sooner is 429 with a
 * Retry-After of the seconds left. */
static void test_trigger_spacing(void **state)
{
	struct fixture *f = *state;
	struct http_hooks hooks = {.trigger = trigger_always};
	struct http_config cfg = {.address = "127.0.0.1",
	                          .listen_fd = -1,
	                          .threads = 2,
	                          .token = TOKEN,
	                          .trigger_min_interval_s = 3600};
	struct opts right = {.method = "POST", .headers = {"Authorization: Bearer " TOKEN}};
	struct http_server *srv;
	struct fixture other = *f;
	struct reply r;
	char buf[64];

	assert_int_equal(http_start(&cfg, f->ro, &hooks, &srv), 0);
	other.port = http_port(srv);
	fetch_opts(&other, "/api/v1/runs", &right, &r);
	assert_int_equal(r.status, 202);
	reply_free(&r);
	fetch_opts(&other, "/api/v1/runs", &right, &r);
	expect_error(&r, 429, "trigger_min_interval");
	assert_non_null(hdr(&r, "Retry-After", buf, sizeof(buf)));
	assert_true(atoi(buf) > 3500 && atoi(buf) <= 3600);
	reply_free(&r);
	http_stop(srv);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_listen_fd),  cmocka_unit_test(test_bind_errors),
	    cmocka_unit_test(test_ipv6),       cmocka_unit_test(test_tls),
	    cmocka_unit_test(test_read_token), cmocka_unit_test(test_trigger_spacing),
	};
	int rc;

	curl_global_init(CURL_GLOBAL_DEFAULT);
	rc = cmocka_run_group_tests(tests, setup, teardown);
	curl_global_cleanup();
	return rc;
}
