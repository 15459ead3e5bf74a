/* test_tar_gnu.c - lib/tar.c on the GNU format tools/mkramdisk.sh writes:
 * base-256 sizes, type 'L' long names, the entry types it refuses, and
 * mkramdisk.sh's archive of a sparse 9 GiB file (test_tar.c reads small
 * GNU archives of tar(1) too). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "lib/string.h"
#include "lib/tar.h"
#include "tests/host/check.h"
#include "tests/host/tar_test_util.h"

/* One header at h: GNU magic when gnu, else POSIX ustar; size in octal, or
 * in base-256 when it does not fit 11 octal digits. */
static void make_header(uint8_t *h, const char *name, char type, uint64_t size, int gnu) {
    memset(h, 0, 512);
    memcpy(h, name, strlen(name) < 100 ? strlen(name) : 100);
    memcpy(h + 100, "0000644", 7);
    if (size < (1ull << 33)) {
        snprintf((char *)h + 124, 12, "%011llo", (unsigned long long)size);
    } else {
        h[124] = 0x80;
        for (int i = 0; i < 8; i++) h[135 - i] = (uint8_t)(size >> (8 * i));
    }
    h[156] = (uint8_t)type;
    memcpy(h + 257,
           gnu ? "ustar  "
               : "ustar\0"
                 "00",
           8);
    set_checksum(h);
}

/* A type 'L' entry for name (NUL included in its size, as GNU tar writes
 * it) at a, then a GNU file header; returns the bytes used. */
static size_t make_long_name(uint8_t *a, const char *name, char type, uint64_t size) {
    size_t n = strlen(name) + 1;
    make_header(a, "././@LongLink", 'L', n, 1);
    memcpy(a + 512, name, n);
    size_t at = 512 + (n + 511) / 512 * 512;
    make_header(a + at, name, type, size, 1);
    return at + 512;
}

/* First entry of an exact-size copy of a: rc, and name/size when found. */
static int first_entry(const uint8_t *a, size_t size, struct tar_entry *e, char *err, size_t err_size) {
    uint8_t *copy = malloc(size);
    memcpy(copy, a, size);
    struct tar_reader r;
    tar_init(&r, copy, size);
    int rc = tar_next(&r, e, err, err_size);
    if (rc == 1) e->data = a + (e->data - copy);
    free(copy);
    return rc;
}

