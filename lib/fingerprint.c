/*
 * fingerprint: reads what the host is (kernel, glibc, CPU identity and
 * microcode, FSGSBASE, hypervisor, CPU count, vulnerability status, the
 * limits on thread creation) into one JSON object, and compares two of them.
 */
#include <dirent.h>
#include <errno.h>
#include <gnu/libc-version.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/utsname.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include "fingerprint.h"
#include "fingerprintp.h"
#include "sysinfo.h"
#include "xmalloc.h"

#define VULN_DIR "/sys/devices/system/cpu/vulnerabilities"
#define HWCAP2_FSGSBASE_BIT (1UL << 1)

json_t *fp_str_or_null(const char *s)
{
	return s && *s ? json_string(s) : json_null();
}

int fp_read_line(const char *root, const char *path, char *buf, size_t len)
{
	char full[FP_PATH_MAX];

	snprintf(full, sizeof(full), "%s%s", root, path);
	return sys_read_line(full, buf, len);
}

int fp_has_word(const char *words, const char *word)
{
	size_t n = strlen(word);

	for (const char *p = words; (p = strstr(p, word)); p += n)
		if ((p == words || p[-1] == ' ' || p[-1] == '\t') &&
		    (p[n] == '\0' || p[n] == ' ' || p[n] == '\t'))
			return 1;
	return 0;
}

char *fp_cpuinfo_field(const char *root, const char *key)
{
	char path[FP_PATH_MAX], *line = NULL, *v = NULL;
	size_t klen = strlen(key), cap = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/proc/cpuinfo", root);
	f = fopen(path, "re");
	if (!f)
		return NULL;
	while (!v && getline(&line, &cap, f) >= 0) {
		char *colon;

		if (strncmp(line, key, klen) ||
		    (line[klen] != ' ' && line[klen] != '\t' && line[klen] != ':'))
			continue;
		colon = strchr(line, ':');
		if (!colon)
			continue;
		colon++;
		colon += strspn(colon, " \t");
		colon[strcspn(colon, "\n")] = '\0';
		v = *colon ? xstrdup(colon) : NULL;
	}
	free(line);
	fclose(f);
	return v;
}

/* A cpuinfo field as JSON: its text, or null. */
static json_t *cpuinfo_json(const char *key)
{
	char *v = fp_cpuinfo_field("", key);
	json_t *j = fp_str_or_null(v);

	free(v);
	return j;
}

#if defined(__x86_64__) || defined(__i386__)
static void cpu_ids(json_t *cpu)
{
	unsigned a, b, c, d, family, model;
	char vendor[13];

	if (!__get_cpuid(0, &a, &b, &c, &d))
		return;
	memcpy(vendor, &b, 4);
	memcpy(vendor + 4, &d, 4);
	memcpy(vendor + 8, &c, 4);
	vendor[12] = '\0';
	json_object_set_new(cpu, "vendor", json_string(vendor));
	if (!__get_cpuid(1, &a, &b, &c, &d))
		return;
	/* The displayed family and model fold in the extended fields. */
	family = (a >> 8) & 0xf;
	model = (a >> 4) & 0xf;
	if (family == 0xf)
		family += (a >> 20) & 0xff;
	if (family == 0x6 || family >= 0xf)
		model += ((a >> 16) & 0xf) << 4;
	json_object_set_new(cpu, "family", json_integer(family));
	json_object_set_new(cpu, "model", json_integer(model));
	json_object_set_new(cpu, "stepping", json_integer(a & 0xf));
}

static json_t *fsgsbase(void)
{
	return json_boolean(getauxval(AT_HWCAP2) & HWCAP2_FSGSBASE_BIT);
}
#else
static void cpu_ids(json_t *cpu)
{
	(void)cpu;
}

static json_t *fsgsbase(void)
{
	return json_null();
}
#endif

static json_t *read_cpu(void)
{
	json_t *cpu = json_object();

	json_object_set_new(cpu, "vendor", json_null());
	json_object_set_new(cpu, "family", json_null());
	json_object_set_new(cpu, "model", json_null());
	json_object_set_new(cpu, "stepping", json_null());
	cpu_ids(cpu);
	json_object_set_new(cpu, "microcode", cpuinfo_json("microcode"));
	json_object_set_new(cpu, "model_name", cpuinfo_json("model name"));
	json_object_set_new(cpu, "fsgsbase", fsgsbase());
	return cpu;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every entry of the vulnerabilities directory, in name order. */
static json_t *read_vulnerabilities(void)
{
	DIR *d = opendir(VULN_DIR);
	struct dirent *de;
	char **names = NULL, path[512], text[512];
	size_t n = 0;
	json_t *o;

	if (!d)
		return json_null();
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		names = xreallocarray(names, n + 1, sizeof(*names));
		names[n++] = xstrdup(de->d_name);
	}
	closedir(d);
	qsort(names, n, sizeof(*names), cmp_str);
	o = json_object();
	for (size_t i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/%s", VULN_DIR, names[i]);
		if (sys_read_line(path, text, sizeof(text)) == 0)
			json_object_set_new(o, names[i], json_string(text));
		else
			json_object_set_new(o, names[i], json_null());
		free(names[i]);
	}
	free(names);
	return o;
}

