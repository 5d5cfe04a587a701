/*
 * test_fleet_sd: `threadwatch fleet --file` (cli/fleet_targets.c,
 * fleet_sd_json.c, fleet_sd_yaml.c): the three formats told apart by
 * content; file_sd JSON and YAML in the shapes Prometheus and people write
 * (indentless and indented block lists, flow lists and maps, quoting and
 * escapes, comments, "---" and "...", anchors and aliases, string tags,
 * multi-line scalars and flow collections), labels and __scheme__; and
 * every malformed input refused with FILE:LINE and the reason.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "fleetp.h"
#include "xmalloc.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* Writes text to the file PATH in a new temporary directory and reads it
 * as --file from there, so that every message names "PATH". */
static int read_text(const char *text, struct fleet_targets *t, char *why, size_t wlen)
{
	char dir[] = "/tmp/test_fleet_sd.XXXXXX", cwd[4096];
	FILE *f;
	int rc;

	assert_non_null(mkdtemp(dir));
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	assert_int_equal(chdir(dir), 0);
	f = fopen("PATH", "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	rc = fleet_file_read("PATH", t, why, wlen);
	unlink("PATH");
	assert_int_equal(chdir(cwd), 0);
	rmdir(dir);
	return rc;
}

/* "url|k=v,k=v|scheme;" for every target, labels sorted as given. */
static char *describe(const struct fleet_targets *t)
{
	char *out = xstrdup(""), *next;

	for (size_t i = 0; i < t->n; i++) {
		const char *key;
		json_t *v;
		char *labels = xstrdup("");

		json_object_foreach(t->v[i].labels, key, v)
		{
			xasprintf(&next, "%s%s%s=%s", labels, *labels ? "," : "", key,
			          json_string_value(v));
			free(labels);
			labels = next;
		}
		xasprintf(&next, "%s%s|%s|%s;", out, t->v[i].url, labels,
		          t->v[i].scheme ? t->v[i].scheme : "");
		free(labels);
		free(out);
		out = next;
	}
	return out;
}

static void test_good(void **state)
{
	static const struct {
		const char *text, *want;
	} cases[] = {
	    /* URL lists */
	    {"# fleet\nhttp://a:1\n  b:2   # comment\n\nhttps://c/x#frag\n",
	     "http://a:1||;b:2||;https://c/x#frag||;"},
	    /* JSON */
	    {"[{\"targets\": [\"a:1\", \"b:2\"], \"labels\": {\"env\": \"prod\"}}]",
	     "a:1|env=prod|;b:2|env=prod|;"},
	    {"\n [\n{\"targets\": [\"a:1\"]} ,\n {\"labels\": {\"__scheme__\": \"https\", "
	     "\"__meta_x\": \"y\", \"r\": \"db\"}, \"targets\": [\"b:2\"]}\n]\n",
	     "a:1||;b:2|r=db|https;"},
	    {"[{\"targets\": []}, {\"targets\": [\"a:1\"]}]", "a:1||;"},
	    /* YAML as Prometheus's tools write it (indentless lists) */
	    {"- targets:\n  - a:1\n  - b:2\n  labels:\n    env: prod\n    team: db\n",
	     "a:1|env=prod,team=db|;b:2|env=prod,team=db|;"},
	    /* indented lists, "---", "...", comments, quotes */
	    {"# sd\n---\n-   targets:\n        - 'a:1'   # one\n        - \"b:2\"\n    labels:\n"
	     "        'k': 'it''s # not a comment'\n        q: \"a\\\"b\\\\c\"\n...\n",
	     "a:1|k=it's # not a comment,q=a\"b\\c|;b:2|k=it's # not a comment,q=a\"b\\c|;"},
	    /* flow lists and maps, several groups, labels before targets */
	    {"- targets: [a:1, 'b:2', \"c:3\",]\n  labels: {env: test, __scheme__: http}\n"
	     "- labels: {}\n  targets: [d:4]\n",
	     "a:1|env=test|http;b:2|env=test|http;c:3|env=test|http;d:4||;"},
	    /* an IPv6 target must be quoted in YAML, as elsewhere */
	    {"- targets: []\n- targets:\n  - '[::1]:9'\n", "[::1]:9||;"},
	    /* anchors and aliases: labels shared by two groups */
	    {"- targets: [a:1]\n  labels: &common\n    env: prod\n    team: db\n"
	     "- targets: [b:2]\n  labels: *common\n",
	     "a:1|env=prod,team=db|;b:2|env=prod,team=db|;"},
	    {"- targets: [&t a:1]\n  labels: {env: *t}\n", "a:1|env=a:1|;"},
	    /* tags of a string, multi-line scalars (folded, literal, plain) */
	    {"- targets:\n  - !!str a:1\n  labels:\n    note: >-\n      two\n      lines\n"
	     "    text: |\n      kept\n    long: a plain\n      scalar\n",
	     "a:1|note=two lines,text=kept\n,long=a plain scalar|;"},
	    /* flow collections over several lines, a flow list of groups */
	    {"- targets: [\n    a:1,\n    b:2\n  ]\n  labels: {\n    env: prod }\n",
	     "a:1|env=prod|;b:2|env=prod|;"},
	    {"- {targets: [a:1], labels: {env: prod}}\n", "a:1|env=prod|;"},
	};

	(void)state;
	for (size_t i = 0; i < N(cases); i++) {
		struct fleet_targets t = {0};
		char why[512] = "", *got;
		int rc = read_text(cases[i].text, &t, why, sizeof(why));

		if (rc != 0)
			fail_msg("case %zu: %s", i, why);
		got = describe(&t);
		if (strcmp(got, cases[i].want))
			fail_msg("case %zu: got \"%s\", want \"%s\"", i, got, cases[i].want);
		free(got);
		fleet_targets_free(&t);
	}
}

static void test_bad(void **state)
{
	static const struct {
		const char *text, *want;
	} cases[] = {
	    {"", "PATH: no targets"},
	    {"# only a comment\n", "PATH: no targets"},
	    {"a:1\nb:2 c:3\n", "PATH:2: one URL a line"},
	    {"[]", "PATH: no targets"},
	    {"{\"targets\": [\"a:1\"]}", "PATH:1: file_sd JSON is a list of groups"},
	    {"[\n{\"targets\": [\"a:1\"]},\n{\"targets\": [\"b\"],}\n]", "PATH:3: "},
	    {"[{\"targets\": [\"a:1\"]}] x", "PATH:1: text after the list"},
	    {"[{\"targets\": [\"a:1\"]} {\"targets\": [\"b:1\"]}]", "expected ',' or ']'"},
	    {"[\n\n {\"targets\": \"a:1\"}]", "PATH:3: \"targets\" must be a list"},
	    {"[{\"targets\": [1]}]", "PATH:1: target 1 is not a HOST:PORT"},
	    {"[{\"targets\": [\"a b\"]}]", "target 1 is not a HOST:PORT"},
	    {"[{\"targets\": [\"a:1\"], \"labels\": []}]", "\"labels\" must be a map"},
	    {"[{\"targets\": [\"a:1\"], \"labels\": {\"a-b\": \"x\"}}]", "label \"a-b\""},
	    {"[{\"targets\": [\"a:1\"], \"labels\": {\"a\": \"x\", \"a\": \"y\"}}]",
	     "PATH:1: duplicate object key"},
	    {"[{\"labels\": {}}]", "PATH:1: \"targets\" must be a list"},
	    {"[{\"targets\": [\"a:1\"], \"job\": \"x\"}]", "unknown key \"job\""},
	    {"[\"a:1\"]", "a group is an object"},
	    {"- targets: [a:1]\n  labels: {__scheme__: ftp}\n", "PATH:1: __scheme__ \"ftp\""},
	    {"- targets: [a:1]\n  labels: {2x: y}\n", "label \"2x\""},
	    {"- targets:\n\t- a:1\n", "PATH:2: "},
	    {"- targets:\n    - a:1\n   - b:2\n", "PATH:3: "},
	    {"- targets: [a:1]\n    labels: {}\n", "PATH:2: "},
	    {"- targets: [a:1]\nlabels: {}\n", "PATH:2: "},
	    {"-targets: [a:1]\n", "PATH:1: expected \"- targets:\""},
	    {"- targets: [a:1\n",
	     "PATH:2: did not find expected ',' or ']' (while parsing a flow sequence on line 1)"},
	    {"- targets: [a:1] # ok\n  labels: {a: b} x\n", "PATH:2: "},
	    {"- targets:\n  labels: {a: b}\n", "PATH:1: targets: expected a list"},
	    {"- targets: [a:1]\n  targets: [b:2]\n", "PATH:2: \"targets\" twice"},
	    {"- targets: [a:1]\n  job: x\n", "PATH:2: unknown key \"job\""},
	    {"- labels: {a: b}\n", "PATH:1: a group without targets"},
	    {"- targets: [a:1]\n  labels:\n    env: !!int 1\n", "PATH:3: expected a string"},
	    {"- targets: [a:1]\n  labels:\n    env: *nowhere\n", "PATH:3: "},
	    {"- targets: [a:1]\n  labels: &l {a: *l}\n", "PATH:2: "},
	    {"- targets: [a:1]\n  labels:\n    env:\n", "PATH:3: expected a string"},
	    {"- targets: [a:1]\n  labels:\n    a: b: c\n", "PATH:3: "},
	    {"- targets: [a:1]\n  labels:\n    a: x\n    a: y\n", "PATH:4: a label named twice"},
	    {"- targets: [a:1]\n  labels: {a: x, a: y}\n", "PATH:2: a label named twice"},
	    {"- targets:\n  - [a:1]\n", "PATH:2: expected a string"},
	    {"- targets:\n  - [::1]:9\n", "PATH:2: "},
	    {"- targets:\n  - 'a:1\n", "PATH:2: "},
	    {"- targets:\n  - \"a\\q\"\n", "PATH:2: "},
	    {"- targets:\n  - 'a:1' x\n", "PATH:2: "},
	    {"- targets:\n  - a:1\n  - b:2\n---\n- targets: [c:3]\n", "PATH:4: expected"},
	};

	(void)state;
	for (size_t i = 0; i < N(cases); i++) {
		struct fleet_targets t = {0};
		char why[512] = "";
		int rc = read_text(cases[i].text, &t, why, sizeof(why));

		if (rc >= 0)
			fail_msg("case %zu (%s): accepted", i, cases[i].text);
		if (!strstr(why, cases[i].want))
			fail_msg("case %zu: \"%s\" lacks \"%s\"", i, why, cases[i].want);
		fleet_targets_free(&t);
	}
}

static void test_unreadable(void **state)
{
	struct fleet_targets t = {0};
	char why[512] = "";

	(void)state;
	assert_int_equal(fleet_file_read("/nonexistent/targets.yml", &t, why, sizeof(why)),
	                 -ENOENT);
	assert_non_null(strstr(why, "cannot read \"/nonexistent/targets.yml\""));
	assert_int_equal(t.n, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_good),
	    cmocka_unit_test(test_bad),
	    cmocka_unit_test(test_unreadable),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