static void test_gnu_headers(void) {
    static uint8_t a[8192];
    struct tar_entry e;
    char err[160], name[300];
    int count, rc;

    /* GNU headers keep other fields where ustar has its prefix. */
    make_header(a, "gnu.bin", '0', 3, 1);
    memset(a + 345, '7', 12); /* atime */
    set_checksum(a);
    rc = first_entry(a, 2048, &e, err, sizeof err);
    check(rc == 1 && strcmp(e.name, "gnu.bin") == 0 && e.size == 3, "GNU header: prefix bytes are not a name",
          "rc %d, name %s: %s", rc, e.name, err);

    memset(name, 'q', 256);
    name[256] = '\0';
    memset(a, 0, sizeof a);
    size_t used = make_long_name(a, name, '0', 5);
    memcpy(a + used, "hello", 5);
    rc = first_entry(a, sizeof a, &e, err, sizeof err);
    check(rc == 1 && strcmp(e.name, name) == 0 && e.size == 5 && e.data == a + used &&
              memcmp(e.data, "hello", 5) == 0,
          "type L: a 256-byte name applies to the next file", "rc %d, name of %zu bytes: %s", rc,
          strlen(e.name), err);

    name[200] = '\0';
    memset(a, 0, sizeof a);
    used = make_long_name(a, name, '5', 0); /* a directory with a long name */
    make_header(a + used, "after.bin", '0', 1, 1);
    rc = first_entry(a, sizeof a, &e, err, sizeof err);
    check(rc == 1 && strcmp(e.name, "after.bin") == 0,
          "type L on a skipped directory: the next file keeps its name", "rc %d, name %s: %s", rc, e.name,
          err);

    memset(name, 'q', 257);
    name[257] = '\0';
    memset(a, 0, sizeof a);
    make_long_name(a, name, '0', 5);
    rc = walk_copy(a, sizeof a, &count, err, sizeof err);
    check_plain(rc == -1 && strstr(err, "257 bytes") != NULL, "type L: a 257-byte name rejected", err);

    memset(a, 0, sizeof a);
    make_long_name(a, "unterminated", '0', 5);
    a[512 + 12] = 'x'; /* the NUL GNU tar counts in the size */
    rc = walk_copy(a, sizeof a, &count, err, sizeof err);
    check_plain(rc == -1 && strstr(err, "NUL") != NULL, "type L without its NUL rejected", err);

    memset(a, 0, sizeof a);
    make_long_name(a, "in\0side", '0', 5);
    memcpy(a + 512, "in\0side", 8);
    make_header(a, "././@LongLink", 'L', 8, 1);
    rc = walk_copy(a, sizeof a, &count, err, sizeof err);
    check_plain(rc == -1 && strstr(err, "NUL") != NULL, "type L with a NUL inside rejected", err);

    memset(a, 0, sizeof a);
    make_header(a, "././@LongLink", 'L', 1, 1);
    rc = walk_copy(a, sizeof a, &count, err, sizeof err);
    check_plain(rc == -1 && strstr(err, "empty long name") != NULL, "empty type L rejected", err);

    memset(a, 0, sizeof a);
    used = make_long_name(a, "first", 'L', 6); /* an L where the file should be */
    memcpy(a + used, "second", 7);
    rc = walk_copy(a, sizeof a, &count, err, sizeof err);
    check_plain(rc == -1 && strstr(err, "two long names") != NULL, "two type L in a row rejected", err);

    memset(a, 0, sizeof a);
    used = make_long_name(a, "orphan", '0', 0);
    memset(a + used - 512, 0, 512); /* the archive ends after the name */
    rc = walk_copy(a, sizeof a, &count, err, sizeof err);
    check_plain(rc == -1 && strstr(err, "no entry after it") != NULL,
                "type L at the end of the archive rejected", err);
    rc = walk_copy(a, used - 512, &count, err, sizeof err);
    check_plain(rc == -1 && strstr(err, "no entry after it") != NULL,
                "type L at the end of a buffer without end blocks rejected", err);

    memset(a, 0, sizeof a);
    make_long_name(a, "two\nlines.bin", '0', 4096); /* past the end: the reason names the file */
    rc = walk_copy(a, 2048, &count, err, sizeof err);
    check_plain(rc == -1 && strstr(err, "two?lines.bin: 4096 bytes run past the end") != NULL,
                "a name with a newline is shown on one line", err);

    /* Base-256 sizes: 9 GiB is read exactly (and is past this buffer's end). */
    make_header(a, "nine.bin", '0', 9ull << 30, 1);
    rc = walk_copy(a, 2048, &count, err, sizeof err);
    check_plain(rc == -1 && strstr(err, "nine.bin: 9663676416 bytes run past the end") != NULL,
                "base-256 size of 9 GiB read, and refused past the end", err);
    a[125] = 1; /* a value of 2^80 and more */
    set_checksum(a);
    rc = walk_copy(a, 2048, &count, err, sizeof err);
    check_plain(rc == -1 && strstr(err, "bad size field") != NULL, "base-256 size over 64 bits rejected",
                err);
    make_header(a, "nine.bin", '0', 9ull << 30, 1);
    a[124] = 0x81; /* the marker bit with more bits set */
    set_checksum(a);
    rc = walk_copy(a, 2048, &count, err, sizeof err);
    check_plain(rc == -1 && strstr(err, "bad size field") != NULL, "base-256 marker byte 0x81 rejected", err);

    /* What mkramdisk.sh never writes, and what would be misread if skipped. */
    const char types[] = {'x', 'g', 'S'};
    for (int i = 0; i < 3; i++) {
        memset(a, 0, sizeof a);
        make_header(a, "ext", types[i], 20, 0);
        memcpy(a + 512, "20 path=other.bin\n", 18);
        make_header(a + 1024, "file.bin", '0', 1, 0);
        rc = walk_copy(a, sizeof a, &count, err, sizeof err);
        char what[64];
        snprintf(what, sizeof what, "type %c entry refused with a reason", types[i]);
        check_plain(rc == -1 && count == 0 && strstr(err, "not supported") != NULL, what, err);
    }
}

