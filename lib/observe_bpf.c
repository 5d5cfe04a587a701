/*
 * observe_bpf: the observer's in-kernel counter. Three small BPF programs on
 * raw tracepoints count, for each thread group, the threads it creates
 * (task_newtask with CLONE_THREAD: copy_process() fires it in the creating
 * thread, whose tgid is the new thread's), the threads that end
 * (sched_process_exit: do_exit() fires it in the ending thread) and its
 * execs (sched_process_exec), in a hash map the observer drains about once
 * a second. Nothing is sent per event: the cost is a map update in the
 * creating thread, which the programs time themselves (run_ns), instead of
 * a netlink message per create to wake the observer (the connector). The
 * exit program is attached only when exits are to be counted one by one
 * (--no-event-filter): by default each process's exits are derived from
 * its threads, as under the connector's filter, which halves the cost.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bpfcall.h"
#include "clock.h"
#include "errbuf.h"
#include "observep.h"
#include "xmalloc.h"

/* The thread groups the map holds at once (drained each second); a create
 * or an exit that finds it full is counted in `lost`, not dropped unsaid. */
#define BPF_TGIDS 16384
/* One run in this many (a power of two) times itself. */
#define BPF_TIME_EVERY 16
/* How long the canary's create and exit have to show in the map. */
#define BPF_CANARY_S 1.0

/* clone(2)'s CLONE_THREAD (include/uapi/linux/sched.h), spelt here so this
 * file does not need _GNU_SOURCE's sched.h to define it. */
#define BPF_CLONE_THREAD 0x00010000

/* Offsets of struct obs_bpf_val (the map's value) and struct
 * obs_bpf_stats (the per-CPU tally): the programs add at these. */
#define F_OFF(f) ((int)offsetof(struct obs_bpf_val, f))
#define S_OFF(f) ((int)offsetof(struct obs_bpf_stats, f))
#define S_KIND(f) (offsetof(struct obs_bpf_stats, f) - offsetof(struct obs_bpf_stats, creates))
_Static_assert(S_KIND(creates) == offsetof(struct obs_bpf_val, creates) &&
                   S_KIND(exits) == offsetof(struct obs_bpf_val, exits) &&
                   S_KIND(execs) == offsetof(struct obs_bpf_val, execs) &&
                   S_KIND(ends) == offsetof(struct obs_bpf_val, ends),
               "the tally's counts of each kind follow the value's layout");

/* The programs, one per tracepoint: what each counts. */
enum bpf_kind { K_CREATE, K_EXIT, K_EXEC };
static const struct bpf_prog_def {
	enum bpf_kind kind;
	const char *tracepoint; /* include/trace/events/{task,sched}.h */
	const char *name;
} bpf_progs[] = {
    {K_CREATE, "task_newtask", "tw_creates"},
    {K_EXIT, "sched_process_exit", "tw_exits"},
    {K_EXEC, "sched_process_exec", "tw_execs"},
};
#define NPROGS (sizeof(bpf_progs) / sizeof(bpf_progs[0]))

/* An assembler with labels: a jump names a label, resolved at the end. */
#define ASM_MAX 96
enum { L_UNTIMED, L_ADD, L_COUNTED, L_LOST, L_DONE, L_OUT, L_EXIT_LEADER, NLABELS };
struct bpf_asm {
	struct bpf_insn in[ASM_MAX];
	int label[ASM_MAX]; /* the label a jump at i names, or -1 */
	int at[NLABELS];    /* where each label is */
	int n, overflow;
};

static void emit(struct bpf_asm *a, struct bpf_insn insn, int label)
{
	if (a->n >= ASM_MAX) {
		a->overflow = 1;
		return;
	}
	a->label[a->n] = label;
	a->in[a->n++] = insn;
}
#define E(a, ...) emit(a, __VA_ARGS__, -1)
static void here(struct bpf_asm *a, int label)
{
	a->at[label] = a->n;
}

static int resolve(struct bpf_asm *a)
{
	for (int i = 0; i < a->n; i++)
		if (a->label[i] >= 0) {
			if (a->at[a->label[i]] < 0)
				return -EINVAL;
			a->in[i].off = (int16_t)(a->at[a->label[i]] - (i + 1));
		}
	return a->overflow ? -E2BIG : 0;
}

static void ld_map(struct bpf_asm *a, int reg, int fd)
{
	E(a, BPFC_LD_MAP(reg, fd));
	E(a, BPFC_LD_HI());
}

