/*
 * workload_keep: the kept form of an observer window, and its storing
 * (see workload_keep.h).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "catalog.h"
#include "jpath.h"
#include "observe.h"
#include "workload_key.h"
#include "workload_keep.h"
#include "xmalloc.h"

/* The workload's figures, by the catalogue: a number, or null. */
static json_t *figures_of(const json_t *w)
{
	json_t *f = json_object();

	for (size_t i = 0; i < catalog_n_workload_metrics; i++) {
		const json_t *v = jpath_get(w, catalog_workload_metrics[i].path);

		json_object_set_new(f, catalog_workload_metrics[i].name,
		                    json_is_number(v) ? json_copy((json_t *)(uintptr_t)v)
		                                      : json_null());
	}
	return f;
}

/* Adds w's figures to the sums (a figure stays null until one is known). */
static void figures_add(json_t *sum, const json_t *w)
{
	for (size_t i = 0; i < catalog_n_workload_metrics; i++) {
		const char *name = catalog_workload_metrics[i].name;
		const json_t *v = jpath_get(w, catalog_workload_metrics[i].path);
		const json_t *s = json_object_get(sum, name);

		if (!json_is_number(v))
			continue;
		json_int_t total;

		if (json_is_integer(v) && (!json_is_number(s) || json_is_integer(s)) &&
		    !__builtin_add_overflow(json_integer_value(v), json_integer_value(s), &total))
			json_object_set_new(sum, name, json_integer(total));
		else
			json_object_set_new(
			    sum, name,
			    json_real(json_number_value(v) +
			              (json_is_number(s) ? json_number_value(s) : 0)));
	}
}

/* A workload the store can keep: a key of its own, and one of the kinds
 * the observer names (a newer or a lying peer's other kind is summed into
 * "other" rather than refused with the whole window). */
static int keyed(const json_t *w)
{
	static const char *const kinds[] = {"unit", "cgroup", "process"};
	const char *k = json_string_value(json_object_get(w, "key"));
	const char *kind = json_string_value(json_object_get(w, "kind"));

	if (!k || !k[0] || strlen(k) > WKEEP_KEY_MAX || !strcmp(k, "other") || !kind)
		return 0;
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (!strcmp(kind, kinds[i]))
			return 1;
	return 0;
}

static json_t *kept(const json_t *w)
{
	json_t *k = json_deep_copy(w);
	char ref[WKEY_REF_LEN], *name = wkey_name(w);

	wkey_ref(json_string_value(json_object_get(w, "key")), ref);
	json_object_set_new(k, "ref", json_string(ref));
	json_object_set_new(k, "name", json_string(name));
	json_object_set_new(k, "figures", figures_of(w));
	free(name);
	return k;
}

json_t *wkeep_trim(const json_t *priced, size_t top)
{
	const json_t *list = json_object_get(priced, "workloads"), *w;
	json_t *out = json_object(), *rows = json_array(), *sums = json_object();
	const char *field;
	size_t i, rest = 0, nkept = 0;
	char ref[WKEY_REF_LEN], *keep;

	for (void *it = json_object_iter((json_t *)(uintptr_t)priced); it;
	     it = json_object_iter_next((json_t *)(uintptr_t)priced, it)) {
		field = json_object_iter_key(it);
		if (strcmp(field, "workloads"))
			json_object_set(out, field, json_object_iter_value(it));
	}
	json_object_set_new(out, "seen", json_integer((json_int_t)json_array_size(list)));
	for (size_t m = 0; m < catalog_n_workload_metrics; m++)
		json_object_set_new(sums, catalog_workload_metrics[m].name, json_null());
	/* the dearest half of the places first; then those with a finding (a
	 * problem named, such as stacks on huge pages, however cheap in CPU),
	 * which can take no more than the other half, so that no one's
	 * processes can push the dearest out; then the dearest others. Each
	 * kept one stays in its place in the cost order. */
	keep = xcalloc(json_array_size(list) + 1, 1);
	for (int pass = 0; pass < 3; pass++) {
		size_t limit = pass == 0 ? (top + 1) / 2 : top;

		json_array_foreach(list, i, w)
		{
			if (nkept >= limit || keep[i] || !keyed(w) ||
			    (pass == 1 && !json_array_size(json_object_get(w, "findings"))))
				continue;
			keep[i] = 1;
			nkept++;
		}
	}
	json_array_foreach(list, i, w)
	{
		if (keep[i]) {
			json_array_append_new(rows, kept(w));
			continue;
		}
		figures_add(sums, w);
		rest++;
	}
	free(keep);
	if (rest) {
		wkey_ref("other", ref);
		json_array_append_new(rows,
		                      json_pack("{s:s s:s s:s s:s s:I s:o}", "key", "other", "ref",
		                                ref, "kind", "other", "name", "other", "workloads",
		                                (json_int_t)rest, "figures", sums));
	} else
		json_decref(sums);
	json_object_set_new(out, "workloads", rows);
	return out;
}

int wkeep_take(struct store *st, const json_t *window, size_t top, int64_t now_ms)
{
	json_t *rec = NULL, *doc = json_deep_copy(window), *k;
	int r = store_read_recommendation(st, &rec);

	if (r < 0 && r != -ENOENT) {
		json_decref(doc);
		return r;
	}
	obs_price(doc, json_object_get(rec, "inputs"));
	k = wkeep_trim(doc, top);
	r = store_workloads_record(st, now_ms, k);
	json_decref(k);
	json_decref(doc);
	json_decref(rec);
	return r;
}