/* A limit: a number, "unlimited", or null when it could not be read
 * (sys_limits_read leaves unreadable /proc values at 0). */
static json_t *limit(uint64_t v, int zero_is_unknown)
{
	if (v == UINT64_MAX)
		return json_string("unlimited");
	if (v == 0 && zero_is_unknown)
		return json_null();
	return json_integer((json_int_t)v);
}

static json_t *read_limits(void)
{
	struct sys_limits l;
	json_t *o = json_object();

	memset(&l, 0, sizeof(l));
	sys_limits_read(&l);
	json_object_set_new(o, "threads_max", limit(l.threads_max, 1));
	json_object_set_new(o, "pid_max", limit(l.pid_max, 1));
	json_object_set_new(o, "nproc_soft", limit(l.nproc_soft, 0));
	json_object_set_new(o, "stack_soft", limit(l.stack_soft, 0));
	json_object_set_new(o, "pids_max", limit(l.pids_max, 1));
	json_object_set_new(o, "max_map_count", limit(l.max_map_count, 1));
	if (access("/proc/sys/vm/overcommit_memory", R_OK) == 0)
		json_object_set_new(o, "overcommit_memory", json_integer(l.overcommit_memory));
	else
		json_object_set_new(o, "overcommit_memory", json_null());
	return o;
}

/* What the host runs under: the name shown everywhere and each view. */
static void read_virtualization(json_t *fp)
{
	char cpuid[32];
	json_t *src = fingerprint_virt_sources(
	    "", fp_cpuid_hypervisor(cpuid, sizeof(cpuid)) > 0 ? cpuid : NULL);
	char *name = fingerprint_virt_name(src);

	json_object_set_new(fp, "virtualization", json_string(name));
	json_object_set_new(fp, "virtualization_sources", src);
	free(name);
}

const char *const fingerprint_fields[] = {"hostname",       "kernel",
                                          "kernel_version", "glibc",
                                          "arch",           "cpu",
                                          "virtualization", "virtualization_sources",
                                          "ncpus",          "vulnerabilities",
                                          "limits",         "capabilities",
                                          "probed",         NULL};

json_t *fingerprint_read(void)
{
	struct utsname u;
	json_t *fp = json_object();
	long ncpus = sysconf(_SC_NPROCESSORS_ONLN);
	int have_uname = uname(&u) == 0;

	json_object_set_new(fp, "hostname", have_uname ? fp_str_or_null(u.nodename) : json_null());
	json_object_set_new(fp, "kernel", have_uname ? fp_str_or_null(u.release) : json_null());
	json_object_set_new(fp, "kernel_version",
	                    have_uname ? fp_str_or_null(u.version) : json_null());
	json_object_set_new(fp, "glibc", json_string(gnu_get_libc_version()));
	json_object_set_new(fp, "arch", have_uname ? fp_str_or_null(u.machine) : json_null());
	json_object_set_new(fp, "cpu", read_cpu());
	read_virtualization(fp);
	json_object_set_new(fp, "ncpus", ncpus > 0 ? json_integer(ncpus) : json_null());
	json_object_set_new(fp, "vulnerabilities", read_vulnerabilities());
	json_object_set_new(fp, "limits", read_limits());
	json_object_set_new(fp, "capabilities",
	                    fingerprint_caps_read("", have_uname ? u.release : NULL));
	fingerprint_add_probed(fp, NULL);
	return fp;
}

/* The identity fields and how a change in each is named, in display
 * order. A `learned` field going from or to unknown is not a change: it
 * was not read before (an older threadwatch, ctxsw not run yet) or cannot
 * be read now (the kernel log under ProtectKernelLogs=). */
static const struct {
	const char *field;
	const char *sub; /* field inside the object `field`, or NULL */
	const char *label;
	int learned;
} identity_fields[] = {
    {"kernel", NULL, "kernel", 0},
    {"kernel_version", NULL, "kernel build", 0},
    {"glibc", NULL, "glibc", 0},
    {"arch", NULL, "arch", 0},
    {"cpu", "microcode", "microcode", 0},
    {"cpu", "vendor", "cpu vendor", 0},
    {"cpu", "family", "cpu family", 0},
    {"cpu", "model", "cpu model", 0},
    {"cpu", "stepping", "cpu stepping", 0},
    {"cpu", "model_name", "cpu", 0},
    {"cpu", "fsgsbase", "fsgsbase", 0},
    {"virtualization_sources", "cpuid", "virtualization (CPUID)", 1},
    {"virtualization_sources", "kernel", "virtualization (kernel)", 1},
    {"virtualization_sources", "dmi", "virtualization (DMI)", 1},
    {"ncpus", NULL, "cpus", 0},
    {"capabilities", "ia32_emulation", "ia32 emulation", 1},
    {"capabilities", "thp", "thp", 1},
    {"capabilities", "thp_defrag", "thp defrag", 1},
    {"capabilities", "khugepaged_max_ptes_none", "khugepaged max_ptes_none", 1},
    {"capabilities", "thp_sizes", "thp sizes", 1},
    {"capabilities", "pmu", "pmu", 1},
    {"capabilities", "constant_tsc", "constant_tsc", 1},
    {"capabilities", "nonstop_tsc", "nonstop_tsc", 1},
    {"capabilities", "clocksource", "clocksource", 1},
    {"probed", "ia32_int80", "int $0x80", 1},
    {"probed", "selector_gdt", "GDT selector", 1},
    {"probed", "selector_ldt", "LDT selector", 1},
    {"probed", "cpus_pinned", "CPUs per probe", 1},
};

