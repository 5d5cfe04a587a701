/*
 * test_observe_cgroup: obs_cgroup_parse() and obs_unit_name_valid()
 * (lib/observe_cgroup.c) on /proc/PID/cgroup texts as proc_cgroup_show()
 * writes them for each kind of host: cgroup v2 under systemd (a service,
 * a user's unit, a session scope), hybrid v1 with a name=systemd
 * hierarchy, hybrid without systemd (every path the root), legacy v1
 * without a named hierarchy, a container runtime's cgroup, systemd's
 * escaped names, hostile names, and text that is not a cgroup file.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "observep.h"

struct case_ {
	const char *text;
	const char *path, *unit, *manager, *hierarchy;
};

static const struct case_ cases[] = {
    {"0::/system.slice/nginx.service\n", "/system.slice/nginx.service", "nginx.service", NULL,
     "v2"},
    {"0::/user.slice/user-1000.slice/user@1000.service/app.slice/foo.service\n",
     "/user.slice/user-1000.slice/user@1000.service/app.slice/foo.service", "foo.service",
     "user@1000.service", "v2"},
    {"0::/user.slice/user-1000.slice/user@1000.service/init.scope\n",
     "/user.slice/user-1000.slice/user@1000.service/init.scope", "init.scope", "user@1000.service",
     "v2"},
    {"0::/user.slice/user-1000.slice/session-3.scope\n",
     "/user.slice/user-1000.slice/session-3.scope", "session-3.scope", NULL, "v2"},
    {"0::/system.slice/getty@tty1.service\n", "/system.slice/getty@tty1.service",
     "getty@tty1.service", NULL, "v2"},
    /* hybrid: systemd's own tree is name=systemd, whatever 0:: says */
    {"12:pids:/system.slice/cron.service\n11:name=systemd:/system.slice/cron.service\n"
     "4:memory:/system.slice/cron.service\n0::/system.slice/cron.service\n",
     "/system.slice/cron.service", "cron.service", NULL, "v1 name=systemd"},
    /* the build machines: hybrid, no systemd, every process at the root of
     * the tracking hierarchies while a controller's path is not */
    {"9:name=systemd:/\n8:pids:/\n4:memory:/process_api/9406\n0::/\n", "/", NULL, NULL,
     "v1 name=systemd"},
    /* legacy v1 without a named hierarchy: nothing systemd tracks */
    {"3:cpuset:/\n2:cpu,cpuacct:/a\n1:memory:/a\n", NULL, NULL, NULL, NULL},
    {"0::/docker/0123456789abcdef\n", "/docker/0123456789abcdef", NULL, NULL, "v2"},
    {"0::/system.slice/docker-0123.scope/inner\n", "/system.slice/docker-0123.scope/inner",
     "docker-0123.scope", NULL, "v2"},
    /* cg_escape(): "_" before a name that would clash */
    {"0::/system.slice/_cgroup.service\n", "/system.slice/_cgroup.service", "cgroup.service", NULL,
     "v2"},
    /* hostile: a directory named like a unit with bytes systemd refuses */
    {"0::/system.slice/\x1b[31m.service\n", "/system.slice/\x1b[31m.service", NULL, NULL, "v2"},
    {"0::/\"}<i id=x>.service\n", "/\"}<i id=x>.service", NULL, NULL, "v2"},
    /* a path outside the reader's cgroup namespace */
    {"0::/../../other.service\n", "/../../other.service", NULL, NULL, "v2"},
    /* a slice only: no unit */
    {"0::/machine.slice\n", "/machine.slice", NULL, NULL, "v2"},
    /* no trailing newline */
    {"0::/system.slice/a.service", "/system.slice/a.service", "a.service", NULL, "v2"},
};

static void check_str(const char *got, const char *want, const char *text)
{
	if (!want) {
		if (got)
			fail_msg("\"%s\": got \"%s\", want none", text, got);
		return;
	}
	if (!got || strcmp(got, want))
		fail_msg("\"%s\": got \"%s\", want \"%s\"", text, got ? got : "(none)", want);
}

static void test_cases(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct obs_cgroup cg;

		assert_int_equal(obs_cgroup_parse(cases[i].text, &cg), 0);
		check_str(cg.path, cases[i].path, cases[i].text);
		check_str(cg.unit, cases[i].unit, cases[i].text);
		check_str(cg.manager, cases[i].manager, cases[i].text);
		check_str(cg.hierarchy, cases[i].hierarchy, cases[i].text);
		obs_cgroup_free(&cg);
	}
}

static void test_not_cgroup(void **state)
{
	static const char *const bad[] = {
	    "", "\n", "garbage\n", "x:y:/z\n", ":name=systemd:/\n", "0:/only-two-fields\n"};
	struct obs_cgroup cg;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(obs_cgroup_parse(bad[i], &cg), -EINVAL);
		assert_null(cg.path);
		obs_cgroup_free(&cg);
	}
	obs_cgroup_free(NULL);
}

static void test_unit_names(void **state)
{
	static const struct {
		const char *name;
		int valid;
	} names[] = {
	    {"a.service", 1},     {"getty@tty1.service", 1}, {"x-y_z:w.scope", 1},
	    {"a\\x2db.mount", 1}, {"dev-sda.swap", 1},       {"sshd.socket", 1},
	    {"@x.service", 0},    {".service", 0},           {"a.slice", 0},
	    {"a.target", 0},      {"a b.service", 0},        {"a/b.service", 0},
	    {"\x1b.service", 0},  {"a@b@c.service", 0},      {"service", 0},
	    {"a.service.bak", 0},
	};
	char longname[300];

	(void)state;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (obs_unit_name_valid(names[i].name, strlen(names[i].name)) != names[i].valid)
			fail_msg("\"%s\" should be %s", names[i].name,
			         names[i].valid ? "valid" : "invalid");
	memset(longname, 'a', sizeof(longname));
	memcpy(longname + 260, ".service", 9);
	assert_int_equal(obs_unit_name_valid(longname, strlen(longname)), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_cases),
	    cmocka_unit_test(test_not_cgroup),
	    cmocka_unit_test(test_unit_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
