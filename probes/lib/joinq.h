/*
 * joinq: joining many threads one after another without keeping their
 * exits on the CPU's run queue. A thread pthread_join() has returned for
 * can still be queued on its CPU (procs_running in /proc/stat counts it)
 * while the joiner runs on: the joiner is woken from the middle of the
 * exit (the CLEARTID futex wake of mm_release(), before exit_notify()),
 * and a joiner that goes straight on to end the next thread and the next
 * gave the CPU no moment to finish the earlier exits. Ending a 64-thread
 * ring that way kept procs_running at 66 for milliseconds on an idle
 * 2-CPU KVM guest (kernel 6.18, EEVDF), while /proc showed none of the
 * threads running. A pause after each join, in which the joiner sleeps,
 * lets the CPU run the exits to their end: the peak then stays at the
 * host's own plus a couple.
 */
#ifndef TW_JOINQ_H
#define TW_JOINQ_H

#include <pthread.h>

/* How long the joiner sleeps after each join: any sleep lets the CPU run
 * what is queued; the timer slack (50 us by default) makes it longer. */
#define JOINQ_PAUSE_NS 1000L

/* pthread_join(th, NULL), then the pause. Returns pthread_join's result. */
int joinq_join(pthread_t th);

#endif
