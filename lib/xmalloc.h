/* xmalloc: allocation wrappers for which running out of memory is fatal. */
#ifndef TW_XMALLOC_H
#define TW_XMALLOC_H

#include <stddef.h>

void *xmalloc(size_t size);
void *xcalloc(size_t nmemb, size_t size);
void *xrealloc(void *ptr, size_t size);
void *xreallocarray(void *ptr, size_t nmemb, size_t size);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
int xasprintf(char **ret, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
