/* kv_cache.c - KV cache element types: names and writing one row. */
#include "llm/model/kv_cache.h"

#include "lib/string.h"
#include "llm/compute/kernels.h"

static const struct {
    const char *name;
    uint32_t type;
} kv_types[] = {{"f32", GGML_TYPE_F32}, {"f16", GGML_TYPE_F16}, {"q8_0", GGML_TYPE_Q8_0}};

static int same_ignoring_case(const char *a, const char *b) {
    for (; *a && *b; a++, b++) {
        char x = *a >= 'A' && *a <= 'Z' ? (char)(*a + 32) : *a;
        if (x != *b) return 0;
    }
    return *a == *b;
}

int kv_type_parse(const char *name) {
    for (unsigned i = 0; i < sizeof kv_types / sizeof *kv_types; i++)
        if (name && same_ignoring_case(name, kv_types[i].name)) return (int)kv_types[i].type;
    return -1;
}

const char *kv_type_name(uint32_t type) {
    for (unsigned i = 0; i < sizeof kv_types / sizeof *kv_types; i++)
        if (kv_types[i].type == type) return kv_types[i].name;
    return "?";
}

uint64_t kv_row_bytes(uint32_t type, uint64_t n) {
    return kv_type_parse(kv_type_name(type)) < 0 ? 0 : ggml_row_bytes(type, n);
}

void kv_store_row(uint32_t type, void *row, const float *x, int n) {
    if (type == GGML_TYPE_F16) {
        kernels_active()->store_f16(row, x, n);
    } else if (type == GGML_TYPE_Q8_0) {
        kernels_active()->store_q8_0(row, x, n);
    } else {
        memcpy(row, x, (size_t)n * sizeof(float));
    }
}
