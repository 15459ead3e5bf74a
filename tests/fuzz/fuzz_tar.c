/* fuzz_tar.c - the ramdisk's USTAR reader over arbitrary bytes. */
#include <stdint.h>

#include "lib/tar.h"
#include "tests/fuzz/fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    /* An exact-size copy so ASan sees any read past the end. */
    uint8_t *buf = malloc(size ? size : 1);
    memcpy(buf, data, size);
    struct tar_reader r;
    struct tar_entry e;
    char err[128];
    tar_init(&r, buf, size);
    int rc, entries = 0;
    while ((rc = tar_next(&r, &e, err, sizeof err)) == 1) {
        FUZZ_ASSERT(memchr(e.name, '\0', sizeof e.name) != NULL, "entry name not terminated");
        FUZZ_ASSERT(e.name[0] != '\0', "entry with an empty name");
        FUZZ_ASSERT(e.data >= buf && e.data <= buf + size, "entry data outside the archive");
        FUZZ_ASSERT(e.size <= (uint64_t)(buf + size - e.data), "entry size past the archive");
        /* Touch the first and last data byte. */
        volatile uint8_t sink = 0;
        if (e.size) sink ^= e.data[0] ^ e.data[e.size - 1];
        (void)sink;
        FUZZ_ASSERT(++entries <= (int)(size / 512) + 1, "more entries than headers");
    }
    if (rc < 0)
        fuzz_check_reason(err, sizeof err);
    else
        FUZZ_ASSERT(rc == 0, "tar_next returned an unknown status");
    /* After the end, the reader stays at the end. */
    FUZZ_ASSERT(tar_next(&r, &e, err, sizeof err) == 0, "reader restarted after the end");

    rc = tar_find(buf, size, "./stories260K.bin", &e, err, sizeof err);
    if (rc != 1) fuzz_check_reason(err, sizeof err);
    free(buf);
    return 0;
}
