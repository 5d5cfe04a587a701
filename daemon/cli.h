/*
 * cli: the subcommands of the threadwatch command. Each takes the arguments
 * after its name (argv[0] is the subcommand) and returns the exit code:
 * 0 success, 1 a failure it reports, 2 bad usage or bad input.
 */
#ifndef TW_CLI_H
#define TW_CLI_H

int cli_run(int argc, char **argv);
int cli_recommend(int argc, char **argv);
int cli_fleet(int argc, char **argv);

#endif
