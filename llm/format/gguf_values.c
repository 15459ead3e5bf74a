/* gguf_values.c - typed reads of GGUF metadata values (scalars, strings and
 * arrays) that gguf_create has already bounds-checked. */
#include "lib/string.h"
#include "llm/format/gguf.h"
#include "llm/format/gguf_internal.h"

/* Integer value of a scalar of integer type at p; 0 when not an integer type. */
static int scalar_int(uint32_t type, const uint8_t *p, int64_t *s, uint64_t *u, int *is_signed) {
    switch (type) {
    case GGUF_TYPE_UINT8:
    case GGUF_TYPE_BOOL:
        *u = p[0];
        *is_signed = 0;
        return 1;
    case GGUF_TYPE_UINT16:
        *u = gguf_load_le(p, 2);
        *is_signed = 0;
        return 1;
    case GGUF_TYPE_UINT32:
        *u = gguf_load_le(p, 4);
        *is_signed = 0;
        return 1;
    case GGUF_TYPE_UINT64:
        *u = gguf_load_le(p, 8);
        *is_signed = 0;
        return 1;
    case GGUF_TYPE_INT8:
        *s = (int8_t)p[0];
        *is_signed = 1;
        return 1;
    case GGUF_TYPE_INT16:
        *s = (int16_t)gguf_load_le(p, 2);
        *is_signed = 1;
        return 1;
    case GGUF_TYPE_INT32:
        *s = (int32_t)gguf_load_le(p, 4);
        *is_signed = 1;
        return 1;
    case GGUF_TYPE_INT64:
        *s = (int64_t)gguf_load_le(p, 8);
        *is_signed = 1;
        return 1;
    default:
        return 0;
    }
}

static int scalar_u64(uint32_t type, const uint8_t *p, uint64_t *out) {
    int64_t s = 0;
    uint64_t u = 0;
    int sg;
    if (type == GGUF_TYPE_BOOL || !scalar_int(type, p, &s, &u, &sg)) return -1;
    if (sg) {
        if (s < 0) return -1;
        u = (uint64_t)s;
    }
    *out = u;
    return 0;
}

static int scalar_i64(uint32_t type, const uint8_t *p, int64_t *out) {
    int64_t s = 0;
    uint64_t u = 0;
    int sg;
    if (type == GGUF_TYPE_BOOL || !scalar_int(type, p, &s, &u, &sg)) return -1;
    if (!sg) {
        if (u > (uint64_t)INT64_MAX) return -1;
        s = (int64_t)u;
    }
    *out = s;
    return 0;
}

static int scalar_f64(uint32_t type, const uint8_t *p, double *out) {
    if (type == GGUF_TYPE_FLOAT32) {
        uint32_t bits = (uint32_t)gguf_load_le(p, 4);
        float v;
        memcpy(&v, &bits, 4);
        *out = v;
        return 0;
    }
    if (type == GGUF_TYPE_FLOAT64) {
        uint64_t bits = gguf_load_le(p, 8);
        memcpy(out, &bits, 8);
        return 0;
    }
    return -1;
}

int gguf_kv_u64(const GgufKeyValue *kv, uint64_t *out) {
    return kv ? scalar_u64(kv->type, kv->value, out) : -1;
}
int gguf_kv_i64(const GgufKeyValue *kv, int64_t *out) {
    return kv ? scalar_i64(kv->type, kv->value, out) : -1;
}
int gguf_kv_f64(const GgufKeyValue *kv, double *out) {
    return kv ? scalar_f64(kv->type, kv->value, out) : -1;
}

int gguf_kv_string(const GgufKeyValue *kv, GgufString *out) {
    if (!kv || kv->type != GGUF_TYPE_STRING) return -1;
    out->len = gguf_load_le(kv->value, 8);
    out->ptr = (const char *)kv->value + 8;
    return 0;
}

/* Fills an array descriptor from the header at p (validated by gguf_create). */
static void array_at(const uint8_t *p, GgufArray *out) {
    out->type = (GgufValueType)gguf_load_le(p, 4);
    out->count = gguf_load_le(p + 4, 8);
    out->data = p + 12;
    size_t sz = gguf_scalar_size(out->type);
    out->end = sz ? out->data + out->count * sz : gguf_values_end(out->data, out->type, out->count);
}

int gguf_kv_array(const GgufKeyValue *kv, GgufArray *out) {
    if (!kv || kv->type != GGUF_TYPE_ARRAY) return -1;
    array_at(kv->value, out);
    return 0;
}

#define GETTER(NAME, T, CHECK)                                                                               \
    int gguf_get_##NAME(const GgufFile *f, const char *key, T *out) {                                        \
        const GgufKeyValue *kv = gguf_find_key(f, key);                                                      \
        if (!kv) return -1;                                                                                  \
        CHECK                                                                                                \
    }

