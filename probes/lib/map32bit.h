/*
 * map32bit: proves that this kernel honours MAP_32BIT before a probe
 * relies on it. On x86-64 the flag places a mapping in the 1 GiB window
 * 0x40000000-0x80000000 (find_start_end() in
 * arch/x86/kernel/sys_x86_64.c); a kernel for another architecture, an
 * emulator (qemu-user, gVisor) or a seccomp policy may ignore or refuse it,
 * and a probe that filled "the window" there would measure nothing it
 * claims.
 */
#ifndef TW_MAP32BIT_H
#define TW_MAP32BIT_H

#include <stddef.h>

/* The window MAP_32BIT allocates from. */
#define MAP32BIT_WINDOW_BEGIN 0x40000000UL
#define MAP32BIT_WINDOW_END 0x80000000UL

/* 1 on x86-64; elsewhere 0, with why MAP_32BIT is not applicable in why
 * ("no MAP_32BIT window on aarch64: ..."). */
int map32bit_applicable(char *why, size_t n);

/* Maps and unmaps one page with MAP_32BIT. Returns 1 when it landed in
 * the window (what says so, in what), 0 when not (why not, in what). */
int map32bit_check(char *what, size_t n);

#endif
