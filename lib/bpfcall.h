/*
 * bpfcall: the one wrapper around the bpf(2) system call (no libbpf): maps,
 * a program loaded from instructions built in memory, a raw tracepoint to
 * attach it to, and the instruction encodings those programs are written
 * in. Every call returns a descriptor or 0, or -errno, and never logs.
 */
#ifndef TW_BPFCALL_H
#define TW_BPFCALL_H

#include <stddef.h>
#include <stdint.h>

#include <linux/bpf.h>

/* Instructions, as struct bpf_insn encodes them (include/uapi/linux/bpf.h,
 * Documentation/bpf/standardization/instruction-set.rst). */
#define BPFC_INSN(c, d, s, o, i)                                                                   \
	((struct bpf_insn){.code = (c), .dst_reg = (d), .src_reg = (s), .off = (o), .imm = (i)})
#define BPFC_MOV_REG(d, s) BPFC_INSN(BPF_ALU64 | BPF_MOV | BPF_X, d, s, 0, 0)
#define BPFC_MOV_IMM(d, i) BPFC_INSN(BPF_ALU64 | BPF_MOV | BPF_K, d, 0, 0, i)
#define BPFC_ALU_IMM(op, d, i) BPFC_INSN(BPF_ALU64 | (op) | BPF_K, d, 0, 0, i)
#define BPFC_ALU_REG(op, d, s) BPFC_INSN(BPF_ALU64 | (op) | BPF_X, d, s, 0, 0)
/* 32-bit move: the upper half of d is zeroed */
#define BPFC_MOV32_REG(d, s) BPFC_INSN(BPF_ALU | BPF_MOV | BPF_X, d, s, 0, 0)
#define BPFC_LDX(size, d, s, o) BPFC_INSN(BPF_LDX | BPF_MEM | (size), d, s, o, 0)
#define BPFC_STX(size, d, s, o) BPFC_INSN(BPF_STX | BPF_MEM | (size), d, s, o, 0)
#define BPFC_ST(size, d, o, i) BPFC_INSN(BPF_ST | BPF_MEM | (size), d, 0, o, i)
/* *(u64 *)(d + o) += s, atomically */
#define BPFC_ATOMIC_ADD64(d, s, o) BPFC_INSN(BPF_STX | BPF_ATOMIC | BPF_DW, d, s, o, BPF_ADD)
#define BPFC_JMP_IMM(op, d, i, o) BPFC_INSN(BPF_JMP | (op) | BPF_K, d, 0, o, i)
#define BPFC_JMP_REG(op, d, s, o) BPFC_INSN(BPF_JMP | (op) | BPF_X, d, s, o, 0)
#define BPFC_JA(o) BPFC_INSN(BPF_JMP | BPF_JA, 0, 0, o, 0)
#define BPFC_CALL(fn) BPFC_INSN(BPF_JMP | BPF_CALL, 0, 0, 0, fn)
#define BPFC_EXIT() BPFC_INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0)
/* d = the map of descriptor fd: a 64-bit load, whose second instruction
 * (BPFC_LD_HI) holds the upper half (none for a map) */
#define BPFC_LD_MAP(d, fd) BPFC_INSN(BPF_LD | BPF_DW | BPF_IMM, d, BPF_PSEUDO_MAP_FD, 0, fd)
#define BPFC_LD_HI() BPFC_INSN(0, 0, 0, 0, 0)

/* A map: its descriptor, or -errno. */
int bpfc_map_create(uint32_t type, uint32_t key_size, uint32_t value_size, uint32_t max_entries,
                    uint32_t flags, const char *name);
/* A program of n instructions: its descriptor, or -errno with the
 * verifier's last line in log (when log is not NULL). */
int bpfc_prog_load(uint32_t type, const struct bpf_insn *insns, size_t n, const char *license,
                   const char *name, char *log, size_t loglen);
/* Attaches prog to the raw tracepoint `name`: the link's descriptor, which
 * detaches it when closed, or -errno. */
int bpfc_raw_tp_open(const char *name, int prog);
int bpfc_map_lookup(int map, const void *key, void *value);
/* The key after `key` (NULL: the first): 0, -ENOENT after the last. */
int bpfc_map_next_key(int map, const void *key, void *next);
int bpfc_map_delete(int map, const void *key);
/* The CPUs the kernel may ever bring up (/sys/devices/system/cpu/possible),
 * the count of values a per-CPU map holds: > 0, or -errno. */
int bpfc_possible_cpus(void);
/* The count of CPUs in a cpulist text ("0-3", "0,2-5\n", as
 * cpumap_print_to_pagebuf() writes it): > 0, or -EINVAL. */
int bpfc_cpus_parse(const char *text);

#endif
