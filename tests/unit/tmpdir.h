/*
 * tmpdir: one scratch directory per unit-test binary, made by the group
 * setup and removed with everything in it by the group teardown.
 */
#ifndef TW_TEST_TMPDIR_H
#define TW_TEST_TMPDIR_H

#include <stdio.h>
#include <stdlib.h>

static char tmpdir[128];

/* Makes /tmp/NAME.XXXXXX; 0 or -1. */
static inline int tmpdir_make(const char *name)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/%s.XXXXXX", name);
	return mkdtemp(tmpdir) ? 0 : -1;
}

static inline int tmpdir_remove(void)
{
	char cmd[sizeof(tmpdir) + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove \"%s\", ignoring\n", tmpdir);
	return 0;
}

#endif
