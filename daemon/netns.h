/*
 * netns: whether the daemon's network namespace holds loopback alone, as
 * under PrivateNetwork=yes: a socket it binds there itself is reachable
 * by nobody outside the service.
 */
#ifndef TW_NETNS_H
#define TW_NETNS_H

/* 1 when the interfaces in `dev_path` (/proc/self/net/dev: those of this
 * process's namespace) are "lo" alone, 0 when there are others, -errno
 * when it cannot be read. */
int netns_loopback_only(const char *dev_path);

#endif
