/*
 * fingerprint: what the host is, read from /proc, /sys, cpuid and glibc,
 * plus what the ctxsw probe proved by running it. Cheap enough to re-read
 * every minute; changes (a kernel, glibc or microcode upgrade, a capability
 * gained or lost) start a new probe cycle.
 */
#ifndef TW_FINGERPRINT_H
#define TW_FINGERPRINT_H

#include <stddef.h>

#include <jansson.h>

/* Reads the fingerprint as a JSON object:
 *   hostname, kernel (release), kernel_version, glibc, arch,
 *   cpu: {vendor, family, model, stepping, microcode, model_name, fsgsbase},
 *   virtualization: "none", "kvm", "unknown (CPUID says bhyve, the kernel
 *     says PVM)" (fingerprint_virt_name()),
 *   virtualization_sources: {cpuid, kernel, dmi, hypervisor_flag},
 *   ncpus, vulnerabilities: {name: text, ...},
 *   limits: {threads_max, pid_max, nproc_soft, stack_soft, pids_max,
 *            max_map_count, overcommit_memory},
 *   capabilities: {ia32_emulation, thp, thp_defrag, khugepaged_max_ptes_none,
 *                  pmu, constant_tsc, nonstop_tsc, clocksource}
 *                  (fingerprint_caps_read()),
 *   probed: {ia32_int80, selector_gdt, selector_ldt, cpus_allowed}, all
 *     null: fingerprint_add_probed() fills them from a ctxsw document.
 * Unreadable fields are null. Runs nothing and forks nothing. Never fails
 * (returns a new reference). */
json_t *fingerprint_read(void);

/* The top-level fields fingerprint_read() sets, NULL-terminated: what a
 * field path (threadwatch fleet --by cpu/family) may start with. */
extern const char *const fingerprint_fields[];

/* Sets fp's "probed" object from the info of a ctxsw probe document (the
 * latest ok run's); NULL, or keys the document lacks, give nulls. */
void fingerprint_add_probed(json_t *fp, const json_t *ctxsw_doc);

/* The subset whose change means "the host changed" (kernel, glibc, cpu and
 * microcode, what each view says the hypervisor is, ncpus,
 * vulnerabilities, capabilities, probed); limits are excluded because they
 * are tuning, not identity. New reference. */
json_t *fingerprint_identity(const json_t *fp);

/* A short text of what differs between two identities, such as
 * "kernel 6.1.0-18 → 6.1.0-21; microcode 0x2b → 0x2c", or NULL when equal.
 * A capability, probed value or hypervisor view that is unknown on one
 * side is not a difference. malloc'd. */
char *fingerprint_diff(const json_t *before, const json_t *after);

/* The identity fields of one object of fp ("capabilities", "probed") as
 * "thp madvise, pmu none, ...", with "unknown" for nulls; NULL when the
 * section has no identity fields. malloc'd. */
char *fingerprint_section_text(const json_t *fp, const char *section);

/* --- readers, which take a root directory ("" is this host) ------------- */

/* capabilities, from root/proc, root/sys and root/boot/config-<release>. */
json_t *fingerprint_caps_read(const char *root, const char *release);

/* The mode in brackets of a THP setting ("always [madvise] never" ->
 * "madvise"). 0 or -EINVAL. */
int fingerprint_thp_mode(const char *text, char *out, size_t len);
/* The hypervisor CPUID names ("kvm", "microsoft", "xen", or its
 * signature as it is) into buf: 1; 0 on bare metal or where CPUID has no
 * hypervisor bit (not x86). */
int fingerprint_cpuid_hypervisor(char *buf, size_t len);

/* The mTHP sizes THP may use, smallest first, each with its setting unless
 * "never" ("64kB:always,2048kB:inherit"), or "none", from the
 * hugepages-*kB directories under ROOT/sys/kernel/mm/transparent_hugepage
 * (root "" for this host). 0, -ENOSPC when out is too short, or -errno
 * when the directory cannot be read. */
int fingerprint_thp_sizes(const char *root, char *out, size_t len);

/* ia32_emulation= on a kernel command line, read as the kernel reads it:
 * 1 on, 0 off, -ENOENT absent, -EINVAL unreadable. */
int fingerprint_ia32_cmdline(const char *cmdline);

/* virtualization_sources: CPUID's name (passed in: cpuid cannot be faked
 * from files; NULL when it names none), the kernel's word from
 * root/dev/kmsg ("Hypervisor detected: PVM") or root/sys/hypervisor/type,
 * DMI's vendor from root/sys/class/dmi/id/sys_vendor, and the hypervisor
 * flag of root/proc/cpuinfo. */
json_t *fingerprint_virt_sources(const char *root, const char *cpuid);

/* The name shown everywhere, from virtualization_sources: CPUID's name
 * when the kernel or, failing it, DMI confirms it; "unknown (CPUID says
 * X, the kernel says Y)" (or ", DMI says Y", or nothing more) when none
 * does; without CPUID the kernel's or DMI's; else "none". malloc'd. */
char *fingerprint_virt_name(const json_t *sources);

/* Parses one /dev/kmsg record ("6,12,0,-;Hypervisor detected: PVM"):
 * 1 and the hypervisor's word when it is that message, 0 when it is
 * another, -EINVAL when it is not a record. *usec (may be NULL) gets the
 * record's time since boot. */
int fingerprint_kmsg_hypervisor(const char *record, char *name, size_t len, long long *usec);

#endif
