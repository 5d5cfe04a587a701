/*
 * configp: what the configuration's files share (config.c: the key table,
 * the file parser, the checks between keys and the output; config_types.c:
 * each value type's parser, printer and range). Private to them.
 */
#ifndef TW_CONFIGP_H
#define TW_CONFIGP_H

#include <stddef.h>

#include "config.h"

#define SPAN_MAX_S (365 * 86400.0) /* the longest interval */

enum cfg_type_id {
	T_INT,
	T_DOUBLE,
	T_STRING,
	T_BOOL,
	T_DURATION,
	T_SIZE,
	T_PATH,
	T_ADDRESS,
	T_SPAN,
	T_CHOICE,
	T_CPU,
	T_PROBES,
};

enum cfg_flags {
	F_RESTART = 1 << 0,  /* a change takes effect on restart, not on SIGHUP */
	F_SECRET = 1 << 1,   /* never printed */
	F_EMPTY_OK = 1 << 2, /* the empty value is allowed (and means "off") */
	F_BUILD = 1 << 3,    /* the default depends on the build's PREFIX */
};

struct cfg_key {
	const char *name;
	enum cfg_type_id type;
	double min, max; /* range; for strings the length */
	const char *def; /* default as text, parsed like any value */
	const char *help;
	size_t offset;
	unsigned flags;
	const char *const *choices; /* T_CHOICE: NULL-terminated */
};

typedef int (*parse_fn)(const struct cfg_key *k, const char *text, void *f, char *why, size_t wlen);
typedef void (*format_fn)(const struct cfg_key *k, const void *f, char *buf, size_t len);

/* One value type: its names, its storage and its three functions. */
struct cfg_type {
	const char *name;    /* in --help and the docs */
	const char *example; /* shown as the flag's argument */
	size_t size;
	int is_string;
	parse_fn parse;
	format_fn format;
	void (*range)(const struct cfg_key *k, char *buf, size_t len); /* NULL: none */
};

/* Indexed by enum cfg_type_id (config_types.c). */
extern const struct cfg_type config_types[];

/* A value as it may appear in a message: printable, at most ~48 bytes. */
const char *config_shown(const char *s, char *buf, size_t len);
/* s without leading and trailing white space (in place). */
char *config_trim(char *s);

#endif
