/*
 * fingerprint_virt: which hypervisor this host runs under, as CPUID, the
 * kernel and DMI each say it, and the one name printed everywhere: a name
 * only when a second view confirms CPUID's, "unknown (CPUID says X, ...)"
 * when they disagree. CPUID's signature is whatever the hypervisor chose
 * to show (a PVM host shows bhyve's), so it is never trusted alone.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include "fingerprint.h"
#include "fingerprintp.h"
#include "xmalloc.h"

#define KMSG_PREFIX "Hypervisor detected: "
/* The kernel names its hypervisor in setup_arch(), in its first second;
 * records later than this end the search through /dev/kmsg. */
#define KMSG_EARLY_US 30000000LL
#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* Hypervisor signatures (cpuid leaf 0x40000000), named as
 * systemd-detect-virt names them (unused where there is no CPUID). */
static const struct {
	const char *signature;
	const char *name;
} cpuid_names[] __attribute__((unused)) = {
    {"KVMKVMKVM", "kvm"},          {"VMwareVMware", "vmware"}, {"Microsoft Hv", "microsoft"},
    {"XenVMMXenVMM", "xen"},       {"TCGTCGTCGTCG", "qemu"},   {"bhyve bhyve ", "bhyve"},
    {" lrpepyh  vr", "parallels"}, {"ACRNACRNACRN", "acrn"},   {"QNXQVMBSQG", "qnx"},
    {"VBoxVBoxVBox", "oracle"},
};

/* The kernel's words ("Hypervisor detected: KVM", /sys/hypervisor/type),
 * named the same way. A word not listed is compared as it is. */
static const struct {
	const char *word;
	const char *name;
} kernel_names[] = {
    {"KVM", "kvm"},     {"VMware", "vmware"}, {"Microsoft Hyper-V", "microsoft"},
    {"Xen HVM", "xen"}, {"Xen PV", "xen"},    {"xen", "xen"},
    {"ACRN", "acrn"},   {"Bhyve", "bhyve"},   {"Jailhouse", "jailhouse"},
    {"PVM", "pvm"},
};

/* DMI system vendors; `also` is a CPUID name the vendor confirms too (a
 * QEMU machine accelerated by KVM shows KVM's signature). */
static const struct {
	const char *prefix;
	const char *name;
	const char *also;
} dmi_names[] = {
    {"QEMU", "qemu", "kvm"},
    {"KVM", "kvm", NULL},
    {"VMware", "vmware", NULL},
    {"innotek GmbH", "oracle", NULL},
    {"Xen", "xen", NULL},
    {"Bochs", "bochs", NULL},
    {"Parallels", "parallels", NULL},
    {"BHYVE", "bhyve", NULL},
    {"Amazon EC2", "amazon", "kvm"},
    {"Google", "google", "kvm"},
    {"OpenStack", "kvm", NULL},
    {"Microsoft Corporation", "microsoft", NULL},
};

#if defined(__x86_64__) || defined(__i386__)
int fp_cpuid_hypervisor(char *buf, size_t len)
{
	unsigned a, b, c, d;
	char sig[13];
	size_t n = 0;

	if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & (1U << 31)))
		return 0;
	__cpuid(0x40000000, a, b, c, d);
	memcpy(sig, &b, 4);
	memcpy(sig + 4, &c, 4);
	memcpy(sig + 8, &d, 4);
	sig[12] = '\0';
	for (size_t i = 0; i < ARRAY_LEN(cpuid_names); i++)
		if (!strncmp(sig, cpuid_names[i].signature, strlen(cpuid_names[i].signature))) {
			snprintf(buf, len, "%s", cpuid_names[i].name);
			return 1;
		}
	/* An unlisted signature is shown as it is, printable bytes only. */
	for (size_t i = 0; sig[i] && n + 1 < len; i++)
		if (sig[i] > ' ' && sig[i] < 0x7f)
			buf[n++] = sig[i];
	buf[n] = '\0';
	if (!n)
		snprintf(buf, len, "other");
	return 1;
}
#else
int fp_cpuid_hypervisor(char *buf, size_t len)
{
	(void)buf;
	(void)len;
	return 0;
}
#endif

int fingerprint_kmsg_hypervisor(const char *record, char *name, size_t len, long long *usec)
{
	const char *msg = strchr(record, ';');
	long long prio, seq, us;

	if (!msg || sscanf(record, "%lld,%lld,%lld", &prio, &seq, &us) != 3)
		return -EINVAL;
	if (usec)
		*usec = us;
	msg++;
	if (strncmp(msg, KMSG_PREFIX, strlen(KMSG_PREFIX)))
		return 0;
	msg += strlen(KMSG_PREFIX);
	snprintf(name, len, "%.*s", (int)strcspn(msg, "\n"), msg);
	return name[0] ? 1 : 0;
}

