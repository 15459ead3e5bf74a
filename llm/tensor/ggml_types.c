/* ggml_types.c - the type table (block sizes from the block structs) and
 * half/bfloat conversion. */
#include "llm/tensor/ggml_types.h"

/* A block type's entry: values per block, bytes from its struct. */
#define BLOCK(name, block, elems, usable, act)                                                               \
    { name, elems, sizeof(block), usable, act }

static const GgmlTypeInfo type_table[GGML_TYPE_LIMIT] = {
    [GGML_TYPE_F32] = {"F32", 1, 4, 1, ACT_F32},
    [GGML_TYPE_F16] = {"F16", 1, 2, 1, ACT_F32},
    [GGML_TYPE_BF16] = {"BF16", 1, 2, 1, ACT_F32},
    [GGML_TYPE_Q4_0] = BLOCK("Q4_0", BlockQ4_0, QK32, 1, ACT_Q8A),
    [GGML_TYPE_Q4_1] = BLOCK("Q4_1", BlockQ4_1, QK32, 1, ACT_Q8A),
    [GGML_TYPE_Q5_0] = BLOCK("Q5_0", BlockQ5_0, QK32, 1, ACT_Q8A),
    [GGML_TYPE_Q5_1] = BLOCK("Q5_1", BlockQ5_1, QK32, 1, ACT_Q8A),
    [GGML_TYPE_Q8_0] = BLOCK("Q8_0", BlockQ8_0, QK32, 1, ACT_Q8A),
    [GGML_TYPE_Q8_1] = BLOCK("Q8_1", BlockQ8_1, QK32, 0, ACT_Q8A),
    [GGML_TYPE_Q2_K] = BLOCK("Q2_K", BlockQ2_K, QK_K, 1, ACT_Q8K),
    [GGML_TYPE_Q3_K] = BLOCK("Q3_K", BlockQ3_K, QK_K, 1, ACT_Q8K),
    [GGML_TYPE_Q4_K] = BLOCK("Q4_K", BlockQ4_K, QK_K, 1, ACT_Q8K),
    [GGML_TYPE_Q5_K] = BLOCK("Q5_K", BlockQ5_K, QK_K, 1, ACT_Q8K),
    [GGML_TYPE_Q6_K] = BLOCK("Q6_K", BlockQ6_K, QK_K, 1, ACT_Q8K),
    [GGML_TYPE_Q8_K] = BLOCK("Q8_K", BlockQ8K, QK_K, 0, ACT_Q8K),
    [GGML_TYPE_I8] = {"I8", 1, 1, 0, ACT_F32},
    [GGML_TYPE_I16] = {"I16", 1, 2, 0, ACT_F32},
    [GGML_TYPE_I32] = {"I32", 1, 4, 0, ACT_F32},
    [GGML_TYPE_I64] = {"I64", 1, 8, 0, ACT_F32},
    [GGML_TYPE_F64] = {"F64", 1, 8, 0, ACT_F32},
};

const GgmlTypeInfo *ggml_type_info(uint32_t type) {
    if (type >= GGML_TYPE_LIMIT || !type_table[type].name) return NULL;
    return &type_table[type];
}

const char *ggml_type_name(uint32_t type) {
    const GgmlTypeInfo *ti = ggml_type_info(type);
    return ti ? ti->name : "unknown";
}

uint64_t ggml_row_bytes(uint32_t type, uint64_t n) {
    const GgmlTypeInfo *ti = ggml_type_info(type);
    if (!ti || n % ti->block_elems) return 0;
    return n / ti->block_elems * ti->block_bytes;
}

float ggml_fp16_to_fp32(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000) << 16, exp = (h >> 10) & 0x1f, mant = h & 0x3ff, bits;
    if (exp == 0x1f) {
        bits = sign | 0x7f800000u | (mant << 13);
    } else if (exp == 0) {
        /* Zero or subnormal: mant * 2^-24 is exact in float. */
        float v = (float)mant * (1.0f / 16777216.0f);
        return sign ? -v : v;
    } else {
        bits = sign | ((exp + 112) << 23) | (mant << 13);
    }
    union {
        uint32_t u;
        float f;
    } v = {bits};
    return v.f;
}

/* Bit for bit what F16C's vcvtps2ph gives with round-to-nearest-even
 * (f16_store.c uses it when the CPU has it): a NaN keeps its sign and top
 * 10 payload bits and comes out quiet. __builtin_memcpy: lib's memcpy is no
 * builtin in these builds, and this runs once per cached value. */
uint16_t ggml_fp32_to_fp16(float f) {
    uint32_t x;
    __builtin_memcpy(&x, &f, 4);
    uint32_t sign = (x >> 16) & 0x8000, abs = x & 0x7fffffffu;
    if (abs > 0x7f800000u) return (uint16_t)(sign | 0x7e00 | ((abs >> 13) & 0x3ff));
    if (abs >= 0x477ff000u) return (uint16_t)(sign | 0x7c00); /* infinity, or rounds to it */
    if (abs < 0x38800000u) {
        /* Subnormal half: round mant * 2^24 to nearest even. */
        float a;
        __builtin_memcpy(&a, &abs, 4);
        float scaled = a * 16777216.0f;
        uint32_t q = (uint32_t)scaled;
        float rem = scaled - (float)q;
        if (rem > 0.5f || (rem == 0.5f && (q & 1))) q++;
        return (uint16_t)(sign | q);
    }
    uint32_t mant = abs & 0x7fffff, exp = (abs >> 23) - 112;
    uint32_t h = (exp << 10) | (mant >> 13), rest = mant & 0x1fff;
    if (rest > 0x1000 || (rest == 0x1000 && (h & 1))) h++;
    return (uint16_t)(sign | h);
}

float ggml_bf16_to_fp32(uint16_t h) {
    union {
        uint32_t u;
        float f;
    } v = {(uint32_t)h << 16};
    return v.f;
}