/* *(u64 *)(reg + off) += 1 */
static void inc(struct bpf_asm *a, int reg, int off)
{
	E(a, BPFC_MOV_IMM(BPF_REG_1, 1));
	E(a, BPFC_ATOMIC_ADD64(reg, BPF_REG_1, off));
}

/* The program for `kind`. Registers kept across calls: r6 the tally of
 * this CPU, r7 the offset of the field this event adds to, r8 the time it
 * began (0: this run is not timed), r9 the current task's pid and tgid. */
static int bpf_build(struct bpf_asm *a, enum bpf_kind kind, int tgids, int stats)
{
	memset(a, 0, sizeof(*a));
	for (int i = 0; i < NLABELS; i++)
		a->at[i] = -1;
	E(a, BPFC_MOV_REG(BPF_REG_6, BPF_REG_1));
	/* one run in BPF_TIME_EVERY, at random, is timed (two clock reads
	 * cost about as much as the rest of the program) */
	E(a, BPFC_MOV_IMM(BPF_REG_8, 0));
	E(a, BPFC_CALL(BPF_FUNC_get_prandom_u32));
	E(a, BPFC_ALU_IMM(BPF_AND, BPF_REG_0, BPF_TIME_EVERY - 1));
	emit(a, BPFC_JMP_IMM(BPF_JNE, BPF_REG_0, 0, 0), L_UNTIMED);
	E(a, BPFC_CALL(BPF_FUNC_ktime_get_ns));
	E(a, BPFC_MOV_REG(BPF_REG_8, BPF_REG_0));
	here(a, L_UNTIMED);
	if (kind == K_CREATE) /* task_newtask(task, clone_flags): args[1] */
		E(a, BPFC_LDX(BPF_DW, BPF_REG_7, BPF_REG_6, 8));
	/* the tally: the per-CPU array's one entry */
	E(a, BPFC_ST(BPF_W, BPF_REG_10, -4, 0));
	ld_map(a, BPF_REG_1, stats);
	E(a, BPFC_MOV_REG(BPF_REG_2, BPF_REG_10));
	E(a, BPFC_ALU_IMM(BPF_ADD, BPF_REG_2, -4));
	E(a, BPFC_CALL(BPF_FUNC_map_lookup_elem));
	emit(a, BPFC_JMP_IMM(BPF_JEQ, BPF_REG_0, 0, 0), L_OUT);
	E(a, BPFC_MOV_REG(BPF_REG_6, BPF_REG_0));
	if (kind == K_CREATE) {
		inc(a, BPF_REG_6, S_OFF(forks));
		E(a, BPFC_ALU_IMM(BPF_AND, BPF_REG_7, BPF_CLONE_THREAD));
		emit(a, BPFC_JMP_IMM(BPF_JEQ, BPF_REG_7, 0, 0), L_DONE); /* a new process */
	}
	E(a, BPFC_CALL(BPF_FUNC_get_current_pid_tgid));
	E(a, BPFC_MOV_REG(BPF_REG_9, BPF_REG_0));
	if (kind == K_CREATE) {
		E(a, BPFC_MOV_IMM(BPF_REG_7, F_OFF(creates)));
	} else if (kind == K_EXEC) {
		E(a, BPFC_MOV_IMM(BPF_REG_7, F_OFF(execs)));
	} else { /* a thread's end, or the leader's (pid == tgid) */
		E(a, BPFC_MOV_IMM(BPF_REG_7, F_OFF(exits)));
		E(a, BPFC_MOV_REG(BPF_REG_1, BPF_REG_9));
		E(a, BPFC_ALU_IMM(BPF_RSH, BPF_REG_1, 32));
		E(a, BPFC_MOV32_REG(BPF_REG_2, BPF_REG_9));
		emit(a, BPFC_JMP_REG(BPF_JNE, BPF_REG_1, BPF_REG_2, 0), L_EXIT_LEADER);
		E(a, BPFC_MOV_IMM(BPF_REG_7, F_OFF(ends)));
		here(a, L_EXIT_LEADER);
	}
	/* the key: the tgid */
	E(a, BPFC_ALU_IMM(BPF_RSH, BPF_REG_9, 32));
	E(a, BPFC_STX(BPF_W, BPF_REG_10, BPF_REG_9, -4));
	ld_map(a, BPF_REG_1, tgids);
	E(a, BPFC_MOV_REG(BPF_REG_2, BPF_REG_10));
	E(a, BPFC_ALU_IMM(BPF_ADD, BPF_REG_2, -4));
	E(a, BPFC_CALL(BPF_FUNC_map_lookup_elem));
	emit(a, BPFC_JMP_IMM(BPF_JNE, BPF_REG_0, 0, 0), L_ADD);
	/* a new entry: zeros, and 1 in this event's field */
	for (int off = -40; off < -8; off += 8)
		E(a, BPFC_ST(BPF_DW, BPF_REG_10, (int16_t)off, 0));
	E(a, BPFC_MOV_REG(BPF_REG_1, BPF_REG_10));
	E(a, BPFC_ALU_IMM(BPF_ADD, BPF_REG_1, -40));
	E(a, BPFC_ALU_REG(BPF_ADD, BPF_REG_1, BPF_REG_7));
	E(a, BPFC_ST(BPF_DW, BPF_REG_1, 0, 1));
	ld_map(a, BPF_REG_1, tgids);
	E(a, BPFC_MOV_REG(BPF_REG_2, BPF_REG_10));
	E(a, BPFC_ALU_IMM(BPF_ADD, BPF_REG_2, -4));
	E(a, BPFC_MOV_REG(BPF_REG_3, BPF_REG_10));
	E(a, BPFC_ALU_IMM(BPF_ADD, BPF_REG_3, -40));
	E(a, BPFC_MOV_IMM(BPF_REG_4, BPF_NOEXIST));
	E(a, BPFC_CALL(BPF_FUNC_map_update_elem));
	emit(a, BPFC_JMP_IMM(BPF_JEQ, BPF_REG_0, 0, 0), L_COUNTED);
	/* another CPU entered it first, or the map is full */
	ld_map(a, BPF_REG_1, tgids);
	E(a, BPFC_MOV_REG(BPF_REG_2, BPF_REG_10));
	E(a, BPFC_ALU_IMM(BPF_ADD, BPF_REG_2, -4));
	E(a, BPFC_CALL(BPF_FUNC_map_lookup_elem));
	emit(a, BPFC_JMP_IMM(BPF_JEQ, BPF_REG_0, 0, 0), L_LOST);
	here(a, L_ADD);
	E(a, BPFC_ALU_REG(BPF_ADD, BPF_REG_0, BPF_REG_7));
	inc(a, BPF_REG_0, 0);
	here(a, L_COUNTED);
	E(a, BPFC_MOV_REG(BPF_REG_2, BPF_REG_6));
	E(a, BPFC_ALU_IMM(BPF_ADD, BPF_REG_2, S_OFF(creates)));
	E(a, BPFC_ALU_REG(BPF_ADD, BPF_REG_2, BPF_REG_7));
	inc(a, BPF_REG_2, 0);
	emit(a, BPFC_JA(0), L_DONE);
	here(a, L_LOST);
	inc(a, BPF_REG_6, S_OFF(lost));
	here(a, L_DONE);
	inc(a, BPF_REG_6, S_OFF(runs));
	emit(a, BPFC_JMP_IMM(BPF_JEQ, BPF_REG_8, 0, 0), L_OUT);
	E(a, BPFC_CALL(BPF_FUNC_ktime_get_ns));
	E(a, BPFC_ALU_REG(BPF_SUB, BPF_REG_0, BPF_REG_8));
	E(a, BPFC_ATOMIC_ADD64(BPF_REG_6, BPF_REG_0, S_OFF(run_ns)));
	inc(a, BPF_REG_6, S_OFF(timed));
	here(a, L_OUT);
	E(a, BPFC_MOV_IMM(BPF_REG_0, 0));
	E(a, BPFC_EXIT());
	return resolve(a);
}

