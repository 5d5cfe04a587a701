/*
 * observe_group: the processes of a window grouped into workloads, each
 * named as an operator would look for it: its systemd unit; else its own
 * cgroup, when that is not the root and holds no unrelated process (one
 * process tree); else the process by its executable and comm. The key
 * never holds a PID, so a restarted service keeps it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "escape.h"
#include "jnum.h"
#include "observep.h"
#include "xmalloc.h"

/* pids listed per workload at most (processes counts them all) */
#define GROUP_PIDS_MAX 64

json_t *obs_jstr(const char *s)
{
	json_t *j = json_string(s);
	char *e;

	if (j)
		return j;
	e = escape_text(s, strlen(s));
	j = json_string(e);
	free(e);
	return j;
}

struct member {
	size_t proc;
	char *key;
	const char *kind;
};

static int member_cmp(const void *a, const void *b)
{
	return strcmp(((const struct member *)a)->key, ((const struct member *)b)->key);
}

static int str_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The cgroups that hold more than one process tree: a process whose
 * parent is outside its cgroup is a tree's root. Returns a sorted array
 * of paths (borrowed) and their count. */
static size_t shared_cgroups(const struct obs_run *r, const char ***out)
{
	const char **roots = xcalloc(r->nprocs + 1, sizeof(*roots)), **shared;
	size_t n = 0, m = 0;

	for (size_t i = 0; i < r->nprocs; i++) {
		const struct obs_proc *p = &r->procs[i];
		long par;

		if (!p->counted || !p->cg.path || !strcmp(p->cg.path, "/") || p->cg.unit)
			continue;
		par = obs_table_find(r, p->ppid);
		if (par < 0 || !r->procs[par].cg.path || strcmp(r->procs[par].cg.path, p->cg.path))
			roots[n++] = p->cg.path;
	}
	qsort(roots, n, sizeof(*roots), str_cmp);
	shared = xcalloc(n + 1, sizeof(*shared));
	for (size_t i = 1; i < n; i++)
		if (!strcmp(roots[i], roots[i - 1]) && (!m || strcmp(shared[m - 1], roots[i])))
			shared[m++] = roots[i];
	free(roots);
	*out = shared;
	return m;
}

static char *member_key(const struct obs_proc *p, int own_cgroup, int by_process, const char **kind)
{
	char *k;

	if (p->cg.unit) {
		*kind = "unit";
		xasprintf(&k, "unit:%s%s%s", p->cg.manager ? p->cg.manager : "",
		          p->cg.manager ? "/" : "", p->cg.unit);
	} else if (own_cgroup) {
		*kind = "cgroup";
		xasprintf(&k, "cgroup:%s", p->cg.path);
	} else {
		*kind = "process";
		xasprintf(&k, "process:%s\n%s", p->exe ? p->exe : "", p->comm);
	}
	if (by_process) {
		char *b;

		xasprintf(&b, "%s\npid:%d@%llu", k, (int)p->tgid, p->starttime);
		free(k);
		k = b;
	}
	return k;
}

/* A rate, or null when it could not be seen. */
static json_t *rate(uint64_t n, double secs, int seen)
{
	return seen && secs > 0 ? jnum((double)n / secs) : json_null();
}

struct tally {
	size_t procs, counted, unreadable, stack_procs, stack_unreadable, migr_procs, quiet;
	size_t ended, ended_accounted; /* processes gone by the end; of them, taskstats's */
	uint64_t ts_thread_exits;
	int ts_any;
	/* per second, each process over its own reading times */
	double vol_ps, invol_ps, migr_ps;
	long threads;
	uint64_t creates, exits, ts_vol, ts_invol, nstacks, thp, res, huge;
	int stack_errno, counts_errno;
};

