/* test_sha256.c - the loader's SHA-256 (boot/sha256.c) against Python's
 * hashlib, on lengths around the padding edges (0, 55, 56, 64 bytes) and a
 * 1 MiB buffer, in one call and fed in uneven pieces. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "boot/sha256.h"
#include "tests/host/check.h"

/* The same bytes on both sides: byte i is (i * 31 + 7) mod 256. */
static uint8_t pattern_byte(uint64_t i) {
    return (uint8_t)(i * 31 + 7);
}

/* hashlib's digest of the pattern's first n bytes, as 64 hex digits. */
static int reference_hex(uint64_t n, char out[65]) {
    char cmd[256];
    snprintf(
        cmd, sizeof cmd,
        "python3 -c 'import hashlib; print(hashlib.sha256(bytes((i * 31 + 7) & 255 for i in range(%llu)))"
        ".hexdigest())'",
        (unsigned long long)n);
    FILE *p = popen(cmd, "r");
    if (!p) return 0;
    int got = fscanf(p, "%64s", out) == 1;
    while (fgetc(p) != EOF) {
    } /* read to the end: python3 must not meet a closed pipe */
    return pclose(p) == 0 && got && strlen(out) == 64;
}

static void to_hex(const uint8_t digest[SHA256_DIGEST_BYTES], char out[65]) {
    for (int i = 0; i < SHA256_DIGEST_BYTES; i++) sprintf(out + 2 * i, "%02x", digest[i]);
}

int main(void) {
    static const uint64_t lengths[] = {0, 1, 55, 56, 63, 64, 65, 119, 120, 128, 1000, 1 << 20};
    for (size_t k = 0; k < sizeof lengths / sizeof lengths[0]; k++) {
        uint64_t n = lengths[k];
        uint8_t *data = malloc(n ? n : 1);
        for (uint64_t i = 0; i < n; i++) data[i] = pattern_byte(i);
        char want[65], whole[65], pieces[65], name[64];
        uint8_t digest[SHA256_DIGEST_BYTES];
        snprintf(name, sizeof name, "sha256 of %llu bytes", (unsigned long long)n);
        if (!reference_hex(n, want)) {
            check(0, name, "python3 hashlib gave no digest");
            free(data);
            continue;
        }
        sha256(data, n, digest);
        to_hex(digest, whole);
        check(strcmp(whole, want) == 0, name, "got %s, hashlib says %s", whole, want);

        /* Pieces of 1, 2, 3, ... 97 bytes cross every block boundary. */
        struct sha256 ctx;
        sha256_init(&ctx);
        uint64_t done = 0;
        for (uint64_t step = 1; done < n; step = step % 97 + 1) {
            uint64_t take = n - done < step ? n - done : step;
            sha256_update(&ctx, data + done, take);
            done += take;
        }
        sha256_final(&ctx, digest);
        to_hex(digest, pieces);
        snprintf(name, sizeof name, "sha256 of %llu bytes in pieces", (unsigned long long)n);
        check(strcmp(pieces, want) == 0, name, "got %s, hashlib says %s", pieces, want);
        free(data);
    }
    return failures ? 1 : 0;
}
