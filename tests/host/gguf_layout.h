/* gguf_layout.h - test helper, independent of llm/format/gguf.c: where every field of
 * a GGUF file lies (key/values, tensor infos, data section), and a rebuilder
 * that writes the file again with metadata dropped or replaced (header
 * re-padded to the alignment, tensor infos and data copied verbatim). */
#ifndef TESTS_HOST_GGUF_LAYOUT_H
#define TESTS_HOST_GGUF_LAYOUT_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llm/format/gguf.h"

/* Not every test uses every helper. */
#define GGUF_LAYOUT_FN static __attribute__((unused))

typedef struct {
    uint8_t *p;
    size_t n, cap;
} GgufBuf;

GGUF_LAYOUT_FN void gguf_buf_append(GgufBuf *b, const void *data, size_t n) {
    if (b->n + n > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->n + n) cap *= 2;
        b->p = realloc(b->p, cap);
        b->cap = cap;
    }
    if (n) memcpy(b->p + b->n, data, n);
    b->n += n;
}
GGUF_LAYOUT_FN void gguf_buf_u32(GgufBuf *b, uint32_t v) {
    gguf_buf_append(b, &v, 4);
}
GGUF_LAYOUT_FN void gguf_buf_u64(GgufBuf *b, uint64_t v) {
    gguf_buf_append(b, &v, 8);
}
GGUF_LAYOUT_FN void gguf_buf_string(GgufBuf *b, const char *s, size_t len) {
    gguf_buf_u64(b, len);
    gguf_buf_append(b, s, len);
}

typedef struct {
    char key[128];
    size_t at;       /* key length field */
    size_t type_at;  /* value type */
    size_t value_at; /* value (for arrays: element type, count, elements) */
    size_t value_end;
    uint32_t type, elem_type;
    int is_array;
    uint64_t count; /* arrays */
    uint32_t u32;   /* UINT32 values */
} GgufKvSpan;

typedef struct {
    char name[96];
    size_t at, ndims_at, ne_at, type_at, offset_at, end;
    uint32_t n_dims, type;
    uint64_t ne[4], offset;
} GgufTensorSpan;

typedef struct {
    uint8_t *data;
    size_t size;
    int n_kv, n_tensors;
    GgufKvSpan *kv;
    GgufTensorSpan *tensors;
    size_t infos_end, data_start, data_end; /* data_end: end of the last tensor's bytes */
    uint32_t alignment;
    char arch[32];
    int tokenizer_spm; /* tokenizer.ggml.model "llama" */
} GgufLayout;

GGUF_LAYOUT_FN size_t gguf_layout_scalar(uint32_t t) {
    static const size_t sizes[] = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};
    return t < 13 ? sizes[t] : 0;
}

