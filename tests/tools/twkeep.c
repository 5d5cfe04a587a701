/*
 * twkeep: what the workloads' history costs on disk, measured through the
 * daemon's own code. Reads one observer window (threadwatch-observer
 * --once's JSON) on standard input and stores it N times, a window every
 * EVERY seconds, through wkeep_take() into a new database, as threadwatchd
 * keeps each window; then prints the database's growth as JSON:
 *   {"windows", "top", "seen", "kept", "bytes_empty", "bytes", "bytes_per_window",
 *    "bytes_per_day"}
 * usage: twkeep DB N EVERY_S TOP < window.json
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>

#include "clock.h"
#include "store.h"
#include "workload_keep.h"

/* The file's size after a clean close (which checkpoints the WAL). */
static long long file_bytes(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 ? (long long)st.st_size : -1;
}

static int reopen(const char *path, struct store **st)
{
	char err[512];

	if (store_open(path, 0, st, err, sizeof(err)) < 0) {
		fprintf(stderr, "twkeep: %s\n", err);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	json_error_t je;
	json_t *win, *latest = NULL;
	struct store *st = NULL;
	long n, every, top;
	long long empty, full;
	int64_t t0 = clock_wall_ms();

	if (argc != 5 || (n = atol(argv[2])) <= 0 || (every = atol(argv[3])) <= 0 ||
	    (top = atol(argv[4])) <= 0) {
		fprintf(stderr, "usage: twkeep DB N EVERY_S TOP < window.json\n");
		return 2;
	}
	win = json_loadf(stdin, 0, &je);
	if (!win) {
		fprintf(stderr, "twkeep: standard input: %s\n", je.text);
		return 2;
	}
	if (reopen(argv[1], &st) < 0)
		return 1;
	store_close(st);
	empty = file_bytes(argv[1]);
	if (reopen(argv[1], &st) < 0)
		return 1;
	for (long i = 0; i < n; i++) {
		int r = wkeep_take(st, win, (size_t)top, t0 - (n - i) * every * 1000);

		if (r < 0) {
			fprintf(stderr, "twkeep: window %ld: %s\n", i, store_last_error());
			return 1;
		}
	}
	if (store_workloads_latest(st, &latest) < 0)
		return 1;
	store_close(st);
	full = file_bytes(argv[1]);
	printf("{\"windows\": %ld, \"top\": %ld, \"seen\": %lld, \"kept\": %zu, \"bytes_empty\": "
	       "%lld, "
	       "\"bytes\": %lld, \"bytes_per_window\": %.0f, \"bytes_per_day\": %.0f}\n",
	       n, top, (long long)json_integer_value(json_object_get(latest, "seen")),
	       json_array_size(json_object_get(latest, "workloads")), empty, full,
	       (double)(full - empty) / (double)n,
	       (double)(full - empty) / (double)n * 86400.0 / (double)every);
	json_decref(latest);
	json_decref(win);
	return 0;
}
