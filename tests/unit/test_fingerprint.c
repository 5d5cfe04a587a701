/*
 * test_fingerprint: the host fingerprint has every field of the contract,
 * its identity leaves out the tuning limits, and the difference of two
 * identities names what changed ("kernel A → B; microcode X → Y"); the
 * readers of capabilities and of the hypervisor's views, on fixture trees
 * (never this host's own vendor or hypervisor), and the name printed
 * when the views agree or disagree.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>
#include <jansson.h>

#include "fingerprint.h"
#include "gzip.h"
#include "tmpdir.h"

static void test_read_has_every_field(void **state)
{
	static const char *const top[] = {"hostname",       "kernel",
	                                  "kernel_version", "glibc",
	                                  "arch",           "cpu",
	                                  "virtualization", "virtualization_sources",
	                                  "ncpus",          "vulnerabilities",
	                                  "limits",         "capabilities",
	                                  "probed"};
	static const char *const cpu[] = {"vendor",    "family",     "model",   "stepping",
	                                  "microcode", "model_name", "fsgsbase"};
	static const char *const limits[] = {"threads_max",      "pid_max",  "nproc_soft",
	                                     "stack_soft",       "pids_max", "max_map_count",
	                                     "overcommit_memory"};
	json_t *fp = fingerprint_read();

	(void)state;
	for (size_t i = 0; i < sizeof(top) / sizeof(top[0]); i++)
		if (!json_object_get(fp, top[i]))
			fail_msg("fingerprint.%s missing", top[i]);
	for (size_t i = 0; i < sizeof(cpu) / sizeof(cpu[0]); i++)
		if (!json_object_get(json_object_get(fp, "cpu"), cpu[i]))
			fail_msg("fingerprint.cpu.%s missing", cpu[i]);
	for (size_t i = 0; i < sizeof(limits) / sizeof(limits[0]); i++)
		if (!json_object_get(json_object_get(fp, "limits"), limits[i]))
			fail_msg("fingerprint.limits.%s missing", limits[i]);
	/* Always readable on Linux with glibc. */
	assert_true(json_is_string(json_object_get(fp, "kernel")));
	assert_true(json_is_string(json_object_get(fp, "glibc")));
	assert_true(json_integer_value(json_object_get(fp, "ncpus")) >= 1);
	assert_true(json_is_string(json_object_get(fp, "virtualization")));
#if defined(__x86_64__)
	assert_true(json_is_string(json_object_get(json_object_get(fp, "cpu"), "vendor")));
	assert_true(json_is_boolean(json_object_get(json_object_get(fp, "cpu"), "fsgsbase")));
#endif
	/* Reading twice gives the same identity, so a re-check sees no change. */
	{
		json_t *again = fingerprint_read();
		json_t *a = fingerprint_identity(fp), *b = fingerprint_identity(again);
		char *d = fingerprint_diff(a, b);

		assert_true(json_equal(a, b));
		assert_null(d);
		json_decref(a);
		json_decref(b);
		json_decref(again);
	}
	json_decref(fp);
}

static json_t *sample(const char *kernel, const char *microcode, int threads_max)
{
	return json_pack("{s:s, s:s, s:s, s:s, s:s, s:{s:s, s:i, s:i, s:i, s:s, s:s, s:b}, s:s, "
	                 "s:i, s:{s:s}, s:{s:i}}",
	                 "hostname", "h", "kernel", kernel, "kernel_version", "#1 SMP", "glibc",
	                 "2.36", "arch", "x86_64", "cpu", "vendor", "GenuineIntel", "family", 6,
	                 "model", 85, "stepping", 7, "microcode", microcode, "model_name", "Xeon",
	                 "fsgsbase", 1, "virtualization", "kvm", "ncpus", 2, "vulnerabilities",
	                 "meltdown", "Not affected", "limits", "threads_max", threads_max);
}

