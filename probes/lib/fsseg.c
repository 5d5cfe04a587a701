/*
 * fsseg: installs and loads an FS segment descriptor based at the
 * calling thread's TCB (see fsseg.h).
 */
#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fsseg.h"
#include "isolate.h"

#if defined(__x86_64__)
#include <asm/ldt.h>
#include <asm/prctl.h>

#define FSSEG_LOW_LIMIT (UINT64_C(1) << 32)

typedef long fsseg_ia32_fn(long nr, unsigned long arg);

/* One i386 system call with one argument through int $0x80. The compat
 * entry truncates the argument to 32 bits and may clobber r8-r11. */
static long ia32_int80(long nr, unsigned long arg)
{
	long r;

	__asm__ volatile("int $0x80"
	                 : "=a"(r)
	                 : "a"(nr), "b"(arg)
	                 : "memory", "rcx", "r8", "r9", "r10", "r11");
	return r;
}

static fsseg_ia32_fn *ia32_call(void)
{
	static fsseg_ia32_fn *fn;

	if (!fn) {
		void *p = dlsym(RTLD_DEFAULT, "tw_ia32_syscall1");

		fn = p ? (fsseg_ia32_fn *)p : ia32_int80;
	}
	return fn;
}

/* A flat 32-bit writable data descriptor at `base`. */
static void desc_init(struct user_desc *d, int entry, uint32_t base)
{
	memset(d, 0, sizeof(*d));
	d->entry_number = (unsigned)entry;
	d->base_addr = base;
	d->limit = 0xfffff;
	d->seg_32bit = 1;
	d->limit_in_pages = 1;
	d->useable = 1;
}

/* The steps of one way's test, in the order the child reports them. */
enum seg_step { STEP_NONE, STEP_THREAD, STEP_WRITE, STEP_LOAD, STEP_READ };

/* One report of the test child: the step it finished and its result. */
struct seg_msg {
	int step;
	int err;       /* 0, or the errno of a failed step */
	int entry;     /* STEP_WRITE of the GDT way: the TLS entry */
	unsigned sel;  /* STEP_WRITE: the selector to load */
	uint64_t got;  /* STEP_READ: %fs:0 */
	uint64_t want; /* STEP_READ: pthread_self() */
};

struct seg_try {
	int fd;
	enum fsseg_kind way;
};

#define FSSEG_TRY_STACK (64u << 10)
#define FSSEG_TRY_MS 5000
#define FSSEG_MAX_MSGS 4

static void send_msg(int fd, const struct seg_msg *m)
{
	if (isolate_send(fd, m, sizeof(*m)) < 0)
		_exit(2);
}

/* Writes the descriptor of one way, based at the calling thread's TCB.
 * Returns the selector, or -errno. */
static long seg_write(enum fsseg_kind way, uint32_t base, int *entry)
{
	struct user_desc d; /* on a low stack: int $0x80 reads 32-bit pointers */
	long r;

	if (way == FSSEG_GDT) {
		desc_init(&d, -1, base);
		r = ia32_call()(FSSEG_IA32_SET_THREAD_AREA, (unsigned long)(uintptr_t)&d);
		if (r < 0)
			return r;
		*entry = (int)d.entry_number;
		return (long)(d.entry_number << 3 | 3);
	}
	desc_init(&d, 0, base);
	if (syscall(SYS_modify_ldt, 1, &d, sizeof(d)) < 0)
		return -errno;
	return 0 << 3 | 4 | 3; /* LDT entry 0: TI = 1, RPL 3 */
}

/* The test thread, on a low stack: writes, loads, reads back, and ends
 * the child, which never returns to code that uses the new %fs. */
static void *try_thread(void *p)
{
	const struct seg_try *t = p;
	struct seg_msg m = {.step = STEP_THREAD, .entry = -1};
	uint64_t self;
	long sel;

	send_msg(t->fd, &m);
	sel = seg_write(t->way, (uint32_t)(uintptr_t)pthread_self(), &m.entry);
	m.step = STEP_WRITE;
	m.err = sel < 0 ? (int)-sel : 0;
	m.sel = sel < 0 ? 0 : (unsigned)sel;
	send_msg(t->fd, &m);
	if (sel < 0)
		_exit(0);
	__asm__ volatile("mov %0, %%fs" : : "r"((unsigned short)sel) : "memory");
	m.step = STEP_LOAD;
	send_msg(t->fd, &m);
	__asm__ volatile("mov %%fs:0, %0" : "=r"(self));
	m.step = STEP_READ;
	m.got = self;
	m.want = (uint64_t)(uintptr_t)pthread_self();
	m.err = m.got == m.want ? 0 : EIO;
	send_msg(t->fd, &m);
	_exit(0);
}

