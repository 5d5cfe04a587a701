/*
 * test_observer_link: daemon/observer_link.c over a real Unix socket in a
 * temporary directory: a well-formed window is taken and answered "ok";
 * one that is not JSON, or lacks a field, is answered with why and the
 * previous window kept; a window from a user who is neither root nor this
 * process's is refused (when the test runs as root, a child that drops to
 * nobody sends it); the latest window ages out; the socket goes on stop.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "observer_link.h"
#include "tmpdir.h"

static char sock[200]; /* setup() checks it fits sun_path */

static const char good[] = "{\"window_s\": 10, \"workloads\": [{\"key\": \"unit:a.service\"}], "
                           "\"mechanisms\": {}, \"largest_vmas\": {\"pid\": 1, \"vmas\": 9}}";

/* Sends doc and returns the answer's first line (static; "" when the
 * exchange failed). No assertion: a forked child calls it too. */
static const char *send_doc(const char *doc)
{
	static char answer[300];
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);
	ssize_t n;

	answer[0] = '\0';
	memcpy(sa.sun_path, sock, strlen(sock) + 1);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		if (fd >= 0)
			close(fd);
		return answer;
	}
	/* a refused peer is answered before it writes: EPIPE, then the answer */
	if (send(fd, doc, strlen(doc), MSG_NOSIGNAL) == (ssize_t)strlen(doc))
		shutdown(fd, SHUT_WR);
	n = read(fd, answer, sizeof(answer) - 1);
	close(fd);
	answer[n > 0 ? n : 0] = '\0';
	answer[strcspn(answer, "\n")] = '\0';
	return answer;
}

static int setup(void **state)
{
	char err[256];

	(void)state;
	if (tmpdir_make("test_observer_link") < 0)
		return -1;
	chmod(tmpdir, 0755);
	snprintf(sock, sizeof(sock), "%s/observer.sock", tmpdir);
	if (strlen(sock) >= sizeof(((struct sockaddr_un *)0)->sun_path))
		return -1;
	return olink_start(sock, NULL, NULL, err, sizeof(err)) == 0 ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	olink_stop();
	return tmpdir_remove();
}

static void test_take(void **state)
{
	struct stat st;
	json_t *doc;

	(void)state;
	assert_int_equal(stat(sock, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0666);
	assert_null(olink_latest(60));
	assert_string_equal(send_doc(good), "ok");
	doc = olink_latest(60);
	assert_non_null(doc);
	assert_int_equal(
	    json_integer_value(json_object_get(json_object_get(doc, "largest_vmas"), "vmas")), 9);
	json_decref(doc);
	/* refused, each with why, and the last good one kept */
	assert_non_null(strstr(send_doc("not json"), "error: "));
	assert_string_equal(send_doc("{\"window_s\": 1, \"workloads\": [], \"mechanisms\": {}}"),
	                    "error: largest_vmas is not an object");
	assert_string_equal(send_doc("{\"window_s\": 0, \"workloads\": []}"),
	                    "error: window_s is not a positive number");
	assert_string_equal(send_doc("{\"window_s\": 1, \"workloads\": [1], \"mechanisms\": {}, "
	                             "\"largest_vmas\": {}}"),
	                    "error: workloads[0] is not an object");
	doc = olink_latest(60);
	assert_non_null(doc);
	json_decref(doc);
	/* too old */
	usleep(20000);
	assert_null(olink_latest(0.01));
}

static void test_other_user(void **state)
{
	pid_t pid;
	int status;

	(void)state;
	if (geteuid() != 0) {
		skip(); /* only root can be another user */
		return;
	}
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		if (setgid(65534) < 0 || setuid(65534) < 0)
			_exit(2);
		_exit(strstr(send_doc(good), "only root") ? 0 : 1);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static void test_check(void **state)
{
	char err[256];
	json_t *d = json_loads(good, 0, NULL);

	(void)state;
	assert_int_equal(olink_check(d, err, sizeof(err)), 0);
	assert_int_equal(
	    olink_check(json_array_get(json_object_get(d, "workloads"), 0), err, sizeof(err)),
	    -EINVAL);
	assert_string_equal(err, "window_s is not a positive number");
	assert_int_equal(olink_check(NULL, err, sizeof(err)), -EINVAL);
	json_decref(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_take),
	    cmocka_unit_test(test_other_user),
	    cmocka_unit_test(test_check),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
