/*
 * observe_table: the processes a window saw, indexed by tgid. A tgid's
 * latest entry is the live one; an entry of a process that ended stays,
 * with what it did, so that a reused PID starts a new entry rather than
 * inheriting the old one's counts.
 */
#include <stdlib.h>
#include <string.h>

#include "observep.h"
#include "xmalloc.h"

static size_t slot_of(const struct obs_run *r, pid_t tgid)
{
	return ((size_t)(unsigned)tgid * 2654435761u) & (r->nslots - 1);
}

long obs_table_find(const struct obs_run *r, pid_t tgid)
{
	if (!r->nslots)
		return -1;
	for (size_t s = slot_of(r, tgid);; s = (s + 1) & (r->nslots - 1)) {
		long i = r->slots[s];

		if (i < 0)
			return -1;
		if (r->procs[i].tgid == tgid)
			return i;
	}
}

/* Points tgid's slot at entry i (the table has a free slot). */
static void slot_set(struct obs_run *r, pid_t tgid, long i)
{
	size_t s = slot_of(r, tgid);

	while (r->slots[s] >= 0 && r->procs[r->slots[s]].tgid != tgid)
		s = (s + 1) & (r->nslots - 1);
	r->slots[s] = i;
}

/* Keeps the slots at most half full: rebuilt from the latest entries. */
static void slots_grow(struct obs_run *r)
{
	size_t n = r->nslots ? r->nslots * 2 : 1024;

	free(r->slots);
	r->slots = xreallocarray(NULL, n, sizeof(*r->slots));
	r->nslots = n;
	for (size_t s = 0; s < n; s++)
		r->slots[s] = -1;
	/* later entries of a tgid replace earlier ones */
	for (size_t i = 0; i < r->nprocs; i++)
		slot_set(r, r->procs[i].tgid, (long)i);
}

size_t obs_table_add(struct obs_run *r, pid_t tgid)
{
	size_t i = r->nprocs;

	if (r->nprocs == r->cap) {
		r->cap = r->cap ? 2 * r->cap : 256;
		r->procs = xreallocarray(r->procs, r->cap, sizeof(*r->procs));
	}
	memset(&r->procs[i], 0, sizeof(r->procs[i]));
	r->procs[i].tgid = tgid;
	r->nprocs++;
	if (2 * r->nprocs > r->nslots)
		slots_grow(r);
	else
		slot_set(r, tgid, (long)i);
	return i;
}

void obs_table_free(struct obs_run *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->nprocs; i++) {
		obs_tcounts_close(r, r->procs[i].start, r->procs[i].nstart);
		if (r->procs[i].end)
			obs_tcounts_close(r, r->procs[i].end, (size_t)r->procs[i].nend);
		free(r->procs[i].exe);
		free(r->procs[i].start);
		free(r->procs[i].end);
		obs_cgroup_free(&r->procs[i].cg);
	}
	free(r->procs);
	free(r->slots);
	r->procs = NULL;
	r->slots = NULL;
	r->nprocs = r->cap = r->nslots = 0;
}