/* The child of one way: a thread on a stack below 4 GiB, so that its TCB
 * and FS base are low, as in the probe's selector arm. */
static int try_child(int fd, void *arg)
{
	struct seg_try t = {fd, *(enum fsseg_kind *)arg};
	struct seg_msg m = {.step = STEP_THREAD, .entry = -1};
	pthread_attr_t a;
	pthread_t th;
	void *stk;

	stk = mmap(NULL, FSSEG_TRY_STACK, PROT_READ | PROT_WRITE,
	           MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
	m.err = stk == MAP_FAILED ? errno : 0;
	if (!m.err) {
		pthread_attr_init(&a);
		m.err = pthread_attr_setstack(&a, stk, FSSEG_TRY_STACK);
		if (!m.err)
			m.err = pthread_create(&th, &a, try_thread, &t);
	}
	if (m.err) {
		send_msg(fd, &m);
		return 0;
	}
	pthread_join(th, NULL); /* the thread ends the process */
	return 3;
}

/* What a refused write means, by way and errno: the kernel function that
 * gives that answer. */
static const struct {
	enum fsseg_kind way;
	int err;
	const char *hint;
} write_hints[] = {
    {FSSEG_LDT, ENOSYS, " (no CONFIG_MODIFY_LDT_SYSCALL?)"},
    {FSSEG_GDT, ESRCH, " (no free TLS slot: get_free_idx() found all 3 taken)"},
    {FSSEG_GDT, EINVAL, " (the descriptor was refused: tls_desc_okay())"},
};

static const char *write_hint(enum fsseg_kind way, int err)
{
	for (size_t i = 0; i < sizeof(write_hints) / sizeof(write_hints[0]); i++)
		if (write_hints[i].way == way && write_hints[i].err == err)
			return write_hints[i].hint;
	return "";
}

/* What the child of way `way` did, in words, into out; 1 when the
 * selector loaded and read back the TCB. */
static int way_result(enum fsseg_kind way, const struct seg_msg *last,
                      const struct isolate_end *end, char *out, size_t n, int *entry)
{
	const char *what = way == FSSEG_GDT ? "set_thread_area through int $0x80" : "modify_ldt";
	char how[96];

	isolate_describe(end, how, sizeof(how));
	switch (last ? last->step : STEP_NONE) {
	case STEP_NONE:
		snprintf(out, n, "the test process %s", how);
		return 0;
	case STEP_THREAD:
		if (last->err)
			snprintf(out, n, "no thread on a low stack: %s", strerror(last->err));
		else
			snprintf(out, n, "%s: the test process %s%s", what, how,
			         way == FSSEG_GDT && WIFSIGNALED(end->status) &&
			                 WTERMSIG(end->status) == SIGSEGV
			             ? " (no IA32 emulation)"
			             : "");
		return 0;
	case STEP_WRITE:
		if (last->err)
			snprintf(out, n, "%s: %s%s", what, strerror(last->err),
			         write_hint(way, last->err));
		else
			snprintf(
			    out, n,
			    "written, but loading selector 0x%x into %%fs: the test process %s",
			    last->sel, how);
		return 0;
	case STEP_LOAD:
		snprintf(out, n, "selector 0x%x loads, but reading %%fs:0: the test process %s",
		         last->sel, how);
		return 0;
	default:
		if (last->err) {
			snprintf(out, n,
			         "selector 0x%x loads, but %%fs:0 reads 0x%" PRIx64
			         " instead of the TCB 0x%" PRIx64,
			         last->sel, last->got, last->want);
			return 0;
		}
		*entry = last->entry;
		snprintf(out, n, "loads (selector 0x%x; %%fs:0 reads back the TCB)", last->sel);
		return 1;
	}
}

/* Tests one way in a child; fills out and returns 1 when it works, 0 when
 * not, -errno when no child could be run. The GDT way also says what its
 * int $0x80 did into s->int80. */
static int try_way(struct fsseg *s, enum fsseg_kind way, char *out, size_t n, int *entry)
{
	struct seg_msg m[FSSEG_MAX_MSGS];
	struct isolate_end end;
	size_t k;
	int r = isolate_run(try_child, &way, m, sizeof(m), FSSEG_TRY_MS, &end);

	if (r < 0)
		return r;
	k = end.got / sizeof(m[0]);
	if (way == FSSEG_GDT && k > 0 && m[k - 1].step == STEP_THREAD && !m[k - 1].err &&
	    !isolate_clean(&end)) {
		char how[96];

		snprintf(s->int80, sizeof(s->int80), "faults: the test process %s",
		         isolate_describe(&end, how, sizeof(how)));
	} else if (way == FSSEG_GDT && k > 1) {
		snprintf(s->int80, sizeof(s->int80), "works");
	}
	return way_result(way, k ? &m[k - 1] : NULL, &end, out, n, entry);
}

int fsseg_probe(struct fsseg *s)
{
	int gdt, ldt, unused;

	memset(s, 0, sizeof(*s));
	s->kind = FSSEG_NONE;
	s->gdt_entry = -1;
	snprintf(s->int80, sizeof(s->int80), "not tried");
	gdt = try_way(s, FSSEG_GDT, s->gdt, sizeof(s->gdt), &s->gdt_entry);
	if (gdt < 0)
		return gdt;
	ldt = try_way(s, FSSEG_LDT, s->ldt, sizeof(s->ldt), &unused);
	if (ldt < 0)
		return ldt;
	if (gdt) {
		s->kind = FSSEG_GDT;
		snprintf(s->path, sizeof(s->path), "GDT TLS entry %d (set_thread_area, int $0x80)",
		         s->gdt_entry);
		snprintf(s->path_why, sizeof(s->path_why),
		         "GDT: the first way tried, and it loads");
	} else if (ldt) {
		s->kind = FSSEG_LDT;
		snprintf(s->path, sizeof(s->path), "LDT (modify_ldt)");
		snprintf(s->path_why, sizeof(s->path_why),
		         "LDT, because the GDT way does not work: %s", s->gdt);
	} else {
		snprintf(s->why, sizeof(s->why), "GDT: %s; LDT: %s", s->gdt, s->ldt);
	}
	return 0;
}

int fsseg_load(const struct fsseg *s, unsigned slot)
{
	struct user_desc d;
	unsigned long base = 0;
	unsigned sel;
	long r;

	if (s->kind == FSSEG_NONE)
		return -ENOSYS;
	if (syscall(SYS_arch_prctl, ARCH_GET_FS, &base) < 0)
		return -errno;
	if ((uint64_t)base >= FSSEG_LOW_LIMIT)
		return -ERANGE;
	if (s->kind == FSSEG_GDT) {
		if ((uint64_t)(uintptr_t)&d >= FSSEG_LOW_LIMIT)
			return -EFAULT;
		desc_init(&d, -1, (uint32_t)base);
		r = ia32_call()(FSSEG_IA32_SET_THREAD_AREA, (unsigned long)(uintptr_t)&d);
		if (r < 0)
			return (int)r;
		sel = d.entry_number << 3 | 3;
	} else {
		if (slot >= LDT_ENTRIES)
			return -EINVAL;
		desc_init(&d, (int)slot, (uint32_t)base);
		if (syscall(SYS_modify_ldt, 1, &d, sizeof(d)) < 0)
			return -errno;
		sel = slot << 3 | 4 | 3; /* TI = 1: the LDT; RPL 3 */
	}
	__asm__ volatile("mov %0, %%fs" : : "r"((unsigned short)sel) : "memory");
	return (int)sel;
}

int fsseg_fsgsbase(void)
{
	return (getauxval(AT_HWCAP2) & (1ul << 1)) != 0; /* HWCAP2_FSGSBASE */
}

unsigned fsseg_current(void)
{
	unsigned short sel;

	__asm__ volatile("mov %%fs, %0" : "=r"(sel));
	return sel;
}

#else /* not x86-64 */

int fsseg_probe(struct fsseg *s)
{
	memset(s, 0, sizeof(*s));
	s->kind = FSSEG_NONE;
	s->gdt_entry = -1;
	snprintf(s->why, sizeof(s->why), "no segment selectors on this architecture");
	snprintf(s->gdt, sizeof(s->gdt), "not x86-64");
	snprintf(s->ldt, sizeof(s->ldt), "not x86-64");
	snprintf(s->int80, sizeof(s->int80), "not x86-64");
	return 0;
}

int fsseg_load(const struct fsseg *s, unsigned slot)
{
	(void)s;
	(void)slot;
	return -ENOSYS;
}

int fsseg_fsgsbase(void)
{
	return 0;
}

unsigned fsseg_current(void)
{
	return 0;
}
#endif
