/* gguf_split.c - a gguf-split set (NAME-0000i-of-0000N.gguf) opened as one
 * GgufFile: the first piece's metadata, every piece's tensors in place. */
#include "llm/format/gguf_split.h"

#include "lib/format.h"
#include "lib/stdlib.h"
#include "lib/string.h"

#define PIECE_NAME_MAX 256
#define MAX_PIECES 65535 /* split.count is a u16 */

/* 0 with *out set; 1 when the key is absent; -1 when it is not an integer. */
static int split_key(const GgufFile *f, const char *key, uint64_t *out) {
    const GgufKeyValue *kv = gguf_find_key(f, key);
    if (!kv) return 1;
    return gguf_kv_u64(kv, out) == 0 ? 0 : -1;
}

/* A piece after the first must say it is piece `index` of `count` and agree
 * on the tensor total. */
static int check_piece(const GgufFile *p, uint64_t index, uint64_t count, uint64_t total, const char *name,
                       char *err, size_t n) {
    uint64_t no = 0, c = 0, t = 0;
    if (split_key(p, "split.count", &c) != 0 || split_key(p, "split.no", &no) != 0) {
        snprintf(err, n, "gguf: %s has no valid split.count / split.no (not a piece of this set)", name);
        return -1;
    }
    if (c != count) {
        snprintf(err, n, "gguf: %s says split.count %llu, the first piece %llu", name, (unsigned long long)c,
                 (unsigned long long)count);
        return -1;
    }
    if (no != index) {
        snprintf(err, n, "gguf: %s says split.no %llu, expected %llu (pieces out of order)", name,
                 (unsigned long long)no, (unsigned long long)index);
        return -1;
    }
    if (split_key(p, "split.tensors.count", &t) == 0 && t != total) {
        snprintf(err, n, "gguf: %s says split.tensors.count %llu, the first piece %llu", name,
                 (unsigned long long)t, (unsigned long long)total);
        return -1;
    }
    return 0;
}

/* Appends a piece's tensors to the joined list, refusing a name seen before. */
static int join_tensors(GgufTensorInfo *all, uint64_t *n_all, const GgufFile *p, const char *name, char *err,
                        size_t n) {
    for (uint64_t i = 0; i < p->n_tensors; i++) {
        GgufString s = p->tensors[i].name;
        for (uint64_t j = 0; j < *n_all; j++) {
            if (all[j].name.len == s.len && memcmp(all[j].name.ptr, s.ptr, (size_t)s.len) == 0) {
                snprintf(err, n, "gguf: tensor %.*s is in %s and in an earlier piece",
                         (int)(s.len > 64 ? 64 : s.len), s.ptr, name);
                return -1;
            }
        }
        all[(*n_all)++] = p->tensors[i];
    }
    return 0;
}