static void tally_add(struct tally *t, const struct obs_proc *p)
{
	t->procs++;
	t->quiet += p->quiet != 0;
	t->creates += p->creates;
	t->exits += p->exits;
	/* what taskstats told of the threads that ended */
	t->ts_thread_exits += p->ts_thread_exits;
	t->ts_any |= p->ts_thread_exits || p->ts_leader_exits;
	if (p->counted && p->t_read1 > p->t_read0) {
		double secs = p->t_read1 - p->t_read0;

		t->counted++;
		t->threads += p->threads;
		t->vol_ps += (double)(p->vol + p->ts_vol) / secs;
		t->invol_ps += (double)(p->invol + p->ts_invol) / secs;
		t->migr_ps += (double)p->migr / secs;
		t->migr_procs += p->have_migr != 0;
	} else if (p->counts_errno) {
		t->unreadable++;
		t->counts_errno = p->counts_errno;
	} else {
		t->ended++;
		t->ended_accounted += p->ts_leader_exits > 0;
		t->ts_vol += p->ts_vol; /* an ended process's, over the events' window */
		t->ts_invol += p->ts_invol;
	}
	if (p->stacks_measured) {
		t->stack_procs++;
		t->nstacks += p->nstacks;
		t->thp += p->stack_thp;
		t->res += p->stack_res;
		t->huge += p->stack_huge;
	} else if (p->stacks_errno) {
		t->stack_unreadable++;
		t->stack_errno = p->stacks_errno;
	}
}

/* Why a file could not be read, in words an operator can act on. */
static const char *why_unreadable(int e)
{
	switch (e) {
	case EACCES:
	case EPERM:
		return "no ptrace read access (another user's process: CAP_SYS_PTRACE, or run as "
		       "its user)";
	case E2BIG:
		return "too many mappings for the smaps fallback without PAGEMAP_SCAN (Linux 6.7)";
	case ESRCH:
	case ENOENT:
		return "it ended while it was read";
	default:
		return strerror(e);
	}
}

static json_t *stacks_json(const struct tally *t)
{
	json_t *s;

	if (!t->stack_procs) {
		if (!t->stack_unreadable)
			return json_pack("{s:i s:i s:i s:i}", "count", 0, "resident_bytes", 0,
			                 "thp_backed", 0, "thp_bytes", 0);
		return json_pack("{s:n s:s}", "count", "why", why_unreadable(t->stack_errno));
	}
	s = json_pack("{s:I s:I s:I s:I}", "count", (json_int_t)t->nstacks, "resident_bytes",
	              (json_int_t)t->res, "thp_backed", (json_int_t)t->thp, "thp_bytes",
	              (json_int_t)t->huge);
	if (t->stack_unreadable)
		json_object_set_new(s, "partial",
		                    json_pack("{s:I s:s}", "unreadable_processes",
		                              (json_int_t)t->stack_unreadable, "why",
		                              why_unreadable(t->stack_errno)));
	return s;
}

/* Every switch of the window is counted: no thread or process ended
 * unseen (taskstats, when it listened, reports each as it ends). The two
 * reports of one exit come apart at the window's edges: taskstats_exit()
 * runs before proc_exit_connector() in do_exit(), so a thread ending at
 * the start may leave only its connector event in the window, one that
 * ends at the close only its taskstats report; neither had time to switch
 * within it. */
static int switches_exact(const struct tally *t)
{
	return (t->counted || t->ts_any) && t->exits <= t->ts_thread_exits + 1 &&
	       t->ended == t->ended_accounted;
}

/* Each process's switches over its own reading times, and those of
 * processes that ended over the events' window. */
static json_t *switches_json(const struct tally *t, double ev_s)
{
	double vol = t->vol_ps, invol = t->invol_ps;

	if (!(t->counted || t->ts_any))
		return json_null();
	if (ev_s > 0) {
		vol += (double)t->ts_vol / ev_s;
		invol += (double)t->ts_invol / ev_s;
	}
	return json_pack("{s:o s:o s:o}", "total", jnum(vol + invol), "voluntary", jnum(vol),
	                 "involuntary", jnum(invol));
}