/* tools/mkramdisk.sh (the real tar) on a sparse 9 GiB file and a file with
 * a 200-byte name: GNU tar writes a base-256 size and a type 'L' name. The
 * archive stays sparse on disk and is mapped, not read, so it costs little
 * disk or memory; its size in the header check comes from the file. */
static void test_mkramdisk_big(void) {
    const char *what =
        "mkramdisk.sh archive of a 9 GiB file and a 200-byte name: both found, sizes and offsets";
    if (access("tools/mkramdisk.sh", R_OK) != 0) {
        check_skipped(what, "run from the repository root (tools/mkramdisk.sh not found)");
        return;
    }
    char dir[] = "/tmp/test_tar_big_XXXXXX";
    if (!mkdtemp(dir)) {
        check_skipped(what, "cannot create a temporary directory");
        return;
    }
    const uint64_t pad_size = (9ull << 30) + 3; /* not a whole block: the next header follows the padding */
    char long_name[201], path[512], cmd[2048];
    memset(long_name, 'n', 200);
    memcpy(long_name + 196, ".bin", 5);
    snprintf(path, sizeof path, "%s/%s", dir, long_name);
    write_file(path, "small model\n", 12);
    snprintf(cmd, sizeof cmd,
             "truncate -s %llu %s/pad.bin && sh tools/mkramdisk.sh %s/r.tar %s/pad.bin %s >/dev/null",
             (unsigned long long)pad_size, dir, dir, dir, path);
    int status = system(cmd);
    snprintf(path, sizeof path, "%s/r.tar", dir);
    FILE *f = status == 0 ? fopen(path, "rb") : NULL;
    void *map = MAP_FAILED;
    size_t size = 0;
    if (f) {
        fseek(f, 0, SEEK_END);
        size = (size_t)ftello(f);
        map = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fileno(f), 0);
        fclose(f);
    }
    if (map == MAP_FAILED) {
        check(0, what, "mkramdisk.sh exited with %d, or its archive could not be mapped", status);
    } else {
        struct tar_entry e;
        char err[160] = "";
        const uint8_t *base = map;
        int found_model = tar_find(map, size, long_name, &e, err, sizeof err);
        size_t model_at = found_model == 1 ? (size_t)(e.data - base) : 0;
        int model_ok = found_model == 1 && e.size == 12 && memcmp(e.data, "small model\n", 12) == 0;
        int found_pad = tar_find(map, size, "pad.bin", &e, err, sizeof err);
        /* Sorted: the long name ('n'...) first: L header, name block, file header, one data block; then
         * pad.bin. */
        size_t pad_at = found_pad == 1 ? (size_t)(e.data - base) : 0;
        int pad_ok = found_pad == 1 && e.size == pad_size && pad_at == 512 * 5 && pad_at + pad_size <= size &&
                     base[pad_at] == 0 && base[pad_at + pad_size - 1] == 0;
        check(model_ok && pad_ok && model_at == 512 * 3, what,
              "model: rc %d at %zu; pad.bin: rc %d, %llu bytes at %zu (want %llu at 2560); archive %zu "
              "bytes: %s",
              found_model, model_at, found_pad, (unsigned long long)e.size, pad_at,
              (unsigned long long)pad_size, size, err);
        munmap(map, size);
    }
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0) printf("# could not remove %s\n", dir);
}

int main(void) {
    test_gnu_headers();
    test_mkramdisk_big();
    return failures ? 1 : 0;
}
