/*
 * bpfcall: the bpf(2) system call (bpfcall.h). Each command fills the part
 * of union bpf_attr it reads and zeroes the rest, as the kernel requires
 * (CHECK_ATTR() refuses a command whose unused tail is not zero).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "bpfcall.h"
#include "file_read.h"

/* More CPUs than any kernel's NR_CPUS (8192 on x86-64 and arm64). */
#define BPFC_CPUS_MAX 65536

static int bpfc(int cmd, union bpf_attr *a)
{
	long rc = syscall(SYS_bpf, cmd, a, sizeof(*a));

	return rc < 0 ? -errno : (int)rc;
}

static void set_name(char *dst, size_t n, const char *name)
{
	/* bpf_obj_name_cpy(): letters, digits, '_' and '.', NUL-terminated */
	snprintf(dst, n, "%s", name ? name : "");
}

int bpfc_map_create(uint32_t type, uint32_t key_size, uint32_t value_size, uint32_t max_entries,
                    uint32_t flags, const char *name)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_type = type;
	a.key_size = key_size;
	a.value_size = value_size;
	a.max_entries = max_entries;
	a.map_flags = flags;
	set_name(a.map_name, sizeof(a.map_name), name);
	return bpfc(BPF_MAP_CREATE, &a);
}

/* The verifier's log ends with its verdict: keep the last line. */
static void log_tail(const char *full, char *log, size_t loglen)
{
	size_t n = strlen(full);
	const char *p;

	while (n && full[n - 1] == '\n')
		n--;
	p = full + n;
	while (p > full && p[-1] != '\n')
		p--;
	snprintf(log, loglen, "%.*s", (int)(full + n - p), p);
}

int bpfc_prog_load(uint32_t type, const struct bpf_insn *insns, size_t n, const char *license,
                   const char *name, char *log, size_t loglen)
{
	union bpf_attr a;
	char *full = NULL;
	int rc, rc2;

	memset(&a, 0, sizeof(a));
	a.prog_type = type;
	a.insns = (uint64_t)(uintptr_t)insns;
	a.insn_cnt = (uint32_t)n;
	a.license = (uint64_t)(uintptr_t)license;
	set_name(a.prog_name, sizeof(a.prog_name), name);
	rc = bpfc(BPF_PROG_LOAD, &a);
	if (rc >= 0 || !log || !loglen)
		return rc;
	/* again, with the verifier's log, only to say why */
	full = calloc(1, 1 << 16);
	if (!full)
		return rc;
	a.log_buf = (uint64_t)(uintptr_t)full;
	a.log_size = 1 << 16;
	a.log_level = 1;
	rc2 = bpfc(BPF_PROG_LOAD, &a);
	if (rc2 >= 0) {
		close(rc2); /* the first answer stands */
		snprintf(log, loglen, "refused once, then taken");
	} else {
		log_tail(full, log, loglen);
	}
	free(full);
	return rc;
}

int bpfc_raw_tp_open(const char *name, int prog)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.raw_tracepoint.name = (uint64_t)(uintptr_t)name;
	a.raw_tracepoint.prog_fd = (uint32_t)prog;
	return bpfc(BPF_RAW_TRACEPOINT_OPEN, &a);
}

static int map_elem(int cmd, int map, const void *key, void *value)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_fd = (uint32_t)map;
	a.key = (uint64_t)(uintptr_t)key;
	a.value = (uint64_t)(uintptr_t)value;
	return bpfc(cmd, &a);
}

int bpfc_map_lookup(int map, const void *key, void *value)
{
	return map_elem(BPF_MAP_LOOKUP_ELEM, map, key, value);
}

int bpfc_map_next_key(int map, const void *key, void *next)
{
	/* next_key shares value's place in the command's attributes */
	return map_elem(BPF_MAP_GET_NEXT_KEY, map, key, next);
}

int bpfc_map_delete(int map, const void *key)
{
	return map_elem(BPF_MAP_DELETE_ELEM, map, key, NULL);
}

int bpfc_cpus_parse(const char *text)
{
	const char *p = text;
	long n = 0;

	while (*p && *p != '\n') {
		char *end;
		long a, b;

		if (*p < '0' || *p > '9')
			return -EINVAL;
		a = b = strtol(p, &end, 10);
		if (*end == '-') {
			if (end[1] < '0' || end[1] > '9')
				return -EINVAL;
			b = strtol(end + 1, &end, 10);
		}
		if (b < a || a > BPFC_CPUS_MAX || b > BPFC_CPUS_MAX)
			return -EINVAL;
		n += b - a + 1;
		if (n > BPFC_CPUS_MAX)
			return -EINVAL;
		if (*end == ',')
			end++;
		else if (*end && *end != '\n')
			return -EINVAL;
		p = end;
	}
	return n > 0 ? (int)n : -EINVAL;
}

int bpfc_possible_cpus(void)
{
	char *text = NULL;
	int rc = file_read_all("/sys/devices/system/cpu/possible", 4096, &text, NULL);

	if (rc < 0)
		return rc;
	rc = bpfc_cpus_parse(text);
	free(text);
	return rc;
}
