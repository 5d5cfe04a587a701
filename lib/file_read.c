/*
 * file_read: small files read whole (see file_read.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "file_read.h"
#include "xmalloc.h"

int file_read_all(const char *path, size_t max, char **out, size_t *len)
{
	char *buf;
	size_t n = 0;
	ssize_t r;
	int fd, ret = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -errno;
	buf = xmalloc(max + 2);
	while ((r = read(fd, buf + n, max + 1 - n)) != 0) {
		if (r < 0) {
			if (errno == EINTR)
				continue;
			ret = -errno;
			break;
		}
		n += (size_t)r;
		if (n > max) {
			ret = -EFBIG;
			break;
		}
	}
	close(fd);
	if (ret < 0) {
		free(buf);
		return ret;
	}
	buf[n] = '\0';
	*out = buf;
	if (len)
		*len = n;
	return 0;
}