/* The kernel's "Hypervisor detected" word from root/dev/kmsg: 1, 0 when
 * the early records hold none, -errno when the log cannot be read (it
 * needs CAP_SYSLOG under kernel.dmesg_restrict, and the unit's
 * ProtectKernelLogs= hides it). Continuation lines are skipped. */
static int kmsg_hypervisor(const char *root, char *name, size_t len)
{
	char path[FP_PATH_MAX], *line = NULL;
	size_t cap = 0;
	long long us = 0;
	int fd, found = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/dev/kmsg", root);
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	f = fdopen(fd, "r");
	if (!f) {
		close(fd);
		return -ENOMEM;
	}
	for (;;) {
		errno = 0;
		if (getline(&line, &cap, f) < 0) {
			/* EPIPE: records were overwritten while reading; go on. */
			if (errno != EPIPE)
				break;
			clearerr(f);
			continue;
		}
		if (line[0] == ' ')
			continue;
		found = fingerprint_kmsg_hypervisor(line, name, len, &us);
		if (found > 0 || us > KMSG_EARLY_US)
			break;
	}
	free(line);
	fclose(f);
	return found > 0;
}

/* The kernel's view: its log, else /sys/hypervisor/type (Xen). */
static json_t *kernel_view(const char *root)
{
	char word[128];

	if (kmsg_hypervisor(root, word, sizeof(word)) > 0)
		return json_string(word);
	if (fp_read_line(root, "/sys/hypervisor/type", word, sizeof(word)) == 0)
		return fp_str_or_null(word);
	return json_null();
}

/* DMI's view: the listed vendor's name, else null (a bare-metal vendor). */
static json_t *dmi_view(const char *root)
{
	char vendor[256];

	if (fp_read_line(root, "/sys/class/dmi/id/sys_vendor", vendor, sizeof(vendor)) < 0)
		return json_null();
	for (size_t i = 0; i < ARRAY_LEN(dmi_names); i++)
		if (!strncmp(vendor, dmi_names[i].prefix, strlen(dmi_names[i].prefix)))
			return json_string(dmi_names[i].name);
	return json_null();
}

json_t *fingerprint_virt_sources(const char *root, const char *cpuid)
{
	char *flags = fp_cpuinfo_field(root, "flags");
	json_t *o = json_object();

	json_object_set_new(o, "cpuid", fp_str_or_null(cpuid));
	json_object_set_new(o, "kernel", kernel_view(root));
	json_object_set_new(o, "dmi", dmi_view(root));
	json_object_set_new(o, "hypervisor_flag",
	                    flags ? json_boolean(fp_has_word(flags, "hypervisor")) : json_null());
	free(flags);
	return o;
}

/* The kernel's word as a name: listed, or the word itself. */
static const char *kernel_name(const char *word)
{
	for (size_t i = 0; i < ARRAY_LEN(kernel_names); i++)
		if (!strcmp(word, kernel_names[i].word))
			return kernel_names[i].name;
	return word;
}

/* Whether DMI's name confirms CPUID's. */
static int dmi_confirms(const char *dmi, const char *cpuid)
{
	for (size_t i = 0; i < ARRAY_LEN(dmi_names); i++)
		if (!strcmp(dmi, dmi_names[i].name) &&
		    (!strcmp(cpuid, dmi_names[i].name) ||
		     (dmi_names[i].also && !strcmp(cpuid, dmi_names[i].also))))
			return 1;
	return 0;
}

char *fingerprint_virt_name(const json_t *sources)
{
	const char *cpuid = json_string_value(json_object_get(sources, "cpuid"));
	const char *kernel = json_string_value(json_object_get(sources, "kernel"));
	const char *dmi = json_string_value(json_object_get(sources, "dmi"));
	const char *kname = kernel ? kernel_name(kernel) : NULL;
	char *s;

	if (cpuid && kname && !strcasecmp(cpuid, kname))
		return xstrdup(cpuid);
	if (cpuid && !kname && dmi && dmi_confirms(dmi, cpuid))
		return xstrdup(cpuid);
	if (cpuid) {
		xasprintf(&s, "unknown (CPUID says %s%s%s%s%s)", cpuid,
		          kernel ? ", the kernel says " : "", kernel ? kernel : "",
		          !kernel && dmi ? ", DMI says " : "", !kernel && dmi ? dmi : "");
		return s;
	}
	if (kname)
		return xstrdup(kname);
	if (dmi)
		return xstrdup(dmi);
	if (json_is_true(json_object_get(sources, "hypervisor_flag")))
		return xstrdup("unknown (the CPU's hypervisor flag is set)");
	return xstrdup("none");
}

int fingerprint_cpuid_hypervisor(char *buf, size_t len)
{
	return fp_cpuid_hypervisor(buf, len);
}
