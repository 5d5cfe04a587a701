/*
 * jnum: a number as JSON, the way every program writes one: null for what
 * is not a finite number (NaN, infinities: JSON has neither).
 */
#ifndef TW_JNUM_H
#define TW_JNUM_H

#include <jansson.h>

/* A real, or null when v is not finite. New reference (NULL only when
 * out of memory). */
json_t *jnum(double v);
/* The same, but a whole number within 2^53 is written as an integer. */
json_t *jnum_int(double v);

#endif
