/*
 * config_types: the configuration's value types (see configp.h): how each
 * parses a value, prints it back and states its range for the docs.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>
#include "catalog.h"
#include "config.h"
#include "configp.h"
#include "errbuf.h"
#include "protocol.h"
#include "runner.h"
#include "units.h"
#include "xmalloc.h"

/* --- the value types ------------------------------------------------------- */

static int parse_int(const struct cfg_key *k, const char *text, void *f, char *why, size_t wlen)
{
	char *end, b[64];
	long long v;

	errno = 0;
	v = strtoll(text, &end, 10);
	if (!*text || *end || errno || isspace((unsigned char)*text)) {
		errbuf_set(why, wlen, 0, "\"%s\" is not an integer",
		           config_shown(text, b, sizeof(b)));
		return -EINVAL;
	}
	if (v < k->min || v > k->max) {
		errbuf_set(why, wlen, 0, "%lld is out of range %.0f..%.0f", v, k->min, k->max);
		return -ERANGE;
	}
	*(int *)f = (int)v;
	return 0;
}

static void format_int(const struct cfg_key *k, const void *f, char *buf, size_t len)
{
	(void)k;
	snprintf(buf, len, "%d", *(const int *)f);
}

static int parse_double(const struct cfg_key *k, const char *text, void *f, char *why, size_t wlen)
{
	char *end, b[64];
	double v;

	errno = 0;
	v = strtod(text, &end);
	if (!*text || *end || errno || !isfinite(v) || isspace((unsigned char)*text) ||
	    strpbrk(text, "xXpP")) {
		errbuf_set(why, wlen, 0, "\"%s\" is not a number",
		           config_shown(text, b, sizeof(b)));
		return -EINVAL;
	}
	if (v < k->min || v > k->max) {
		errbuf_set(why, wlen, 0, "%g is out of range %g..%g", v, k->min, k->max);
		return -ERANGE;
	}
	*(double *)f = v;
	return 0;
}

static void format_double(const struct cfg_key *k, const void *f, char *buf, size_t len)
{
	(void)k;
	/* 10, not 1e+01; an exponent only where plain digits cannot say it */
	units_format_number(*(const double *)f, "", 0, buf, len);
}

static int set_string(const struct cfg_key *k, const char *text, void *f)
{
	(void)k;
	free(*(char **)f);
	*(char **)f = xstrdup(text);
	return 0;
}

static int parse_string(const struct cfg_key *k, const char *text, void *f, char *why, size_t wlen)
{
	size_t n = strlen(text);

	if (!n && (k->flags & F_EMPTY_OK))
		return set_string(k, text, f);
	if (n < k->min || n > k->max) {
		errbuf_set(why, wlen, 0, "must be %.0f to %.0f characters long, not %zu", k->min,
		           k->max, n);
		return -ERANGE;
	}
	for (const char *p = text; *p; p++) {
		int bad =
		    (k->flags & F_SECRET) ? (*p < 0x21 || *p > 0x7e) : iscntrl((unsigned char)*p);

		if (bad) {
			errbuf_set(why, wlen, 0,
			           "contains a character that is not allowed (byte %zu)",
			           (size_t)(p - text) + 1);
			return -EINVAL;
		}
	}
	return set_string(k, text, f);
}

static void format_string(const struct cfg_key *k, const void *f, char *buf, size_t len)
{
	(void)k;
	snprintf(buf, len, "%s", *(char *const *)f);
}

static int parse_path(const struct cfg_key *k, const char *text, void *f, char *why, size_t wlen)
{
	if (!*text && !(k->flags & F_EMPTY_OK)) {
		errbuf_set(why, wlen, 0, "must not be empty");
		return -EINVAL;
	}
	if (strlen(text) >= PATH_MAX) {
		errbuf_set(why, wlen, 0, "is longer than %d bytes", PATH_MAX - 1);
		return -ENAMETOOLONG;
	}
	for (const char *p = text; *p; p++)
		if (iscntrl((unsigned char)*p)) {
			errbuf_set(why, wlen, 0, "contains a control character");
			return -EINVAL;
		}
	return set_string(k, text, f);
}