static void test_identity_and_diff(void **state)
{
	json_t *a = sample("6.1.0-18-amd64", "0x2b", 1000);
	json_t *b = sample("6.1.0-21-amd64", "0x2c", 2000);
	json_t *c = sample("6.1.0-18-amd64", "0x2b", 5000);
	json_t *ia = fingerprint_identity(a), *ic = fingerprint_identity(c);
	char *d;

	(void)state;
	/* Limits and the host name are tuning, not identity. */
	assert_null(json_object_get(ia, "limits"));
	assert_null(json_object_get(ia, "hostname"));
	assert_string_equal(
	    json_string_value(json_object_get(json_object_get(ia, "cpu"), "microcode")), "0x2b");
	assert_true(json_equal(ia, ic));
	assert_null(fingerprint_diff(a, c));

	d = fingerprint_diff(a, b);
	assert_non_null(d);
	assert_string_equal(d, "kernel 6.1.0-18-amd64 → 6.1.0-21-amd64; microcode 0x2b → 0x2c");
	free(d);

	/* A vulnerability entry that changes is named. */
	json_object_set_new(json_object_get(c, "vulnerabilities"), "meltdown",
	                    json_string("Mitigation: PTI"));
	json_object_set_new(json_object_get(c, "cpu"), "fsgsbase", json_false());
	d = fingerprint_diff(a, c);
	assert_string_equal(d, "fsgsbase yes → no; vulnerability meltdown changed");
	free(d);

	/* Works on anything, even NULL and fields that are missing. */
	d = fingerprint_diff(NULL, a);
	assert_non_null(strstr(d, "kernel unknown → 6.1.0-18-amd64"));
	free(d);
	assert_null(fingerprint_diff(NULL, NULL));
	json_decref(ia);
	json_decref(ic);
	json_decref(a);
	json_decref(b);
	json_decref(c);
}

