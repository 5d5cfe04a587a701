/* cycle_status: the table of cycle statuses (see cycle_status.h). */
#include <string.h>
#include <syslog.h>

#include "cycle_status.h"

const struct cycle_status_desc cycle_statuses[CYCLE_N_STATUSES] = {
    [CYCLE_NONE] = {"", LOG_INFO, 0},
    [CYCLE_OK] = {"ok", LOG_INFO, 0},
    [CYCLE_PARTIAL] = {"partial", LOG_WARNING, 0},
    [CYCLE_FAILED] = {"failed", LOG_ERR, 1},
    [CYCLE_INTERRUPTED] = {"interrupted", LOG_WARNING, 1},
};

enum cycle_status cycle_status_of(unsigned ran, unsigned good, int interrupted)
{
	if (interrupted)
		return CYCLE_INTERRUPTED;
	if (!ran || !good)
		return CYCLE_FAILED;
	return good < ran ? CYCLE_PARTIAL : CYCLE_OK;
}

int cycle_status_retried(enum cycle_status status)
{
	return cycle_statuses[status < CYCLE_N_STATUSES ? status : CYCLE_NONE].retried;
}

enum cycle_status cycle_status_parse(const char *name)
{
	for (int s = CYCLE_OK; name && s < CYCLE_N_STATUSES; s++)
		if (!strcmp(name, cycle_statuses[s].name))
			return (enum cycle_status)s;
	return CYCLE_NONE;
}
