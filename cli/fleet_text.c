/*
 * fleet_text: what a daemon sent, made safe for the operator's terminal
 * (see fleetp.h): a hostile host must not move the cursor, set the title
 * or forge a row.
 */
#include <stdint.h>

#include "fleetp.h"

char *fleet_printable(char *s)
{
	unsigned char *r = (unsigned char *)s, *w = r;

	for (; r && *r; r++) {
		if (*r < 0x20 || *r == 0x7f) {
			*w++ = '?'; /* C0 and DEL */
		} else if (*r == 0xc2 && r[1] >= 0x80 && r[1] <= 0x9f) {
			*w++ = '?'; /* C1 (U+0080..U+009F, two bytes in UTF-8) */
			r++;
		} else {
			*w++ = *r;
		}
	}
	if (w)
		*w = '\0';
	return s;
}

double fleet_age_s(int64_t now_ms, int64_t t_ms)
{
	/* In double: two hostile integers cannot overflow the difference. */
	return ((double)now_ms - (double)t_ms) / 1e3;
}
