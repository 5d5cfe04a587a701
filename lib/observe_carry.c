/*
 * observe_carry: one window's end as the next window's start, for an
 * observer that watches window after window. Each process read at the end
 * hands on its threads' counts and their open sched files, so the next
 * window reads each thread once (at its end) instead of twice, and a
 * thread's switches between two windows are counted in the later one.
 */
#include <stdlib.h>
#include <unistd.h>

#include "observe.h"
#include "observep.h"
#include "xmalloc.h"

static int carry_cmp(const void *a, const void *b)
{
	pid_t x = ((const struct obs_carry_proc *)a)->tgid;
	pid_t y = ((const struct obs_carry_proc *)b)->tgid;

	return (x > y) - (x < y);
}

static size_t fds_of(const struct obs_tcount *t, size_t n)
{
	size_t k = 0;

	for (size_t i = 0; t && i < n; i++)
		k += t[i].fd >= 0;
	return k;
}

static void close_all(struct obs_tcount *t, size_t n)
{
	for (size_t i = 0; t && i < n; i++)
		if (t[i].fd >= 0)
			close(t[i].fd);
	free(t);
}

int obs_carry_take(struct obs_run *r, struct obs_carry *c, struct obs_proc *p)
{
	struct obs_carry_proc key = {.tgid = p->tgid}, *e;

	if (!c || !c->n)
		return 0;
	e = bsearch(&key, c->procs, c->n, sizeof(key), carry_cmp);
	/* the same process: a reused PID has another start time */
	if (!e || !e->t || e->starttime != p->starttime)
		return 0;
	p->start = e->t;
	p->nstart = e->n;
	p->born = e->n;
	p->t_read0 = e->t_read;
	p->sum0 = e->sum;
	p->have_sum0 = e->have_sum;
	r->threads_carried += e->n;
	e->t = NULL;
	return 1;
}

void obs_carry_drop_rest(struct obs_run *r, struct obs_carry *c)
{
	for (size_t i = 0; c && i < c->n; i++) {
		size_t k = fds_of(c->procs[i].t, c->procs[i].n);

		close_all(c->procs[i].t, c->procs[i].n);
		c->procs[i].t = NULL;
		r->fds_kept = r->fds_kept > k ? r->fds_kept - k : 0;
	}
}

struct obs_carry *obs_carry_make(struct obs_run *r)
{
	struct obs_carry *c = xcalloc(1, sizeof(*c));

	c->procs = xcalloc(r->nprocs ? r->nprocs : 1, sizeof(*c->procs));
	for (size_t i = 0; i < r->nprocs; i++) {
		struct obs_proc *p = &r->procs[i];

		if (!p->end || !p->seen_end)
			continue;
		c->procs[c->n] = (struct obs_carry_proc){.tgid = p->tgid,
		                                         .starttime = p->starttime,
		                                         .t = p->end,
		                                         .n = (size_t)p->nend,
		                                         .t_read = p->t_read1,
		                                         .sum = p->sum1,
		                                         .have_sum = p->have_sum1};
		c->fds += fds_of(p->end, (size_t)p->nend);
		p->end = NULL;
		c->n++;
	}
	qsort(c->procs, c->n, sizeof(*c->procs), carry_cmp);
	return c;
}

void obs_carry_free(struct obs_carry *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n; i++)
		close_all(c->procs[i].t, c->procs[i].n);
	free(c->procs);
	free(c);
}
