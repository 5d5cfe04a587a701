/*
 * ctxswp: what the ctxsw probe's files share (ctxsw.c: the paired arms and
 * the document; ctxsw_ring.c: the ring of threads).
 */
#ifndef TW_CTXSWP_H
#define TW_CTXSWP_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "fsseg.h"
#include "isolate.h"
#include "probe.h"

#define CTXSW_STACK_BYTES (256u << 10)
#define CTXSW_MIN_PAIRS 15
/* Reaching the minimum number of blocks may take this many budgets. */
#define CTXSW_GIVE_UP 4.0
#define CTXSW_MAX_PAIRS 400
#define CTXSW_BOOT_ITERS 2000
#define CTXSW_LOW_LIMIT (UINT64_C(1) << 32)
#define CTXSW_MARGIN 0.02
/* Where the low stacks are asked for when MAP_32BIT does not exist. */
#define CTXSW_LOW_HINT UINT64_C(0x40000000)
#define CTXSW_MAX_RING 64
#define CTXSW_MAX_RINGS 8

/* Run shapes: the budget of the paired blocks, the length of one sample,
 * the ring sizes with the length and repeats of each ring sample. */
struct ctxsw_shape {
	double budget_s;
	double sample_s;
	unsigned tsc_ms;
	const int *rings;
	size_t n_rings;
	double ring_s;
	unsigned ring_reps;
};
/* What the whole run shares. */
struct ctxsw_env {
	int cpu;
	int perf;       /* count core cycles with per-thread perf counters */
	int timeout_ms; /* the longest a selector sample's process may run */
	struct fsseg seg;
};

/* What one thread of a sample reads back about itself. */
struct ctxsw_self {
	uintptr_t stack_lo, stack_hi; /* from pthread_getattr_np */
	uintptr_t fs_base;            /* ARCH_GET_FS (x86-64) or the thread pointer */
	uintptr_t tcb;                /* pthread_self() */
	uintptr_t sp;                 /* address of a local variable */
	unsigned fs_sel;              /* the %fs selector after set-up */
	int sel_err;                  /* fsseg_load() result: selector or -errno */
	int pin_err;                  /* sys_pin_cpu() result */
	int cyc_fd;                   /* cyc_open() result: fd or -errno */
};

/* Fills s with what the calling thread of slot `slot` reads back about
 * itself (stack, FS base and selector), pinning it to env->cpu and, for
 * the selector arm (sel), loading the FS selector. */
void ctxsw_read_self(struct ctxsw_self *s, const struct ctxsw_env *env, int sel, unsigned slot);
/* Starts fn(arg) on a fresh stack of len bytes, low or high (k spreads the
 * low hints); *map is the mapping to unmap after the join. 0, or -errno
 * with the reason in why. */
int ctxsw_start_on_stack(pthread_t *th, void **map, size_t len, int low, unsigned k,
                         void *(*fn)(void *), void *arg, char *why, size_t whylen);
/* Says how an isolated child ended unless it ended cleanly with `want`
 * bytes of answer; then returns 0. */
int ctxsw_child_failed(int r, const struct isolate_end *end, size_t want, char *why, size_t whylen);
/* The ring series of one arm (high, or the selector when sel), added to
 * the document; switch_ns sizes the laps. 0, or -errno with why. */
int ctxsw_ring_series(struct probe_doc *doc, const struct ctxsw_env *env, int sel,
                      const struct ctxsw_shape *sh, double switch_ns, char *why, size_t whylen);

#endif
