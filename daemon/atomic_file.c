/* atomic_file: write a temporary file beside the target, then rename. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "atomic_file.h"
#include "xmalloc.h"

static int write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* A hidden name in the same directory, so that rename is atomic and a
 * reader that globs (node_exporter's *.prom) skips it. */
static char *temp_name(const char *path)
{
	const char *slash = strrchr(path, '/');
	char *tmp;

	if (slash)
		xasprintf(&tmp, "%.*s/.%s.XXXXXX", (int)(slash - path), path, slash + 1);
	else
		xasprintf(&tmp, ".%s.XXXXXX", path);
	return tmp;
}

int atomic_file_write(const char *path, const char *data, size_t len, mode_t mode)
{
	char *tmp = temp_name(path);
	int fd = mkostemp(tmp, O_CLOEXEC | O_NOFOLLOW), rc;

	if (fd < 0) {
		rc = -errno;
		free(tmp);
		return rc;
	}
	rc = write_all(fd, data, len);
	if (rc == 0 && fchmod(fd, mode) < 0)
		rc = -errno;
	if (rc == 0 && fsync(fd) < 0)
		rc = -errno;
	if (close(fd) < 0 && rc == 0)
		rc = -errno;
	if (rc == 0 && rename(tmp, path) < 0)
		rc = -errno;
	if (rc < 0)
		unlink(tmp);
	free(tmp);
	return rc;
}
