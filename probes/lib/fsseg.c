/*
 * fsseg: installs and loads an FS segment descriptor based at the
 * calling thread's TCB (see fsseg.h).
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fsseg.h"

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

/* What the child reports: an errno per way (0: it works) and the entry. */
struct probe_msg {
	int ldt_err;
	int gdt_err;
	int gdt_entry;
};

static void child_try(int fd, void *low)
{
	struct user_desc *d = low;
	struct probe_msg m = {0, 0, -1};
	long r;

	desc_init(d, 0, (uint32_t)(uintptr_t)low);
	if (syscall(SYS_modify_ldt, 1, d, sizeof(*d)) < 0)
		m.ldt_err = errno;
	/* Sent before int $0x80, which faults where there is no IA32
	 * emulation and ends the child. */
	if (write(fd, &m, sizeof(m)) != (ssize_t)sizeof(m))
		_exit(2);
	desc_init(d, -1, (uint32_t)(uintptr_t)low);
	r = ia32_call()(FSSEG_IA32_SET_THREAD_AREA, (unsigned long)(uintptr_t)d);
	m.gdt_err = r < 0 ? (int)-r : 0;
	m.gdt_entry = r < 0 ? -1 : (int)d->entry_number;
	if (write(fd, &m, sizeof(m)) != (ssize_t)sizeof(m))
		_exit(2);
	_exit(0);
}

/* Runs child_try and fills s from what it said and how it ended. */
static int probe_child(struct fsseg *s, void *low)
{
	struct probe_msg m[2] = {{-1, -1, -1}, {-1, -1, -1}};
	int p[2], st = 0;
	ssize_t n = 0, k;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	pid = fork();
	if (pid < 0) {
		int e = errno;

		close(p[0]);
		close(p[1]);
		return -e;
	}
	if (pid == 0) {
		close(p[0]);
		child_try(p[1], low);
	}
	close(p[1]);
	while (n < (ssize_t)sizeof(m) && (k = read(p[0], (char *)m + n, sizeof(m) - (size_t)n)) > 0)
		n += k;
	close(p[0]);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (n < (ssize_t)sizeof(m[0]))
		return -EIO;
	if (n < (ssize_t)sizeof(m)) {
		/* A kernel without IA32 emulation answers int $0x80 with #GP,
		 * that is SIGSEGV; an emulator may raise something else. */
		if (WIFSIGNALED(st))
			snprintf(s->why, sizeof(s->why), "set_thread_area through int $0x80: %s%s",
			         strsignal(WTERMSIG(st)),
			         WTERMSIG(st) == SIGSEGV ? " (no IA32 emulation)" : "");
		else
			snprintf(s->why, sizeof(s->why),
			         "set_thread_area through int $0x80 ended the test process");
		m[1].gdt_err = -1;
	} else if (m[1].gdt_err) {
		snprintf(s->why, sizeof(s->why), "set_thread_area through int $0x80: %s",
		         strerror(m[1].gdt_err));
	}
	if (n == (ssize_t)sizeof(m) && m[1].gdt_err == 0) {
		s->kind = FSSEG_GDT;
		s->gdt_entry = m[1].gdt_entry;
		snprintf(s->path, sizeof(s->path), "GDT TLS entry %d (set_thread_area, int $0x80)",
		         s->gdt_entry);
	} else if (m[0].ldt_err == 0) {
		s->kind = FSSEG_LDT;
		snprintf(s->path, sizeof(s->path), "LDT (modify_ldt)");
	} else {
		size_t o = strlen(s->why);

		snprintf(s->why + o, sizeof(s->why) - o, "; modify_ldt: %s%s",
		         strerror(m[0].ldt_err),
		         m[0].ldt_err == ENOSYS ? " (no CONFIG_MODIFY_LDT_SYSCALL?)" : "");
	}
	return 0;
}

int fsseg_probe(struct fsseg *s)
{
	void *low;
	int r;

	memset(s, 0, sizeof(*s));
	s->kind = FSSEG_NONE;
	s->gdt_entry = -1;
	/* int $0x80 reads the user_desc at a 32-bit address. */
	low = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1,
	           0);
	if (low == MAP_FAILED) {
		snprintf(s->why, sizeof(s->why), "no memory below 4 GiB (MAP_32BIT: %s)",
		         strerror(errno));
		return 0;
	}
	r = probe_child(s, low);
	munmap(low, 4096);
	return r;
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
	snprintf(s->why, sizeof(s->why), "not x86-64: FS has no segment path here");
	return 0;
}

int fsseg_load(const struct fsseg *s, unsigned slot)
{
	(void)s;
	(void)slot;
	return -ENOSYS;
}

unsigned fsseg_current(void)
{
	return 0;
}
#endif
