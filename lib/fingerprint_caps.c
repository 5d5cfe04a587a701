/*
 * fingerprint_caps: what the host can do that the probes' figures depend
 * on. Read here without running anything: IA32 emulation as configured,
 * the THP mode, a PMU, the TSC's flags, the clocksource. Proven by running
 * it, in the ctxsw probe's forked child, and taken from its document:
 * whether int $0x80 works, whether GDT and LDT selectors load, the CPUs
 * the probe ran on.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fingerprint.h"
#include "fingerprintp.h"
#include "gzip.h"

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))
#define THP_PATH "/sys/kernel/mm/transparent_hugepage/enabled"
#define THP_DEFRAG_PATH "/sys/kernel/mm/transparent_hugepage/defrag"
#define THP_PTES_PATH "/sys/kernel/mm/transparent_hugepage/khugepaged/max_ptes_none"
#define THP_DIR "/sys/kernel/mm/transparent_hugepage"
#define PMU_DIR "/sys/bus/event_source/devices"
#define CLOCKSOURCE_PATH "/sys/devices/system/clocksource/clocksource0/current_clocksource"

/* The core PMU's event source: a name, or a prefix when it ends in '_'. */
static const char *const pmu_names[] = {"cpu", "cpu_core", "cpu_atom", "armv8_", "armv7_"};

/* The TSC flags of /proc/cpuinfo the fingerprint keeps. */
static const char *const tsc_flags[] = {"constant_tsc", "nonstop_tsc"};

/* Kernel config lines about IA32 emulation, one bit each. */
enum { IA32_BUILT = 1, IA32_NOT_BUILT = 2, IA32_DEFAULT_OFF = 4 };
static const struct {
	const char *line;
	int bit;
} ia32_config[] = {
    {"CONFIG_IA32_EMULATION=y", IA32_BUILT},
    {"# CONFIG_IA32_EMULATION is not set", IA32_NOT_BUILT},
    {"CONFIG_IA32_EMULATION_DEFAULT_DISABLED=y", IA32_DEFAULT_OFF},
};

/* The first letters kstrtobool() reads ia32_emulation= by ("on"/"off"
 * are told apart by their second letter). */
static const struct {
	const char *letters;
	int on;
} kbool[] = {{"eEyYtT1", 1}, {"dDnNfF0", 0}};

/* The keys of the ctxsw document's info the fingerprint takes. */
static const char *const probed_keys[] = {"ia32_int80", "selector_gdt", "selector_ldt",
                                          "cpus_allowed"};

int fingerprint_thp_mode(const char *text, char *out, size_t len)
{
	const char *open = strchr(text, '['), *close;

	if (!open || !(close = strchr(open + 1, ']')) || close == open + 1)
		return -EINVAL;
	snprintf(out, len, "%.*s", (int)(close - open - 1), open + 1);
	return 0;
}

int fingerprint_ia32_cmdline(const char *cmdline)
{
	const char *key = "ia32_emulation=", *p = cmdline, *v;

	/* The last one counts, as it does for the kernel. */
	for (v = NULL; (p = strstr(p, key)); p += strlen(key))
		if (p == cmdline || p[-1] == ' ')
			v = p + strlen(key);
	if (!v || !*v || *v == ' ')
		return -ENOENT;
	if (*v == 'o' || *v == 'O')
		return v[1] == 'n' || v[1] == 'N' ? 1 : v[1] == 'f' || v[1] == 'F' ? 0 : -EINVAL;
	for (size_t i = 0; i < ARRAY_LEN(kbool); i++)
		if (strchr(kbool[i].letters, *v))
			return kbool[i].on;
	return -EINVAL;
}

/* Where the running kernel's config may be: the distribution's copy, then
 * the kernel's own (CONFIG_IKCONFIG_PROC), gzipped. */
static const char *const config_paths[] = {"/boot/config-%s", "/proc/config.gz"};
#define CONFIG_MAX (4u << 20)

/* The IA32_* bits the first readable kernel config sets; 0 when none is
 * readable. */
static int ia32_config_bits(const char *root, const char *release)
{
	char path[FP_PATH_MAX], rel[FP_PATH_MAX], *text = NULL;
	int bits = 0;

	for (size_t k = 0; k < ARRAY_LEN(config_paths) && !text; k++) {
		snprintf(rel, sizeof(rel), config_paths[k], release ? release : "");
		snprintf(path, sizeof(path), "%s%s", root, rel);
		if (gzip_read_file(path, CONFIG_MAX, &text) < 0)
			text = NULL;
	}
	for (char *line = text, *next; line && *line; line = next) {
		next = line + strcspn(line, "\n");
		if (*next)
			*next++ = '\0';
		for (size_t i = 0; i < ARRAY_LEN(ia32_config); i++)
			if (!strcmp(line, ia32_config[i].line))
				bits |= ia32_config[i].bit;
	}
	free(text);
	return bits;
}

