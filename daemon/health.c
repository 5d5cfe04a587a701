/*
 * health: the daemon's status in memory, written by the scheduler and the
 * store and read by the HTTP handlers (see health.h).
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "health.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct health_cycle cycle;
static int cycle_known;
static int store_err; /* 0, or -errno */
static unsigned long failures;
static uint64_t version; /* bumped at every change */
static char store_msg[512];

/* The store failures that health reports: what the daemon cannot work
 * around by itself. Busy, interrupted or refused input are not. */
/* What each failure is, in words an unauthenticated client may read (the
 * store's own message may name files). */
static const struct {
	int err;
	const char *words;
} failure_words[] = {
    {-ENOSPC, "the disk is full"},
    {-EROFS, "the database is read-only"},
    {-EACCES, "the database may not be written"},
    {-EIO, "an I/O error"},
    {-EBADMSG, "the database is corrupt"},
    {-ENOENT, "the database file cannot be opened"},
};

const char *health_failure_words(int err)
{
	for (size_t i = 0; i < sizeof(failure_words) / sizeof(failure_words[0]); i++)
		if (failure_words[i].err == err)
			return failure_words[i].words;
	return "it failed";
}

void health_set_cycle(const struct health_cycle *c)
{
	pthread_mutex_lock(&lock);
	if (!cycle_known || memcmp(&cycle, c, sizeof(cycle)))
		version++;
	cycle = *c;
	cycle_known = 1;
	pthread_mutex_unlock(&lock);
}

int health_get_cycle(struct health_cycle *c)
{
	int r = -ENOENT;

	pthread_mutex_lock(&lock);
	if (cycle_known) {
		*c = cycle;
		r = 0;
	}
	pthread_mutex_unlock(&lock);
	return r;
}

static int is_failure(int r, int write)
{
	if (r == -EBADMSG)
		return 1;
	for (size_t i = 0; write && i < sizeof(failure_words) / sizeof(failure_words[0]); i++)
		if (failure_words[i].err == r)
			return 1;
	return 0;
}

void health_store_result(int write, int r, const char *msg)
{
	if (!is_failure(r, write))
		return;
	pthread_mutex_lock(&lock);
	failures++;
	version++;
	/* Corruption stays the message once seen. */
	if (store_err != -EBADMSG) {
		store_err = r;
		snprintf(store_msg, sizeof(store_msg), "%s", msg && *msg ? msg : strerror(-r));
	}
	pthread_mutex_unlock(&lock);
}

unsigned long health_store_failures(void)
{
	unsigned long n;

	pthread_mutex_lock(&lock);
	n = failures;
	pthread_mutex_unlock(&lock);
	return n;
}

void health_store_cycle_ok(unsigned long since)
{
	pthread_mutex_lock(&lock);
	if (failures == since && store_err != -EBADMSG && store_err) {
		version++;
		store_err = 0;
		store_msg[0] = '\0';
	}
	pthread_mutex_unlock(&lock);
}

int health_store_error(char *msg, size_t len)
{
	int r;

	pthread_mutex_lock(&lock);
	r = store_err;
	snprintf(msg, len, "%s", store_msg);
	pthread_mutex_unlock(&lock);
	return r;
}

uint64_t health_version(void)
{
	uint64_t v;

	pthread_mutex_lock(&lock);
	v = version;
	pthread_mutex_unlock(&lock);
	return v;
}

void health_reset(void)
{
	pthread_mutex_lock(&lock);
	memset(&cycle, 0, sizeof(cycle));
	cycle_known = 0;
	store_err = 0;
	failures = 0;
	store_msg[0] = '\0';
	pthread_mutex_unlock(&lock);
}