static uint64_t gguf_layout_u64(const uint8_t *p) {
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}
static uint32_t gguf_layout_u32(const uint8_t *p) {
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

/* Position after a value of type t at pos (files given to the tests are intact). */
GGUF_LAYOUT_FN size_t gguf_layout_skip(const uint8_t *d, size_t pos, uint32_t t) {
    size_t sz = gguf_layout_scalar(t);
    if (sz) return pos + sz;
    if (t == GGUF_TYPE_STRING) return pos + 8 + gguf_layout_u64(d + pos);
    uint32_t elem = gguf_layout_u32(d + pos);
    uint64_t count = gguf_layout_u64(d + pos + 4);
    pos += 12;
    if (gguf_layout_scalar(elem)) return pos + count * gguf_layout_scalar(elem);
    for (uint64_t i = 0; i < count; i++) pos = gguf_layout_skip(d, pos, elem);
    return pos;
}

GGUF_LAYOUT_FN void gguf_layout_free(GgufLayout *L) {
    free(L->data);
    free(L->kv);
    free(L->tensors);
    memset(L, 0, sizeof *L);
}

GGUF_LAYOUT_FN const GgufKvSpan *gguf_layout_find(const GgufLayout *L, const char *key) {
    for (int i = 0; i < L->n_kv; i++)
        if (strcmp(L->kv[i].key, key) == 0) return &L->kv[i];
    return NULL;
}

/* Block sizes for the types the shared files use (data_end). */
static uint64_t gguf_layout_tensor_bytes(const GgufTensorSpan *t) {
    uint64_t n = t->ne[0] * t->ne[1] * t->ne[2] * t->ne[3];
    switch (t->type) {
    case 0:
        return n * 4;
    case 1:
    case 30:
        return n * 2;
    case 8:
        return n / 32 * 34;
    case 12:
        return n / 256 * 144;
    case 14:
        return n / 256 * 210;
    default:
        return 0;
    }
}

GGUF_LAYOUT_FN int gguf_layout_read(GgufLayout *L, const char *path, char *err, size_t err_size) {
    memset(L, 0, sizeof *L);
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, err_size, "cannot open %s", path);
        return -1;
    }
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    L->data = malloc(len > 0 ? (size_t)len : 1);
    L->size = (size_t)len;
    if (len < 24 || fread(L->data, 1, (size_t)len, f) != (size_t)len) {
        fclose(f);
        snprintf(err, err_size, "cannot read %s", path);
        gguf_layout_free(L);
        return -1;
    }
    fclose(f);
    const uint8_t *d = L->data;
    L->n_tensors = (int)gguf_layout_u64(d + 8);
    L->n_kv = (int)gguf_layout_u64(d + 16);
    L->kv = calloc((size_t)L->n_kv + 1, sizeof *L->kv);
    L->tensors = calloc((size_t)L->n_tensors + 1, sizeof *L->tensors);
    L->alignment = 32;
    size_t pos = 24;
    for (int i = 0; i < L->n_kv; i++) {
        GgufKvSpan *kv = &L->kv[i];
        kv->at = pos;
        uint64_t klen = gguf_layout_u64(d + pos);
        snprintf(kv->key, sizeof kv->key, "%.*s", (int)klen, (const char *)d + pos + 8);
        kv->type_at = pos + 8 + klen;
        kv->type = gguf_layout_u32(d + kv->type_at);
        kv->value_at = kv->type_at + 4;
        kv->value_end = gguf_layout_skip(d, kv->value_at, kv->type);
        if (kv->type == GGUF_TYPE_ARRAY) {
            kv->is_array = 1;
            kv->elem_type = gguf_layout_u32(d + kv->value_at);
            kv->count = gguf_layout_u64(d + kv->value_at + 4);
        }
        if (kv->type == GGUF_TYPE_UINT32) kv->u32 = gguf_layout_u32(d + kv->value_at);
        if (strcmp(kv->key, "general.alignment") == 0) L->alignment = gguf_layout_u32(d + kv->value_at);
        if (strcmp(kv->key, "general.architecture") == 0)
            snprintf(L->arch, sizeof L->arch, "%.*s", (int)gguf_layout_u64(d + kv->value_at),
                     (const char *)d + kv->value_at + 8);
        if (strcmp(kv->key, "tokenizer.ggml.model") == 0)
            L->tokenizer_spm = memcmp(d + kv->value_at + 8, "llama", 5) == 0;
        pos = kv->value_end;
    }
    for (int i = 0; i < L->n_tensors; i++) {
        GgufTensorSpan *t = &L->tensors[i];
        t->at = pos;
        uint64_t nlen = gguf_layout_u64(d + pos);
        snprintf(t->name, sizeof t->name, "%.*s", (int)nlen, (const char *)d + pos + 8);
        t->ndims_at = pos + 8 + nlen;
        t->n_dims = gguf_layout_u32(d + t->ndims_at);
        t->ne_at = t->ndims_at + 4;
        for (int k = 0; k < 4; k++) t->ne[k] = k < (int)t->n_dims ? gguf_layout_u64(d + t->ne_at + 8 * k) : 1;
        t->type_at = t->ne_at + 8 * t->n_dims;
        t->type = gguf_layout_u32(d + t->type_at);
        t->offset_at = t->type_at + 4;
        t->offset = gguf_layout_u64(d + t->offset_at);
        t->end = t->offset_at + 8;
        pos = t->end;
    }
    L->infos_end = pos;
    L->data_start = (pos + L->alignment - 1) / L->alignment * L->alignment;
    L->data_end = L->data_start;
    for (int i = 0; i < L->n_tensors; i++) {
        uint64_t end = L->data_start + L->tensors[i].offset + gguf_layout_tensor_bytes(&L->tensors[i]);
        if (end > L->data_end) L->data_end = (size_t)end;
    }
    if (L->data_end > L->size || L->data_start > L->size) {
        snprintf(err, err_size, "%s: layout does not fit the file", path);
        gguf_layout_free(L);
        return -1;
    }
    return 0;
}

