/*
 * test_opt: table-driven command lines (lib/opt.c) over glibc's
 * getopt_long: values attached and separate, operands around the options,
 * "--" ending them, -h, and a message naming the option for each way a
 * command line can be wrong (unknown, abbreviated, missing or unwanted
 * value, a value the setter refuses), and the typed setters (unsigned,
 * uint64_t, a number or percentage, a duration) on a field at ctx + off.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "opt.h"

struct args {
	int quick, help;
	const char *dir;
	long n;
};

static int set_quick(void *ctx, const char *v, char *why, size_t wlen)
{
	(void)v, (void)why, (void)wlen;
	((struct args *)ctx)->quick++;
	return 0;
}

static int set_dir(void *ctx, const char *v, char *why, size_t wlen)
{
	(void)why, (void)wlen;
	((struct args *)ctx)->dir = v;
	return 0;
}

static int set_n(void *ctx, const char *v, char *why, size_t wlen)
{
	char *end;
	long n = strtol(v, &end, 10);

	if (*end || end == v)
		return -EINVAL;
	if (n > 99) {
		snprintf(why, wlen, "--threads: %ld is too many", n);
		return -ERANGE;
	}
	((struct args *)ctx)->n = n;
	return 0;
}

static const struct opt table[] = {
    {"quick", 0, NULL, "short", set_quick, 0},
    {"probe-dir", 0, "DIR", "where", set_dir, 0},
    {"threads", 't', "N", "how many", set_n, 0},
    {"help", 'h', NULL, "show this help", NULL, offsetof(struct args, help)}, /* a flag */
};

/* Parses the words (argv[0] is the command) into *a; returns opt_parse's
 * result with the message in err. argv is rebuilt each time since getopt
 * permutes it. */
static int parse(struct args *a, char *err, char **argv_out, const char *const *words)
{
	static char *argv[16];
	int argc = 0, r;

	memset(a, 0, sizeof(*a));
	argv[argc++] = (char *)"cmd";
	for (; *words; words++)
		argv[argc++] = (char *)(uintptr_t)*words;
	argv[argc] = NULL;
	err[0] = '\0';
	r = opt_parse(argc, argv, table, sizeof(table) / sizeof(table[0]), a, err, 256);
	if (argv_out)
		memcpy(argv_out, argv, sizeof(argv));
	return r;
}

#define PARSE(a, err, ...) parse(a, err, NULL, (const char *const[]){__VA_ARGS__, NULL})

static void test_values(void **state)
{
	struct args a;
	char err[256];

	(void)state;
	assert_int_equal(PARSE(&a, err, "--probe-dir", "/x", "--threads=5", "--quick"), 5);
	assert_string_equal(a.dir, "/x");
	assert_int_equal(a.n, 5);
	assert_int_equal(a.quick, 1);
	assert_int_equal(PARSE(&a, err, "-t", "7", "--probe-dir=", "-t9"), 5);
	assert_int_equal(a.n, 9);
	assert_string_equal(a.dir, "");
	/* the value may itself start with a dash */
	assert_int_equal(PARSE(&a, err, "--probe-dir", "--quick"), 3);
	assert_string_equal(a.dir, "--quick");
	assert_int_equal(a.quick, 0);
}

static void test_operands(void **state)
{
	char *argv[16], err[256];
	struct args a;
	int first;

	(void)state;
	first = parse(&a, err, argv, (const char *const[]){"one", "--quick", "two", NULL});
	assert_int_equal(a.quick, 1);
	assert_int_equal(first, 2);
	/* getopt moved the operands behind the options, in their order */
	assert_string_equal(argv[first], "one");
	assert_string_equal(argv[first + 1], "two");
	/* "--" ends the options: what follows is an operand even with a dash */
	first = parse(&a, err, argv,
	              (const char *const[]){"--quick", "--", "--help", "-x", "--", NULL});
	assert_int_equal(a.help, 0);
	assert_int_equal(first, 3);
	assert_string_equal(argv[3], "--help");
	assert_string_equal(argv[4], "-x");
	assert_string_equal(argv[5], "--");
	/* a lone "-" is an operand (stdin, by convention) */
	first = parse(&a, err, argv, (const char *const[]){"-", NULL});
	assert_int_equal(first, 1);
	/* nothing at all */
	assert_int_equal(parse(&a, err, NULL, (const char *const[]){NULL}), 1);
}