/* IA32 emulation as configured: the command line's ia32_emulation=
 * over the kernel config's default; null when neither says. The kernel
 * may still refuse int $0x80 (a PVM guest does): the probe proves that. */
static json_t *ia32_emulation(const char *root, const char *release)
{
	char cmdline[4096];
	int bits = ia32_config_bits(root, release), cmd = -ENOENT;

	if (fp_read_line(root, "/proc/cmdline", cmdline, sizeof(cmdline)) == 0)
		cmd = fingerprint_ia32_cmdline(cmdline);
	if (bits & IA32_NOT_BUILT)
		return json_string("not built (kernel config)");
	if (cmd >= 0)
		return json_string(cmd ? "on (kernel command line)" : "off (kernel command line)");
	if (bits & IA32_DEFAULT_OFF)
		return json_string("off by default (kernel config)");
	if (bits & IA32_BUILT)
		return json_string("on (kernel config)");
	return json_null();
}

/* The bracketed choice of a THP setting ("always [madvise] never"), or
 * null. */
static json_t *thp(const char *root, const char *path)
{
	char text[256], mode[64];

	if (fp_read_line(root, path, text, sizeof(text)) < 0 ||
	    fingerprint_thp_mode(text, mode, sizeof(mode)) < 0)
		return json_null();
	return json_string(mode);
}

/* How many empty pages khugepaged accepts in a range it collapses into a
 * huge page (511 of 512 by default: one touched page is enough), or null. */
static json_t *max_ptes_none(const char *root)
{
	char text[64], *end;
	long v;

	if (fp_read_line(root, THP_PTES_PATH, text, sizeof(text)) < 0)
		return json_null();
	v = strtol(text, &end, 10);
	return end != text && v >= 0 && v < 1 << 20 ? json_integer(v) : json_null();
}

static int by_kb(const void *a, const void *b)
{
	unsigned long x = *(const unsigned long *)a, y = *(const unsigned long *)b;

	return (x > y) - (x < y);
}

int fingerprint_thp_sizes(const char *root, char *out, size_t len)
{
	char path[FP_PATH_MAX], text[256], mode[64];
	unsigned long kb[32];
	size_t n = 0, used = 0;
	struct dirent *de;
	DIR *d;

	if (!len)
		return -EINVAL;
	out[0] = '\0';
	snprintf(path, sizeof(path), "%s%s", root, THP_DIR);
	d = opendir(path);
	if (!d)
		return -errno;
	while ((de = readdir(d)) && n < sizeof(kb) / sizeof(kb[0])) {
		char *end;
		unsigned long v;

		if (strncmp(de->d_name, "hugepages-", 10))
			continue;
		v = strtoul(de->d_name + 10, &end, 10);
		if (end != de->d_name + 10 && !strcmp(end, "kB"))
			kb[n++] = v;
	}
	closedir(d);
	qsort(kb, n, sizeof(kb[0]), by_kb);
	for (size_t i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/hugepages-%lukB/enabled", THP_DIR, kb[i]);
		if (fp_read_line(root, path, text, sizeof(text)) < 0 ||
		    fingerprint_thp_mode(text, mode, sizeof(mode)) < 0 || !strcmp(mode, "never"))
			continue;
		used += (size_t)snprintf(out + used, used < len ? len - used : 0, "%s%lukB:%s",
		                         used ? "," : "", kb[i], mode);
	}
	if (used >= len)
		return -ENOSPC;
	if (!used)
		snprintf(out, len, "none");
	return 0;
}

/* The mTHP sizes THP may use and how (fingerprint_thp_sizes()), or null
 * on a kernel without them. */
static json_t *thp_sizes(const char *root)
{
	char text[512];

	return fingerprint_thp_sizes(root, text, sizeof(text)) < 0 ? json_null()
	                                                           : json_string(text);
}

static int is_pmu(const char *name)
{
	for (size_t i = 0; i < ARRAY_LEN(pmu_names); i++) {
		size_t n = strlen(pmu_names[i]);

		if (pmu_names[i][n - 1] == '_' ? !strncmp(name, pmu_names[i], n)
		                               : !strcmp(name, pmu_names[i]))
			return 1;
	}
	return 0;
}

