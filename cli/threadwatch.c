/*
 * threadwatch: the command-line tool. Runs probes now, computes a
 * recommendation, and asks daemons. The subcommands are a table; each
 * lives in its own cli_*.c file.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"


struct cli_command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *args;
	const char *summary;
};

static const struct cli_command commands[] = {
    {"run", cli_run, "[--quick] [--json] [PROBE...]",
     "run probes now, each in its own process, and print the results"},
    {"recommend", cli_recommend, "[--input FILE|-] [--threads N] [--stack-size S] [--json]",
     "say whether low thread stacks pay on this host, with the arithmetic"},
    {"fleet", cli_fleet, "[--json] [--timeout S] URL... | --file PATH",
     "ask many threadwatchd daemons at once and print one table"},
    {"detect-sim", cli_detect_sim,
     "[--json] [--hosts N] [--days D] [--noise iid|ar1|bimodal|episodic] [--cv X] [--step X] ...",
     "judge simulated fleets with the daemon's regression detection (--help: every option)"},
};

static void usage(FILE *f)
{
	fprintf(f, "usage: threadwatch COMMAND [ARGS]\n\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  threadwatch %s %s\n      %s\n", commands[i].name, commands[i].args,
		        commands[i].summary);
	fprintf(f, "\n  threadwatch --version\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("threadwatch %s\n", TW_VERSION);
		return 0;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].fn(argc - 1, argv + 1);
	fprintf(stderr, "threadwatch: unknown command \"%s\"\n", argv[1]);
	usage(stderr);
	return 2;
}
