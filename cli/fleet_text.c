/*
 * fleet_text: what a daemon sent, made safe for the operator's terminal
 * (see fleetp.h): a hostile host must not move the cursor, set the title
 * or forge a row; and its times as the ages the text shows.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <jansson.h>

#include "cli.h"
#include "fleetp.h"
#include "xmalloc.h"

/* The bidirectional controls, as their three UTF-8 bytes E2 80 xx or
 * E2 81 xx: LRM, RLM (U+200E, U+200F), the embeddings and overrides
 * U+202A..U+202E, and the isolates U+2066..U+2069. Each can reorder what
 * follows it on the line (a forged cohort or host row, "Trojan Source"). */
static const struct {
	unsigned char second, lo, hi;
} bidi[] = {{0x80, 0x8e, 0x8f}, {0x80, 0xaa, 0xae}, {0x81, 0xa6, 0xa9}};

static int is_bidi(const unsigned char *r)
{
	if (r[0] != 0xe2)
		return 0;
	for (size_t i = 0; i < sizeof(bidi) / sizeof(bidi[0]); i++)
		if (r[1] == bidi[i].second && r[2] >= bidi[i].lo && r[2] <= bidi[i].hi)
			return 1;
	return 0;
}

char *fleet_printable(char *s)
{
	unsigned char *r = (unsigned char *)s, *w = r;

	for (; r && *r; r++) {
		if (*r < 0x20 || *r == 0x7f) {
			*w++ = '?'; /* C0 and DEL */
		} else if (*r == 0xc2 && r[1] >= 0x80 && r[1] <= 0x9f) {
			*w++ = '?'; /* C1 (U+0080..U+009F, two bytes in UTF-8) */
			r++;
		} else if (is_bidi(r)) {
			*w++ = '?';
			r += 2;
		} else {
			*w++ = *r;
		}
	}
	if (w)
		*w = '\0';
	return s;
}

void fleet_printable_json(json_t *v)
{
	const char *key;
	json_t *x;
	size_t i;

	if (json_is_string(v)) {
		char *t = xstrdup(json_string_value(v));

		json_string_set(v, fleet_printable(t));
		free(t);
	} else if (json_is_array(v)) {
		json_array_foreach(v, i, x) fleet_printable_json(x);
	} else if (json_is_object(v)) {
		json_object_foreach(v, key, x) fleet_printable_json(x);
	}
}

double fleet_age_s(int64_t now_ms, int64_t t_ms)
{
	/* In double: two hostile integers cannot overflow the difference. */
	return ((double)now_ms - (double)t_ms) / 1e3;
}

void fleet_format_age(double s, char *buf, size_t len)
{
	long long t = s < 0 || !(s < 1e15) ? 0 : llround(s);

	if (t < 60)
		snprintf(buf, len, "%llds", t);
	else if (t < 3600)
		snprintf(buf, len, "%lldm", t / 60);
	else if (t < 86400)
		snprintf(buf, len, "%lldh%02lldm", t / 3600, t % 3600 / 60);
	else
		snprintf(buf, len, "%lldd%02lldh", t / 86400, t % 86400 / 3600);
}
