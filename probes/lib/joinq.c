/* joinq: joining many threads one after another without keeping their
 * exits on the CPU's run queue (see joinq.h). */
#include <time.h>

#include "joinq.h"

int joinq_join(pthread_t th)
{
	struct timespec pause = {0, JOINQ_PAUSE_NS};
	int r = pthread_join(th, NULL);

	nanosleep(&pause, NULL);
	return r;
}