/* Writes root/rel (making its directories) with `text`. */
static void put(const char *root, const char *rel, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	for (char *p = path + strlen(root) + 1; (p = strchr(p, '/')); p++) {
		*p = '\0';
		if (mkdir(path, 0755) < 0 && errno != EEXIST)
			fail_msg("mkdir %s: %s", path, strerror(errno));
		*p = '/';
	}
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* A file (path, text) or an expected field (key, string or NULL). */
struct pair {
	const char *a, *b;
};

/* Writes every file of a list ending in {NULL} below root. */
static void put_all(const char *root, const struct pair *files)
{
	for (; files->a; files++)
		put(root, files->a, files->b);
}

/* A fresh fixture root below the test's scratch directory. */
static const char *fixture(const char *name)
{
	static char root[256];

	snprintf(root, sizeof(root), "%s/%s", tmpdir, name);
	assert_int_equal(mkdir(root, 0755), 0);
	return root;
}

static void assert_str(const json_t *o, const char *key, const char *want)
{
	const json_t *v = json_object_get(o, key);

	if (!want) {
		if (!json_is_null(v))
			fail_msg("%s: want null", key);
		return;
	}
	if (!json_is_string(v) || strcmp(json_string_value(v), want))
		fail_msg("%s: want \"%s\", got \"%s\"", key, want,
		         json_is_string(v) ? json_string_value(v) : "(not a string)");
}

static void assert_strs(const json_t *o, const struct pair *want)
{
	for (; want->a; want++)
		assert_str(o, want->a, want->b);
}

static void test_thp_and_cmdline(void **state)
{
	char mode[32];

	(void)state;
	assert_int_equal(fingerprint_thp_mode("always [madvise] never", mode, sizeof(mode)), 0);
	assert_string_equal(mode, "madvise");
	assert_int_equal(fingerprint_thp_mode("[always] madvise never", mode, sizeof(mode)), 0);
	assert_string_equal(mode, "always");
	assert_int_equal(fingerprint_thp_mode("always madvise never", mode, sizeof(mode)), -EINVAL);
	assert_int_equal(fingerprint_thp_mode("always [] never", mode, sizeof(mode)), -EINVAL);

	assert_int_equal(fingerprint_ia32_cmdline("quiet pti=on"), -ENOENT);
	assert_int_equal(fingerprint_ia32_cmdline("ia32_emulation=0 quiet"), 0);
	assert_int_equal(fingerprint_ia32_cmdline("quiet ia32_emulation=y"), 1);
	assert_int_equal(fingerprint_ia32_cmdline("ia32_emulation=off"), 0);
	assert_int_equal(fingerprint_ia32_cmdline("ia32_emulation=on"), 1);
	/* The last one counts; a longer key is another parameter. */
	assert_int_equal(fingerprint_ia32_cmdline("ia32_emulation=1 ia32_emulation=false"), 0);
	assert_int_equal(fingerprint_ia32_cmdline("no_ia32_emulation=1"), -ENOENT);
	assert_int_equal(fingerprint_ia32_cmdline("ia32_emulation=maybe"), -EINVAL);
}

/* A guest without a PMU: software event sources only, THP on madvise,
 * IA32 emulation built but switched off on the command line. */
static void test_caps_guest(void **state)
{
	static const struct pair files[] = {
	    {"proc/cpuinfo",
	     "processor\t: 0\nflags\t\t: fpu tsc constant_tsc nonstop_tsc hypervisor pti\n"},
	    {"proc/cmdline", "quiet ia32_emulation=0 pti=on\n"},
	    {"boot/config-6.1.0-test", "CONFIG_X86_64=y\nCONFIG_IA32_EMULATION=y\n"},
	    {"sys/kernel/mm/transparent_hugepage/enabled", "always [madvise] never\n"},
	    /* mTHP: listed by size, not by name; "never" left out */
	    {"sys/kernel/mm/transparent_hugepage/hugepages-2048kB/enabled",
	     "always [inherit] madvise never\n"},
	    {"sys/kernel/mm/transparent_hugepage/hugepages-64kB/enabled",
	     "[always] inherit madvise never\n"},
	    {"sys/kernel/mm/transparent_hugepage/hugepages-16kB/enabled",
	     "always inherit madvise [never]\n"},
	    {"sys/kernel/mm/transparent_hugepage/hugepages-512kB/enabled",
	     "always inherit [madvise] never\n"},
	    {"sys/bus/event_source/devices/software/type", "1\n"},
	    {"sys/bus/event_source/devices/tracepoint/type", "2\n"},
	    {"sys/devices/system/clocksource/clocksource0/current_clocksource", "kvm-clock\n"},
	    {NULL, NULL}};
	static const struct pair want[] = {
	    {"ia32_emulation", "off (kernel command line)"},
	    {"thp", "madvise"},
	    {"thp_sizes", "64kB:always,512kB:madvise,2048kB:inherit"},
	    {"pmu", "none"},
	    {"clocksource", "kvm-clock"},
	    {NULL, NULL}};
	const char *root = fixture("guest");
	json_t *c;

	(void)state;
	put_all(root, files);
	c = fingerprint_caps_read(root, "6.1.0-test");
	assert_strs(c, want);
	assert_true(json_is_true(json_object_get(c, "constant_tsc")));
	assert_true(json_is_true(json_object_get(c, "nonstop_tsc")));
	json_decref(c);
}

/* An arm64 machine: a PMU named after the core, no x86 flags, no IA32. */
static void test_caps_arm64(void **state)
{
	static const struct pair files[] = {
	    {"proc/cpuinfo", "processor\t: 0\nFeatures\t: fp asimd evtstrm\n"},
	    {"proc/cmdline", "quiet\n"},
	    {"boot/config-6.1.0-arm", "CONFIG_ARM64=y\nCONFIG_COMPAT=y\n"},
	    {"sys/kernel/mm/transparent_hugepage/enabled", "[always] madvise never\n"},
	    {"sys/bus/event_source/devices/armv8_pmuv3_0/type", "8\n"},
	    {"sys/devices/system/clocksource/clocksource0/current_clocksource",
	     "arch_sys_counter\n"},
	    {NULL, NULL}};
	const char *root = fixture("arm64");
	json_t *c;

	(void)state;
	put_all(root, files);
	c = fingerprint_caps_read(root, "6.1.0-arm");
	assert_str(c, "ia32_emulation", NULL);
	assert_str(c, "thp", "always");
	/* a THP directory without mTHP sizes */
	assert_str(c, "thp_sizes", "none");
	assert_str(c, "pmu", "pmu");
	assert_true(json_is_null(json_object_get(c, "constant_tsc")));
	json_decref(c);

	/* Nothing readable: every capability is null. */
	c = fingerprint_caps_read(fixture("empty"), "x");
	assert_str(c, "thp", NULL);
	assert_str(c, "thp_sizes", NULL);
	assert_str(c, "pmu", NULL);
	assert_str(c, "clocksource", NULL);
	json_decref(c);
}

/* No /boot copy: the kernel's own gzipped config (CONFIG_IKCONFIG_PROC),
 * as on the AMD Zen 4 KVM guests; a /boot copy wins when both exist. */
static void test_caps_proc_config_gz(void **state)
{
	static const char cfg[] = "CONFIG_X86_64=y\n# CONFIG_IA32_EMULATION is not set\n";
	const char *root = fixture("proc-config-gz");
	unsigned char *gz;
	size_t n;
	char path[512];
	FILE *f;
	json_t *c;

	(void)state;
	put(root, "proc/cmdline", "quiet\n");
	assert_int_equal(gzip_compress((const unsigned char *)cfg, sizeof(cfg) - 1, 6, &gz, &n), 0);
	snprintf(path, sizeof(path), "%s/proc/config.gz", root);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(gz, 1, n, f), n);
	fclose(f);
	free(gz);
	c = fingerprint_caps_read(root, "6.18.0");
	assert_str(c, "ia32_emulation", "not built (kernel config)");
	json_decref(c);

	put(root, "boot/config-6.18.0", "CONFIG_IA32_EMULATION=y\n");
	c = fingerprint_caps_read(root, "6.18.0");
	assert_str(c, "ia32_emulation", "on (kernel config)");
	json_decref(c);
}

