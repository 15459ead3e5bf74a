/* test_tar.c - lib/tar.c on archives made by the system tar, and on damaged
 * headers (each must be rejected with a message; ASan catches any read
 * outside the buffer, which is always an exact-size heap copy). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "lib/string.h"
#include "lib/tar.h"
#include "tests/host/check.h"
#include "tests/host/tar_test_util.h"

/* NAME (FORMAT): one check name per archive format. */
static const char *format_name(char *buf, size_t size, const char *name, const char *format) {
    snprintf(buf, size, "%s (%s)", name, format);
    return buf;
}

static void test_system_tar(const char *format) {
    char dir[] = "/tmp/test_tar_XXXXXX";
    if (!mkdtemp(dir)) {
        check_skipped("system tar archive", "cannot create a temporary directory");
        return;
    }
    char path[512], cmd[2048];
    /* Files: empty, 1 byte, exactly one block, block + 1, 100 KB binary, a
     * name longer than 100 chars (uses the ustar prefix), a subdirectory. */
    static uint8_t big[100000];
    for (size_t i = 0; i < sizeof big; i++) big[i] = (uint8_t)(i * 131 + (i >> 8));
    static uint8_t block[513];
    for (size_t i = 0; i < sizeof block; i++) block[i] = (uint8_t)('a' + i % 26);
    const char *long_dir = "a_rather_long_directory_name_for_testing_the_prefix_field_of_ustar_headers";
    const char *long_file = "and_a_file_name_that_is_also_fairly_long_to_exceed_one_hundred_bytes.bin";
    snprintf(cmd, sizeof cmd, "mkdir -p %s/src/sub %s/src/%s", dir, dir, long_dir);
    if (system(cmd) != 0) {
        check_skipped("system tar archive", "mkdir failed");
        return;
    }
    snprintf(path, sizeof path, "%s/src/empty.txt", dir);
    write_file(path, "", 0);
    snprintf(path, sizeof path, "%s/src/one.txt", dir);
    write_file(path, "x", 1);
    snprintf(path, sizeof path, "%s/src/block.bin", dir);
    write_file(path, block, 512);
    snprintf(path, sizeof path, "%s/src/block1.bin", dir);
    write_file(path, block, 513);
    snprintf(path, sizeof path, "%s/src/sub/big.bin", dir);
    write_file(path, big, sizeof big);
    snprintf(path, sizeof path, "%s/src/%s/%s", dir, long_dir, long_file);
    write_file(path, "long name contents\n", 19);
    snprintf(cmd, sizeof cmd,
             "cd %s/src && tar --format=%s --owner=0 --group=0 --mtime=@0 -cf ../test.tar "
             "empty.txt one.txt block.bin block1.bin sub %s/%s",
             dir, format, long_dir, long_file);
    if (system(cmd) != 0) {
        check_skipped("system tar archive", "tar(1) could not build the archive");
        return;
    }
    size_t size;
    snprintf(path, sizeof path, "%s/test.tar", dir);
    uint8_t *tar = read_file(path, &size);
    if (!tar) {
        check_skipped("system tar archive", "cannot read the archive tar(1) built");
        return;
    }

    struct {
        const char *name;
        const void *data;
        size_t size;
    } want[6] = {{"empty.txt", "", 0},
                 {"one.txt", "x", 1},
                 {"block.bin", block, 512},
                 {"block1.bin", block, 513},
                 {"sub/big.bin", big, sizeof big},
                 {NULL, "long name contents\n", 19}};
    char long_name[300];
    snprintf(long_name, sizeof long_name, "%s/%s", long_dir, long_file);
    want[5].name = long_name;

    struct tar_reader r;
    struct tar_entry e;
    char err[128];
    tar_init(&r, tar, size);
    int i = 0, ok = 1, rc;
    char why[512] = "";
    while ((rc = tar_next(&r, &e, err, sizeof err)) == 1) {
        if (i >= 6) {
            ok = 0;
            snprintf(why, sizeof why, "unexpected extra entry %s", e.name);
            break;
        }
        if (strcmp(e.name, want[i].name) != 0 || e.size != want[i].size ||
            memcmp(e.data, want[i].data, want[i].size) != 0) {
            if (ok)
                snprintf(why, sizeof why, "entry %d: got %s (%llu bytes), want %s (%zu bytes)", i, e.name,
                         (unsigned long long)e.size, want[i].name, want[i].size);
            ok = 0;
        }
        i++;
    }
    if (rc != 0) {
        ok = 0;
        snprintf(why, sizeof why, "walk ended with %d: %s", rc, err);
    }
    if (i != 6 && ok) {
        ok = 0;
        snprintf(why, sizeof why, "found %d files, want 6", i);
    }
    char what[160];
    snprintf(what, sizeof what,
             "system tar --format=%s archive: names (incl. a 170-char name), sizes, contents", format);
    check_plain(ok, what, why);

    struct tar_entry found;
    if (tar_find(tar, size, "sub/big.bin", &found, err, sizeof err) != 1) found.data = tar + 2048;
    check_plain(found.size == sizeof big && memcmp(found.data, big, sizeof big) == 0,
                format_name(what, sizeof what, "tar_find locates sub/big.bin", format), err);
    size_t big_at = (size_t)(found.data - tar);
    rc = tar_find(tar, size, "missing.bin", &found, err, sizeof err);
    check_plain(rc == 0 && strstr(err, "missing.bin") != NULL,
                format_name(what, sizeof what, "tar_find reports a missing file", format), err);

    /* Every truncation of the real archive either fails with a message or
     * (cut in the end blocks or a file's zero padding) still yields only
     * complete files. A cut inside a header or file data must be noticed. */
    ok = 1;
    char trunc_why[160] = "";
    for (size_t cut = 0; cut < size && ok; cut += (cut < 4096 ? 1 : 509)) {
        int count;
        err[0] = '\0';
        rc = walk_copy(tar, cut, &count, err, sizeof err);
        if (rc == -1 && err[0] == '\0') ok = 0;
        int in_header = cut % 512 != 0 && cut < 1024; /* headers of empty.txt and one.txt */
        int in_big_data = cut > big_at - 512 && cut < big_at + sizeof big;
        if (rc != -1 && (in_header || in_big_data)) ok = 0;
        if (!ok) snprintf(trunc_why, sizeof trunc_why, "cut at %zu: rc %d, message \"%s\"", cut, rc, err);
    }
    check_plain(
        ok,
        format_name(
            what, sizeof what,
            "every truncation of the archive is handled: cut headers and data rejected with a message",
            format),
        trunc_why);

    /* Flip random bytes in the headers: never crash, always a result. */
    srand(1234);
    ok = 1;
    for (int trial = 0; trial < 20000; trial++) {
        uint8_t *copy = malloc(size);
        memcpy(copy, tar, size);
        int flips = 1 + rand() % 8;
        for (int f = 0; f < flips; f++) {
            size_t block_index = (size_t)rand() % (size / 512);
            copy[block_index * 512 + (size_t)(rand() % 512)] = (uint8_t)rand();
        }
        int count;
        err[0] = '\0';
        rc = walk(copy, size, &count, err, sizeof err);
        if (rc == -1 && err[0] == '\0') ok = 0;
        free(copy);
    }
    check(ok,
          format_name(what, sizeof what,
                      "20000 archives with random header corruption: no crash, failures explained", format),
          "empty message");
    free(tar);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0) printf("# could not remove %s\n", dir);
}

