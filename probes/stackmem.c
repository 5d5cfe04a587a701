/*
 * stackmem: what an idle thread costs in memory, by how its stack was
 * mapped. Starts a batch of threads that each run a little and then sleep,
 * and reads this process's resident memory and AnonHugePages from
 * /proc/self/smaps_rollup before and after, for each kind of stack in
 * kinds[] (which says when the kernel lets THP back each), at the default
 * stack size and at 2 MiB. Huge pages turn an idle thread's 8 KiB into
 * 2 MiB. Says what the host's THP settings imply for stacks later
 * (khugepaged), and proves whether this kernel maps MAP_STACK without huge
 * pages (VM_NOHUGEPAGE, the "nh" flag of /proc/self/smaps).
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fingerprint.h"
#include "futexw.h"
#include "joinq.h"
#include "probe.h"
#include "file_read.h"
#include "stats.h"
#include "sysinfo.h"

/* Threads per batch: enough that a page per thread stands out of the
 * noise, few enough that a batch of huge-page stacks stays at 32 MiB. The
 * huge-page kind runs only with MemAvailable above STACKMEM_MEM_MIN. */
#define STACKMEM_MEM_MIN (256ull << 20)
#define STACKMEM_THREADS 16
#define STACKMEM_QUICK_THREADS 8
/* Rounds of every kind, each round in a fresh random order. The lowest
 * and highest of 6 rounds bound the median with 96.9% confidence
 * (1 - 2 x 0.5^6, from the order statistics alone, whatever the
 * distribution): the figures' 95% CIs. */
#define STACKMEM_ROUNDS 6
#define STACKMEM_2M (2u << 20)
/* /proc/self/smaps_rollup is a header line and some 25 "Name: N kB" lines,
 * under 1 KiB. */
#define STACKMEM_ROLLUP_MAX 4096
#define THP "/sys/kernel/mm/transparent_hugepage"

#ifndef MAP_STACK
#define MAP_STACK 0
#endif

/* How a batch's stacks are mapped, and so whether THP may back them. The
 * kernel decides it for each mapping, at a page fault and in khugepaged, in
 * thp_vma_allowable_orders() (include/linux/huge_mm.h), which then calls
 * __thp_vma_allowable_orders() (mm/huge_memory.c); kernels before 6.8 call
 * it hugepage_vma_check(). For an anonymous mapping such as a stack:
 *  - thp_vma_allowable_orders() keeps the sizes set "always" in
 *    hugepages-<size>kB/enabled, those set "madvise" when the mapping is
 *    VM_HUGEPAGE (which madvise(MADV_HUGEPAGE) sets), and those set
 *    "inherit" (2 MiB by default) when THP enabled is "always", or when it
 *    is "madvise" and the mapping is VM_HUGEPAGE: "never" keeps none of
 *    them;
 *  - __thp_vma_allowable_orders() then allows none when the mapping is
 *    VM_NOHUGEPAGE or the process has PR_SET_THP_DISABLE
 *    (vma_thp_disabled()). MAP_STACK makes a mapping VM_NOHUGEPAGE since
 *    Linux 6.8 (and 6.7.5): calc_vm_flag_bits() in include/linux/mman.h.
 *    Its vma_is_temporary_stack() test is for the stack exec sets up, not
 *    for thread stacks;
 *  - outside a fault, as for khugepaged, it keeps a size only when the
 *    mapping holds an aligned range of it (thp_vma_suitable_order()), which
 *    do_huge_pmd_anonymous_page() checks at a fault: a stack under 2 MiB
 *    never gets a 2 MiB page.
 * So "plain" (a runtime mapping its own stacks) gets what THP "always"
 * gives, "huge" what THP "always" or "madvise" gives, and "map_stack", and
 * "glibc" (MAP_STACK since glibc 2.9), nothing where MAP_STACK is
 * VM_NOHUGEPAGE. */
static const struct kind {
	const char *name;
	int glibc;     /* glibc maps it (pthread_attr_setstacksize) */
	int map_stack; /* MAP_STACK */
	int huge;      /* madvise(MADV_HUGEPAGE) */
} kinds[] = {
    {"glibc", 1, 0, 0},
    {"map_stack", 0, 1, 0},
    {"plain", 0, 0, 0},
    {"huge", 0, 0, 1},
};
#define N_KINDS (sizeof(kinds) / sizeof(kinds[0]))
#define N_ARMS (2 * N_KINDS) /* each kind at the default size and at 2 MiB */

/* Each thread of a batch parks on its own go word, so that the batch ends
 * one thread at a time (joinq_join()): waking all at once put the whole
 * batch on the run queue together. */
struct batch_slot {
	struct batch *b;
	int go;
};

