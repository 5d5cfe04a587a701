/*
 * test_topology: CPU placement read from a sysfs tree of the test's own
 * (probes/lib/topology.c): a two-node host with SMT, two last-level
 * caches per node, and the pair each placement picks from the CPUs a
 * process may use.
 */
#include <errno.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "topology.h"

static char root[64];

static void put(const char *rel, const char *text)
{
	char path[512], dir[512], *slash;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	snprintf(dir, sizeof(dir), "%s", path);
	for (char *p = dir + strlen(root) + 1; (slash = strchr(p, '/')); p = slash + 1) {
		*slash = '\0';
		mkdir(dir, 0755);
		*slash = '/';
	}
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "%s\n", text);
	fclose(f);
}

/* 16 CPUs: node 0 holds 0-7, node 1 8-15; cores are pairs (2k, 2k+1);
 * each node has two L3 caches of four CPUs (0-3, 4-7, ...). */
static int setup(void **state)
{
	(void)state;
	snprintf(root, sizeof(root), "/tmp/tw-topo.XXXXXX");
	if (!mkdtemp(root))
		return -1;
	for (int c = 0; c < 16; c++) {
		char rel[128], list[32];

		snprintf(rel, sizeof(rel), "cpu/cpu%d/topology/thread_siblings_list", c);
		snprintf(list, sizeof(list), "%d-%d", c & ~1, (c & ~1) + 1);
		put(rel, list);
		snprintf(rel, sizeof(rel), "cpu/cpu%d/cache/index0/level", c);
		put(rel, "1");
		snprintf(rel, sizeof(rel), "cpu/cpu%d/cache/index0/type", c);
		put(rel, "Data");
		snprintf(rel, sizeof(rel), "cpu/cpu%d/cache/index0/shared_cpu_list", c);
		put(rel, list);
		snprintf(rel, sizeof(rel), "cpu/cpu%d/cache/index1/level", c);
		put(rel, "3");
		snprintf(rel, sizeof(rel), "cpu/cpu%d/cache/index1/type", c);
		put(rel, "Unified");
		snprintf(rel, sizeof(rel), "cpu/cpu%d/cache/index1/shared_cpu_list", c);
		snprintf(list, sizeof(list), "%d-%d", c & ~3, (c & ~3) + 3);
		put(rel, list);
	}
	put("node/node0/cpulist", "0-7");
	put("node/node1/cpulist", "8-15");
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	return system(cmd) == 0 ? 0 : -1;
}

static void test_parse_list(void **state)
{
	cpu_set_t s;

	(void)state;
	assert_int_equal(topo_parse_list("0-3,8,10-11\n", &s), 0);
	assert_int_equal(CPU_COUNT(&s), 7);
	assert_true(CPU_ISSET(10, &s) && !CPU_ISSET(9, &s));
	assert_int_equal(topo_parse_list("", &s), 0);
	assert_int_equal(CPU_COUNT(&s), 0);
	assert_int_equal(topo_parse_list("3-1", &s), -EINVAL);
	assert_int_equal(topo_parse_list("x", &s), -EINVAL);
	assert_int_equal(topo_parse_list("1,,2", &s), -EINVAL);
}

static void test_read_and_place(void **state)
{
	struct topology t;

	(void)state;
	assert_int_equal(topo_read(root, &t), 0);
	assert_int_equal(t.n_cpus, 16);
	assert_int_equal(t.llc_level, 3);
	assert_int_equal(topo_place_of(&t, 5, 5), TOPO_SAME_CPU);
	assert_int_equal(topo_place_of(&t, 4, 5), TOPO_SMT);
	assert_int_equal(topo_place_of(&t, 4, 6), TOPO_LLC);
	assert_int_equal(topo_place_of(&t, 2, 5), TOPO_CROSS_LLC);
	assert_int_equal(topo_place_of(&t, 7, 8), TOPO_CROSS_NODE);
	assert_string_equal(topo_place_names[TOPO_CROSS_NODE], "cross_node");
}

/* The pairs come from the allowed CPUs, CPU 0 last. */
static void test_pairs(void **state)
{
	struct topology t;
	cpu_set_t all, two;
	int a, b;

	(void)state;
	assert_int_equal(topo_read(root, &t), 0);
	assert_int_equal(topo_parse_list("0-15", &all), 0);
	assert_int_equal(topo_pair(&t, &all, TOPO_SAME_CPU, &a, &b), 0);
	assert_true(a == 1 && b == 1);
	assert_int_equal(topo_pair(&t, &all, TOPO_SMT, &a, &b), 0);
	assert_true(a == 2 && b == 3);
	assert_int_equal(topo_pair(&t, &all, TOPO_LLC, &a, &b), 0);
	assert_true(a == 1 && b == 2);
	assert_int_equal(topo_pair(&t, &all, TOPO_CROSS_LLC, &a, &b), 0);
	assert_true(a == 1 && b == 4);
	assert_int_equal(topo_pair(&t, &all, TOPO_CROSS_NODE, &a, &b), 0);
	assert_true(a == 1 && b == 8);
	/* a process on CPUs 6 and 9 has two nodes and nothing nearer */
	assert_int_equal(topo_parse_list("6,9", &two), 0);
	assert_int_equal(topo_pair(&t, &two, TOPO_SMT, &a, &b), -ENOENT);
	assert_int_equal(topo_pair(&t, &two, TOPO_LLC, &a, &b), -ENOENT);
	assert_int_equal(topo_pair(&t, &two, TOPO_CROSS_NODE, &a, &b), 0);
	assert_true(a == 6 && b == 9);
	/* only CPU 0: a pair on it is still a pair */
	assert_int_equal(topo_parse_list("0", &two), 0);
	assert_int_equal(topo_pair(&t, &two, TOPO_SAME_CPU, &a, &b), 0);
	assert_true(a == 0 && b == 0);
	assert_int_equal(topo_pair(&t, &two, TOPO_SMT, &a, &b), -ENOENT);
}

static void test_missing_tree(void **state)
{
	struct topology t;

	(void)state;
	assert_int_equal(topo_read("/nonexistent/sys", &t), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_parse_list),
	    cmocka_unit_test(test_read_and_place),
	    cmocka_unit_test(test_pairs),
	    cmocka_unit_test(test_missing_tree),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
