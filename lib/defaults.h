/*
 * defaults: the defaults more than one program states, each once: the
 * daemon's configuration table and the CLI's help and behaviour use these,
 * and tests/unit/test_config.c ties the table's text to them.
 */
#ifndef TW_DEFAULTS_H
#define TW_DEFAULTS_H

/* A macro's value as a string literal, for a table row's default text. */
#define TW_STR_(x) #x
#define TW_STR(x) TW_STR_(x)

/* threadwatchd's HTTP port; `threadwatch fleet HOST` asks it. */
#define TW_DEFAULT_PORT 8437
/* The address it listens on; `threadwatch status` without a URL asks it. */
#define TW_DEFAULT_LISTEN_ADDRESS "127.0.0.1"

/* The workload a recommendation assumes when none is given. */
#define TW_DEFAULT_THREADS 10000
#define TW_DEFAULT_STACK_BYTES 8388608 /* glibc's default: the 8 MiB stack rlimit */

/* When a thread's cost is a problem: the probes' fixes, the
 * recommendation's costs (result.costs) and the alert rules say so when a
 * median passes these. A hand-off to another CPU dearer than this many
 * switches on one CPU... */
#define TW_HANDOFF_PROBLEM_RATIO 4.0
/* ...an idle thread with glibc's stacks holding this much (a huge page
 * holds 2 MiB; a stack on 4 KiB pages holds a few)... */
#define TW_STACK_PROBLEM_BYTES 1048576.0
/* ...two creators at once, each below this share of one creator's rate
 * without glibc's stack cache: together they make fewer than one. */
#define TW_CREATORS_PROBLEM_EFFICIENCY 0.5

#endif
