/*
 * shim_after: what the doubles share to change a host's answer after its
 * first N calls, counted across every process of a run: a host whose
 * segment path stops working after the probe proved it (a live migration
 * to another hypervisor, a policy applied under a running service).
 */
#ifndef TW_SHIM_AFTER_H
#define TW_SHIM_AFTER_H

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

/* 1 when this call is one of the first `$AFTER_VAR` of all processes,
 * counted in the file named by `$COUNT_VAR` (each call appends a byte;
 * the file's size is the count); 0 when either variable is unset, so the
 * double acts from the first call. */
static inline int shim_still_before(const char *after_var, const char *count_var)
{
	const char *after = getenv(after_var), *file = getenv(count_var);
	off_t n;
	int fd;

	if (!after || !file)
		return 0;
	fd = open(file, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return 0;
	n = lseek(fd, 0, SEEK_END);
	if (write(fd, "w", 1) != 1)
		n = -1;
	close(fd);
	return n >= 0 && n < atol(after);
}

#endif