struct batch {
	int parked;
	struct batch_slot slot[STACKMEM_THREADS];
	pthread_t th[STACKMEM_THREADS];
	void *map[STACKMEM_THREADS];
	size_t len;
};

static void *idle_thread(void *p)
{
	struct batch_slot *s = p;
	volatile char used[2048];

	/* a little work on the stack, as a thread that ran before it idled */
	for (size_t i = 0; i < sizeof(used); i += 64)
		used[i] = (char)i;
	__atomic_add_fetch(&s->b->parked, 1, __ATOMIC_RELEASE);
	futexw_wake(&s->b->parked, 1);
	futexw_wait_equal(&s->go, 1);
	return NULL;
}

/* Rss and AnonHugePages of this process, bytes. */
static int rollup(double *rss, double *huge)
{
	static const char *const keys[] = {"\nRss:", "\nAnonHugePages:"};
	unsigned long long kb[2];
	char *text = NULL, *p;
	int r = file_read_all("/proc/self/smaps_rollup", STACKMEM_ROLLUP_MAX, &text, NULL);

	for (size_t i = 0; r == 0 && i < 2; i++)
		if (!(p = strstr(text, keys[i])) ||
		    sscanf(p + strlen(keys[i]), "%llu kB", &kb[i]) != 1)
			r = -ENODATA;
	free(text);
	if (r < 0)
		return r;
	*rss = 1024.0 * (double)kb[0];
	*huge = 1024.0 * (double)kb[1];
	return 0;
}

/* Starts thread i of the batch on a stack of the kind. */
static int start(struct batch *b, int i, const struct kind *k, size_t page)
{
	pthread_attr_t a;
	int r;

	pthread_attr_init(&a);
	if (k->glibc) {
		r = pthread_attr_setstacksize(&a, b->len);
	} else {
		b->map[i] =
		    mmap(NULL, b->len, PROT_READ | PROT_WRITE,
		         MAP_PRIVATE | MAP_ANONYMOUS | (k->map_stack ? MAP_STACK : 0), -1, 0);
		if (b->map[i] == MAP_FAILED) {
			b->map[i] = NULL;
			pthread_attr_destroy(&a);
			return -errno;
		}
		if (k->huge)
			madvise(b->map[i], b->len, MADV_HUGEPAGE);
		mprotect(b->map[i], page, PROT_NONE);
		r = pthread_attr_setstack(&a, (char *)b->map[i] + page, b->len - page);
	}
	b->slot[i].b = b;
	if (!r)
		r = pthread_create(&b->th[i], &a, idle_thread, &b->slot[i]);
	pthread_attr_destroy(&a);
	return -r;
}

/* One batch: bytes per idle thread, and AnonHugePages bytes per thread. */
static int batch_run(const struct kind *k, size_t len, int n, double *per, double *huge_per)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	struct batch b = {.len = len};
	double rss0, rss1, h0, h1;
	int started = 0, r;

	r = rollup(&rss0, &h0);
	/* One thread at a time: each parks before the next starts, so that
	 * a batch adds at most one runnable thread to the probe. */
	for (int i = 0; r == 0 && i < n; i++) {
		r = start(&b, i, k, page);
		started += r == 0;
		futexw_wait_equal(&b.parked, started);
	}
	if (r == 0)
		r = rollup(&rss1, &h1);
	for (int i = 0; i < started; i++) {
		futexw_store_wake(&b.slot[i].go, 1);
		joinq_join(b.th[i]);
	}
	for (int i = 0; i < n; i++)
		if (b.map[i])
			munmap(b.map[i], len);
	if (r < 0)
		return r;
	*per = (rss1 - rss0) / n;
	*huge_per = (h1 - h0) / n;
	return 0;
}

/* Whether this kernel maps MAP_STACK as VM_NOHUGEPAGE (see kinds[]): the
 * "nh" flag on the VmFlags line of such a mapping in /proc/self/smaps. Read
 * rather than told from the kernel's version, which stable kernels that
 * took the change back do not show. */
