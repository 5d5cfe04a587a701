/*
 * errbuf: writes a one-line message into a caller's error buffer, the way
 * helpers report why they failed without logging.
 */
#ifndef TW_ERRBUF_H
#define TW_ERRBUF_H

#include <stddef.h>

/* Formats into err (ignored when err is NULL or errlen is 0) and returns
 * rc, so that `return errbuf_set(err, errlen, -EINVAL, ...)` reads as one
 * step. */
int errbuf_set(char *err, size_t errlen, int rc, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#endif
