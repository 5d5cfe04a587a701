/*
 * recommend_text: a recommendation result (rec_compute()) as the text
 * `threadwatch recommend` prints: the verdict, the sentence and the
 * reasons, wrapped, the break-even (the other figures are --json's), and
 * what a thread costs here.
 */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "recommend.h"
#include "recommendp.h"
#include "xmalloc.h"

/* --- text --------------------------------------------------------------- */

struct sbuf {
	char *s;
	size_t len, cap;
};

static void sb_add(struct sbuf *b, const char *s, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		b->cap = (b->len + n + 1) * 2;
		b->s = xrealloc(b->s, b->cap);
	}
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
}

static void sb_str(struct sbuf *b, const char *s)
{
	sb_add(b, s, strlen(s));
}

/* Appends `text` wrapped at 78 columns (counting bytes), the first line
 * opening with `first`, the others with `rest`. */
static void sb_wrap(struct sbuf *b, const char *text, const char *first, const char *rest)
{
	size_t col = strlen(first), w;
	int empty = 1;

	sb_str(b, first);
	for (;;) {
		while (*text == ' ')
			text++;
		w = strcspn(text, " ");
		if (!w)
			break;
		if (!empty && col + 1 + w > 78) {
			sb_str(b, "\n");
			sb_str(b, rest);
			col = strlen(rest);
			empty = 1;
		}
		if (!empty) {
			sb_str(b, " ");
			col++;
		}
		sb_add(b, text, w);
		col += w;
		text += w;
		empty = 0;
	}
	sb_str(b, "\n");
}

/* "failed probes:" and one line each, when there are any. */
static void text_failed(struct sbuf *b, const json_t *failed)
{
	const json_t *f;
	size_t i;

	if (!json_array_size(failed))
		return;
	sb_str(b, "\nfailed probes:\n");
	json_array_foreach(failed, i, f)
	{
		char line[1024];

		snprintf(line, sizeof(line), "%s: %s",
		         json_string_value(json_object_get(f, "probe")) ?: "?",
		         json_string_value(json_object_get(f, "reason")) ?: "?");
		sb_wrap(b, line, "  - ", "    ");
	}
}

/* The break-even, when there is one, and where every other figure is:
 * the figures themselves (about 40, many null) belong to --json. */
static void text_figures(struct sbuf *b, const json_t *figs)
{
	const json_t *be = json_object_get(figs, "break_even_switches");
	char line[128];

	char num[48];

	if (json_is_number(be)) {
		snprintf(line, sizeof(line), "\nbreak-even: %s switches per thread\n",
		         rec_fmt_num(num, sizeof(num), json_number_value(be)));
		sb_str(b, line);
	}
	sb_str(b, "\nEvery figure behind it: --json (result.figures).\n");
}

/* "What a thread costs here:" and each cost's finding, with its cause and
 * fix where it is a problem (result.costs). */
static void text_costs(struct sbuf *b, const json_t *costs)
{
	static const struct {
		const char *key, *title;
	} rows[] = {{"create", "create"},
	            {"creators", "two creators"},
	            {"handoff", "hand-off"},
	            {"memory", "memory"}};

	if (!json_is_object(costs))
		return;
	sb_str(b, "\nWhat a thread costs here:\n");
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const json_t *c = json_object_get(costs, rows[i].key);
		const char *cause = json_string_value(json_object_get(c, "cause"));
		const char *fix = json_string_value(json_object_get(c, "fix"));
		char first[48], line[2048];

		if (!json_is_object(c))
			continue;
		snprintf(first, sizeof(first), "  - %s%s: ", rows[i].title,
		         json_is_true(json_object_get(c, "problem")) ? " (a problem)" : "");
		sb_wrap(b, json_string_value(json_object_get(c, "finding")) ?: "?", first, "    ");
		if (cause) {
			snprintf(line, sizeof(line), "Cause: %s.", cause);
			sb_wrap(b, line, "    ", "    ");
		}
		if (fix) {
			snprintf(line, sizeof(line), "Fix: %s.", fix);
			sb_wrap(b, line, "    ", "    ");
		}
	}
}

char *rec_text(const json_t *result)
{
	struct sbuf b = {0};
	const json_t *reasons = json_object_get(result, "reasons"), *v;
	size_t i;

	sb_wrap(&b, json_string_value(json_object_get(result, "action")) ?: "", "", "");
	sb_str(&b, "verdict: ");
	sb_str(&b, json_string_value(json_object_get(result, "verdict")) ?: "?");
	sb_str(&b, !strcmp(json_string_value(json_object_get(result, "verdict")) ?: "", "low")
	               ? " stacks (MAP_32BIT)"
	               : " stacks (glibc's default, MAP_STACK)");
	sb_str(&b, ", confidence: ");
	sb_str(&b, json_string_value(json_object_get(result, "confidence")) ?: "?");
	sb_str(&b, "\n");
	sb_wrap(&b, json_string_value(json_object_get(result, "sentence")) ?: "", "", "");
	text_failed(&b, json_object_get(result, "failed_probes"));
	sb_str(&b, "\nreasons:\n");
	json_array_foreach(reasons, i, v) sb_wrap(&b, json_string_value(v) ?: "", "  - ", "    ");
	text_figures(&b, json_object_get(result, "figures"));
	text_costs(&b, json_object_get(result, "costs"));
	return b.s;
}
