/* fuzz_gguf.c - the GGUF reader (llm/format/gguf.c): header, metadata, tensor infos,
 * then every accessor on every key, the first row of each supported tensor
 * dequantised, and the input opened as a split set (llm/format/gguf_split.c). */
#include <stdint.h>

#include "llm/tensor/ggml_types.h"
#include "llm/format/gguf.h"
#include "llm/format/gguf_split.h"
#include "tests/fuzz/fuzz_common.h"

static const uint8_t *buf_start, *buf_end;

static void check_span(const void *p, uint64_t len, const char *what) {
    const uint8_t *b = p;
    FUZZ_ASSERT(b >= buf_start && b <= buf_end && len <= (uint64_t)(buf_end - b), what);
    volatile uint8_t sink = len ? b[0] ^ b[len - 1] : 0;
    (void)sink;
}

static void walk_array(const GgufArray *a, int depth) {
    FUZZ_ASSERT(depth < 64, "arrays nested too deep");
    check_span(a->data, (uint64_t)(a->end - a->data), "array outside the file");
    uint64_t probes[] = {0, 1, a->count ? a->count - 1 : 0, a->count, UINT64_MAX};
    for (size_t i = 0; i < sizeof probes / sizeof probes[0]; i++) {
        uint32_t u32;
        int32_t i32;
        int64_t i64;
        float f;
        GgufString s;
        GgufArray inner;
        gguf_array_u32(a, probes[i], &u32);
        gguf_array_i32(a, probes[i], &i32);
        gguf_array_i64(a, probes[i], &i64);
        gguf_array_f32(a, probes[i], &f);
        if (gguf_array_string(a, probes[i], &s) == 0)
            check_span(s.ptr, s.len, "array string outside the file");
        if (gguf_array_array(a, probes[i], &inner) == 0)
            check_span(inner.data, 0, "inner array outside the file");
    }
    GgufArrayIter it;
    GgufString s;
    uint64_t n = 0;
    gguf_array_iter_init(&it, a);
    while (gguf_array_iter_next_string(&it, &s)) {
        check_span(s.ptr, s.len, "iterated string outside the file");
        FUZZ_ASSERT(++n <= a->count, "iterator ran past count");
    }
    GgufArray inner;
    n = 0;
    gguf_array_iter_init(&it, a);
    while (gguf_array_iter_next_array(&it, &inner)) {
        FUZZ_ASSERT(++n <= a->count, "iterator ran past count");
        walk_array(&inner, depth + 1);
    }
}

/* Every later piece of a split set is the input itself: joining pieces and
 * its checks run on whatever split keys the input holds. */
static const void *same_input(void *ctx, const char *name, size_t *size) {
    *size = (size_t)(buf_end - buf_start);
    return buf_start;
}

static void open_as_split(const GgufFile *f) {
    uint64_t count = 2;
    const GgufKeyValue *kv = gguf_find_key(f, "split.count");
    if (kv) gguf_kv_u64(kv, &count);
    char name[64], err[256];
    snprintf(name, sizeof name, "m-00001-of-%05llu.gguf", (unsigned long long)(count % 100000));
    GgufPieces pieces = {name, same_input, NULL};
    GgufFile joined;
    if (gguf_create_pieces(&joined, buf_start, (size_t)(buf_end - buf_start), &pieces, err, sizeof err) !=
        0) {
        fuzz_check_reason(err, sizeof err);
        return;
    }
    for (uint64_t i = 0; i < joined.n_tensors; i++)
        check_span(joined.tensors[i].data, joined.tensors[i].n_bytes, "joined tensor outside the file");
    gguf_destroy(&joined);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    uint8_t *buf = malloc(size ? size : 1);
    memcpy(buf, data, size);
    buf_start = buf;
    buf_end = buf + size;
    GgufFile f;
    char err[256];
    memset(err, 0x55, sizeof err);
    gguf_is_gguf(buf, size);
    if (gguf_create(&f, buf, size, err, sizeof err) != 0) {
        fuzz_check_reason(err, sizeof err);
        free(buf);
        return 0;
    }
    for (uint64_t i = 0; i < f.n_kv; i++) {
        const GgufKeyValue *kv = &f.kv[i];
        check_span(kv->key.ptr, kv->key.len, "key outside the file");
        gguf_value_type_name(kv->type);
        uint64_t u;
        int64_t s64;
        double d;
        GgufString s;
        GgufArray a;
        gguf_kv_u64(kv, &u);
        gguf_kv_i64(kv, &s64);
        gguf_kv_f64(kv, &d);
        if (gguf_kv_string(kv, &s) == 0) check_span(s.ptr, s.len, "string value outside the file");
        if (gguf_kv_array(kv, &a) == 0) walk_array(&a, 0);
        /* Lookups by the key's own name (when it has no NUL inside). */
        if (kv->key.len < 256 && !memchr(kv->key.ptr, '\0', kv->key.len)) {
            char name[256];
            memcpy(name, kv->key.ptr, kv->key.len);
            name[kv->key.len] = '\0';
            FUZZ_ASSERT(gguf_find_key(&f, name) != NULL, "key not found by its own name");
            uint32_t u32;
            float f32;
            int b;
            gguf_get_u32(&f, name, &u32);
            gguf_get_f32(&f, name, &f32);
            gguf_get_bool(&f, name, &b);
            gguf_get_string(&f, name, &s);
            gguf_get_array(&f, name, &a);
        }
    }
    static float row[4096];
    for (uint64_t i = 0; i < f.n_tensors; i++) {
        const GgufTensorInfo *t = &f.tensors[i];
        check_span(t->name.ptr, t->name.len, "tensor name outside the file");
        FUZZ_ASSERT(t->n_dims <= GGUF_MAX_DIMS, "too many dims");
        check_span(t->data, t->n_bytes, "tensor data outside the file");
        const GgmlTypeInfo *info = ggml_type_info(t->type);
        uint64_t row_bytes = ggml_row_bytes(t->type, t->ne[0]);
        if (info && info->supported && row_bytes && t->ne[0] <= 4096 && row_bytes <= t->n_bytes)
            ggml_dequantize_row(t->type, t->data, row, (int)t->ne[0]);
    }
    gguf_find_tensor(&f, "token_embd.weight");
    gguf_find_key(&f, "general.architecture");
    open_as_split(&f);
    gguf_destroy(&f);
    free(buf);
    return 0;
}