/* What ctxsw proved wins over an unknown IA32 emulation, and never over a
 * configured one (the identity must not change when ctxsw first runs). */
static void test_ia32_from_proof(void **state)
{
	static const struct {
		const char *configured, *int80, *want;
	} cases[] = {
	    {NULL, "works", "on (int $0x80 works, proved by ctxsw)"},
	    {NULL, "faults: the test process was killed by SIGSEGV",
	     "off in effect (int $0x80 faults, proved by ctxsw)"},
	    {NULL, "not tried", NULL},
	    {NULL, NULL, NULL},
	    {"on (kernel config)", "faults: killed", "on (kernel config)"},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		json_t *fp =
		    json_pack("{s:{s:o}}", "capabilities", "ia32_emulation",
		              cases[i].configured ? json_string(cases[i].configured) : json_null());
		json_t *doc = cases[i].int80
		                  ? json_pack("{s:{s:s}}", "info", "ia32_int80", cases[i].int80)
		                  : NULL;

		fingerprint_add_probed(fp, doc);
		assert_str(json_object_get(fp, "capabilities"), "ia32_emulation", cases[i].want);
		json_decref(doc);
		json_decref(fp);
	}
}

/* The kernel config's cases, with no ia32_emulation= on the command line. */
static void test_caps_ia32_config(void **state)
{
	static const struct {
		const char *config, *want;
	} cases[] = {
	    {"CONFIG_IA32_EMULATION=y\n", "on (kernel config)"},
	    {"CONFIG_IA32_EMULATION=y\nCONFIG_IA32_EMULATION_DEFAULT_DISABLED=y\n",
	     "off by default (kernel config)"},
	    {"# CONFIG_IA32_EMULATION is not set\n", "not built (kernel config)"},
	};
	char name[32];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *root;
		json_t *c;

		snprintf(name, sizeof(name), "ia32-%zu", i);
		root = fixture(name);
		put(root, "proc/cmdline", "quiet\n");
		put(root, "boot/config-r", cases[i].config);
		c = fingerprint_caps_read(root, "r");
		assert_str(c, "ia32_emulation", cases[i].want);
		json_decref(c);
	}
}

static void test_kmsg_record(void **state)
{
	char name[64];
	long long us = -1;

	(void)state;
	assert_int_equal(fingerprint_kmsg_hypervisor("6,12,0,-;Hypervisor detected: PVM\n", name,
	                                             sizeof(name), &us),
	                 1);
	assert_string_equal(name, "PVM");
	assert_int_equal(us, 0);
	assert_int_equal(fingerprint_kmsg_hypervisor("6,13,52,-;Hypervisor detected: Microsoft "
	                                             "Hyper-V",
	                                             name, sizeof(name), NULL),
	                 1);
	assert_string_equal(name, "Microsoft Hyper-V");
	assert_int_equal(
	    fingerprint_kmsg_hypervisor("6,1,7,-;Command line: quiet", name, sizeof(name), &us), 0);
	assert_int_equal(us, 7);
	assert_int_equal(fingerprint_kmsg_hypervisor(" SUBSYSTEM=cpu", name, sizeof(name), NULL),
	                 -EINVAL);
	assert_int_equal(
	    fingerprint_kmsg_hypervisor("Hypervisor detected: KVM", name, sizeof(name), NULL),
	    -EINVAL);
}

/* The views read from fixture files: the kernel's from a kmsg file (its
 * records, a continuation line among them), DMI's and the flag. */