static int parse_bool(const struct cfg_key *k, const char *text, void *f, char *why, size_t wlen)
{
	static const char *const yes[] = {"yes", "true", "on", "1"}, *const no[] = {"no", "false",
	                                                                            "off", "0"};
	char b[64];

	(void)k;
	for (size_t i = 0; i < 4; i++) {
		if (!strcasecmp(text, yes[i])) {
			*(int *)f = 1;
			return 0;
		}
		if (!strcasecmp(text, no[i])) {
			*(int *)f = 0;
			return 0;
		}
	}
	errbuf_set(why, wlen, 0, "\"%s\" is not a boolean (yes/no, true/false, on/off, 1/0)",
	           config_shown(text, b, sizeof(b)));
	return -EINVAL;
}

static void format_bool(const struct cfg_key *k, const void *f, char *buf, size_t len)
{
	(void)k;
	snprintf(buf, len, "%s", *(const int *)f ? "yes" : "no");
}

static int parse_duration(const struct cfg_key *k, const char *text, void *f, char *why,
                          size_t wlen)
{
	char b[64], lo[32], hi[32];
	double v;

	if (units_parse_duration(text, &v) < 0) {
		errbuf_set(why, wlen, 0,
		           "\"%s\" is not a duration (such as 90s, 15m, 6h, 1d, 1h30m)",
		           config_shown(text, b, sizeof(b)));
		return -EINVAL;
	}
	if (v < k->min || v > k->max) {
		units_format_duration(k->min, lo, sizeof(lo));
		units_format_duration(k->max, hi, sizeof(hi));
		errbuf_set(why, wlen, 0, "%s is out of range %s..%s",
		           config_shown(text, b, sizeof(b)), lo, hi);
		return -ERANGE;
	}
	*(double *)f = v;
	return 0;
}

static void format_duration_field(const struct cfg_key *k, const void *f, char *buf, size_t len)
{
	(void)k;
	units_format_duration(*(const double *)f, buf, len);
}

static int parse_size(const struct cfg_key *k, const char *text, void *f, char *why, size_t wlen)
{
	char b[64], lo[32], hi[32];
	uint64_t v;
	int r = units_parse_size(text, &v);

	if (r == -EINVAL) {
		errbuf_set(why, wlen, 0, "\"%s\" is not a size (such as 4096, 256K, 8M, 1G)",
		           config_shown(text, b, sizeof(b)));
		return -EINVAL;
	}
	if (r < 0 || (double)v < k->min || (double)v > k->max) {
		units_format_size(k->min, lo, sizeof(lo));
		units_format_size(k->max, hi, sizeof(hi));
		errbuf_set(why, wlen, 0, "%s is out of range %s..%s",
		           config_shown(text, b, sizeof(b)), lo, hi);
		return -ERANGE;
	}
	*(uint64_t *)f = v;
	return 0;
}

static void format_size_field(const struct cfg_key *k, const void *f, char *buf, size_t len)
{
	(void)k;
	units_format_size((double)*(const uint64_t *)f, buf, len);
}

static int parse_address(const struct cfg_key *k, const char *text, void *f, char *why, size_t wlen)
{
	unsigned char addr[sizeof(struct in6_addr)];
	char b[64];

	if (inet_pton(AF_INET, text, addr) != 1 && inet_pton(AF_INET6, text, addr) != 1) {
		errbuf_set(why, wlen, 0, "\"%s\" is not an IPv4 or IPv6 address",
		           config_shown(text, b, sizeof(b)));
		return -EINVAL;
	}
	return set_string(k, text, f);
}

