/* kernel_hash.h - the kernel's SHA-256 as built into the loader.
 *
 * The Makefile generates the definition (tools/gen-kernel-hash.sh): a signed
 * loader (make image SIGN=1) carries the digest of the build's kernel.elf and
 * refuses any other kernel, so Secure Boot's chain of trust reaches past the
 * loader; a plain development build carries none and checks nothing.
 */
#ifndef BOOT_KERNEL_HASH_H
#define BOOT_KERNEL_HASH_H

#include <stdint.h>

#include "boot/sha256.h"

struct kernel_hash {
    uint32_t present; /* 0: unsigned build, no check */
    uint8_t sha256[SHA256_DIGEST_BYTES];
};

extern const struct kernel_hash loader_kernel_hash;

#endif