/* Why a step failed, in the words an operator acts on. */
static int bpf_why(char *err, size_t errlen, int rc, const char *step, const char *detail)
{
	const char *hint = "";

	if (rc == -EPERM || rc == -EACCES)
		hint = ": it needs CAP_BPF and CAP_PERFMON (Linux 5.8; CAP_SYS_ADMIN before), and "
		       "before Linux 5.11 room under RLIMIT_MEMLOCK for its maps";
	else if (rc == -ENOSYS)
		hint = ": this kernel has no bpf(2) (CONFIG_BPF_SYSCALL)";
	else if (rc == -ENOENT)
		hint = ": no such raw tracepoint here (Linux 4.17 has them)";
	return errbuf_set(err, errlen, rc, "the BPF counter: %s (%s)%s%s%s", step, strerror(-rc),
	                  hint, detail && *detail ? "; the verifier: " : "", detail ? detail : "");
}

static void *canary_main(void *arg)
{
	(void)arg;
	return NULL;
}

/* A thread of ours must be counted, its create (and its end, when ends
 * are counted), under our own tgid: 0, or -ETIMEDOUT (in a PID namespace other than the initial one
 * the programs count our tgid under another number). */
static int bpf_canary(struct obs_bpf *b)
{
	pid_t self = getpid();
	struct obs_bpf_val v;
	double end;
	pthread_t t;

	if (pthread_create(&t, NULL, canary_main, NULL) != 0)
		return -EAGAIN;
	pthread_join(t, NULL);
	/* do_exit() fires sched_process_exit after the join's wake-up
	 * (exit_mm()), so the end may come a moment later */
	for (end = clock_mono_s() + BPF_CANARY_S; clock_mono_s() < end;) {
		if (bpfc_map_lookup(b->tgids, &self, &v) == 0 && v.creates >= 1 &&
		    (!b->exits || v.exits >= 1))
			return 0;
		poll(NULL, 0, 5);
	}
	return -ETIMEDOUT;
}