static void test_hand_made(void) {
    uint8_t a[2048];
    char err[128];
    int count, rc;

    /* A valid one-file archive to start from. */
    memset(a, 0, sizeof a);
    memcpy(a, "hello.txt", 9);
    memcpy(a + 100, "0000644", 7);
    memcpy(a + 124, "00000000005", 11);
    a[156] = '0';
    memcpy(a + 257, "ustar", 6);
    memcpy(a + 263, "00", 2);
    set_checksum(a);
    memcpy(a + 512, "hello", 5);
    rc = walk_copy(a, sizeof a, &count, err, sizeof err);
    check_plain(rc == 0 && count == 1, "hand-made valid header is accepted", err);

    uint8_t b[2048];
    memcpy(b, a, sizeof b);
    b[0] = 'j'; /* checksum no longer matches */
    rc = walk_copy(b, sizeof b, &count, err, sizeof err);
    check_plain(rc == -1 && strstr(err, "checksum") != NULL, "bad checksum rejected", err);

    memcpy(b, a, sizeof b);
    memcpy(b + 124, "00000004000", 11); /* 2048 bytes of data: past the end */
    set_checksum(b);
    rc = walk_copy(b, sizeof b, &count, err, sizeof err);
    check_plain(rc == -1 && strstr(err, "past the end") != NULL, "size past the end rejected", err);

    memcpy(b, a, sizeof b);
    memcpy(b + 124, "7777777777x", 11);
    set_checksum(b);
    rc = walk_copy(b, sizeof b, &count, err, sizeof err);
    check_plain(rc == -1 && strstr(err, "size") != NULL, "bad octal size rejected", err);

    memcpy(b, a, sizeof b);
    memset(b + 124, 0, 12);
    b[124] = (char)0x80; /* GNU base-256: 5 bytes */
    b[135] = 5;
    set_checksum(b);
    rc = walk_copy(b, sizeof b, &count, err, sizeof err);
    check_plain(rc == 0 && count == 1, "GNU base-256 size accepted", err);

    memcpy(b, a, sizeof b);
    b[124] = (char)0xff; /* negative base-256 */
    set_checksum(b);
    rc = walk_copy(b, sizeof b, &count, err, sizeof err);
    check_plain(rc == -1, "negative base-256 size rejected", err);

    memcpy(b, a, sizeof b);
    memset(b + 148, 'z', 8);
    rc = walk_copy(b, sizeof b, &count, err, sizeof err);
    check_plain(rc == -1 && strstr(err, "checksum") != NULL, "garbage checksum field rejected", err);

    rc = walk_copy(a, 300, &count, err, sizeof err);
    check_plain(rc == -1 && strstr(err, "truncated") != NULL, "truncated header rejected", err);

    uint8_t garbage[4096];
    srand(99);
    for (size_t i = 0; i < sizeof garbage; i++) garbage[i] = (uint8_t)rand();
    rc = walk_copy(garbage, sizeof garbage, &count, err, sizeof err);
    check_plain(rc == -1 && err[0] != '\0', "random garbage rejected", err);

    rc = walk_copy(a, 0, &count, err, sizeof err);
    check_plain(rc == 0 && count == 0, "empty buffer is an empty archive", err);

    /* Full 100-byte name and 155-byte prefix (no NUL terminators). */
    memcpy(b, a, sizeof b);
    memset(b, 'n', 100);
    memset(b + 345, 'p', 155);
    set_checksum(b);
    struct tar_reader r;
    struct tar_entry e;
    uint8_t *copy = malloc(sizeof b);
    memcpy(copy, b, sizeof b);
    tar_init(&r, copy, sizeof b);
    rc = tar_next(&r, &e, err, sizeof err);
    check_plain(rc == 1 && strlen(e.name) == 256 && e.name[155] == '/' && e.name[0] == 'p' &&
                    e.name[255] == 'n',
                "full 155-byte prefix + 100-byte name gives a 256-char name", err);
    free(copy);

    /* Non-regular entries are skipped. */
    memcpy(b, a, sizeof b);
    b[156] = '5'; /* directory */
    memcpy(b + 124, "00000000000", 11);
    set_checksum(b);
    memcpy(b + 512, a, 1024); /* then the file */
    rc = walk_copy(b, sizeof b, &count, err, sizeof err);
    check_plain(rc == 0 && count == 1, "directory entries are skipped", err);
}

int main(void) {
    test_hand_made();
    test_system_tar("ustar");
    test_system_tar("gnu"); /* what tools/mkramdisk.sh writes (long names: type L) */
    return failures ? 1 : 0;
}
