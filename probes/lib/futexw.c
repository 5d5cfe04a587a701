/*
 * futexw: sleeping on and waking a word (see futexw.h).
 */
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "futexw.h"

static long futex(int *word, int op, int val)
{
	return syscall(SYS_futex, word, op, val, NULL, NULL, 0);
}

void futexw_store_wake(int *w, int val)
{
	__atomic_store_n(w, val, __ATOMIC_RELEASE);
	futex(w, FUTEX_WAKE_PRIVATE, 1);
}

void futexw_wait_equal(int *w, int val)
{
	int now;

	while ((now = __atomic_load_n(w, __ATOMIC_ACQUIRE)) != val)
		futex(w, FUTEX_WAIT_PRIVATE, now);
}

int futexw_wait_while(int *w, int val)
{
	int now;

	while ((now = __atomic_load_n(w, __ATOMIC_ACQUIRE)) == val)
		futex(w, FUTEX_WAIT_PRIVATE, val);
	return now;
}

void futexw_wake(int *w, int n)
{
	futex(w, FUTEX_WAKE_PRIVATE, n);
}
