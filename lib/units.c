/*
 * units: parses and formats sizes and durations (see units.h). The suffix
 * tables are the single list of what every program accepts.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "units.h"

static const struct {
	const char *suffix;
	double seconds;
} duration_units[] = {
    {"ms", 0.001}, {"s", 1}, {"m", 60}, {"h", 3600}, {"d", 86400}, {"w", 604800},
};

static const struct {
	const char *suffix;
	double bytes;
} size_units[] = {
    {"", 1},
    {"B", 1},
    {"K", 1024.0},
    {"KB", 1024.0},
    {"KiB", 1024.0},
    {"k", 1024.0},
    {"M", 1048576.0},
    {"MB", 1048576.0},
    {"MiB", 1048576.0},
    {"m", 1048576.0},
    {"G", 1073741824.0},
    {"GB", 1073741824.0},
    {"GiB", 1073741824.0},
    {"g", 1073741824.0},
    {"T", 1099511627776.0},
    {"TB", 1099511627776.0},
    {"TiB", 1099511627776.0},
    {"t", 1099511627776.0},
};

#define N_DURATION_UNITS (sizeof(duration_units) / sizeof(duration_units[0]))
#define N_SIZE_UNITS (sizeof(size_units) / sizeof(size_units[0]))

const char *units_decimal(const char *s, double *out)
{
	const char *p = s;
	char *end;

	while (isdigit((unsigned char)*p))
		p++;
	if (*p == '.') {
		p++;
		while (isdigit((unsigned char)*p))
			p++;
	}
	if (p == s || (p == s + 1 && *s == '.'))
		return NULL;
	errno = 0;
	*out = strtod(s, &end);
	if (end != p || errno || !isfinite(*out))
		return NULL;
	return p;
}

/* The longest duration suffix at p: its length, and its multiplier in
 * *mult (left alone when none matches). */
static size_t duration_suffix(const char *p, double *mult)
{
	size_t best = 0;

	for (size_t i = 0; i < N_DURATION_UNITS; i++) {
		size_t n = strlen(duration_units[i].suffix);

		if (!strncmp(p, duration_units[i].suffix, n) && n > best) {
			best = n;
			*mult = duration_units[i].seconds;
		}
	}
	return best;
}

int units_parse_duration(const char *s, double *seconds)
{
	double total = 0;
	int parts = 0;

	if (!s || !*s)
		return -EINVAL;
	for (; *s; parts++) {
		double v, mult = -1;
		const char *p = units_decimal(s, &v);
		size_t n;

		if (!p)
			return -EINVAL;
		n = duration_suffix(p, &mult);
		if (mult < 0) {
			/* a bare number is seconds, but only on its own */
			if (*p || parts > 0)
				return -EINVAL;
			mult = 1;
		}
		total += v * mult;
		if (!isfinite(total))
			return -ERANGE;
		s = p + n;
		while (*s == ' ')
			s++;
	}
	/* microseconds are fine enough; beyond 1e15 s a double has no
	 * microseconds left to round (and total * 1e6 could overflow) */
	*seconds = total < 1e15 ? round(total * 1e6) / 1e6 : total;
	return 0;
}

int units_parse_size(const char *s, uint64_t *bytes)
{
	double v;
	const char *p;

	if (!s)
		return -EINVAL;
	p = units_decimal(s, &v);
	if (!p)
		return -EINVAL;
	if (*p == ' ' && !*(p += strspn(p, " ")))
		return -EINVAL; /* a space only before a suffix */
	for (size_t i = 0; i < N_SIZE_UNITS; i++)
		if (!strcmp(p, size_units[i].suffix)) {
			v = floor(v * size_units[i].bytes);
			/* 2^64 is the first double that does not fit */
			if (!isfinite(v) || v >= 18446744073709551616.0)
				return -ERANGE;
			*bytes = (uint64_t)v;
			return 0;
		}
	return -EINVAL;
}

void units_format_number(double v, const char *suffix, int allow_exp, char *buf, size_t len)
{
	for (int prec = 1; prec <= 17; prec++) {
		snprintf(buf, len, "%.*g%s", prec, v, suffix);
		if ((allow_exp || !strpbrk(buf, "eE")) && strtod(buf, NULL) == v)
			return;
	}
	for (int prec = 0; prec <= 24; prec++) {
		snprintf(buf, len, "%.*f%s", prec, v, suffix);
		if (strtod(buf, NULL) == v)
			return;
	}
	/* Beyond 24 decimals (1e-129, say) plain digits would print 0, which
	 * reads back as another value: an exponent is the only exact text. */
	snprintf(buf, len, "%.17g%s", v, suffix);
}

void units_format_duration(double s, char *buf, size_t len)
{
	static const struct {
		char unit;
		long long seconds;
	} parts[] = {{'d', 86400}, {'h', 3600}, {'m', 60}, {'s', 1}};
	long long whole = llround(s);
	size_t n = 0;

	if (s == 0) {
		snprintf(buf, len, "0");
		return;
	}
	if (fabs(s - (double)whole) > 1e-9 || s >= 1e15) {
		if (s < 1 && fabs(s * 1000 - llround(s * 1000)) < 1e-9)
			snprintf(buf, len, "%lldms", llround(s * 1000));
		else
			units_format_number(s, "s", 0, buf, len);
		return;
	}
	buf[0] = '\0';
	for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]) && n < len; i++) {
		long long q = whole / parts[i].seconds;

		if (!q)
			continue;
		n += (size_t)snprintf(buf + n, len - n, "%lld%c", q, parts[i].unit);
		whole -= q * parts[i].seconds;
	}
}

void units_format_size(double v, char *buf, size_t len)
{
	static const char *const names[] = {"T", "G", "M", "K"};
	double mult = 1099511627776.0;

	for (size_t i = 0; i < 4; i++, mult /= 1024)
		if (v >= mult && fmod(v, mult) == 0) {
			snprintf(buf, len, "%.0f%s", v / mult, names[i]);
			return;
		}
	snprintf(buf, len, "%.0f", v);
}
