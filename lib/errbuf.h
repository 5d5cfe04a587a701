/*
 * errbuf: writes a one-line message into a caller's error buffer, the way
 * helpers report why they failed without logging.
 */
#ifndef TW_ERRBUF_H
#define TW_ERRBUF_H

#include <stdarg.h>
#include <stddef.h>

/* Formats into err (ignored when err is NULL or errlen is 0) and returns
 * rc, so that `return errbuf_set(err, errlen, -EINVAL, ...)` reads as one
 * step. */
int errbuf_set(char *err, size_t errlen, int rc, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* The same with a va_list. An argument may quote err itself (a message
 * that wraps the previous one): the text is formatted aside first. */
int errbuf_vset(char *err, size_t errlen, int rc, const char *fmt, va_list ap)
    __attribute__((format(printf, 4, 0)));

#endif
