/* netns: whether this network namespace has loopback alone (see netns.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "netns.h"

/* Whether a /proc/net/dev line names an interface other than lo. Its two
 * header lines have no ':' and count as none. */
static int other_interface(const char *line)
{
	const char *colon = strchr(line, ':');

	line += strspn(line, " ");
	return colon && !(colon - line == 2 && !strncmp(line, "lo", 2));
}

int netns_loopback_only(const char *dev_path)
{
	FILE *f = fopen(dev_path, "re");
	char line[512];
	int only_lo = 1;

	if (!f)
		return -errno;
	while (only_lo && fgets(line, sizeof(line), f))
		if (other_interface(line))
			only_lo = 0;
	fclose(f);
	return only_lo;
}
