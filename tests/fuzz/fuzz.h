/*
 * fuzz: the entry point every harness under tests/fuzz/ defines. libFuzzer
 * calls it with generated inputs; tests/fuzz/replay.c calls it with the
 * files of the seed corpus in an ordinary build.
 */
#ifndef TW_FUZZ_H
#define TW_FUZZ_H

#include <stddef.h>
#include <stdint.h>

/* Must not crash, leak or hang for any input; returns 0. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif
