/*
 * fuzz_observe: the workload observer's parsers of what the kernel and
 * other users write (lib/observe_*.c) on arbitrary bytes. The first byte
 * picks the parser: a proc connector datagram (obs_cn_parse), a
 * /proc/PID/cgroup text, a stat line (whose comm anyone writes), a sched
 * or status text, a maps text (the stacks in it), an smaps text over the
 * stacks the same text's maps lines name, a taskstats datagram, the cpulist
 * that sizes the BPF counter's per-CPU values. Whatever
 * each accepts must hold
 * together: events within their buffer, a unit only with a path, stacks
 * ordered and within their mappings.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bpfcall.h"
#include "fuzz.h"
#include "observep.h"

static void cn(const uint8_t *d, size_t n)
{
	struct obs_ev ev[8];
	size_t bad = 0, got = obs_cn_parse(d, n, ev, 8, &bad);

	if (got > 8)
		abort();
	for (size_t i = 0; i < got; i++)
		if (ev[i].what != OBS_EV_ACK && ev[i].what != OBS_EV_OTHER &&
		    (ev[i].pid <= 0 || ev[i].tgid <= 0))
			abort();
}

static void cgroup(const char *s)
{
	struct obs_cgroup cg;

	if (obs_cgroup_parse(s, &cg) == 0) {
		if ((cg.unit || cg.manager) && !cg.path)
			abort();
		if (cg.unit && !obs_unit_name_valid(cg.unit, strlen(cg.unit)))
			abort();
		if (cg.path && cg.path[0] != '/')
			abort();
	}
	obs_cgroup_free(&cg);
}

static void stat_line(const char *s)
{
	struct obs_stat st;

	if (obs_stat_parse(s, &st) == 0 && (strlen(st.comm) > 16 || st.threads < 0))
		abort();
}

static void sched(const char *s)
{
	struct obs_counts c;

	(void)obs_sched_parse(s, &c);
}

static void stacks(const char *s, int smaps)
{
	struct obs_vma *v = NULL;
	size_t n = obs_stacks_find(s, &v);

	for (size_t i = 0; i < n; i++)
		if (v[i].end <= v[i].start)
			abort();
	if (smaps && n) {
		struct obs_stack_use *u = calloc(n, sizeof(*u));

		if (!u || obs_smaps_stacks(s, v, n, u) != 0)
			abort();
		free(u);
	}
	free(v);
}

static void ts(const uint8_t *d, size_t n)
{
	struct obs_ts_exit ex[8];
	size_t bad = 0, got = obs_ts_parse(d, n, 27, ex, 8, &bad);

	if (got > 8)
		abort();
	for (size_t i = 0; i < got; i++)
		if (ex[i].tid <= 0)
			abort();
	(void)obs_ts_family_id(d, n);
	{
		struct obs_tgsum s;
		int rc = obs_ts_parse_sum(d, n, 27, 0, 100, &s);

		if (rc > 0 || rc < -4095)
			abort();
	}
}

static void cpus(const char *s)
{
	int n = bpfc_cpus_parse(s);

	if (n == 0 || (n < 0 && n != -EINVAL))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s;

	if (size < 1)
		return 0;
	if (data[0] % 8 == 0) {
		cn(data + 1, size - 1);
		return 0;
	}
	if (data[0] % 8 == 6) {
		ts(data + 1, size - 1);
		return 0;
	}
	s = malloc(size);
	if (!s)
		return 0;
	memcpy(s, data + 1, size - 1);
	s[size - 1] = '\0';
	switch (data[0] % 8) {
	case 1:
		cgroup(s);
		break;
	case 2:
		stat_line(s);
		break;
	case 3:
		sched(s);
		break;
	case 4:
		stacks(s, 0);
		break;
	case 7:
		cpus(s);
		break;
	default:
		stacks(s, 1);
		break;
	}
	free(s);
	return 0;
}