static void test_virt_sources(void **state)
{
	static const struct pair files[] = {{"dev/kmsg", "5,0,0,-;Linux version 6.1.0\n"
	                                                 " SUBSYSTEM=cpu\n"
	                                                 "6,12,0,-;Hypervisor detected: KVM\n"},
	                                    {"sys/class/dmi/id/sys_vendor", "QEMU\n"},
	                                    {"proc/cpuinfo", "flags\t\t: fpu hypervisor\n"},
	                                    {NULL, NULL}};
	static const struct pair want[] = {
	    {"cpuid", "kvm"}, {"kernel", "KVM"}, {"dmi", "qemu"}, {NULL, NULL}};
	const char *root = fixture("virt");
	json_t *s;

	(void)state;
	put_all(root, files);
	s = fingerprint_virt_sources(root, "kvm");
	assert_strs(s, want);
	assert_true(json_is_true(json_object_get(s, "hypervisor_flag")));
	json_decref(s);

	/* No log, Xen's sysfs file; a bare-metal vendor is no view. */
	root = fixture("virt-xen");
	put(root, "sys/hypervisor/type", "xen\n");
	put(root, "sys/class/dmi/id/sys_vendor", "Dell Inc.\n");
	s = fingerprint_virt_sources(root, NULL);
	assert_str(s, "cpuid", NULL);
	assert_str(s, "kernel", "xen");
	assert_str(s, "dmi", NULL);
	assert_true(json_is_null(json_object_get(s, "hypervisor_flag")));
	json_decref(s);

	/* A log whose boot records are gone: no word, however long it is. */
	root = fixture("virt-late");
	put(root, "dev/kmsg",
	    "6,9000,99000000,-;eth0: link up\n"
	    "6,9001,99000001,-;Hypervisor detected: KVM\n");
	s = fingerprint_virt_sources(root, "kvm");
	assert_str(s, "kernel", NULL);
	json_decref(s);
}

/* The name printed everywhere, for each agreement and disagreement. */
static void test_virt_name(void **state)
{
	static const struct {
		const char *cpuid, *kernel, *dmi;
		int flag; /* -1: null */
		const char *want;
	} cases[] = {
	    {"kvm", "KVM", "qemu", 1, "kvm"},
	    {"bhyve", "PVM", NULL, 1, "unknown (CPUID says bhyve, the kernel says PVM)"},
	    {"bhyve", NULL, NULL, 1, "unknown (CPUID says bhyve)"},
	    {"bhyve", "Bhyve", "bhyve", 1, "bhyve"},
	    {"kvm", NULL, "qemu", 1, "kvm"},
	    {"kvm", NULL, "google", 1, "kvm"},
	    {"kvm", NULL, "vmware", 1, "unknown (CPUID says kvm, DMI says vmware)"},
	    {"microsoft", "Microsoft Hyper-V", "microsoft", 1, "microsoft"},
	    {"xen", "Xen HVM", "xen", 1, "xen"},
	    {"qemu", NULL, "qemu", 1, "qemu"},
	    {NULL, "xen", NULL, -1, "xen"},
	    {NULL, NULL, "qemu", -1, "qemu"},
	    {NULL, NULL, NULL, 0, "none"},
	    {NULL, NULL, NULL, -1, "none"},
	    {NULL, NULL, NULL, 1, "unknown (the CPU's hypervisor flag is set)"},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		json_t *src =
		    json_pack("{s:s?, s:s?, s:s?, s:o}", "cpuid", cases[i].cpuid, "kernel",
		              cases[i].kernel, "dmi", cases[i].dmi, "hypervisor_flag",
		              cases[i].flag < 0 ? json_null() : json_boolean(cases[i].flag));
		char *name = fingerprint_virt_name(src);

		if (strcmp(name, cases[i].want))
			fail_msg("case %zu: want \"%s\", got \"%s\"", i, cases[i].want, name);
		free(name);
		json_decref(src);
	}
}

/* The probed capabilities come from a ctxsw document's info; absent keys
 * and no document give nulls. */
