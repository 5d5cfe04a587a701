/*
 * runner_env: the environment a probe starts with, built from the caller's
 * by an allow-list, so that no credential, systemd socket or secret the
 * daemon was given reaches probe code.
 */
#ifndef TW_RUNNER_ENV_H
#define TW_RUNNER_ENV_H

/* A NULL-terminated array of the entries of `env` that the allow-list
 * keeps; the strings are env's own, the array is malloc'd (free() it). */
char **runner_env_build(char *const *env);

/* Whether the allow-list keeps the variable of entry "NAME=value". */
int runner_env_keeps(const char *entry);

#endif
