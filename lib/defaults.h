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

/* The workload a recommendation assumes when none is given. */
#define TW_DEFAULT_THREADS 10000
#define TW_DEFAULT_STACK_BYTES 8388608 /* glibc's default: the 8 MiB stack rlimit */

#endif