static int bpf_load(struct obs_bpf *b, char *err, size_t errlen)
{
	struct bpf_asm a;
	char log[160] = "";
	int rc;

	for (size_t i = 0; i < NPROGS; i++) {
		if (bpf_progs[i].kind == K_EXIT && !b->exits)
			continue; /* exits derived: no program in every ending thread */
		rc = bpf_build(&a, bpf_progs[i].kind, b->tgids, b->stats);
		if (rc < 0)
			return bpf_why(err, errlen, rc, "building a program", NULL);
		rc = bpfc_prog_load(BPF_PROG_TYPE_RAW_TRACEPOINT, a.in, (size_t)a.n, "Dual MIT/GPL",
		                    bpf_progs[i].name, log, sizeof(log));
		if (rc < 0)
			return bpf_why(err, errlen, rc, "loading a program", log);
		b->prog[i] = rc;
		rc = bpfc_raw_tp_open(bpf_progs[i].tracepoint, b->prog[i]);
		if (rc < 0) {
			char step[80];

			snprintf(step, sizeof(step), "attaching to %s", bpf_progs[i].tracepoint);
			return bpf_why(err, errlen, rc, step, NULL);
		}
		b->link[i] = rc;
	}
	return 0;
}

int obs_bpf_open(struct obs_bpf *b, int exits, char *err, size_t errlen)
{
	int rc;

	obs_bpf_init(b);
	b->exits = exits;
	rc = bpfc_possible_cpus();
	if (rc < 0)
		return errbuf_set(err, errlen, rc, "the BPF counter: the possible CPUs: %s",
		                  strerror(-rc));
	b->ncpus = rc;
	rc = bpfc_map_create(BPF_MAP_TYPE_HASH, sizeof(uint32_t), sizeof(struct obs_bpf_val),
	                     BPF_TGIDS, BPF_F_NO_PREALLOC, "tw_tgids");
	if (rc < 0) {
		bpf_why(err, errlen, rc, "creating its map", NULL);
		goto fail;
	}
	b->tgids = rc;
	rc = bpfc_map_create(BPF_MAP_TYPE_PERCPU_ARRAY, sizeof(uint32_t),
	                     sizeof(struct obs_bpf_stats), 1, 0, "tw_tally");
	if (rc < 0) {
		bpf_why(err, errlen, rc, "creating its tally", NULL);
		goto fail;
	}
	b->stats = rc;
	rc = bpf_load(b, err, errlen);
	if (rc < 0)
		goto fail;
	rc = bpf_canary(b);
	if (rc == -ETIMEDOUT) {
		errbuf_set(err, errlen, rc,
		           "the BPF counter did not count a thread this process started: it counts "
		           "in the initial PID namespace, and this process is in another (a "
		           "container)");
		goto fail;
	}
	if (rc < 0) {
		errbuf_set(err, errlen, rc, "the BPF counter: its canary thread: %s",
		           strerror(-rc));
		goto fail;
	}
	return 0;
fail:
	obs_bpf_close(b);
	return rc;
}

/* The count last read for tgid, or NULL (b->seen is sorted by tgid). */
static int seen_cmp(const void *a, const void *b)
{
	pid_t x = ((const struct obs_bpf_seen *)a)->tgid,
	      y = ((const struct obs_bpf_seen *)b)->tgid;

	return (x > y) - (x < y);
}

static struct obs_bpf_seen *seen_find(struct obs_bpf *b, pid_t tgid)
{
	struct obs_bpf_seen key = {.tgid = tgid};

