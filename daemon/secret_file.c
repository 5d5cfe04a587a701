/* secret_file: the mode check of files that hold secrets. */
#include <errno.h>
#include <sys/stat.h>

#include "secret_file.h"

int secret_file_exposed(const char *path, mode_t *mode)
{
	struct stat sb;

	if (stat(path, &sb) < 0)
		return -errno;
	*mode = sb.st_mode & 07777;
	return (sb.st_mode & (S_IRGRP | S_IROTH)) != 0;
}
