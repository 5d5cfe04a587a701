/* escape: control characters and non-ASCII bytes written as C escapes. */
#include <stdio.h>

#include "escape.h"
#include "xmalloc.h"

/* The short escapes; any other byte that needs one is written \xNN. */
static const char short_esc[][2] = {
    {'\\', '\\'},
    {'\n', 'n'},
    {'\r', 'r'},
    {'\t', 't'},
};

static int short_escape(unsigned char c)
{
	for (size_t i = 0; i < sizeof(short_esc) / sizeof(short_esc[0]); i++)
		if ((unsigned char)short_esc[i][0] == c)
			return short_esc[i][1];
	return 0;
}

char *escape_text(const char *s, size_t n)
{
	char *out = xmalloc(4 * n + 1), *o = out;

	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		int e = short_escape(c);

		if (e) {
			*o++ = '\\';
			*o++ = (char)e;
		} else if (c >= 0x20 && c < 0x7f) {
			*o++ = (char)c;
		} else {
			o += sprintf(o, "\\x%02x", c);
		}
	}
	*o = '\0';
	return out;
}
