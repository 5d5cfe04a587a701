/*
 * no_bpf: an LD_PRELOAD test double for kernels where the BPF counter
 * cannot count, chosen by TW_NO_BPF:
 *   nosys  a kernel built without CONFIG_BPF_SYSCALL: bpf(2) is then
 *          sys_ni_syscall() (kernel/sys_ni.c, COND_SYSCALL(bpf)), which
 *          answers -ENOSYS to every command;
 *   notp   a kernel without the raw tracepoints the counter attaches to:
 *          BPF_RAW_TRACEPOINT_OPEN reaches bpf_raw_tp_link_attach()
 *          (kernel/bpf/syscall.c), where bpf_get_raw_tracepoint(name)
 *          finds none and it answers -ENOENT; the maps and programs load.
 * It sits in front of glibc's syscall(), which the project's one bpf(2)
 * wrapper (lib/bpfcall.c) calls; every other call goes on to glibc.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>

#include <linux/bpf.h>

typedef long syscall_fn(long, ...);

long syscall(long number, ...);

long syscall(long number, ...)
{
	static syscall_fn *real;
	const char *mode = getenv("TW_NO_BPF");
	long a[6];
	va_list ap;

	va_start(ap, number);
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	if (number == SYS_bpf && mode && !strcmp(mode, "nosys")) {
		errno = ENOSYS;
		return -1;
	}
	if (number == SYS_bpf && mode && !strcmp(mode, "notp") && a[0] == BPF_RAW_TRACEPOINT_OPEN) {
		errno = ENOENT;
		return -1;
	}
	if (!real)
		real = (syscall_fn *)dlsym(RTLD_NEXT, "syscall");
	return real(number, a[0], a[1], a[2], a[3], a[4], a[5]);
}
