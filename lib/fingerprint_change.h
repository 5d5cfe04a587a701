/*
 * fingerprint_change: what a fingerprint change is called in a sentence, from the
 * difference fingerprint_diff() wrote: "the kernel upgrade to
 * 6.1.0-21-amd64", "the microcode update to 0x2c", or, when more changed,
 * "the host change (kernel ... → ...; glibc ... → ...)".
 */
#ifndef TW_FINGERPRINT_CHANGE_H
#define TW_FINGERPRINT_CHANGE_H

/* The name of the change diff describes; malloc'd. */
char *fingerprint_change_name(const char *diff);

#endif