typedef enum { GGUF_EDIT_DROP, GGUF_EDIT_SET } GgufEditKind;

/* SET replaces the key's value (or appends the key when absent). */
typedef struct {
    const char *key;
    GgufEditKind kind;
    uint32_t type;
    const void *value;
    size_t value_len;
} GgufEdit;

GGUF_LAYOUT_FN uint8_t *gguf_layout_rebuild(const GgufLayout *L, const GgufEdit *edits, int n_edits,
                                            size_t *out_size) {
    GgufBuf kvs = {0};
    uint64_t n_kv = 0;
    uint32_t alignment = L->alignment;
    int used[8] = {0};
    for (int i = 0; i < L->n_kv; i++) {
        const GgufKvSpan *kv = &L->kv[i];
        const GgufEdit *e = NULL;
        for (int k = 0; k < n_edits; k++)
            if (strcmp(edits[k].key, kv->key) == 0) e = &edits[k], used[k] = 1;
        if (e && e->kind == GGUF_EDIT_DROP) continue;
        gguf_buf_append(&kvs, L->data + kv->at, kv->type_at - kv->at);
        if (e) {
            gguf_buf_u32(&kvs, e->type);
            gguf_buf_append(&kvs, e->value, e->value_len);
        } else {
            gguf_buf_append(&kvs, L->data + kv->type_at, kv->value_end - kv->type_at);
        }
        n_kv++;
    }
    for (int k = 0; k < n_edits; k++) {
        if (used[k] || edits[k].kind != GGUF_EDIT_SET) continue;
        gguf_buf_string(&kvs, edits[k].key, strlen(edits[k].key));
        gguf_buf_u32(&kvs, edits[k].type);
        gguf_buf_append(&kvs, edits[k].value, edits[k].value_len);
        n_kv++;
    }
    for (int k = 0; k < n_edits; k++)
        if (edits[k].kind == GGUF_EDIT_SET && strcmp(edits[k].key, "general.alignment") == 0 &&
            edits[k].type == GGUF_TYPE_UINT32) {
            uint32_t a;
            memcpy(&a, edits[k].value, 4);
            if (a && a <= 65536) alignment = a; /* pad as the file now claims */
        }
    GgufBuf out = {0};
    gguf_buf_append(&out, L->data, 8);
    gguf_buf_u64(&out, (uint64_t)L->n_tensors);
    gguf_buf_u64(&out, n_kv);
    gguf_buf_append(&out, kvs.p, kvs.n);
    free(kvs.p);
    gguf_buf_append(&out, L->data + L->tensors[0].at, L->infos_end - L->tensors[0].at);
    static const uint8_t zeros[65536];
    size_t pad = (alignment - out.n % alignment) % alignment;
    gguf_buf_append(&out, zeros, pad);
    gguf_buf_append(&out, L->data + L->data_start, L->size - L->data_start);
    *out_size = out.n;
    return out.p;
}

/* The array value of key with delta elements more (+1: the last repeated)
 * or fewer (-1: the last dropped); 0 copies it. -1 when absent. */
GGUF_LAYOUT_FN int gguf_layout_resized_array(const GgufLayout *L, const char *key, int delta, GgufBuf *out) {
    const GgufKvSpan *kv = gguf_layout_find(L, key);
    if (!kv || !kv->is_array || kv->count == 0) return -1;
    const uint8_t *d = L->data;
    size_t first = kv->value_at + 12, last = first;
    for (uint64_t i = 0; i + 1 < kv->count; i++) last = gguf_layout_skip(d, last, kv->elem_type);
    gguf_buf_u32(out, kv->elem_type);
    gguf_buf_u64(out, (uint64_t)((int64_t)kv->count + delta));
    if (delta < 0) {
        gguf_buf_append(out, d + first, last - first);
    } else {
        gguf_buf_append(out, d + first, kv->value_end - first);
        for (int i = 0; i < delta; i++) gguf_buf_append(out, d + last, kv->value_end - last);
    }
    return 0;
}

#endif