static const char *map_stack_nohugepage(int *nh)
{
	void *p = mmap(NULL, STACKMEM_2M, PROT_READ | PROT_WRITE,
	               MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	char line[512], want[32];
	FILE *f;
	int in = 0;

	*nh = -1;
	if (p == MAP_FAILED)
		return "a MAP_STACK mapping failed";
	snprintf(want, sizeof(want), "%lx-", (unsigned long)(uintptr_t)p);
	f = fopen("/proc/self/smaps", "re");
	while (f && fgets(line, sizeof(line), f)) {
		if (strchr(line, '-') && strchr(line, '-') < strchr(line, ' '))
			in = !strncmp(line, want, strlen(want));
		else if (in && !strncmp(line, "VmFlags:", 8))
			*nh = strstr(line, " nh") != NULL;
	}
	if (f)
		fclose(f);
	munmap(p, STACKMEM_2M);
	return *nh < 0 ? "no VmFlags for a MAP_STACK mapping in /proc/self/smaps" : NULL;
}

/* The bracketed choice of a sysfs THP setting ("always [madvise] never"),
 * in out; NULL when it cannot be read. */
static const char *choice(const char *path, char *out, size_t len)
{
	char text[256];

	if (sys_read_line(path, text, sizeof(text)) < 0 || fingerprint_thp_mode(text, out, len) < 0)
		return NULL;
	return out;
}

/* The THP settings, the mTHP sizes in use, and what they imply for an idle
 * stack later on, as thp_vma_allowable_orders() decides (see kinds[]). The
 * khugepaged sentence speaks of the sizes that inherit THP enabled (2 MiB
 * by default); a size set "always" or
 * "madvise" of its own is kept whatever THP enabled says, and mthp_sizes
 * lists it. */
static void report_thp(struct probe_doc *doc, int nh)
{
	char buf[256], en[32] = "", sizes[512] = "";
	const char *e = choice(THP "/enabled", buf, sizeof(buf));
	long ptes = -1;

	snprintf(en, sizeof(en), "%s", e ? e : "");
	probe_info_str(doc, "thp_enabled", e);
	probe_info_str(doc, "thp_defrag", choice(THP "/defrag", buf, sizeof(buf)));
	if (sys_read_line(THP "/khugepaged/max_ptes_none", buf, sizeof(buf)) == 0)
		ptes = strtol(buf, NULL, 10);
	probe_info_num(doc, "khugepaged_max_ptes_none", ptes >= 0 ? (double)ptes : -1);
	probe_info_str(doc, "mthp_sizes",
	               fingerprint_thp_sizes("", sizes, sizeof(sizes)) == 0 ? sizes : "none");
	if (!strcmp(en, "never"))
		probe_info_str(doc, "khugepaged",
		               "THP never: stacks get no huge pages, now or later");
	else if (!strcmp(en, "always") && ptes >= 0) {
		snprintf(
		    buf, sizeof(buf),
		    "THP always: khugepaged may later collapse a 2 MiB-aligned range of an idle "
		    "stack with %ld or more of its 512 pages present into one huge page%s",
		    512 - ptes,
		    nh == 1 ? "; MAP_STACK stacks are exempt here (VM_NOHUGEPAGE)" : "");
		probe_info_str(doc, "khugepaged", buf);
	} else if (!strcmp(en, "madvise"))
		probe_info_str(
		    doc, "khugepaged",
		    "THP madvise: only stacks advised MADV_HUGEPAGE get huge pages, at fault "
		    "or later from khugepaged");
	else
		probe_info_str(doc, "khugepaged", NULL);
}

/* What huge pages do to an idle thread here, and the fix: from the kinds
 * at the default size (glibc, map_stack, plain, huge in kinds[]). Each fix
 * takes away one thing thp_vma_allowable_orders() needs (see kinds[]):
 * MAP_STACK, and glibc.pthread.stack_hugetlb=0 (glibc then advises its
 * stacks MADV_NOHUGEPAGE), make the stack VM_NOHUGEPAGE; THP madvise keeps
 * 2 MiB pages to VM_HUGEPAGE mappings; a stack under 2 MiB holds no
 * aligned 2 MiB range. */
static void report_huge(struct probe_doc *doc, double v[][STACKMEM_ROUNDS],
                        double h[][STACKMEM_ROUNDS], int nh)
{
	char buf[512];
	double glibc = stats_median(h[0], STACKMEM_ROUNDS),
	       plain = stats_median(h[2], STACKMEM_ROUNDS);
	double huge = isnan(v[3][0]) ? NAN : stats_median(v[3], STACKMEM_ROUNDS);

	if (glibc > 0 || plain > 0)
		snprintf(
		    buf, sizeof(buf),
		    "huge pages back thread stacks here: %.0f KiB of huge pages per idle thread "
		    "with glibc's stacks, %.0f KiB with stacks mapped without MAP_STACK",
		    glibc / 1024, plain / 1024);
	else if (huge >= 1 << 20)
		snprintf(
		    buf, sizeof(buf),
		    "no stack is on huge pages here; one that THP backs (THP always, or a stack "
		    "advised MADV_HUGEPAGE) holds %.0f KiB per idle thread, measured",
		    huge / 1024);
	else
		buf[0] = '\0';
	probe_info_str(doc, "huge_pages", buf[0] ? buf : NULL);
	if (glibc > 0 || plain > 0 || huge >= 1 << 20)
		probe_info_str(
		    doc, "fix",
		    nh == 1 ? "map thread stacks with MAP_STACK (this kernel gives them "
		              "VM_NOHUGEPAGE), keep THP at madvise, or keep stacks under "
		              "2 MiB; glibc 2.38+: glibc.pthread.stack_hugetlb=0"
		            : "keep THP at madvise or never, or keep stacks under 2 MiB; "
		              "glibc 2.38+: glibc.pthread.stack_hugetlb=0 (this kernel does "
		              "not exempt MAP_STACK stacks: Linux 6.8 and 6.7.5 and later do)");
}

/* KEY_ci_lo and KEY_ci_hi: the lowest and highest round (see
 * STACKMEM_ROUNDS). */
static void report_range(struct probe_doc *doc, const char *key, const double *v)
{
	double lo = v[0], hi = v[0];
	char name[96];

	for (int i = 1; i < STACKMEM_ROUNDS; i++) {
		lo = fmin(lo, v[i]);
		hi = fmax(hi, v[i]);
	}
	snprintf(name, sizeof(name), "%s_ci_lo", key);
	probe_scalar(doc, name, lo, "bytes");
	snprintf(name, sizeof(name), "%s_ci_hi", key);
	probe_scalar(doc, name, hi, "bytes");
}

static void run(struct probe_doc *doc, const struct probe_opts *po)
{
	double v[N_ARMS][STACKMEM_ROUNDS], h[N_ARMS][STACKMEM_ROUNDS];
	size_t sizes[2] = {sys_default_stack_size(), STACKMEM_2M}, perm[N_ARMS];
	int n = po->quick ? STACKMEM_QUICK_THREADS : STACKMEM_THREADS, nh;
	const char *why = map_stack_nohugepage(&nh);
	struct stats_rng rng;
	uint64_t avail;
	int mem_short;
	char key[80];

	probe_param_int(doc, "threads", n);
	probe_param_int(doc, "stack_size", (int64_t)sizes[0]);
	if (why)
		probe_info_str(doc, "map_stack_nohugepage_why", why);
	else
		probe_info_bool(doc, "map_stack_nohugepage", nh);
	report_thp(doc, nh);
	stats_rng_seed(&rng, po->seed ^ UINT64_C(0x737461636b6d656d));
	/* an unknown MemAvailable does not hold the huge-page kind back */
	mem_short = sys_mem_available(NULL, &avail) == 0 && avail < STACKMEM_MEM_MIN;
	if (mem_short) {
		snprintf(key, sizeof(key), "MemAvailable is %llu MiB, under %llu MiB",
		         (unsigned long long)(avail >> 20), STACKMEM_MEM_MIN >> 20);
		probe_info_str(doc, "huge_skipped", key);
	}
	for (int round = 0; round < STACKMEM_ROUNDS; round++) {
		stats_rng_permutation(&rng, perm, N_ARMS);
		for (size_t i = 0; i < N_ARMS; i++) {
			size_t a = perm[i];
			int r;

			if (kinds[a % N_KINDS].huge && mem_short) {
				v[a][round] = h[a][round] = NAN;
				continue;
			}
			r = batch_run(&kinds[a % N_KINDS], sizes[a / N_KINDS], n, &v[a][round],
			              &h[a][round]);

			if (r < 0) {
				probe_status(doc, PROBE_ERROR, "%s stacks of %zu bytes: %s",
				             kinds[a % N_KINDS].name, sizes[a / N_KINDS],
				             strerror(-r));
				return;
			}
		}
	}
	report_huge(doc, v, h, nh);
	for (size_t a = 0; a < N_ARMS; a++) {
		const char *sfx = a / N_KINDS ? "_2m" : "";

		if (isnan(v[a][0]))
			continue; /* not measured (huge_skipped says why) */

		snprintf(key, sizeof(key), "%s%s_bytes_per_thread", kinds[a % N_KINDS].name, sfx);
		probe_scalar(doc, key, stats_median(v[a], STACKMEM_ROUNDS), "bytes");
		report_range(doc, key, v[a]);
		snprintf(key, sizeof(key), "%s%s_huge_bytes_per_thread", kinds[a % N_KINDS].name,
		         sfx);
		probe_scalar(doc, key, stats_median(h[a], STACKMEM_ROUNDS), "bytes");
	}
}

int main(int argc, char **argv)
{
	struct probe_opts po;
	struct probe_doc *doc;
	int rc;

	if (probe_parse_args(
	        argc, argv,
	        "Measures the memory an idle thread holds, by how its stack was "
	        "mapped (glibc's, MAP_STACK, without it, MADV_HUGEPAGE), at the default "
	        "stack size and at 2 MiB, and what the THP settings imply.",
	        &po, NULL, 0) < 0)
		return 2;
	doc = probe_doc_new("stackmem");
	probe_param_bool(doc, "quick", po.quick);
	run(doc, &po);
	rc = probe_emit(doc);
	probe_doc_free(doc);
	return rc;
}
