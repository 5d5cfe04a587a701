/*
 * opt: table-driven command lines on top of getopt_long(3) (see opt.h).
 * getopt reports an unknown, ambiguous or value-less option as '?' or ':'
 * without saying which; this file looks the failing word up again so that
 * the message names it. Long options must be spelled out: getopt_long's
 * abbreviations ("--thread" for "--threads") are refused, so that a script
 * keeps working when an option is added.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "errbuf.h"
#include "opt.h"
#include "units.h"

#define OPT_MAX 64 /* options in one table */

/* The long option whose val is v, or NULL. */
static const struct option *by_val(const struct option *lo, int v)
{
	for (; lo->name; lo++)
		if (lo->val == v)
			return lo;
	return NULL;
}

/* Why getopt refused the long option word ("--name[=value]"). */
static int long_failure(const char *word, const struct option *lo, char *err, size_t errlen)
{
	size_t len = strcspn(word + 2, "=");

	for (; lo->name; lo++)
		if (strlen(lo->name) == len && !strncmp(lo->name, word + 2, len) &&
		    word[2 + len] == '=')
			return errbuf_set(err, errlen, '?', "--%s takes no value", lo->name);
	return errbuf_set(err, errlen, '?', "unknown option \"%.*s\"", (int)len + 2, word);
}

int opt_next(int argc, char **argv, const char *shortopts, const struct option *longopts, char *err,
             size_t errlen)
{
	int prev = optind, c, idx = -1;
	const struct option *o;

	opterr = 0;
	c = getopt_long(argc, argv, shortopts, longopts, &idx);
	if (c == -1)
		return c;
	if (c != '?' && c != ':') {
		/* the word getopt matched: before a separate value, if any */
		const char *word = argv[optind - (optarg && optarg == argv[optind - 1] ? 2 : 1)];

		if (idx < 0 || strcspn(word + 2, "=") == strlen(longopts[idx].name))
			return c;
		return errbuf_set(err, errlen, '?', "unknown option \"%.*s\"",
		                  (int)strcspn(word, "="), word);
	}
	/* getopt has moved past the word it refused (with its value, if any) */
	if (optopt && optopt < 256 && !by_val(longopts, optopt)) {
		if (c == ':')
			return errbuf_set(err, errlen, ':', "-%c needs a value", optopt);
		return errbuf_set(err, errlen, '?', "unknown option \"-%c\"", optopt);
	}
	o = optopt ? by_val(longopts, optopt) : NULL;
	if (c == ':' && o)
		return errbuf_set(err, errlen, ':', "--%s needs a value", o->name);
	for (int i = optind - 1; i >= prev && i > 0; i--)
		if (!strncmp(argv[i], "--", 2) && argv[i][2])
			return long_failure(argv[i], longopts, err, errlen);
	return errbuf_set(err, errlen, '?', "bad option \"%s\"", argv[optind - 1]);
}

/* The getopt tables for t: short options "+:hx:" style and long options
 * whose val is 256 + the row (the short letter when there is one). */
static void build(const struct opt *t, size_t n, char *shortopts, struct option *lo)
{
	size_t s = 0;

	shortopts[s++] = ':';
	for (size_t i = 0; i < n; i++) {
		lo[i] = (struct option){t[i].name, t[i].arg ? required_argument : no_argument, NULL,
		                        t[i].short_name ? t[i].short_name : 256 + (int)i};
		if (t[i].short_name) {
			shortopts[s++] = t[i].short_name;
			if (t[i].arg)
				shortopts[s++] = ':';
		}
	}
	lo[n] = (struct option){0};
	shortopts[s] = '\0';
}

static const struct opt *row_of(const struct opt *t, size_t n, int c)
{
	for (size_t i = 0; i < n; i++)
		if (c == (t[i].short_name ? t[i].short_name : 256 + (int)i))
			return &t[i];
	return NULL;
}