/* The workload of members m[0..n-1] (one key). */
static json_t *workload_json(const struct obs_run *r, const struct member *m, size_t n, double ev_s)
{
	const struct obs_proc *first = &r->procs[m[0].proc];
	struct tally t = {0};
	json_t *w, *pids = json_array();

	for (size_t i = 0; i < n; i++) {
		const struct obs_proc *p = &r->procs[m[i].proc];

		tally_add(&t, p);
		if (json_array_size(pids) < GROUP_PIDS_MAX && !p->gone)
			json_array_append_new(pids, json_integer(p->tgid));
	}
	w = json_object();
	json_object_set_new(w, "key", obs_jstr(m[0].key));
	json_object_set_new(w, "kind", json_string(m[0].kind));
	json_object_set_new(w, "unit", first->cg.unit ? obs_jstr(first->cg.unit) : json_null());
	json_object_set_new(w, "manager",
	                    first->cg.manager ? obs_jstr(first->cg.manager) : json_null());
	json_object_set_new(w, "cgroup", first->cg.path ? obs_jstr(first->cg.path) : json_null());
	json_object_set_new(w, "comm", obs_jstr(first->comm));
	json_object_set_new(w, "exe", first->exe ? obs_jstr(first->exe) : json_null());
	json_object_set_new(w, "pids", pids);
	json_object_set_new(w, "processes", json_integer((json_int_t)t.procs));
	json_object_set_new(w, "threads", t.counted ? json_integer(t.threads) : json_null());
	json_object_set_new(w, "creates_per_s", rate(t.creates, ev_s, ev_s > 0));
	json_object_set_new(w, "exits_per_s", rate(t.exits, ev_s, ev_s > 0));
	json_object_set_new(w, "switches_per_s", switches_json(&t, ev_s));
	json_object_set_new(w, "migrations_per_s",
	                    t.migr_procs > 0 ? jnum(t.migr_ps) : json_null());
	/* without taskstats, threads that ended took their switches with them */
	json_object_set_new(w, "switches_exact", json_boolean(switches_exact(&t)));
	json_object_set_new(w, "quiet_processes", json_integer((json_int_t)t.quiet));
	json_object_set_new(w, "stacks", stacks_json(&t));
	if (t.unreadable)
		json_object_set_new(w, "unreadable",
		                    json_pack("{s:I s:s}", "processes", (json_int_t)t.unreadable,
		                              "why", why_unreadable(t.counts_errno)));
	return w;
}

json_t *obs_group(struct obs_run *r, int by_process, double ev_s)
{
	struct member *m = xcalloc(r->nprocs + 1, sizeof(*m));
	const char **shared;
	size_t nshared = shared_cgroups(r, &shared), n = 0;
	json_t *list = json_array();

	for (size_t i = 0; i < r->nprocs; i++) {
		const struct obs_proc *p = &r->procs[i];
		int own = p->cg.path && strcmp(p->cg.path, "/") &&
		          !bsearch(&p->cg.path, shared, nshared, sizeof(*shared), str_cmp);

		/* an entry that did nothing the window can show (it ended before
		 * the end, with no creates or exits) is left out */
		if (!p->counted && !p->creates && !p->exits && !p->counts_errno)
			continue;
		m[n].proc = i;
		m[n].key = member_key(p, own, by_process, &m[n].kind);
		n++;
	}
	qsort(m, n, sizeof(*m), member_cmp);
	for (size_t i = 0, j; i < n; i = j) {
		for (j = i + 1; j < n && !strcmp(m[j].key, m[i].key); j++)
			;
		json_array_append_new(list, workload_json(r, m + i, j - i, ev_s));
	}
	for (size_t i = 0; i < n; i++)
		free(m[i].key);
	free(m);
	free(shared);
	return list;
}

json_t *obs_largest_vmas(const struct obs_run *r)
{
	const struct obs_proc *big = NULL;
	size_t scanned = 0, unreadable = 0;

	for (size_t i = 0; i < r->nprocs; i++) {
		const struct obs_proc *p = &r->procs[i];

		if (!p->counted)
			continue;
		if (p->vmas < 0) {
			unreadable++;
			continue;
		}
		scanned++;
		if (!big || p->vmas > big->vmas)
			big = p;
	}
	return json_pack("{s:o s:o s:o s:I s:I}", "pid",
	                 big ? json_integer(big->tgid) : json_null(), "comm",
	                 big ? obs_jstr(big->comm) : json_null(), "vmas",
	                 big ? json_integer(big->vmas) : json_null(), "processes_scanned",
	                 (json_int_t)scanned, "processes_unreadable", (json_int_t)unreadable);
}
