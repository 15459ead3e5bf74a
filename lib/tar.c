/* tar.c - USTAR reader. Layout of a 512-byte header (POSIX.1-1988):
 * name[100] mode[8] uid[8] gid[8] size[12] mtime[12] chksum[8] typeflag[1]
 * linkname[100] magic[6] version[2] uname[32] gname[32] devmajor[8]
 * devminor[8] prefix[155]. Numbers are octal text; GNU tar writes sizes of
 * 8 GiB and more in base-256 (first byte has bit 7 set). */
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

int tar_next(struct tar_reader *r, struct tar_entry *out, char *err, size_t err_size) {
    if (err && err_size) err[0] = '\0';
    while (!r->done) {
        size_t at = r->offset;
        if (at == r->size) { /* archive without end blocks: accept a clean end */
            r->done = 1;
            return 0;
        }
        if (r->size - at < BLOCK) return fail(r, err, err_size, "truncated header", at);
        const uint8_t *h = r->data + at;
        if (all_zero(h)) { /* end of archive (one zero block is enough to stop) */
            r->done = 1;
            return 0;
        }
        uint64_t stored_sum, size;
        if (!parse_octal(h + OFF_CHKSUM, 8, &stored_sum))
            return fail(r, err, err_size, "bad checksum field", at);
        if (!checksum_ok(h, stored_sum)) return fail(r, err, err_size, "header checksum mismatch", at);
        /* The name first, so that every later complaint can say which entry. */
        size_t pos = 0;
        int ustar = memcmp(h + OFF_MAGIC, "ustar", 5) == 0;
        if (ustar && h[OFF_PREFIX]) {
            copy_field(out->name, &pos, h + OFF_PREFIX, 155);
            out->name[pos++] = '/';
        }
        copy_field(out->name, &pos, h + OFF_NAME, 100);
        out->name[pos] = '\0';
        if (!parse_size(h + OFF_SIZE, &size)) return fail(r, err, err_size, "bad size field", at);
        size_t data_at = at + BLOCK;
        if (size > r->size - data_at) {
            if (err && err_size)
                snprintf(err, err_size, "tar: %s: %llu bytes run past the end of the archive (%zu left)",
                         out->name, (unsigned long long)size, r->size - data_at);
            r->done = 1;
            return -1;
        }
        uint64_t padded = (size + BLOCK - 1) / BLOCK * BLOCK;
        r->offset = padded > r->size - data_at ? r->size : data_at + (size_t)padded;

        char type = (char)h[OFF_TYPE];
        if (type != '0' && type != '\0' && type != '7') continue; /* not a regular file */

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
