/*
 * cli: the subcommands of the threadwatch command. Each takes the arguments
 * after its name (argv[0] is the subcommand) and returns the exit code:
 * 0 success, 1 a failure it reports, 2 bad usage or bad input, and
 * CLI_EXIT_PROBE_FAILED when the answer was given but a probe it rests on
 * failed in its latest run (`recommend`, `fleet`).
 */
#ifndef TW_CLI_H
#define TW_CLI_H

#define CLI_EXIT_PROBE_FAILED 3

/* Each command's one-line summary, the master copy: the top-level help
 * lists it, and the command's own --help opens with it. */
#define CLI_SUMMARY_RUN "Runs the probes now, each in its own process under a time limit."
#define CLI_SUMMARY_RECOMMEND                                                                      \
	"Says whether low (MAP_32BIT) thread stacks pay on a host, with the arithmetic."
#define CLI_SUMMARY_FLEET "Asks many threadwatchd daemons at once and prints one table."
#define CLI_SUMMARY_STATUS                                                                         \
	"Asks one threadwatchd what it is doing: its cycle, its store, its verdict."
#define CLI_SUMMARY_WORKLOADS "Shows which services on this host pay for threads, and how much."
#define CLI_SUMMARY_DETECT_SIM "Judges simulated fleets with the daemon's regression detection."

int cli_run(int argc, char **argv);
int cli_recommend(int argc, char **argv);

/* Runs the built-in probes now and builds the recommendation inputs from
 * them (for `recommend` without --input). 0, -ENOENT (no probes) or -EINTR. */
struct json_t;
int cli_run_inputs(int quick, const char *progress, struct json_t **inputs);
/* Reads recommendation inputs from path ("-": standard input); the output
 * of `threadwatch run --json` is unwrapped to its recommendation.inputs.
 * NULL with one message on stderr, which opens with cmd. */
struct json_t *cli_inputs_read(const char *path, const char *cmd);
int cli_fleet(int argc, char **argv);
/* `status` exits 4 (no answer) and 5 (a bad answer) too (cli_status.c). */
int cli_status(int argc, char **argv);
/* The latest recommendation of one threadwatchd, asked as `fleet` asks
 * (URL or HOST:PORT; a token only over https): 0 with a new reference in
 * *out, or -errno with why (-ENOENT: none yet). */
int fleet_recommendation(const char *url, const char *token, double timeout_s, struct json_t **out,
                         char *why, size_t wlen);
/* Every string of v (values, not keys), in place, made printable as fleet
 * makes a daemon's words (fleet_printable(): control and bidirectional
 * characters, the newline too, become '?'), so that a text composed of
 * them (`recommend --from`) holds only its own line breaks. */
void fleet_printable_json(struct json_t *v);
int cli_workloads(int argc, char **argv);
int cli_detect_sim(int argc, char **argv);

#endif
