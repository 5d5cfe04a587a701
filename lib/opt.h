/*
 * opt: command lines through getopt_long(3). A program either describes
 * its options as a table (opt_parse, opt_usage; typed setters write a
 * number or a duration to a field of the context) or builds its own struct
 * option array and reads it with opt_next; both turn getopt's failures into
 * one message that names the option ("unknown option \"--frob\"",
 * "--timeout needs S", "invalid value \"x\" for --timeout: ...").
 */
#ifndef TW_OPT_H
#define TW_OPT_H

#include <getopt.h>
#include <stddef.h>
#include <stdio.h>

/* One option of a table. */
struct opt {
	const char *name; /* the long name, without "--" */
	char short_name;  /* 0: none */
	const char *arg;  /* the value's name in usage ("S", "FILE"); NULL: takes none */
	const char *help;
	/* Called with ctx + off (off 0: the whole ctx) and the value (NULL
	 * when the option takes none). 0, or < 0 with a reason in why (left
	 * empty: the generic "invalid value"). NULL: the option is a flag that
	 * sets the int at ctx + off to 1. */
	int (*set)(void *ctx, const char *value, char *why, size_t whylen);
	size_t off;
};

/* Setters for a row whose off is a field of ctx (offsetof): an unsigned
 * int or a uint64_t (decimal digits only, no sign), a double (a finite
 * number, or a percentage: "5%" is 0.05) and a double of seconds
 * (units_parse_duration: "90m", "6h", "1d", "30s", "45"). They leave why
 * empty, so the message is "invalid value ... for --NAME: HELP". */
int opt_set_uint(void *field, const char *value, char *why, size_t whylen);
int opt_set_u64(void *field, const char *value, char *why, size_t whylen);
int opt_set_real(void *field, const char *value, char *why, size_t whylen);
int opt_set_duration(void *field, const char *value, char *why, size_t whylen);

/* getopt_long(argc, argv, shortopts, longopts) with getopt's own messages
 * off. Returns the option's val, -1 at the end of the options (optind is
 * then the first operand), ':' for a missing value (optopt is the
 * option's val) or '?' for any other failure, with the reason in err.
 * shortopts must start with ':' (or "+:") so that a missing value is told
 * apart. A long option's val must be >= 256 unless it is its short
 * letter. */
int opt_next(int argc, char **argv, const char *shortopts, const struct option *longopts, char *err,
             size_t errlen);

/* Parses argv[1..] against the table from the start (optind is reset),
 * calling each option's set. Operands may come before, between and after
 * options; "--" ends the options. Returns the index of the first operand
 * (argv is permuted so that the operands come last), or -EINVAL with the
 * reason in err. */
int opt_parse(int argc, char **argv, const struct opt *t, size_t n, void *ctx, char *err,
              size_t errlen);

/* The table as usage lines: "  -h, --help           show this help". */
void opt_usage(FILE *f, const struct opt *t, size_t n);

/* What follows a usage error's one line, instead of the whole usage:
 * "Try 'PROG --help' for more information." */
void opt_try_help(FILE *f, const char *prog);

#endif
