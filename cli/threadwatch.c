/*
 * threadwatch: the command-line tool. Runs probes now, computes a
 * recommendation, and asks daemons. The subcommands are a table; each
 * lives in its own cli_*.c file.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "opt.h"

struct cli_command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *args;
	const char *summary;
};

static const struct cli_command commands[] = {
    {"run", cli_run,
     "[--quick] [--json] [--timeout DURATION] [--probe-dir DIR]\n"
     "                  [--sched idle|normal] [--nice N] [--cpu quiet|all|CPU] [PROBE...]",
     CLI_SUMMARY_RUN},
    {"recommend", cli_recommend, "[--input FILE|-] [--threads N] [--stack-size SIZE] [--json]",
     CLI_SUMMARY_RECOMMEND},
    {"workloads", cli_workloads,
     "[--json] [--for DURATION] [--by unit|process] [--top N] [--costs FILE|-]",
     CLI_SUMMARY_WORKLOADS},
    {"fleet", cli_fleet, "[--json] [--timeout DURATION] URL... | --file PATH", CLI_SUMMARY_FLEET},
    {"status", cli_status, "[--json] [--timeout DURATION] [URL]", CLI_SUMMARY_STATUS},
    {"detect-sim", cli_detect_sim,
     "[--json] [--hosts N] [--days D] [--noise iid|ar1|bimodal|episodic] [--cv X] [--step X] ...",
     CLI_SUMMARY_DETECT_SIM " (--help: every option)"},
};

static void usage(FILE *f)
{
	fprintf(f, "usage: threadwatch COMMAND [ARGS]\n\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  threadwatch %s %s\n      %s\n", commands[i].name, commands[i].args,
		        commands[i].summary);
	fprintf(f, "\n  threadwatch --help | --version\n"
	           "\nEvery command takes -h or --help; -- ends the options.\n");
}

int main(int argc, char **argv)
{
	static const struct option top[] = {
	    {"help", no_argument, NULL, 'h'},
	    {"version", no_argument, NULL, 256},
	    {0},
	};
	char err[256];
	int c;

	/* "+": the options end at the subcommand, which parses its own */
	while ((c = opt_next(argc, argv, "+:h", top, err, sizeof(err))) != -1) {
		if (c == 'h') {
			usage(stdout);
			return 0;
		}
		if (c == 256) {
			printf("threadwatch %s\n", TW_VERSION);
			return 0;
		}
		fprintf(stderr, "threadwatch: %s\n", err);
		opt_try_help(stderr, "threadwatch");
		return 2;
	}
	if (optind >= argc) {
		fprintf(stderr, "threadwatch: no command given\n");
		opt_try_help(stderr, "threadwatch");
		return 2;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[optind], commands[i].name))
			return commands[i].fn(argc - optind, argv + optind);
	fprintf(stderr, "threadwatch: unknown command \"%s\"\n", argv[optind]);
	opt_try_help(stderr, "threadwatch");
	return 2;
}
