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
#include "sysinfo.h"
#include "xmalloc.h"

#define VULN_DIR "/sys/devices/system/cpu/vulnerabilities"
#define HWCAP2_FSGSBASE_BIT (1UL << 1)

/* Hypervisor signatures (cpuid leaf 0x40000000) and DMI vendors. */
static const struct {
	const char *signature;
	const char *name;
} hypervisors[] = {
    {"KVMKVMKVM", "kvm"},          {"VMwareVMware", "vmware"}, {"Microsoft Hv", "microsoft"},
    {"XenVMMXenVMM", "xen"},       {"TCGTCGTCGTCG", "qemu"},   {"bhyve bhyve ", "bhyve"},
    {" lrpepyh  vr", "parallels"}, {"ACRNACRNACRN", "acrn"},   {"QNXQVMBSQG", "qnx"},
};

static const struct {
	const char *prefix;
	const char *name;
} dmi_vendors[] = {
    {"QEMU", "qemu"},           {"KVM", "kvm"},       {"VMware", "vmware"},
    {"innotek GmbH", "oracle"}, {"Xen", "xen"},       {"Bochs", "bochs"},
    {"Parallels", "parallels"}, {"BHYVE", "bhyve"},   {"Amazon EC2", "amazon"},
    {"Google", "google"},       {"OpenStack", "kvm"},
};

static json_t *str_or_null(const char *s)
{
	return s && *s ? json_string(s) : json_null();
}

/* The value of the first "key : value" line of /proc/cpuinfo. */
static json_t *cpuinfo_field(const char *key)
{
	FILE *f = fopen("/proc/cpuinfo", "re");
	char line[1024];
	size_t klen = strlen(key);
	json_t *v = NULL;

	if (!f)
		return json_null();
	while (!v && fgets(line, sizeof(line), f)) {
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
		v = str_or_null(colon);
	}
	fclose(f);
	return v ? v : json_null();
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

static const char *cpuid_hypervisor(void)
{
	unsigned a, b, c, d;
	char sig[13];

	if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & (1U << 31)))
		return NULL;
	__cpuid(0x40000000, a, b, c, d);
	memcpy(sig, &b, 4);
	memcpy(sig + 4, &c, 4);
	memcpy(sig + 8, &d, 4);
	sig[12] = '\0';
	for (size_t i = 0; i < sizeof(hypervisors) / sizeof(hypervisors[0]); i++)
		if (!strncmp(sig, hypervisors[i].signature, strlen(hypervisors[i].signature)))
			return hypervisors[i].name;
	return "other";
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

static const char *cpuid_hypervisor(void)
{
	return NULL;
}

static json_t *fsgsbase(void)
{
	return json_null();
}
#endif

static json_t *read_cpu(void)
{
	json_t *cpu = json_object();
	json_t *name;

	json_object_set_new(cpu, "vendor", json_null());
	json_object_set_new(cpu, "family", json_null());
	json_object_set_new(cpu, "model", json_null());
	json_object_set_new(cpu, "stepping", json_null());
	cpu_ids(cpu);
	json_object_set_new(cpu, "microcode", cpuinfo_field("microcode"));
	name = cpuinfo_field("model name");
	json_object_set_new(cpu, "model_name", name);
	json_object_set_new(cpu, "fsgsbase", fsgsbase());
	return cpu;
}

static const char *virtualization(void)
{
	const char *v = cpuid_hypervisor();
	char vendor[256];

	if (v)
		return v;
	if (sys_read_line("/sys/class/dmi/id/sys_vendor", vendor, sizeof(vendor)) < 0)
		return "none";
	for (size_t i = 0; i < sizeof(dmi_vendors) / sizeof(dmi_vendors[0]); i++)
		if (!strncmp(vendor, dmi_vendors[i].prefix, strlen(dmi_vendors[i].prefix)))
			return dmi_vendors[i].name;
	return "none";
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

json_t *fingerprint_read(void)
{
	struct utsname u;
	json_t *fp = json_object();
	long ncpus = sysconf(_SC_NPROCESSORS_ONLN);
	int have_uname = uname(&u) == 0;

	json_object_set_new(fp, "hostname", have_uname ? str_or_null(u.nodename) : json_null());
	json_object_set_new(fp, "kernel", have_uname ? str_or_null(u.release) : json_null());
	json_object_set_new(fp, "kernel_version",
	                    have_uname ? str_or_null(u.version) : json_null());
	json_object_set_new(fp, "glibc", json_string(gnu_get_libc_version()));
	json_object_set_new(fp, "arch", have_uname ? str_or_null(u.machine) : json_null());
	json_object_set_new(fp, "cpu", read_cpu());
	json_object_set_new(fp, "virtualization", json_string(virtualization()));
	json_object_set_new(fp, "ncpus", ncpus > 0 ? json_integer(ncpus) : json_null());
	json_object_set_new(fp, "vulnerabilities", read_vulnerabilities());
	json_object_set_new(fp, "limits", read_limits());
	return fp;
}

/* The identity fields and how a change in each is named, in display order. */
static const struct {
	const char *field;
	const char *sub; /* field inside "cpu", or NULL */
	const char *label;
} identity_fields[] = {
    {"kernel", NULL, "kernel"},
    {"kernel_version", NULL, "kernel build"},
    {"glibc", NULL, "glibc"},
    {"arch", NULL, "arch"},
    {"cpu", "microcode", "microcode"},
    {"cpu", "vendor", "cpu vendor"},
    {"cpu", "family", "cpu family"},
    {"cpu", "model", "cpu model"},
    {"cpu", "stepping", "cpu stepping"},
    {"cpu", "model_name", "cpu"},
    {"cpu", "fsgsbase", "fsgsbase"},
    {"virtualization", NULL, "virtualization"},
    {"ncpus", NULL, "cpus"},
};

#define N_IDENTITY (sizeof(identity_fields) / sizeof(identity_fields[0]))

json_t *fingerprint_identity(const json_t *fp)
{
	json_t *id = json_object(), *cpu = json_object(), *v;

	for (size_t i = 0; i < N_IDENTITY; i++) {
		const char *f = identity_fields[i].field, *sub = identity_fields[i].sub;

		if (sub) {
			v = json_object_get(json_object_get(fp, f), sub);
			json_object_set_new(cpu, sub, v ? json_deep_copy(v) : json_null());
		} else {
			v = json_object_get(fp, f);
			json_object_set_new(id, f, v ? json_deep_copy(v) : json_null());
		}
	}
	json_object_set_new(id, "cpu", cpu);
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

static void diff_value(char **out, const char *label, const json_t *a, const json_t *b)
{
	char *ta, *tb;

	if (a && b && json_equal(a, b))
		return;
	if ((!a || json_is_null(a)) && (!b || json_is_null(b)))
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

	for (size_t i = 0; i < N_IDENTITY; i++) {
		const char *f = identity_fields[i].field, *sub = identity_fields[i].sub;
		const json_t *va = json_object_get(a, f), *vb = json_object_get(b, f);

		if (sub) {
			va = json_object_get(va, sub);
			vb = json_object_get(vb, sub);
		}
		diff_value(&out, identity_fields[i].label, va, vb);
	}
	diff_vulnerabilities(&out, json_object_get(a, "vulnerabilities"),
	                     json_object_get(b, "vulnerabilities"));
	json_decref(a);
	json_decref(b);
	return out;
}
