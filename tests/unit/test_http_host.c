/*
 * test_http_host: the Host allow-list against DNS rebinding: localhost,
 * loopback literals, the listen address (any literal on a wildcard) and
 * allowed_hosts pass; other names, malformed values and ports do not.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "http_host.h"

static struct sockaddr_in v4(const char *ip)
{
	struct sockaddr_in sa = {.sin_family = AF_INET};

	assert_int_equal(inet_pton(AF_INET, ip, &sa.sin_addr), 1);
	return sa;
}

static void loopback_and_names(void **state)
{
	struct sockaddr_in lo = v4("127.0.0.1");
	struct http_hosts *h = NULL;
	static const char *const yes[] = {"localhost", "LocalHost:8437", "localhost.",
	                                  "127.0.0.1", "127.9.9.9:1",    "[::1]:8437",
	                                  "[::1]",     "tw.example",     "TW.example:80"};
	static const char *const no[] = {"",
	                                 "evil.example",
	                                 "localhost.evil.example",
	                                 "tw.example.evil",
	                                 "192.0.2.1",
	                                 "[::1",
	                                 "::1",
	                                 "localhost:80x",
	                                 "tw example",
	                                 "127.0.0.1:8437:1"};

	(void)state;
	assert_int_equal(http_hosts_new("tw.example, , ", (struct sockaddr *)&lo, &h), 0);
	for (size_t i = 0; i < sizeof(yes) / sizeof(*yes); i++)
		assert_true(http_host_allowed(h, yes[i]));
	for (size_t i = 0; i < sizeof(no) / sizeof(*no); i++)
		assert_false(http_host_allowed(h, no[i]));
	assert_false(http_host_allowed(h, NULL));
	http_hosts_free(h);
	http_hosts_free(NULL);
	assert_int_equal(http_hosts_new("ok.example bad/name", NULL, &h), -EINVAL);
}

static void listen_address(void **state)
{
	struct sockaddr_in one = v4("192.0.2.7"), any = v4("0.0.0.0");
	struct http_hosts *h = NULL;

	(void)state;
	assert_int_equal(http_hosts_new(NULL, (struct sockaddr *)&one, &h), 0);
	assert_true(http_host_allowed(h, "192.0.2.7:8437"));
	assert_false(http_host_allowed(h, "192.0.2.8"));
	assert_false(http_host_allowed(h, "host.example"));
	http_hosts_free(h);
	assert_int_equal(http_hosts_new("*", (struct sockaddr *)&one, &h), 0);
	assert_true(http_host_allowed(h, "anything.example"));
	http_hosts_free(h);
	assert_int_equal(http_hosts_new("", (struct sockaddr *)&any, &h), 0);
	assert_true(http_host_allowed(h, "192.0.2.8:8437"));
	assert_true(http_host_allowed(h, "[2001:db8::1]:8437"));
	assert_false(http_host_allowed(h, "rebind.example"));
	http_hosts_free(h);
	assert_true(http_addr_loopback((struct sockaddr *)&(struct sockaddr_in){
	    .sin_family = AF_INET, .sin_addr.s_addr = htonl(0x7f000002)}));
	assert_false(http_addr_loopback((struct sockaddr *)&one));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(loopback_and_names),
	    cmocka_unit_test(listen_address),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