static int parse_span(const struct cfg_key *k, const char *text, void *f, char *why, size_t wlen)
{
	struct config_span *sp = f;
	size_t n = strlen(text);
	char b[64];
	double v;

	if (n && text[n - 1] == '%') {
		char *num = xstrndup(text, n - 1);
		const char *end = units_decimal(num, &v);
		int bad = !end || *end;

		free(num);
		if (bad) {
			errbuf_set(why, wlen, 0, "\"%s\" is not a percentage",
			           config_shown(text, b, sizeof(b)));
			return -EINVAL;
		}
		if (v < k->min || v > k->max) {
			errbuf_set(why, wlen, 0, "%s is out of range %.0f%%..%.0f%%",
			           config_shown(text, b, sizeof(b)), k->min, k->max);
			return -ERANGE;
		}
		sp->is_percent = 1;
		sp->value = round(v * 1e6) / 1e6;
		return 0;
	}
	if (units_parse_duration(text, &v) < 0) {
		errbuf_set(why, wlen, 0,
		           "\"%s\" is neither a percentage (10%%) nor a duration (30m)",
		           config_shown(text, b, sizeof(b)));
		return -EINVAL;
	}
	if (v > SPAN_MAX_S) {
		errbuf_set(why, wlen, 0, "%s is longer than 365d",
		           config_shown(text, b, sizeof(b)));
		return -ERANGE;
	}
	sp->is_percent = 0;
	sp->value = v;
	return 0;
}

static void format_span(const struct cfg_key *k, const void *f, char *buf, size_t len)
{
	const struct config_span *sp = f;

	(void)k;
	if (sp->is_percent)
		units_format_number(sp->value, "%", 0, buf, len);
	else
		units_format_duration(sp->value, buf, len);
}

static int parse_choice(const struct cfg_key *k, const char *text, void *f, char *why, size_t wlen)
{
	char b[64];

	for (int i = 0; k->choices[i]; i++)
		if (!strcmp(text, k->choices[i])) {
			*(int *)f = i;
			return 0;
		}
	errbuf_set(why, wlen, 0, "\"%s\" is not one of: ", config_shown(text, b, sizeof(b)));
	for (int i = 0; k->choices[i]; i++)
		errbuf_set(why + strlen(why), wlen - strlen(why), 0, "%s%s", i ? ", " : "",
		           k->choices[i]);
	return -EINVAL;
}

static void format_choice(const struct cfg_key *k, const void *f, char *buf, size_t len)
{
	snprintf(buf, len, "%s", k->choices[*(const int *)f]);
}

static int parse_cpu(const struct cfg_key *k, const char *text, void *f, char *why, size_t wlen)
{
	char b[64];

	(void)k;
	if (runner_cpu_parse(text, f) < 0) {
		errbuf_set(why, wlen, 0, "\"%s\" is not quiet, all or a CPU number 0..%d",
		           config_shown(text, b, sizeof(b)), RUNNER_CPU_MAX);
		return -EINVAL;
	}
	return 0;
}

static void format_cpu(const struct cfg_key *k, const void *f, char *buf, size_t len)
{
	(void)k;
	runner_cpu_format(f, buf, len);
}

/* One name of probes_disabled: a built-in probe, or PROBE.ARM with an arm
 * it may skip. */
static int disabled_name_ok(const char *name)
{
	const char *dot = strchr(name, '.');
	char probe[PROTOCOL_MAX_NAME + 1];

	if (!dot)
		return catalog_probe_find(name) != NULL;
	snprintf(probe, sizeof(probe), "%.*s", (int)(dot - name), name);
	return catalog_arm_known(catalog_probe_find(probe), dot + 1);
}

static void range_probes(const struct cfg_key *k, char *buf, size_t len);

/* probes_disabled: names separated by commas or white space, kept as
 * "a, b" (each checked against the probe catalogue). */
static int parse_probes(const struct cfg_key *k, const char *text, void *f, char *why, size_t wlen)
{
	char *copy = xstrdup(text), *save = NULL, *out = xstrdup(""), *next, b[64], names[256];
	int r = 0;

	for (char *t = strtok_r(copy, ", \t", &save); t; t = strtok_r(NULL, ", \t", &save)) {
		if (!disabled_name_ok(t)) {
			range_probes(k, names, sizeof(names));
			errbuf_set(why, wlen, 0, "\"%s\" is not a built-in probe or arm (%s)",
			           config_shown(t, b, sizeof(b)), names);
			r = -EINVAL;
			break;
		}
		xasprintf(&next, "%s%s%s", out, *out ? ", " : "", t);
		free(out);
		out = next;
	}
	if (r == 0)
		set_string(k, out, f);
	free(out);
	free(copy);
	return r;
}

