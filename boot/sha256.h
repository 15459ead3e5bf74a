/* sha256.h - SHA-256 (FIPS 180-4) for the loader's kernel check.
 *
 * Our own small implementation: GNU-EFI has no hash, and EFI_HASH2_PROTOCOL
 * is absent from many PC firmwares, so a signed loader cannot count on it.
 * Plain C with no library calls: it builds into the loader and, unchanged,
 * into the host test (tests/host/test_sha256.c checks it against hashlib).
 */
#ifndef BOOT_SHA256_H
#define BOOT_SHA256_H

#include <stdint.h>

#define SHA256_DIGEST_BYTES 32

struct sha256 {
    uint32_t state[8];
    uint64_t length; /* bytes hashed so far */
    uint8_t block[64];
    uint32_t used; /* bytes waiting in block */
};

void sha256_init(struct sha256 *ctx);
void sha256_update(struct sha256 *ctx, const void *data, uint64_t len);
void sha256_final(struct sha256 *ctx, uint8_t digest[SHA256_DIGEST_BYTES]);
/* The digest of one buffer. */
void sha256(const void *data, uint64_t len, uint8_t digest[SHA256_DIGEST_BYTES]);

#endif