#define N_IDENTITY (sizeof(identity_fields) / sizeof(identity_fields[0]))

/* Identity field i of fp, or NULL when missing. */
static const json_t *identity_value(const json_t *fp, size_t i)
{
	const json_t *v = json_object_get(fp, identity_fields[i].field);

	return identity_fields[i].sub ? json_object_get(v, identity_fields[i].sub) : v;
}

json_t *fingerprint_identity(const json_t *fp)
{
	json_t *id = json_object(), *parent, *v;

	for (size_t i = 0; i < N_IDENTITY; i++) {
		const char *f = identity_fields[i].field, *sub = identity_fields[i].sub;
		const json_t *have = identity_value(fp, i);

		v = have ? json_deep_copy(have) : json_null();
		if (!sub) {
			json_object_set_new(id, f, v);
			continue;
		}
		parent = json_object_get(id, f);
		if (!parent)
			json_object_set_new(id, f, parent = json_object());
		json_object_set_new(parent, sub, v);
	}
	v = json_object_get(fp, "vulnerabilities");
	json_object_set_new(id, "vulnerabilities",
	                    json_is_object(v) ? json_deep_copy(v) : json_object());
	return id;
}

static char *value_text(const json_t *v)
{
	char *s;

	if (!v || json_is_null(v))
		return xstrdup("unknown");
	if (json_is_string(v))
		return xstrdup(json_string_value(v));
	if (json_is_boolean(v))
		return xstrdup(json_is_true(v) ? "yes" : "no");
	if (json_is_integer(v))
		xasprintf(&s, "%lld", (long long)json_integer_value(v));
	else if (json_is_real(v))
		xasprintf(&s, "%g", json_real_value(v));
	else
		s = xstrdup("?");
	return s;
}

static void append(char **out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void append(char **out, const char *fmt, ...)
{
	char *part, *joined;
	va_list ap;

	va_start(ap, fmt);
	if (vasprintf(&part, fmt, ap) < 0)
		part = NULL;
	va_end(ap);
	if (!part)
		return;
	if (*out) {
		xasprintf(&joined, "%s; %s", *out, part);
		free(*out);
		free(part);
		*out = joined;
	} else {
		*out = part;
	}
}

static int unknown(const json_t *v)
{
	return !v || json_is_null(v);
}

static void diff_value(char **out, size_t i, const json_t *a, const json_t *b)
{
	const char *label = identity_fields[i].label;
	char *ta, *tb;

	if (a && b && json_equal(a, b))
		return;
	if (unknown(a) && unknown(b))
		return;
	if (identity_fields[i].learned && (unknown(a) || unknown(b)))
		return;
	ta = value_text(a);
	tb = value_text(b);
	append(out, "%s %s → %s", label, ta, tb);
	free(ta);
	free(tb);
}

/* Changed vulnerability entries are named, not quoted: the texts are long. */
static void diff_vulnerabilities(char **out, json_t *a, json_t *b)
{
	const char *key;
	json_t *v;

	json_object_foreach(a, key, v)
	{
		json_t *w = json_object_get(b, key);
		if (!w)
			append(out, "vulnerability %s gone", key);
		else if (!json_equal(v, w))
			append(out, "vulnerability %s changed", key);
	}
	json_object_foreach(b, key, v)
	{
		if (!json_object_get(a, key))
			append(out, "vulnerability %s new", key);
	}
}

char *fingerprint_diff(const json_t *before, const json_t *after)
{
	json_t *a = fingerprint_identity(before), *b = fingerprint_identity(after);
	char *out = NULL;

	for (size_t i = 0; i < N_IDENTITY; i++)
		diff_value(&out, i, identity_value(a, i), identity_value(b, i));
	diff_vulnerabilities(&out, json_object_get(a, "vulnerabilities"),
	                     json_object_get(b, "vulnerabilities"));
	json_decref(a);
	json_decref(b);
	return out;
}

char *fingerprint_section_text(const json_t *fp, const char *section)
{
	char *out = NULL, *t, *joined;

	for (size_t i = 0; i < N_IDENTITY; i++) {
		if (!identity_fields[i].sub || strcmp(identity_fields[i].field, section))
			continue;
		t = value_text(identity_value(fp, i));
		xasprintf(&joined, "%s%s%s %s", out ? out : "", out ? ", " : "",
		          identity_fields[i].label, t);
		free(t);
		free(out);
		out = joined;
	}
	return out;
}
