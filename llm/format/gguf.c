/* gguf.c - GGUF v2/v3 parser: header, metadata key/values and tensor infos,
 * every count, length and offset checked against the buffer before use.
 * Reading the values of the checked metadata is gguf_values.c. */
#include "llm/format/gguf.h"

#include "lib/format.h"
#include "lib/stdlib.h"
#include "lib/string.h"
#include "llm/tensor/ggml_types.h"
#include "llm/format/gguf_internal.h"

/* A bounded little-endian reader over the file. */
typedef struct {
    const uint8_t *base;
    size_t size;
    size_t pos;
    int failed;
} Reader;

static int take(Reader *r, size_t n, const uint8_t **out) {
    if (r->failed || n > r->size - r->pos) {
        r->failed = 1;
        return -1;
    }
    *out = r->base + r->pos;
    r->pos += n;
    return 0;
}

uint64_t gguf_load_le(const uint8_t *p, int bytes) {
    uint64_t v = 0;
    for (int i = bytes - 1; i >= 0; i--) v = (v << 8) | p[i];
    return v;
}

static uint32_t read_u32(Reader *r) {
    const uint8_t *p;
    return take(r, 4, &p) ? 0 : (uint32_t)gguf_load_le(p, 4);
}

static uint64_t read_u64(Reader *r) {
    const uint8_t *p;
    return take(r, 8, &p) ? 0 : gguf_load_le(p, 8);
}

static int read_string(Reader *r, GgufString *s) {
    uint64_t len = read_u64(r);
    const uint8_t *p;
    if (r->failed || len > r->size - r->pos) {
        r->failed = 1;
        return -1;
    }
    take(r, (size_t)len, &p);
    s->ptr = (const char *)p;
    s->len = len;
    return 0;
}

/* Natural alignment of a ggml tensor type's elements or blocks. */
static uintptr_t type_alignment(uint32_t type) {
    switch (type) {
    case 0:  /* F32 */
    case 26: /* I32 */
        return 4;
    case 27: /* I64 */
    case 28: /* F64 */
        return 8;
    case 24: /* I8 */
        return 1;
    default: /* F16, BF16, I16 and every quantised block (fp16 scales) */
        return 2;
    }
}

size_t gguf_scalar_size(uint32_t type) {
    switch (type) {
    case GGUF_TYPE_UINT8:
    case GGUF_TYPE_INT8:
    case GGUF_TYPE_BOOL:
        return 1;
    case GGUF_TYPE_UINT16:
    case GGUF_TYPE_INT16:
        return 2;
    case GGUF_TYPE_UINT32:
    case GGUF_TYPE_INT32:
    case GGUF_TYPE_FLOAT32:
        return 4;
    case GGUF_TYPE_UINT64:
    case GGUF_TYPE_INT64:
    case GGUF_TYPE_FLOAT64:
        return 8;
    default:
        return 0;
    }
}

/* Skips one value of the given type (validating it); depth limits nesting. */
static int skip_value(Reader *r, uint32_t type, int depth) {
    const uint8_t *p;
    size_t sz = gguf_scalar_size(type);
    if (sz) return take(r, sz, &p);
    if (type == GGUF_TYPE_STRING) {
        GgufString s;
        return read_string(r, &s);
    }
    if (type != GGUF_TYPE_ARRAY || depth > 8) {
        r->failed = 1;
        return -1;
    }
    uint32_t elem = read_u32(r);
    uint64_t count = read_u64(r);
    if (r->failed || elem >= GGUF_TYPE_COUNT) {
        r->failed = 1;
        return -1;
    }
    sz = gguf_scalar_size(elem);
    if (sz) {
        if (count > (r->size - r->pos) / sz) {
            r->failed = 1;
            return -1;
        }
        return take(r, (size_t)(count * sz), &p);
    }
    /* Strings take at least 8 bytes each, arrays 12: a bound on count first. */
    if (count > (r->size - r->pos) / 8) {
        r->failed = 1;
        return -1;
    }
    for (uint64_t i = 0; i < count; i++)
        if (skip_value(r, elem, depth + 1)) return -1;
    return 0;
}

