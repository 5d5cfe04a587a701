/*
 * jnum: numbers as JSON (see jnum.h).
 */
#include <math.h>

#include "jnum.h"

json_t *jnum(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

json_t *jnum_int(double v)
{
	if (!isfinite(v))
		return json_null();
	if (v == floor(v) && fabs(v) < 9007199254740992.0)
		return json_integer((json_int_t)v);
	return json_real(v);
}