static void test_probed(void **state)
{
	json_t *fp = json_object();
	json_t *doc =
	    json_pack("{s:s, s:{s:s, s:s, s:s, s:s, s:i}}", "status", "ok", "info", "selector_gdt",
	              "unavailable: ENOSYS", "selector_ldt", "faults (SIGSEGV)", "ia32_int80",
	              "faults (SIGSEGV)", "cpus_allowed", "1", "cpu", 1);
	json_t *old = json_pack("{s:s, s:{s:s}}", "status", "ok", "info", "cpus_allowed", "0-3");
	json_t *p;
	char *text;

	(void)state;
	fingerprint_add_probed(fp, doc);
	p = json_object_get(fp, "probed");
	assert_str(p, "selector_gdt", "unavailable: ENOSYS");
	assert_str(p, "selector_ldt", "faults (SIGSEGV)");
	assert_str(p, "ia32_int80", "faults (SIGSEGV)");
	assert_str(p, "cpus_allowed", "1");
	assert_int_equal(json_integer_value(json_object_get(p, "cpus_pinned")), 1);
	assert_int_equal(json_object_size(p), 5);
	text = fingerprint_section_text(fp, "probed");
	assert_string_equal(text, "int $0x80 faults (SIGSEGV), GDT selector unavailable: ENOSYS, "
	                          "LDT selector faults (SIGSEGV), CPUs per probe 1");
	free(text);

	fingerprint_add_probed(fp, old);
	p = json_object_get(fp, "probed");
	assert_str(p, "selector_ldt", NULL);
	assert_str(p, "cpus_allowed", "0-3");
	assert_int_equal(json_integer_value(json_object_get(p, "cpus_pinned")), 4);
	fingerprint_add_probed(fp, NULL);
	assert_true(json_is_null(json_object_get(json_object_get(fp, "probed"), "cpus_pinned")));
	assert_str(json_object_get(fp, "probed"), "cpus_allowed", NULL);
	assert_null(fingerprint_section_text(fp, "limits"));
	json_decref(fp);
	json_decref(doc);
	json_decref(old);
}

/* A capability or probed value that changes is a fingerprint change; one
 * learned where it was unknown (an older threadwatch, ctxsw not run yet,
 * the kernel log unreadable) is not. */
static void test_capability_changes(void **state)
{
	json_t *a = sample("6.1.0-18-amd64", "0x2b", 1000);
	json_t *b = sample("6.1.0-18-amd64", "0x2b", 1000);
	char *d;

	(void)state;
	json_object_set_new(b, "capabilities",
	                    json_pack("{s:s, s:s}", "thp", "madvise", "pmu", "none"));
	json_object_set_new(b, "probed", json_pack("{s:s}", "selector_ldt", "loads"));
	json_object_set_new(b, "virtualization_sources",
	                    json_pack("{s:s, s:s}", "cpuid", "kvm", "kernel", "KVM"));
	assert_null(fingerprint_diff(a, b));
	assert_null(fingerprint_diff(b, a));

	json_decref(a);
	a = json_deep_copy(b);
	json_object_set_new(json_object_get(b, "capabilities"), "thp", json_string("never"));
	json_object_set_new(json_object_get(b, "probed"), "selector_ldt",
	                    json_string("faults (SIGSEGV)"));
	json_object_set_new(json_object_get(b, "virtualization_sources"), "cpuid",
	                    json_string("bhyve"));
	d = fingerprint_diff(a, b);
	assert_non_null(d);
	assert_string_equal(d, "virtualization (CPUID) kvm → bhyve; thp madvise → never; "
	                       "LDT selector loads → faults (SIGSEGV)");
	free(d);
	json_decref(a);
	json_decref(b);
}

static int setup(void **state)
{
	(void)state;
	return tmpdir_make("test_fingerprint");
}

static int teardown(void **state)
{
	(void)state;
	return tmpdir_remove();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_read_has_every_field),
	    cmocka_unit_test(test_identity_and_diff),
	    cmocka_unit_test(test_thp_and_cmdline),
	    cmocka_unit_test(test_caps_guest),
	    cmocka_unit_test(test_caps_arm64),
	    cmocka_unit_test(test_caps_ia32_config),
	    cmocka_unit_test(test_caps_proc_config_gz),
	    cmocka_unit_test(test_ia32_from_proof),
	    cmocka_unit_test(test_kmsg_record),
	    cmocka_unit_test(test_virt_sources),
	    cmocka_unit_test(test_virt_name),
	    cmocka_unit_test(test_probed),
	    cmocka_unit_test(test_capability_changes),
	};

	return cmocka_run_group_tests_name("fingerprint", tests, setup, teardown);
}
