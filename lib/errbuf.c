/* errbuf: the one formatter of helpers' error messages. */
#include <stdarg.h>
#include <stdio.h>

#include "errbuf.h"

int errbuf_set(char *err, size_t errlen, int rc, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return rc;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return rc;
}
