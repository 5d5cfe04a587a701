/*
 * ctxsw_ring: the ctxsw probe's ring of threads. One token goes round 2 to
 * 64 threads on the probe's CPU: ns per hop, and the switches a hop took.
 */
#include <errno.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "clock.h"
#include "futexw.h"
#include "joinq.h"
#include "stats.h"
#include "sysinfo.h"

#include "ctxswp.h"

/* n threads pass one token around: thread i waits for slot[i], then hands
 * it to i + 1. Thread 0 times `laps` trips around the ring. */
struct ctxsw_ring {
	const struct ctxsw_env *env;
	int n, sel;
	uint64_t laps, warm;
	int slot[CTXSW_MAX_RING];
	int quit;
	int ready; /* threads 1..n-1 that reached their first wait */
	int bad;   /* a thread failed its set-up (pin, selector) */
	uint64_t ns;
	pid_t tid[CTXSW_MAX_RING];
	double switches; /* during the timed laps; -1: not counted */
};

struct ring_arg {
	struct ctxsw_ring *r;
	int i;
};

static void ring_pass(struct ctxsw_ring *r, int i)
{
	futexw_store_wake(&r->slot[(i + 1) % r->n], 1);
}

static void ring_take(struct ctxsw_ring *r, int i)
{
	futexw_wait_equal(&r->slot[i], 1);
	__atomic_store_n(&r->slot[i], 0, __ATOMIC_RELAXED);
}

/* The times the ring's threads were switched in (sys_task_switched_in);
 * -1 when a thread's count cannot be read. */
static double ring_switched_in(const struct ctxsw_ring *r)
{
	unsigned long long count;
	double sum = 0;

	for (int i = 0; i < r->n; i++) {
		if (sys_task_switched_in((int)r->tid[i], &count) < 0)
			return -1;
		sum += (double)count;
	}
	return sum;
}

