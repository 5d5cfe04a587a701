/*
 * escape: text from outside (a probe's reason or stderr) made safe for a
 * log line or a terminal: one line, no control characters.
 */
#ifndef TW_ESCAPE_H
#define TW_ESCAPE_H

#include <stddef.h>

/* A malloc'd copy of n bytes of s in which a backslash becomes "\\",
 * newline, carriage return and tab "\n", "\r", "\t", and every other
 * byte outside printable ASCII "\xNN". */
char *escape_text(const char *s, size_t n);

#endif
