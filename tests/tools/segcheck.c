/*
 * segcheck: what this host does with FS segment selectors, found without
 * the probe's code, so that the regress tests know what to expect of
 * ctxsw on whatever host they run on. Each step runs in a child of its
 * own and prints one line "NAME RESULT":
 *   ldt_write    ok, or the errno name of modify_ldt(1, ...)
 *   ldt_present  1 or 0: the P bit of the descriptor read back with
 *                modify_ldt(0, ...) (0 under tests/shim/seg_not_present.c)
 *   ldt_load     ok, or the signal that loading selector 0x7 raised
 *   int80        ok, or the signal that int $0x80 (getpid) raised
 * Exits 0, or 2 when a child could not be run.
 */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#if defined(__x86_64__)
#include <asm/ldt.h>

/* Ends the child without touching %fs (glibc's _exit may, for errno). */
static void raw_exit(int code)
{
	__asm__ volatile("syscall" : : "a"((long)SYS_exit_group), "D"((long)code) : "rcx", "r11");
	__builtin_unreachable();
}

static void step_ldt_load(void)
{
	__asm__ volatile("mov %0, %%fs" : : "r"((unsigned short)0x7) : "memory");
	raw_exit(0);
}

static void step_int80(void)
{
	long r;

	__asm__ volatile("int $0x80"
	                 : "=a"(r)
	                 : "a"(20L) /* i386 getpid */
	                 : "memory", "rcx", "r8", "r9", "r10", "r11");
	raw_exit(r > 0 ? 0 : 1);
}

/* Runs fn in a child; prints "name ok" or the signal or status. */
static int step(const char *name, void (*fn)(void))
{
	int st;
	pid_t pid = fork();

	if (pid < 0)
		return -errno;
	if (pid == 0) {
		/* The signal itself, even under a sanitizer's handler. */
		signal(SIGSEGV, SIG_DFL);
		signal(SIGBUS, SIG_DFL);
		fn();
	}
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -errno;
	if (WIFSIGNALED(st))
		printf("%s SIG%s\n", name, sigabbrev_np(WTERMSIG(st)) ?: "?");
	else
		printf("%s %s\n", name, WEXITSTATUS(st) == 0 ? "ok" : "failed");
	return 0;
}

int main(void)
{
	struct user_desc d;
	uint32_t raw[2] = {0, 0};

	memset(&d, 0, sizeof(d));
	d.entry_number = 0;
	d.base_addr = 0x10000;
	d.limit = 0xfffff;
	d.seg_32bit = 1;
	d.limit_in_pages = 1;
	d.useable = 1;
	if (syscall(SYS_modify_ldt, 1, &d, sizeof(d)) < 0) {
		printf("ldt_write %s\n", strerrorname_np(errno) ?: "error");
	} else {
		printf("ldt_write ok\n");
		if (syscall(SYS_modify_ldt, 0, raw, sizeof(raw)) >= 8)
			printf("ldt_present %u\n", raw[1] >> 15 & 1);
		if (step("ldt_load", step_ldt_load) < 0)
			return 2;
	}
	fflush(stdout);
	return step("int80", step_int80) < 0 ? 2 : 0;
}
#else
int main(void)
{
	printf("ldt_write not-x86-64\nint80 not-x86-64\n");
	return 0;
}
#endif
