/* tar.c - USTAR and GNU tar reader. Layout of a 512-byte header
 * (POSIX.1-1988): name[100] mode[8] uid[8] gid[8] size[12] mtime[12]
 * chksum[8] typeflag[1] linkname[100] magic[6] version[2] uname[32]
 * gname[32] devmajor[8] devminor[8] prefix[155]. Numbers are octal text.
 * tools/mkramdisk.sh writes GNU format (magic "ustar  \0"), which has no
 * size or name limit: sizes of 8 GiB and more in base-256 (first byte
 * 0x80, then big-endian), and a name over 100 bytes as a type 'L' entry
 * whose data is the name, just before the file's own header. In GNU
 * headers the prefix bytes hold other fields, so only POSIX ustar headers
 * ("ustar\0") use them. pax extended headers and GNU sparse files change
 * a file's name, size or layout in ways this reader does not apply, so
 * they are refused rather than misread. */
#include "lib/tar.h"
#include "lib/format.h"
#include "lib/string.h"

#define BLOCK 512
#define OFF_NAME 0
#define OFF_SIZE 124
#define OFF_CHKSUM 148
#define OFF_TYPE 156
#define OFF_MAGIC 257
#define OFF_PREFIX 345
#define LONG_NAME_MAX (TAR_NAME_MAX - 1)

void tar_init(struct tar_reader *r, const void *data, size_t size) {
    r->data = data;
    r->size = size;
    r->offset = 0;
    r->done = 0;
}

/* Octal field: optional leading spaces, digits, then NUL/space padding. */
static int parse_octal(const uint8_t *field, size_t len, uint64_t *out) {
    size_t i = 0;
    uint64_t v = 0;
    while (i < len && field[i] == ' ') i++;
    size_t digits = 0;
    for (; i < len && field[i] >= '0' && field[i] <= '7'; i++, digits++) {
        if (v >> 61) return 0; /* would overflow 64 bits */
        v = v * 8 + (uint64_t)(field[i] - '0');
    }
    for (; i < len; i++)
        if (field[i] != ' ' && field[i] != '\0') return 0;
    if (digits == 0) return 0;
    *out = v;
    return 1;
}

static int parse_size(const uint8_t *field, uint64_t *out) {
    if (field[0] & 0x80) { /* GNU base-256: big-endian, top bit of the first byte is the marker */
        if (field[0] != 0x80) return 0; /* negative or > 2^88: not a file size */
        uint64_t v = 0;
        for (int i = 1; i < 12; i++) {
            if (v >> 56) return 0;
            v = (v << 8) | field[i];
        }
        *out = v;
        return 1;
    }
    return parse_octal(field, 12, out);
}

static int all_zero(const uint8_t *block) {
    for (int i = 0; i < BLOCK; i++)
        if (block[i]) return 0;
    return 1;
}

/* The checksum treats its own field as eight spaces. Some old tars summed
 * signed chars: accept either. */
static int checksum_ok(const uint8_t *h, uint64_t stored) {
    uint64_t unsigned_sum = 0;
    int64_t signed_sum = 0;
    for (int i = 0; i < BLOCK; i++) {
        uint8_t c = (i >= OFF_CHKSUM && i < OFF_CHKSUM + 8) ? ' ' : h[i];
        unsigned_sum += c;
        signed_sum += (int8_t)c;
    }
    return stored == unsigned_sum || (int64_t)stored == signed_sum;
}

static void copy_field(char *dst, size_t *pos, const uint8_t *field, size_t len) {
    for (size_t i = 0; i < len && field[i]; i++) dst[(*pos)++] = (char)field[i];
}

static int fail(struct tar_reader *r, char *err, size_t err_size, const char *msg, size_t offset) {
    if (err && err_size) snprintf(err, err_size, "tar: %s (header at byte %zu)", msg, offset);
    r->done = 1;
    return -1;
}

/* A type 'L' entry's data: the next entry's name and a NUL, which GNU tar
 * counts in the size. NULL when valid (copied to name), else the reason. */
static const char *read_long_name(const uint8_t *data, uint64_t size, char *name, char *why,
                                  size_t why_size) {
    if (size < 2) return "empty long name (type L)";
    if (size - 1 > LONG_NAME_MAX) {
        snprintf(why, why_size, "long name (type L) of %llu bytes: at most %d",
                 (unsigned long long)(size - 1), LONG_NAME_MAX);
        return why;
    }
    if (data[size - 1] != '\0' || memchr(data, '\0', (size_t)size - 1))
        return "long name (type L) is not one NUL-terminated string";
    memcpy(name, data, (size_t)size);
    return NULL;
}

