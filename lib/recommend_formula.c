/*
 * recommend_formula: a formula's operands printed so that the formula
 * checks by hand: computed from the digits shown, it gives the result as
 * printed (1,781 × (1 - 0.999) would not give 0.909; 1,781 × (1 - 0.99949)
 * does).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "recommendp.h"

/* v with `sig` significant digits in rec_fmt_num()'s form (grouped digits
 * from 1000 up), with the decimals those digits need. */
static void operand_text(char *buf, size_t len, double v, int sig)
{
	char raw[64], whole[48];
	const char *dot;
	int k;

	if (!isfinite(v)) {
		rec_fmt_num(buf, len, v);
		return;
	}
	if (fabs(v) < 999.5) {
		snprintf(buf, len, "%.*g", sig, v);
		return;
	}
	k = (int)floor(log10(fabs(v))) + 1;
	if (sig <= k) {
		rec_fmt_num(buf, len, v);
		return;
	}
	snprintf(raw, sizeof(raw), "%.*f", sig - k, v);
	dot = strchr(raw, '.');
	rec_fmt_num(whole, sizeof(whole),
	            strtod(raw, NULL) < 0 ? ceil(strtod(raw, NULL)) : floor(strtod(raw, NULL)));
	snprintf(buf, len, "%s%s", whole, dot ? dot : "");
}

double rec_num_parse(const char *text)
{
	char digits[64];
	size_t n = 0;

	for (const char *p = text; *p && n + 1 < sizeof(digits); p++)
		if (*p != ',')
			digits[n++] = *p;
	digits[n] = '\0';
	return strtod(digits, NULL);
}

double rec_formula_fit(struct rec_formula *f, double result)
{
	const char *(*fmt)(char *, size_t, double) = f->fmt ? f->fmt : rec_fmt_num;
	char want[48], got[48];
	double p[REC_FORMULA_MAX], shown = NAN;

	fmt(want, sizeof(want), result);
	for (int sig = 3; sig <= 15; sig++) {
		for (int i = 0; i < f->n; i++) {
			double scale = f->scale[i] > 0 ? f->scale[i] : 1;

			if (!(f->keep & (1u << i)))
				operand_text(f->text[i], sizeof(f->text[i]), f->v[i] / scale, sig);
			p[i] = rec_num_parse(f->text[i]) * scale;
		}
		shown = f->eval(p);
		if (!strcmp(fmt(got, sizeof(got), shown), want))
			return result;
	}
	/* No digits give the result as printed (a kept operand too coarse):
	 * the operands shown, at 15 digits, give the result to print. */
	return shown;
}