int opt_parse(int argc, char **argv, const struct opt *t, size_t n, void *ctx, char *err,
              size_t errlen)
{
	struct option lo[OPT_MAX + 1];
	char shortopts[2 * OPT_MAX + 2];
	int c;

	if (n > OPT_MAX)
		return errbuf_set(err, errlen, -EINVAL, "too many options");
	build(t, n, shortopts, lo);
	optind = 0; /* also resets getopt's state between two parses */
	while ((c = opt_next(argc, argv, shortopts, lo, err, errlen)) != -1) {
		const struct opt *o = row_of(t, n, c == ':' ? optopt : c);
		char why[256] = "";

		if (c == ':' && o && o->arg)
			return errbuf_set(err, errlen, -EINVAL, "--%s needs %s", o->name, o->arg);
		if (c == '?' || c == ':' || !o)
			return -EINVAL;
		if (!o->set) {
			*(int *)((char *)ctx + o->off) = 1;
			continue;
		}
		if (o->set((char *)ctx + o->off, o->arg ? optarg : NULL, why, sizeof(why)) < 0) {
			if (why[0])
				return errbuf_set(err, errlen, -EINVAL, "%s", why);
			return errbuf_set(err, errlen, -EINVAL, "invalid value \"%s\" for --%s: %s",
			                  optarg ? optarg : "", o->name, o->help);
		}
	}
	return optind;
}

void opt_usage(FILE *f, const struct opt *t, size_t n)
{
	size_t width = 0;

	for (size_t i = 0; i < n; i++) {
		size_t w = strlen(t[i].name) + (t[i].arg ? strlen(t[i].arg) + 1 : 0);

		if (w > width)
			width = w;
	}
	for (size_t i = 0; i < n; i++) {
		char left[96];

		snprintf(left, sizeof(left), "--%s%s%s", t[i].name, t[i].arg ? " " : "",
		         t[i].arg ? t[i].arg : "");
		/* a line starts with "  --NAME" when there is no short name,
		 * which is what the man page check reads */
		if (t[i].short_name)
			fprintf(f, "  -%c, %-*s  %s\n", t[i].short_name, (int)width + 2, left,
			        t[i].help);
		else
			fprintf(f, "  %-*s  %s\n", (int)width + 6, left, t[i].help);
	}
}

/* Decimal digits up to max: strtoull alone would take "-3" (as a huge
 * number), " 3" and "+3". */
static int parse_u64(const char *v, uint64_t max, uint64_t *out)
{
	unsigned long long u;
	char *end;

	if (*v < '0' || *v > '9')
		return -EINVAL;
	errno = 0;
	u = strtoull(v, &end, 10);
	if (*end)
		return -EINVAL;
	if (errno || u > max)
		return -ERANGE;
	*out = u;
	return 0;
}

int opt_set_uint(void *field, const char *v, char *why, size_t wlen)
{
	uint64_t u;
	int rc = parse_u64(v, UINT_MAX, &u);

	(void)why, (void)wlen;
	if (rc == 0)
		*(unsigned *)field = (unsigned)u;
	return rc;
}

int opt_set_u64(void *field, const char *v, char *why, size_t wlen)
{
	(void)why, (void)wlen;
	return parse_u64(v, UINT64_MAX, field);
}

int opt_set_real(void *field, const char *v, char *why, size_t wlen)
{
	char *end;
	double d;

	(void)why, (void)wlen;
	errno = 0;
	d = strtod(v, &end);
	if (end == v || errno)
		return -EINVAL;
	if (*end == '%') {
		d /= 100;
		end++;
	}
	if (*end || !isfinite(d))
		return -EINVAL;
	*(double *)field = d;
	return 0;
}

int opt_set_duration(void *field, const char *v, char *why, size_t wlen)
{
	(void)why, (void)wlen;
	return units_parse_duration(v, field);
}

void opt_try_help(FILE *f, const char *prog)
{
	fprintf(f, "Try '%s --help' for more information.\n", prog);
}