	return b->nseen ? bsearch(&key, b->seen, b->nseen, sizeof(key), seen_cmp) : NULL;
}

/* What a count added since it was last read: an entry's fields only grow
 * while it is in the map, and one taken out is read afresh. */
static void delta(const struct obs_bpf_val *now, const struct obs_bpf_val *last,
                  struct obs_bpf_val *d)
{
	const uint64_t *a = (const uint64_t *)now, *z = (const uint64_t *)last;
	uint64_t *o = (uint64_t *)d;

	for (size_t k = 0; k < sizeof(*d) / sizeof(uint64_t); k++)
		o[k] = a[k] - z[k];
}

/* Whether the process tgid has ended (and been reaped): its entry is then
 * taken out of the map, the last of its counts read. */
static int ended(pid_t tgid)
{
	return kill(tgid, 0) < 0 && errno == ESRCH;
}

int obs_bpf_drain(struct obs_bpf *b, obs_bpf_fn fn, void *arg)
{
	static pid_t keys[BPF_TGIDS];
	size_t n = 0, kept = 0;
	struct obs_bpf_seen *next;
	int rc;

	/* the keys first, then each count: an entry stays in the map while
	 * its process lives, so that no add of a program in flight falls
	 * into an entry already taken out */
	for (rc = bpfc_map_next_key(b->tgids, NULL, &keys[0]); rc == 0 && ++n < BPF_TGIDS;
	     rc = bpfc_map_next_key(b->tgids, &keys[n - 1], &keys[n]))
		;
	if (rc < 0 && rc != -ENOENT)
		return rc;
	next = xcalloc(n ? n : 1, sizeof(*next));
	for (size_t i = 0; i < n; i++) {
		struct obs_bpf_val v, d;
		struct obs_bpf_seen *last;

		if (bpfc_map_lookup(b->tgids, &keys[i], &v) < 0)
			continue;
		last = seen_find(b, keys[i]);
		delta(&v, last ? &last->v : &(struct obs_bpf_val){0}, &d);
		if (fn && (d.creates || d.exits || d.execs || d.ends))
			fn(arg, keys[i], &d);
		if (ended(keys[i])) {
			/* between its last read and here, only a new process
			 * given the same PID could add: rare, and lost */
			(void)bpfc_map_delete(b->tgids, &keys[i]);
			b->taken_out++;
			continue;
		}
		next[kept].tgid = keys[i];
		next[kept++].v = v;
	}
	free(b->seen);
	b->seen = next;
	b->nseen = kept;
	qsort(b->seen, b->nseen, sizeof(*b->seen), seen_cmp);
	return (int)n;
}

int obs_bpf_stats(const struct obs_bpf *b, struct obs_bpf_stats *s)
{
	struct obs_bpf_stats *per = calloc((size_t)b->ncpus, sizeof(*per));
	uint32_t zero = 0;
	int rc;

	if (!per)
		return -ENOMEM;
	memset(s, 0, sizeof(*s));
	rc = bpfc_map_lookup(b->stats, &zero, per);
	for (int c = 0; rc == 0 && c < b->ncpus; c++) {
		const uint64_t *f = (const uint64_t *)&per[c];
		uint64_t *t = (uint64_t *)s;

		for (size_t k = 0; k < sizeof(*s) / sizeof(uint64_t); k++)
			t[k] += f[k];
	}
	free(per);
	return rc;
}

void obs_bpf_init(struct obs_bpf *b)
{
	memset(b, 0, sizeof(*b));
	b->tgids = b->stats = -1;
	for (size_t i = 0; i < NPROGS; i++)
		b->prog[i] = b->link[i] = -1;
}

void obs_bpf_detach(struct obs_bpf *b)
{
	for (size_t i = 0; b && i < NPROGS; i++) {
		if (b->link[i] >= 0)
			close(b->link[i]);
		b->link[i] = -1;
	}
}

void obs_bpf_close(struct obs_bpf *b)
{
	if (!b)
		return;
	obs_bpf_detach(b);
	for (size_t i = 0; i < NPROGS; i++) {
		if (b->prog[i] >= 0)
			close(b->prog[i]);
		b->prog[i] = -1;
	}
	if (b->tgids >= 0)
		close(b->tgids);
	if (b->stats >= 0)
		close(b->stats);
	b->tgids = b->stats = -1;
	free(b->seen);
	b->seen = NULL;
	b->nseen = 0;
}