const uint8_t *gguf_values_end(const uint8_t *p, uint32_t type, uint64_t count) {
    /* Validated already: walk it with an unbounded reader. */
    Reader r = {p, SIZE_MAX - (uintptr_t)p, 0, 0};
    for (uint64_t i = 0; i < count; i++) skip_value(&r, type, 1);
    return p + r.pos;
}

int gguf_is_gguf(const void *data, size_t size) {
    return data && size >= 4 && gguf_load_le((const uint8_t *)data, 4) == GGUF_MAGIC;
}

static int fail(GgufFile *f, char *err, size_t n, const char *msg, uint64_t a) {
    snprintf(err, n, msg, (unsigned long long)a);
    free(f->kv);
    free(f->tensors);
    memset(f, 0, sizeof(*f));
    return -1;
}

static int release(GgufFile *f) {
    free(f->kv);
    free(f->tensors);
    memset(f, 0, sizeof(*f));
    return -1;
}

static void name_copy(char *dst, size_t n, GgufString s) {
    size_t len = s.len < n - 1 ? (size_t)s.len : n - 1;
    for (size_t i = 0; i < len; i++) {
        char c = s.ptr[i];
        dst[i] = (c >= 32 && c < 127) ? c : '?';
    }
    dst[len] = 0;
}

static int parse_tensor_infos(GgufFile *f, Reader *r, char *err, size_t n) {
    char name[96];
    for (uint64_t i = 0; i < f->n_tensors; i++) {
        GgufTensorInfo *t = &f->tensors[i];
        if (read_string(r, &t->name)) return fail(f, err, n, "gguf: truncated in tensor info %llu", i);
        name_copy(name, sizeof name, t->name);
        t->n_dims = read_u32(r);
        if (r->failed) return fail(f, err, n, "gguf: truncated in tensor info %llu", i);
        if (t->n_dims < 1 || t->n_dims > GGUF_MAX_DIMS) {
            snprintf(err, n, "gguf: tensor %s has %u dimensions (1..4 allowed)", name, t->n_dims);
            return release(f);
        }
        uint64_t total = 1;
        for (int d = 0; d < GGUF_MAX_DIMS; d++) {
            t->ne[d] = d < (int)t->n_dims ? read_u64(r) : 1;
            if (t->ne[d] == 0 || __builtin_mul_overflow(total, t->ne[d], &total) ||
                total > ((uint64_t)1 << 56)) {
                if (r->failed) break;
                snprintf(err, n, "gguf: tensor %s has a bad or overflowing element count", name);
                return release(f);
            }
        }
        t->type = read_u32(r);
        t->offset = read_u64(r);
        if (r->failed) return fail(f, err, n, "gguf: truncated in tensor info %llu", i);
        t->n_elements = total;
        const GgmlTypeInfo *ti = ggml_type_info(t->type);
        if (ti) {
            if (total % ti->block_elems) {
                snprintf(err, n, "gguf: tensor %s: %llu values is not a whole number of %s blocks", name,
                         (unsigned long long)total, ti->name);
                return release(f);
            }
            t->n_bytes = total / ti->block_elems * ti->block_bytes;
        }
    }
    return 0;
}

