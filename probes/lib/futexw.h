/*
 * futexw: a 32-bit word that threads of one process sleep on and wake
 * each other through (futex(2), private), shared by the probes.
 */
#ifndef TW_FUTEXW_H
#define TW_FUTEXW_H

/* Stores val in *w (release) and wakes one sleeper. */
void futexw_store_wake(int *w, int val);
/* Sleeps until *w == val (acquire). */
void futexw_wait_equal(int *w, int val);
/* Sleeps while *w == val (acquire); returns the value that ended it. */
int futexw_wait_while(int *w, int val);
/* Wakes up to n sleepers on w. */
void futexw_wake(int *w, int n);

#endif