GETTER(u8, uint8_t, if (kv->type != GGUF_TYPE_UINT8) return -1; *out = kv->value[0]; return 0;)
GETTER(i8, int8_t, if (kv->type != GGUF_TYPE_INT8) return -1; *out = (int8_t)kv->value[0]; return 0;)
GETTER(u16, uint16_t, if (kv->type != GGUF_TYPE_UINT16) return -1;
       *out = (uint16_t)gguf_load_le(kv->value, 2); return 0;)
GETTER(i16, int16_t, if (kv->type != GGUF_TYPE_INT16) return -1; *out = (int16_t)gguf_load_le(kv->value, 2);
       return 0;)
GETTER(u32, uint32_t, uint64_t v; if (scalar_u64(kv->type, kv->value, &v) || v > UINT32_MAX) return -1;
       *out = (uint32_t)v; return 0;)
GETTER(i32, int32_t, int64_t v;
       if (scalar_i64(kv->type, kv->value, &v) || v > INT32_MAX || v < INT32_MIN) return -1;
       *out = (int32_t)v; return 0;)
GETTER(u64, uint64_t, return scalar_u64(kv->type, kv->value, out);)
GETTER(i64, int64_t, return scalar_i64(kv->type, kv->value, out);)
GETTER(f64, double, return scalar_f64(kv->type, kv->value, out);)
GETTER(f32, float, double v; if (scalar_f64(kv->type, kv->value, &v)) return -1; *out = (float)v; return 0;)
GETTER(bool, int, if (kv->type != GGUF_TYPE_BOOL) return -1; *out = kv->value[0] != 0; return 0;)
GETTER(string, GgufString, return gguf_kv_string(kv, out);)
GETTER(array, GgufArray, return gguf_kv_array(kv, out);)

static const uint8_t *fixed_elem(const GgufArray *a, uint64_t i) {
    size_t sz = gguf_scalar_size(a->type);
    if (!sz || i >= a->count) return NULL;
    return a->data + i * sz;
}

int gguf_array_u32(const GgufArray *a, uint64_t i, uint32_t *out) {
    const uint8_t *p = fixed_elem(a, i);
    uint64_t v;
    if (!p || scalar_u64(a->type, p, &v) || v > UINT32_MAX) return -1;
    *out = (uint32_t)v;
    return 0;
}

int gguf_array_i64(const GgufArray *a, uint64_t i, int64_t *out) {
    const uint8_t *p = fixed_elem(a, i);
    return p ? scalar_i64(a->type, p, out) : -1;
}

int gguf_array_i32(const GgufArray *a, uint64_t i, int32_t *out) {
    int64_t v;
    if (gguf_array_i64(a, i, &v) || v > INT32_MAX || v < INT32_MIN) return -1;
    *out = (int32_t)v;
    return 0;
}

int gguf_array_f32(const GgufArray *a, uint64_t i, float *out) {
    const uint8_t *p = fixed_elem(a, i);
    double v;
    if (!p || scalar_f64(a->type, p, &v)) return -1;
    *out = (float)v;
    return 0;
}

void gguf_array_iter_init(GgufArrayIter *it, const GgufArray *a) {
    it->array = a;
    it->index = 0;
    it->next = a->data;
}

int gguf_array_iter_next_string(GgufArrayIter *it, GgufString *out) {
    if (it->array->type != GGUF_TYPE_STRING || it->index >= it->array->count) return 0;
    out->len = gguf_load_le(it->next, 8);
    out->ptr = (const char *)it->next + 8;
    it->next += 8 + out->len;
    it->index++;
    return 1;
}

int gguf_array_iter_next_array(GgufArrayIter *it, GgufArray *out) {
    if (it->array->type != GGUF_TYPE_ARRAY || it->index >= it->array->count) return 0;
    array_at(it->next, out);
    it->next = out->end;
    it->index++;
    return 1;
}

int gguf_array_string(const GgufArray *a, uint64_t i, GgufString *out) {
    if (a->type != GGUF_TYPE_STRING || i >= a->count) return -1;
    GgufArrayIter it;
    gguf_array_iter_init(&it, a);
    for (uint64_t k = 0; k <= i; k++) gguf_array_iter_next_string(&it, out);
    return 0;
}

int gguf_array_array(const GgufArray *a, uint64_t i, GgufArray *out) {
    if (a->type != GGUF_TYPE_ARRAY || i >= a->count) return -1;
    GgufArrayIter it;
    gguf_array_iter_init(&it, a);
    for (uint64_t k = 0; k <= i; k++) gguf_array_iter_next_array(&it, out);
    return 0;
}

const char *gguf_value_type_name(uint32_t type) {
    static const char *const names[] = {"u8",   "i8",     "u16",   "i16", "u32", "i32", "f32",
                                        "bool", "string", "array", "u64", "i64", "f64"};
    return type < GGUF_TYPE_COUNT ? names[type] : "unknown";
}
