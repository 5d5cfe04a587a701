/*
 * cycle_status: how a cycle ended, one table as the master copy of its
 * names and of what each status means to the journal and the scheduler.
 */
#ifndef TW_CYCLE_STATUS_H
#define TW_CYCLE_STATUS_H

enum cycle_status {
	CYCLE_NONE,        /* no cycle has ended yet */
	CYCLE_OK,          /* every probe gave its answer */
	CYCLE_PARTIAL,     /* some did */
	CYCLE_FAILED,      /* none did, or the cycle could not be stored */
	CYCLE_INTERRUPTED, /* the daemon stopped during it */
	CYCLE_N_STATUSES
};

struct cycle_status_desc {
	const char *name; /* "" for CYCLE_NONE */
	int priority;     /* the journal priority of its "Cycle N finished" line */
	int retried;      /* a retry follows it (else the next interval) */
};

/* Indexed by enum cycle_status. */
extern const struct cycle_status_desc cycle_statuses[CYCLE_N_STATUSES];

/* The status of that name; CYCLE_NONE for "", NULL or an unknown name. */
enum cycle_status cycle_status_parse(const char *name);
/* A cycle's status from its probes: ok when each of the `ran` probes gave
 * its answer (`good`: ok or skipped), failed when none did (or none ran),
 * partial in between, interrupted when stopped. */
enum cycle_status cycle_status_of(unsigned ran, unsigned good, int interrupted);
/* 1 when a cycle that ended with this status is retried. */
int cycle_status_retried(enum cycle_status status);

static inline const char *cycle_status_name(enum cycle_status s)
{
	return cycle_statuses[s < CYCLE_N_STATUSES ? s : CYCLE_NONE].name;
}

#endif