/* --- the value types' ranges, as text for the docs -------------------------- */

static void range_int(const struct cfg_key *k, char *buf, size_t len)
{
	snprintf(buf, len, "%.0f..%.0f", k->min, k->max);
}

static void range_double(const struct cfg_key *k, char *buf, size_t len)
{
	snprintf(buf, len, "%g..%g", k->min, k->max);
}

static void range_duration(const struct cfg_key *k, char *buf, size_t len)
{
	char lo[32], hi[32];

	units_format_duration(k->min, lo, sizeof(lo));
	units_format_duration(k->max, hi, sizeof(hi));
	snprintf(buf, len, "%s..%s", lo, hi);
}

static void range_size(const struct cfg_key *k, char *buf, size_t len)
{
	char lo[32], hi[32];

	units_format_size(k->min, lo, sizeof(lo));
	units_format_size(k->max, hi, sizeof(hi));
	snprintf(buf, len, "%s..%s", lo, hi);
}

static void range_span(const struct cfg_key *k, char *buf, size_t len)
{
	snprintf(buf, len, "%.0f%%..%.0f%%, or a duration up to interval", k->min, k->max);
}

static void range_string(const struct cfg_key *k, char *buf, size_t len)
{
	snprintf(buf, len, "%.0f..%.0f characters", k->min, k->max);
}

static void range_choice(const struct cfg_key *k, char *buf, size_t len)
{
	for (size_t i = 0, n = 0; k->choices[i] && n < len; i++)
		n += (size_t)snprintf(buf + n, len - n, "%s%s", i ? ", " : "", k->choices[i]);
}

static void range_cpu(const struct cfg_key *k, char *buf, size_t len)
{
	snprintf(buf, len, "quiet, all or 0..%.0f", k->max);
}

/* Every name probes_disabled takes, from the catalogue. */
static void range_probes(const struct cfg_key *k, char *buf, size_t len)
{
	size_t n = 0;

	(void)k;
	buf[0] = '\0';
	for (size_t i = 0; i < catalog_n_probes && n < len; i++)
		n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? ", " : "",
		                      catalog_probes[i].name);
	for (size_t i = 0; i < catalog_n_probes; i++)
		for (size_t a = 0; a < 3 && catalog_probes[i].arms[a] && n < len; a++)
			n += (size_t)snprintf(buf + n, len - n, ", %s.%s", catalog_probes[i].name,
			                      catalog_probes[i].arms[a]);
}

const struct cfg_type config_types[] = {
    [T_INT] = {"integer", "N", sizeof(int), 0, parse_int, format_int, range_int},
    [T_DOUBLE] = {"number", "X", sizeof(double), 0, parse_double, format_double, range_double},
    [T_STRING] = {"string", "TEXT", sizeof(char *), 1, parse_string, format_string, range_string},
    [T_BOOL] = {"boolean", "yes|no", sizeof(int), 0, parse_bool, format_bool, NULL},
    [T_DURATION] = {"duration", "DURATION", sizeof(double), 0, parse_duration,
                    format_duration_field, range_duration},
    [T_SIZE] = {"size", "SIZE", sizeof(uint64_t), 0, parse_size, format_size_field, range_size},
    [T_PATH] = {"path", "PATH", sizeof(char *), 1, parse_path, format_string, NULL},
    [T_ADDRESS] = {"address", "ADDRESS", sizeof(char *), 1, parse_address, format_string, NULL},
    [T_SPAN] = {"percent or duration", "SPAN", sizeof(struct config_span), 0, parse_span,
                format_span, range_span},
    [T_CHOICE] = {"choice", "CHOICE", sizeof(int), 0, parse_choice, format_choice, range_choice},
    [T_CPU] = {"CPU", "CPU", sizeof(struct runner_cpu), 0, parse_cpu, format_cpu, range_cpu},
    [T_PROBES] = {"list of probes", "LIST", sizeof(char *), 1, parse_probes, format_string,
                  range_probes},
};
