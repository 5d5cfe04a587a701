/*
 * recommendp: what the recommendation's files (recommend.c,
 * recommend_inputs.c, recommend_text.c) share and nobody else uses.
 */
#ifndef TW_RECOMMENDP_H
#define TW_RECOMMENDP_H

#include <jansson.h>

/* A JSON number for a figure: an integer when it is one, null when it is
 * not finite. New reference. */
json_t *rec_jnum(double v);

#endif
