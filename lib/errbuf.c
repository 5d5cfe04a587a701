/* errbuf: the one formatter of helpers' error messages. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "errbuf.h"

/* Longer messages are cut: one line for a log or a problem's detail. */
#define ERRBUF_MAX 1024

int errbuf_vset(char *err, size_t errlen, int rc, const char *fmt, va_list ap)
{
	char buf[ERRBUF_MAX];

	if (!err || !errlen)
		return rc;
	vsnprintf(buf, sizeof(buf), fmt, ap);
	snprintf(err, errlen, "%s", buf);
	return rc;
}

int errbuf_set(char *err, size_t errlen, int rc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	rc = errbuf_vset(err, errlen, rc, fmt, ap);
	va_end(ap);
	return rc;
}