/* Opens pieces 2..count, joins every piece's tensors into f. */
static int open_rest(GgufFile *f, const GgufPieces *pieces, size_t prefix_len, uint64_t count, uint64_t total,
                     char *err, size_t n) {
    GgufFile *rest = calloc((size_t)count - 1, sizeof(GgufFile));
    if (!rest) {
        snprintf(err, n, "gguf: out of memory for %llu pieces", (unsigned long long)count);
        return -1;
    }
    uint64_t opened = 0, n_tensors = f->n_tensors, bytes = f->size;
    int rc = -1;
    char name[PIECE_NAME_MAX], why[160];
    for (; opened < count - 1; opened++) {
        snprintf(name, sizeof name, "%.*s-%05llu-of-%05llu.gguf", (int)prefix_len, pieces->first_name,
                 (unsigned long long)opened + 2, (unsigned long long)count);
        size_t size = 0;
        const void *data = pieces->find(pieces->ctx, name, &size);
        if (!data) {
            snprintf(err, n, "gguf: piece %s of the split model is missing", name);
            goto out;
        }
        if (gguf_create(&rest[opened], data, size, why, sizeof why) != 0) {
            snprintf(err, n, "%s (in %s)", why, name);
            goto out;
        }
        if (check_piece(&rest[opened], opened + 1, count, total, name, err, n) != 0) {
            opened++;
            goto out;
        }
        n_tensors += rest[opened].n_tensors;
        bytes += size;
    }
    if (n_tensors != total) {
        snprintf(err, n, "gguf: the %llu pieces hold %llu tensors, split.tensors.count says %llu",
                 (unsigned long long)count, (unsigned long long)n_tensors, (unsigned long long)total);
        goto out;
    }
    GgufTensorInfo *all = calloc(n_tensors ? (size_t)n_tensors : 1, sizeof(GgufTensorInfo));
    if (!all) {
        snprintf(err, n, "gguf: out of memory for the tensor index");
        goto out;
    }
    uint64_t joined = 0;
    rc = join_tensors(all, &joined, f, pieces->first_name, err, n);
    for (uint64_t i = 0; i < count - 1 && rc == 0; i++) {
        snprintf(name, sizeof name, "piece %llu", (unsigned long long)i + 2);
        rc = join_tensors(all, &joined, &rest[i], name, err, n);
    }
    if (rc != 0) {
        free(all);
        goto out;
    }
    free(f->tensors);
    f->tensors = all;
    f->n_tensors = n_tensors;
    f->n_pieces = (uint32_t)count;
    f->pieces_bytes = bytes;
out:
    for (uint64_t i = 0; i < opened; i++) gguf_destroy(&rest[i]);
    free(rest);
    return rc;
}

int gguf_create_pieces(GgufFile *f, const void *data, size_t size, const GgufPieces *pieces, char *err,
                       size_t n) {
    if (gguf_create(f, data, size, err, n) != 0) return -1;
    uint64_t count = 1, index = 0, total = 0;
    int has_count = split_key(f, "split.count", &count), has_index = split_key(f, "split.no", &index);
    if (has_count < 0 || has_index < 0 || count == 0 || count > MAX_PIECES || index >= count) {
        snprintf(err, n, "gguf: split.count / split.no have a bad type or value");
        goto fail;
    }
    if (count == 1) return 0;
    if (index != 0) {
        snprintf(err, n, "gguf: this is piece %llu of %llu of a split model; load NAME-00001-of-%05llu.gguf",
                 (unsigned long long)index + 1, (unsigned long long)count, (unsigned long long)count);
        goto fail;
    }
    if (!pieces || !pieces->find || !pieces->first_name) {
        snprintf(err, n, "gguf: piece 1 of %llu of a split model: it must be loaded by name to find the rest",
                 (unsigned long long)count);
        goto fail;
    }
    if (split_key(f, "split.tensors.count", &total) != 0) {
        snprintf(err, n, "gguf: split.tensors.count is missing or not an integer");
        goto fail;
    }
    char suffix[40];
    snprintf(suffix, sizeof suffix, "-00001-of-%05llu.gguf", (unsigned long long)count);
    size_t len = strlen(pieces->first_name), suffix_len = strlen(suffix);
    if (len < suffix_len || strcmp(pieces->first_name + len - suffix_len, suffix) != 0 ||
        len - suffix_len > PIECE_NAME_MAX - 32) {
        snprintf(err, n, "gguf: the first of %llu pieces must be named NAME%s to find the others",
                 (unsigned long long)count, suffix);
        goto fail;
    }
    if (open_rest(f, pieces, len - suffix_len, count, total, err, n) == 0) return 0;
fail:
    gguf_destroy(f);
    return -1;
}

int gguf_split_position(const void *data, size_t size, uint32_t *index, uint32_t *count) {
    GgufFile f;
    char err[8];
    if (!gguf_is_gguf(data, size) || gguf_create(&f, data, size, err, sizeof err) != 0) return 0;
    uint64_t no = 0, n = 1;
    int split = split_key(&f, "split.count", &n) == 0 && split_key(&f, "split.no", &no) == 0 && n > 1 &&
                n <= MAX_PIECES && no < n;
    gguf_destroy(&f);
    if (split) *index = (uint32_t)no, *count = (uint32_t)n;
    return split;
}