static void *ring_main(void *p)
{
	const struct ring_arg *a = p;
	struct ctxsw_ring *r = a->r;
	struct ctxsw_self self;
	uint64_t t0;

	r->tid[a->i] = (pid_t)syscall(SYS_gettid);
	ctxsw_read_self(&self, r->env, r->sel, (unsigned)a->i);
	if (self.cyc_fd >= 0)
		close(self.cyc_fd);
	if (self.pin_err || (r->sel && self.sel_err < 0))
		__atomic_store_n(&r->bad, 1, __ATOMIC_RELAXED);
	if (a->i != 0) {
		/* The creator waits for this before it starts the next thread,
		 * so that a 64-thread ring never has more than a couple of
		 * threads runnable at once (a host's run queue stays short). */
		__atomic_add_fetch(&r->ready, 1, __ATOMIC_RELEASE);
		futexw_wake(&r->ready, 1);
		/* quit is read while holding the token: thread 0 sets it only
		 * once the token is back with it, so a token of an ordinary
		 * lap never sees it set. A thread that sees it ends without
		 * passing the token on: ring_stop() wakes the next. */
		for (;;) {
			ring_take(r, a->i);
			if (__atomic_load_n(&r->quit, __ATOMIC_ACQUIRE))
				return NULL;
			ring_pass(r, a->i);
		}
	}
	for (uint64_t k = 0; k < r->warm; k++) {
		ring_pass(r, 0);
		ring_take(r, 0);
	}
	/* The others wait for the token thread 0 holds: the counts hold still
	 * while they are read. */
	r->switches = ring_switched_in(r);
	t0 = clock_ns();
	for (uint64_t k = 0; k < r->laps; k++) {
		ring_pass(r, 0);
		ring_take(r, 0);
	}
	r->ns = clock_ns() - t0;
	if (r->switches >= 0) {
		double after = ring_switched_in(r);

		r->switches = after >= r->switches ? after - r->switches : -1;
	}
	__atomic_store_n(&r->quit, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* Ends the ring threads from..n-1, which wait for their token with quit
 * set: each is woken and joined (joinq_join()) before the next. */
static void ring_stop(struct ctxsw_ring *r, pthread_t *th, int from)
{
	__atomic_store_n(&r->quit, 1, __ATOMIC_RELEASE);
	for (int i = from; i < r->n; i++) {
		futexw_store_wake(&r->slot[i], 1);
		joinq_join(th[i]);
	}
}

/* One ring sample: ns per hop and switches per hop (-1: not counted), or
 * -errno with the reason in why. */
static int ring_sample(struct ctxsw_ring *r, double *ns, double *sw, char *why, size_t whylen)
{
	pthread_t th[CTXSW_MAX_RING];
	struct ring_arg arg[CTXSW_MAX_RING];
	void *map[CTXSW_MAX_RING] = {0};
	int started = 0, err = 0;

	/* Thread 0 starts the token, so it starts last. */
	for (int i = r->n - 1; i >= 0 && !err; i--) {
		arg[i] = (struct ring_arg){r, i};
		err = ctxsw_start_on_stack(&th[i], &map[i], CTXSW_STACK_BYTES, r->sel, (unsigned)i,
		                           ring_main, &arg[i], why, whylen);
		if (!err)
			started++;
		if (!err && i != 0)
			futexw_wait_equal(&r->ready, started);
	}
	if (!err)
		joinq_join(th[0]); /* back from its laps, quit set */
	ring_stop(r, th, err ? r->n - started : 1);
	for (int i = 0; i < r->n; i++)
		if (map[i])
			munmap(map[i], CTXSW_STACK_BYTES);
	if (err)
		return err;
	if (r->bad) {
		snprintf(why, whylen, "a ring thread could not be pinned or load its FS selector");
		return -EINVAL;
	}
	*ns = (double)r->ns / ((double)r->laps * (double)r->n);
	*sw = r->switches >= 0 ? r->switches / ((double)r->laps * (double)r->n) : -1;
	return 0;
}

/* The ring figures of one arm (high, or selector when sel): ns per hop and
 * switches per hop (-1: not counted) for each ring size of the shape, the
 * median of ring_reps samples each. 0, or -errno with the reason in why. */
static int ring_values(const struct ctxsw_env *env, int sel, const struct ctxsw_shape *sh,
                       double switch_ns, double *out, double *sw_out, char *why, size_t whylen)
{
	double v[8], sw[8];

	for (size_t k = 0; k < sh->n_rings && k < CTXSW_MAX_RINGS; k++) {
		int n = sh->rings[k];
		double laps = sh->ring_s * 1e9 / (switch_ns * n);

		for (unsigned rep = 0; rep < sh->ring_reps && rep < 8; rep++) {
			struct ctxsw_ring r = {.env = env, .n = n, .sel = sel};

			r.laps = laps < 10 ? 10 : (uint64_t)laps;
			r.warm = r.laps / 8 + 2;
			if (ring_sample(&r, &v[rep], &sw[rep], why, whylen) < 0)
				return -EINVAL;
		}
		out[k] = stats_median(v, sh->ring_reps < 8 ? sh->ring_reps : 8);
		sw_out[k] = stats_median(sw, sh->ring_reps < 8 ? sh->ring_reps : 8);
		if (sw_out[k] < 0)
			sw_out[k] = -1;
	}
	return 0;
}

/* ring_values of the selector arm, in a child process (see arm_sample). */
struct ring_job {
	const struct ctxsw_env *env;
	const struct ctxsw_shape *sh;
	double switch_ns;
};

struct ring_result {
	int r;
	double v[CTXSW_MAX_RINGS];
	double sw[CTXSW_MAX_RINGS];
	char why[400];
};

static int ring_child(int fd, void *arg)
{
	const struct ring_job *j = arg;
	struct ring_result res = {0};

	res.r =
	    ring_values(j->env, 1, j->sh, j->switch_ns, res.v, res.sw, res.why, sizeof(res.why));
	return isolate_send(fd, &res, sizeof(res)) < 0 ? 2 : 0;
}

/* The ring series of one arm, added to the document. */
int ctxsw_ring_series(struct probe_doc *doc, const struct ctxsw_env *env, int sel,
                      const struct ctxsw_shape *sh, double switch_ns, char *why, size_t whylen)
{
	struct ring_job j = {env, sh, switch_ns};
	struct ring_result res = {0};
	struct probe_series *ser;
	struct isolate_end end;
	int r;

	if (sel) {
		r = isolate_run(ring_child, &j, &res, sizeof(res), env->timeout_ms, &end);
		r = ctxsw_child_failed(r, &end, sizeof(res), why, whylen);
		if (r == 0 && (r = res.r) < 0)
			snprintf(why, whylen, "%s", res.why);
	} else {
		r = ring_values(env, 0, sh, switch_ns, res.v, res.sw, why, whylen);
	}
	if (r < 0)
		return r;
	ser = probe_series_new(doc, sel ? "ring_selector_ns" : "ring_ns", "threads", "ns");
	for (size_t k = 0; k < sh->n_rings && k < CTXSW_MAX_RINGS; k++)
		probe_series_add(ser, sh->rings[k], res.v[k]);
	if (sel)
		return 0;
	for (size_t k = 0; k < sh->n_rings && k < CTXSW_MAX_RINGS; k++)
		if (res.sw[k] < 0) {
			probe_info_str(doc, "ring_switches",
			               "not counted: a ring thread's /proc/self/task/TID/schedstat "
			               "could not be read (a kernel without CONFIG_SCHED_INFO)");
			return 0;
		}
	ser = probe_series_new(doc, "ring_switches_per_hop", "threads", "ratio");
	for (size_t k = 0; k < sh->n_rings && k < CTXSW_MAX_RINGS; k++)
		probe_series_add(ser, sh->rings[k], res.sw[k]);
	probe_info_str(doc, "ring_switches",
	               "counted: ring threads switched in (schedstat) per hop");
	return 0;
}