/* "pmu" when the kernel has a core PMU's event source, "none" when it has
 * only software ones (a guest without a virtual PMU), null unreadable. */
static json_t *pmu(const char *root)
{
	char path[FP_PATH_MAX];
	struct dirent *de;
	int found = 0;
	DIR *d;

	snprintf(path, sizeof(path), "%s%s", root, PMU_DIR);
	d = opendir(path);
	if (!d)
		return json_null();
	while (!found && (de = readdir(d)))
		found = is_pmu(de->d_name);
	closedir(d);
	return json_string(found ? "pmu" : "none");
}

json_t *fingerprint_caps_read(const char *root, const char *release)
{
	char *flags = fp_cpuinfo_field(root, "flags"), line[256];
	json_t *o = json_object();

	json_object_set_new(o, "ia32_emulation", ia32_emulation(root, release));
	json_object_set_new(o, "thp", thp(root, THP_PATH));
	json_object_set_new(o, "thp_defrag", thp(root, THP_DEFRAG_PATH));
	json_object_set_new(o, "khugepaged_max_ptes_none", max_ptes_none(root));
	json_object_set_new(o, "thp_sizes", thp_sizes(root));
	json_object_set_new(o, "pmu", pmu(root));
	for (size_t i = 0; i < ARRAY_LEN(tsc_flags); i++)
		json_object_set_new(o, tsc_flags[i],
		                    flags ? json_boolean(fp_has_word(flags, tsc_flags[i]))
		                          : json_null());
	json_object_set_new(o, "clocksource",
	                    fp_read_line(root, CLOCKSOURCE_PATH, line, sizeof(line)) == 0
	                        ? fp_str_or_null(line)
	                        : json_null());
	free(flags);
	return o;
}

/* How many CPUs a list such as "0-3,6" names, or null when it is not one. */
static json_t *cpu_list_count(const char *list)
{
	long n = 0, lo, hi;
	char *end;

	if (!list || !*list)
		return json_null();
	for (const char *p = list; *p; p = *end == ',' ? end + 1 : end) {
		lo = strtol(p, &end, 10);
		if (end == p || lo < 0)
			return json_null();
		hi = lo;
		if (*end == '-') {
			p = end + 1;
			hi = strtol(p, &end, 10);
			if (end == p || hi < lo)
				return json_null();
		}
		if (*end && *end != ',')
			return json_null();
		n += hi - lo + 1;
	}
	return json_integer(n);
}

/* What ctxsw's int $0x80 proof says of IA32 emulation, by the start of its
 * info.ia32_int80. */
static const struct {
	const char *start;
	const char *says;
} int80_says[] = {
    {"works", "on (int $0x80 works, proved by ctxsw)"},
    {"faults", "off in effect (int $0x80 faults, proved by ctxsw)"},
};

/* IA32 emulation that neither the config nor the command line told: what
 * the probe proved wins over unknown. A configured value stays, so that
 * the identity does not change when ctxsw first runs. */
static void ia32_from_proof(json_t *fp, const char *int80)
{
	json_t *caps = json_object_get(fp, "capabilities");

	if (!json_is_object(caps) || json_is_string(json_object_get(caps, "ia32_emulation")) ||
	    !int80)
		return;
	for (size_t i = 0; i < ARRAY_LEN(int80_says); i++)
		if (!strncmp(int80, int80_says[i].start, strlen(int80_says[i].start)))
			json_object_set_new(caps, "ia32_emulation",
			                    json_string(int80_says[i].says));
}

void fingerprint_add_probed(json_t *fp, const json_t *ctxsw_doc)
{
	const json_t *info = json_object_get(ctxsw_doc, "info");
	json_t *o = json_object();

	for (size_t i = 0; i < ARRAY_LEN(probed_keys); i++) {
		const char *v = json_string_value(json_object_get(info, probed_keys[i]));

		json_object_set_new(o, probed_keys[i], fp_str_or_null(v));
	}
	/* Which CPU the quiet-CPU choice picked may move from run to run; how
	 * many the probe may use (one when pinned, all when not) is what
	 * changes its figures, and what the identity keeps. */
	json_object_set_new(
	    o, "cpus_pinned",
	    cpu_list_count(json_string_value(json_object_get(info, "cpus_allowed"))));
	json_object_set_new(fp, "probed", o);
	ia32_from_proof(fp, json_string_value(json_object_get(info, "ia32_int80")));
}
