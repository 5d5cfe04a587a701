/* secret_file: files that hold secrets (tokens, TLS keys): where a name
 * points under systemd's credentials, their first line, and whether other
 * users may read them. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "file_read.h"
#include "secret_file.h"
#include "xmalloc.h"

char *secret_file_path(const char *name)
{
	const char *dir = getenv("CREDENTIALS_DIRECTORY");
	char *p;

	if (name[0] != '/' && dir && *dir) {
		xasprintf(&p, "%s/%s", dir, name);
		if (access(p, F_OK) == 0)
			return p;
		free(p);
	}
	return xstrdup(name);
}

int secret_file_first_line(const char *path, size_t max, char **line)
{
	size_t len;
	int r = file_read_all(path, max, line, &len);

	if (r < 0)
		return r;
	(*line)[strcspn(*line, "\r\n")] = '\0';
	return 0;
}

int secret_file_exposed(const char *path, mode_t *mode)
{
	struct stat sb;

	if (stat(path, &sb) < 0)
		return -errno;
	*mode = sb.st_mode & 07777;
	return (sb.st_mode & (S_IRGRP | S_IROTH)) != 0;
}