static void test_help(void **state)
{
	struct args a;
	char err[256];

	(void)state;
	assert_int_equal(PARSE(&a, err, "-h"), 2);
	assert_int_equal(a.help, 1);
	assert_int_equal(PARSE(&a, err, "--help"), 2);
	assert_int_equal(a.help, 1);
}

static void test_errors(void **state)
{
	static const struct {
		const char *words[4];
		const char *message;
	} cases[] = {
	    {{"--frob"}, "unknown option \"--frob\""},
	    {{"--frob=1"}, "unknown option \"--frob\""},
	    {{"-x"}, "unknown option \"-x\""},
	    {{"--thread", "5"}, "unknown option \"--thread\""}, /* no abbreviations */
	    {{"--qu"}, "unknown option \"--qu\""},
	    {{"--probe-dir"}, "--probe-dir needs DIR"},
	    {{"--quick", "--threads"}, "--threads needs N"},
	    {{"-t"}, "--threads needs N"},
	    {{"--quick=yes"}, "--quick takes no value"},
	    {{"--help=1"}, "--help takes no value"},
	    {{"--threads", "abc"}, "invalid value \"abc\" for --threads: how many"},
	    {{"-t", "100"}, "--threads: 100 is too many"},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct args a;
		char err[256];
		int r = parse(&a, err, NULL, cases[i].words);

		if (r != -EINVAL || strcmp(err, cases[i].message))
			fail_msg("case %zu (%s): %d \"%s\", want \"%s\"", i, cases[i].words[0], r,
			         err, cases[i].message);
	}
}

static void test_usage(void **state)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	(void)state;
	assert_non_null(f);
	opt_usage(f, table, sizeof(table) / sizeof(table[0]));
	fclose(f);
	/* one line per option; a line starts with "  --NAME" unless there is
	 * a short name, and the help texts line up */
	assert_string_equal(text, "  --quick              short\n"
	                          "  --probe-dir DIR      where\n"
	                          "  -t, --threads N      how many\n"
	                          "  -h, --help           show this help\n");
	free(text);
}

/* The typed setters, each on a field of its own (off is its offset). */
struct typed {
	int flag;
	unsigned u;
	uint64_t big;
	double real, secs;
};

static const struct opt typed_table[] = {
    {"flag", 0, NULL, "a flag", NULL, offsetof(struct typed, flag)},
    {"u", 0, "N", "a count", opt_set_uint, offsetof(struct typed, u)},
    {"big", 0, "N", "a seed", opt_set_u64, offsetof(struct typed, big)},
    {"real", 0, "X", "a share", opt_set_real, offsetof(struct typed, real)},
    {"secs", 0, "DURATION", "a time", opt_set_duration, offsetof(struct typed, secs)},
};

/* --NAME VALUE into a zeroed *t; opt_parse's result, the message in err. */
static int parse_typed(struct typed *t, const char *name, const char *value, char *err)
{
	char opt[32];
	char *argv[] = {(char *)"cmd", opt, (char *)(uintptr_t)value, NULL};

	snprintf(opt, sizeof(opt), "--%s", name);
	memset(t, 0, sizeof(*t));
	err[0] = '\0';
	return opt_parse(3, argv, typed_table, sizeof(typed_table) / sizeof(typed_table[0]), t, err,
	                 256);
}