int tar_next(struct tar_reader *r, struct tar_entry *out, char *err, size_t err_size) {
    if (err && err_size) err[0] = '\0';
    int long_name = 0; /* out->name came from a type 'L' entry, for the next header */
    size_t long_at = 0;
    char why[96];
    while (!r->done) {
        size_t at = r->offset;
        const uint8_t *h = r->data + at;
        /* An archive may end without end blocks; one zero block is enough to stop. */
        if (at == r->size || (r->size - at >= BLOCK && all_zero(h))) {
            if (long_name)
                return fail(r, err, err_size, "long name (type L) with no entry after it", long_at);
            r->done = 1;
            return 0;
        }
        if (r->size - at < BLOCK) return fail(r, err, err_size, "truncated header", at);
        uint64_t stored_sum, size;
        if (!parse_octal(h + OFF_CHKSUM, 8, &stored_sum))
            return fail(r, err, err_size, "bad checksum field", at);
        if (!checksum_ok(h, stored_sum)) return fail(r, err, err_size, "header checksum mismatch", at);
        /* The name first, so that every later complaint can say which entry. */
        if (!long_name) {
            size_t pos = 0;
            if (memcmp(h + OFF_MAGIC, "ustar\0", 6) == 0 && h[OFF_PREFIX]) {
                copy_field(out->name, &pos, h + OFF_PREFIX, 155);
                out->name[pos++] = '/';
            }
            copy_field(out->name, &pos, h + OFF_NAME, 100);
            out->name[pos] = '\0';
        }
        if (!parse_size(h + OFF_SIZE, &size)) return fail(r, err, err_size, "bad size field", at);
        size_t data_at = at + BLOCK;
        if (size > r->size - data_at) {
            if (err && err_size) {
                /* Names may hold any byte: keep the reason on one line. */
                char shown[TAR_NAME_MAX];
                size_t i = 0;
                for (; out->name[i]; i++) shown[i] = (uint8_t)out->name[i] < ' ' ? '?' : out->name[i];
                shown[i] = '\0';
                snprintf(err, err_size, "tar: %s: %llu bytes run past the end of the archive (%zu left)",
                         shown, (unsigned long long)size, r->size - data_at);
            }
            r->done = 1;
            return -1;
        }
        uint64_t padded = (size + BLOCK - 1) / BLOCK * BLOCK;
        r->offset = padded > r->size - data_at ? r->size : data_at + (size_t)padded;

        char type = (char)h[OFF_TYPE];
        if (type == 'L') {
            if (long_name) return fail(r, err, err_size, "two long names (type L) in a row", at);
            const char *bad = read_long_name(r->data + data_at, size, out->name, why, sizeof why);
            if (bad) return fail(r, err, err_size, bad, at);
            long_name = 1;
            long_at = at;
            continue;
        }
        if (type == 'x' || type == 'g' || type == 'S') {
            snprintf(why, sizeof why, "%s (type %c) not supported: make the archive with tools/mkramdisk.sh",
                     type == 'S' ? "GNU sparse file" : "pax extended header", type);
            return fail(r, err, err_size, why, at);
        }
        if (type == 'K') continue;                        /* a link's long target: links are skipped anyway */
        if (type != '0' && type != '\0' && type != '7') { /* not a regular file */
            long_name = 0;
            continue;
        }

        if (out->name[0] == '\0') return fail(r, err, err_size, "entry with an empty name", at);
        out->data = r->data + data_at;
        out->size = size;
        return 1;
    }
    return 0;
}

/* Compares ignoring a leading "./" that some tar invocations add. */
static const char *strip_dot_slash(const char *s) {
    while (s[0] == '.' && s[1] == '/') s += 2;
    return s;
}

int tar_find(const void *data, size_t size, const char *name, struct tar_entry *out, char *err,
             size_t err_size) {
    struct tar_reader r;
    tar_init(&r, data, size);
    int rc;
    while ((rc = tar_next(&r, out, err, err_size)) == 1)
        if (strcmp(strip_dot_slash(out->name), strip_dot_slash(name)) == 0) return 1;
    if (rc == 0 && err && err_size) snprintf(err, err_size, "tar: no file named '%s' in the archive", name);
    return rc;
}
