/*
 * replay: runs a fuzz harness over files without libFuzzer, so that an
 * ordinary (gcc) build replays the seed corpus as a regression test. Each
 * argument is a file or a directory whose regular files are all replayed.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

/* Reads a whole file into an exactly sized buffer (so that a sanitizer
 * sees reads past the end). 0 or -errno. */
static int read_file(const char *path, uint8_t **data, size_t *size)
{
	FILE *f = fopen(path, "rb");
	struct stat st;
	uint8_t *buf;
	int r = 0;

	if (!f)
		return -errno;
	if (fstat(fileno(f), &st) < 0) {
		r = -errno;
		goto out;
	}
	buf = malloc(st.st_size > 0 ? (size_t)st.st_size : 1);
	if (!buf) {
		r = -ENOMEM;
		goto out;
	}
	if (st.st_size > 0 && fread(buf, 1, (size_t)st.st_size, f) != (size_t)st.st_size) {
		free(buf);
		r = -EIO;
		goto out;
	}
	*data = buf;
	*size = (size_t)st.st_size;
out:
	fclose(f);
	return r;
}

static int replay_file(const char *path)
{
	uint8_t *data = NULL;
	size_t size = 0;
	int r = read_file(path, &data, &size);

	if (r < 0) {
		fprintf(stderr, "replay: cannot read \"%s\": %s\n", path, strerror(-r));
		return r;
	}
	LLVMFuzzerTestOneInput(data, size);
	free(data);
	return 0;
}

/* Replays a file, or every regular file of a directory; returns the
 * number replayed or -errno. */
static long replay_path(const char *path)
{
	struct stat st;
	struct dirent **names;
	long n = 0;
	int count;

	if (stat(path, &st) < 0) {
		fprintf(stderr, "replay: cannot open \"%s\": %s\n", path, strerror(errno));
		return -errno;
	}
	if (!S_ISDIR(st.st_mode))
		return replay_file(path) < 0 ? -EIO : 1;
	count = scandir(path, &names, NULL, alphasort);
	if (count < 0) {
		fprintf(stderr, "replay: cannot list \"%s\": %s\n", path, strerror(errno));
		return -errno;
	}
	for (int i = 0; i < count; i++) {
		char *file;

		if (n >= 0 && names[i]->d_name[0] != '.' &&
		    asprintf(&file, "%s/%s", path, names[i]->d_name) > 0) {
			if (stat(file, &st) == 0 && S_ISREG(st.st_mode))
				n = replay_file(file) < 0 ? -EIO : n + 1;
			free(file);
		}
		free(names[i]);
	}
	free(names);
	return n;
}

int main(int argc, char **argv)
{
	long total = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: %s FILE|DIR...\n", argv[0]);
		return 2;
	}
	for (int i = 1; i < argc; i++) {
		long n = replay_path(argv[i]);
		if (n < 0)
			return 1;
		total += n;
	}
	printf("replayed %ld inputs\n", total);
	return 0;
}