int gguf_create(GgufFile *f, const void *data, size_t size, char *err, size_t n) {
    memset(f, 0, sizeof(*f));
    Reader r = {(const uint8_t *)data, size, 0, 0};
    if (!data || size < 4 || read_u32(&r) != GGUF_MAGIC)
        return fail(f, err, n, "gguf: bad magic (not a GGUF file)", 0);
    f->base = (const uint8_t *)data;
    f->size = size;
    f->version = read_u32(&r);
    if (r.failed) return fail(f, err, n, "gguf: file truncated in the header", 0);
    if (f->version == 1) return fail(f, err, n, "gguf: version 1 files are not supported (only 2 and 3)", 0);
    if (f->version != 2 && f->version != 3) return fail(f, err, n, "gguf: unknown version %llu", f->version);
    f->n_tensors = read_u64(&r);
    f->n_kv = read_u64(&r);
    if (r.failed) return fail(f, err, n, "gguf: file truncated in the header", 0);
    /* Each tensor info takes >= 28 bytes, each key/value >= 13. */
    if (f->n_tensors > (size - r.pos) / 28)
        return fail(f, err, n, "gguf: tensor count %llu does not fit in the file", f->n_tensors);
    if (f->n_kv > (size - r.pos) / 13)
        return fail(f, err, n, "gguf: metadata count %llu does not fit in the file", f->n_kv);
    f->kv = calloc(f->n_kv ? (size_t)f->n_kv : 1, sizeof(GgufKeyValue));
    f->tensors = calloc(f->n_tensors ? (size_t)f->n_tensors : 1, sizeof(GgufTensorInfo));
    if (!f->kv || !f->tensors) return fail(f, err, n, "gguf: out of memory for the index", 0);
    f->alignment = GGUF_DEFAULT_ALIGNMENT;
    for (uint64_t i = 0; i < f->n_kv; i++) {
        GgufKeyValue *kv = &f->kv[i];
        if (read_string(&r, &kv->key)) return fail(f, err, n, "gguf: truncated in metadata key %llu", i);
        kv->type = (GgufValueType)read_u32(&r);
        if (r.failed) return fail(f, err, n, "gguf: truncated in metadata key %llu", i);
        if ((uint32_t)kv->type >= GGUF_TYPE_COUNT)
            return fail(f, err, n, "gguf: metadata value type %llu is unknown", (uint32_t)kv->type);
        kv->value = r.base + r.pos;
        if (skip_value(&r, kv->type, 0))
            return fail(f, err, n, "gguf: metadata value %llu is truncated or malformed", i);
    }
    const GgufKeyValue *al = gguf_find_key(f, "general.alignment");
    if (al) {
        uint64_t a;
        if (gguf_kv_u64(al, &a) || a == 0 || a > 65536 || (a & (a - 1)))
            return fail(f, err, n, "gguf: general.alignment must be a power of two up to 65536", 0);
        f->alignment = (uint32_t)a;
    }
    if (parse_tensor_infos(f, &r, err, n)) return -1;
    uint64_t data_off = ((uint64_t)r.pos + f->alignment - 1) / f->alignment * f->alignment;
    if (f->n_tensors && data_off > size) return fail(f, err, n, "gguf: file ends before the tensor data", 0);
    f->data_offset = data_off;
    f->n_pieces = 1;
    f->pieces_bytes = size;
    char name[96];
    for (uint64_t i = 0; i < f->n_tensors; i++) {
        GgufTensorInfo *t = &f->tensors[i];
        name_copy(name, sizeof name, t->name);
        uint64_t end;
        if (t->offset % f->alignment) {
            snprintf(err, n, "gguf: tensor %s offset %llu is not aligned to %u", name,
                     (unsigned long long)t->offset, f->alignment);
            return release(f);
        }
        if (__builtin_add_overflow(data_off, t->offset, &end) ||
            __builtin_add_overflow(end, t->n_bytes, &end) || end > size) {
            snprintf(err, n, "gguf: tensor %s data lies past the end of the file", name);
            return release(f);
        }
        t->data = f->base + data_off + t->offset;
        /* Block structs hold fp16/fp32 fields: a small general.alignment
         * (or a misaligned buffer) must not produce misaligned reads. */
        if ((uintptr_t)t->data % type_alignment(t->type)) {
            snprintf(err, n, "gguf: tensor %s data is misaligned for its type (general.alignment %u)", name,
                     f->alignment);
            return release(f);
        }
    }
    return 0;
}

void gguf_destroy(GgufFile *f) {
    if (!f) return;
    free(f->kv);
    free(f->tensors);
    memset(f, 0, sizeof(*f));
}

int gguf_string_eq(GgufString s, const char *c) {
    size_t len = strlen(c);
    return s.len == len && memcmp(s.ptr, c, len) == 0;
}

const GgufKeyValue *gguf_find_key(const GgufFile *f, const char *key) {
    for (uint64_t i = 0; i < f->n_kv; i++)
        if (gguf_string_eq(f->kv[i].key, key)) return &f->kv[i];
    return NULL;
}

const GgufTensorInfo *gguf_find_tensor(const GgufFile *f, const char *name) {
    for (uint64_t i = 0; i < f->n_tensors; i++)
        if (gguf_string_eq(f->tensors[i].name, name)) return &f->tensors[i];
    return NULL;
}
