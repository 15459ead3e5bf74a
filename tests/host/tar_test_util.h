/* tar_test_util.h - helpers shared by the lib/tar.c tests (test_tar.c,
 * test_tar_gnu.c): files, walks over exact-size copies, header checksums. */
#ifndef TESTS_HOST_TAR_TEST_UTIL_H
#define TESTS_HOST_TAR_TEST_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "lib/string.h"
#include "lib/tar.h"

static __attribute__((unused)) uint8_t *read_file(const char *path, size_t *size) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *buf = malloc(n > 0 ? (size_t)n : 1);
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    *size = (size_t)n;
    return buf;
}

static __attribute__((unused)) void write_file(const char *path, const void *data, size_t n) {
    FILE *f = fopen(path, "wb");
    if (!f) return;
    fwrite(data, 1, n, f);
    fclose(f);
}

/* Counts entries; returns the tar_next result that ended the walk. */
static int walk(const uint8_t *data, size_t size, int *count, char *err, size_t err_size) {
    struct tar_reader r;
    struct tar_entry e;
    tar_init(&r, data, size);
    int rc;
    *count = 0;
    while ((rc = tar_next(&r, &e, err, err_size)) == 1) (*count)++;
    return rc;
}

/* Runs on an exact-size heap copy so ASan sees any overrun. */
static int walk_copy(const uint8_t *data, size_t size, int *count, char *err, size_t err_size) {
    uint8_t *copy = malloc(size ? size : 1);
    memcpy(copy, data, size);
    int rc = walk(copy, size, count, err, err_size);
    free(copy);
    return rc;
}

static void set_checksum(uint8_t *h) {
    memset(h + 148, ' ', 8);
    unsigned sum = 0;
    for (int i = 0; i < 512; i++) sum += h[i];
    snprintf((char *)h + 148, 8, "%06o", sum);
    h[155] = ' ';
}

#endif