static void test_typed(void **state)
{
	char *argv[] = {(char *)"cmd",    (char *)"--u", (char *)"42",     (char *)"--big=7",
	                (char *)"--real", (char *)"5%",  (char *)"--flag", (char *)"--secs",
	                (char *)"90m",    NULL};
	struct typed t = {0};
	char err[256];

	(void)state;
	/* each setter writes its own field, and only that */
	assert_int_equal(opt_parse(9, argv, typed_table, 5, &t, err, sizeof(err)), 9);
	assert_int_equal(t.flag, 1);
	assert_int_equal(t.u, 42);
	assert_true(t.big == 7);
	assert_true(t.real == 0.05);
	assert_true(t.secs == 5400);

	assert_int_equal(parse_typed(&t, "u", "4294967295", err), 3);
	assert_int_equal(t.u, 4294967295u);
	assert_int_equal(parse_typed(&t, "u", "0", err), 3);
	assert_int_equal(t.u, 0);
	assert_int_equal(parse_typed(&t, "big", "18446744073709551615", err), 3);
	assert_true(t.big == UINT64_MAX);
	assert_int_equal(parse_typed(&t, "real", "0.25", err), 3);
	assert_true(t.real == 0.25);
	assert_int_equal(parse_typed(&t, "real", "-10%", err), 3);
	assert_true(t.real == -0.1);
	assert_int_equal(parse_typed(&t, "real", "1e-3", err), 3);
	assert_true(t.real == 0.001);
	/* the durations detect-sim's --every documents: 6h, 90m, 1d, 30s, seconds */
	static const struct {
		const char *text;
		double seconds;
	} durations[] = {{"6h", 21600}, {"90m", 5400},  {"1d", 86400},  {"30s", 30},
	                 {"45", 45},    {"1.5h", 5400}, {"1h30m", 5400}};
	for (size_t i = 0; i < sizeof(durations) / sizeof(durations[0]); i++) {
		assert_int_equal(parse_typed(&t, "secs", durations[i].text, err), 3);
		if (t.secs != durations[i].seconds)
			fail_msg("--secs %s: %g s, want %g", durations[i].text, t.secs,
			         durations[i].seconds);
	}
}

static void test_typed_errors(void **state)
{
	static const struct {
		const char *name, *value, *help;
	} bad[] = {
	    {"u", "-3", "a count"}, /* strtoull would wrap it */
	    {"u", "+3", "a count"},
	    {"u", " 3", "a count"},
	    {"u", "3x", "a count"},
	    {"u", "", "a count"},
	    {"u", "1.5", "a count"},
	    {"u", "4294967296", "a count"}, /* UINT_MAX + 1 */
	    {"big", "18446744073709551616", "a seed"},
	    {"big", "-1", "a seed"},
	    {"real", "nan", "a share"},
	    {"real", "inf", "a share"},
	    {"real", "1e999", "a share"},
	    {"real", "5%%", "a share"},
	    {"real", "x", "a share"},
	    {"real", "", "a share"},
	    {"real", "5 %", "a share"},
	    {"secs", "6x", "a time"},
	    {"secs", "-1h", "a time"},
	    {"secs", "", "a time"},
	    {"secs", "h", "a time"},
	    {"secs", "1h30", "a time"}, /* a bare number only alone */
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct typed t;
		char err[256], want[256];
		int r = parse_typed(&t, bad[i].name, bad[i].value, err);

		snprintf(want, sizeof(want), "invalid value \"%s\" for --%s: %s", bad[i].value,
		         bad[i].name, bad[i].help);
		if (r != -EINVAL || strcmp(err, want))
			fail_msg("--%s \"%s\": %d \"%s\", want \"%s\"", bad[i].name, bad[i].value,
			         r, err, want);
		/* a refused value leaves the field alone */
		assert_int_equal(t.u, 0);
		assert_true(t.big == 0 && t.real == 0 && t.secs == 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_values),       cmocka_unit_test(test_operands),
	    cmocka_unit_test(test_help),         cmocka_unit_test(test_errors),
	    cmocka_unit_test(test_usage),        cmocka_unit_test(test_typed),
	    cmocka_unit_test(test_typed_errors),
	};

	return cmocka_run_group_tests_name("opt", tests, NULL, NULL);
}
