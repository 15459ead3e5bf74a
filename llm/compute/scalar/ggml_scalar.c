/* ggml_scalar.c - the scalar reference dot products of a weight row with
 * its activations (fp32 for F32/F16/BF16, Q8A or Q8K blocks for the
 * quantised types), built on the block decoders the dequantiser uses: the
 * SIMD variants are tested against these. */
#include "llm/tensor/ggml_blocks.h"

static float dot_f32(const void *row, const void *act, int n) {
    const float *w = row, *x = act;
    float sum = 0;
    for (int i = 0; i < n; i++) sum += w[i] * x[i];
    return sum;
}

/* Little-endian 16-bit value i of p. */
static inline uint16_t u16_at(const uint8_t *p, int i) {
    return (uint16_t)(p[2 * i] | p[2 * i + 1] << 8);
}

static float dot_f16(const void *row, const void *act, int n) {
    const float *x = act;
    float sum = 0;
    for (int i = 0; i < n; i++) sum += ggml_fp16_to_fp32(u16_at(row, i)) * x[i];
    return sum;
}

static float dot_bf16(const void *row, const void *act, int n) {
    const float *x = act;
    float sum = 0;
    for (int i = 0; i < n; i++) sum += ggml_bf16_to_fp32(u16_at(row, i)) * x[i];
    return sum;
}

/* A row of 32-value blocks of `type` (block_bytes each) with Q8A blocks. */
static inline float dot_blocks32(uint32_t type, size_t block_bytes, const void *row, const void *act, int n) {
    const uint8_t *p = row;
    const BlockQ8A *a = act;
    int8_t q[QK32];
    float scale, minv, sum = 0;
    for (int b = 0; b < n / QK32; b++, p += block_bytes) {
        ggml_decode_block32(type, p, q, &scale, &minv);
        int isum = 0;
        for (int j = 0; j < QK32; j++) isum += q[j] * a[b].qs[j];
        sum += scale * a[b].d * (float)isum - minv * a[b].s;
    }
    return sum;
}

/* A row of 256-value k-quant blocks with Q8K blocks. */
static inline float dot_blocks256(uint32_t type, size_t block_bytes, const void *row, const void *act,
                                  int n) {
    const uint8_t *p = row;
    const BlockQ8K *a = act;
    int8_t q[QK_K];
    float scale[16], minv[16], sum = 0;
    for (int b = 0; b < n / QK_K; b++, p += block_bytes) {
        ggml_decode_block256(type, p, q, scale, minv);
        float block = 0;
        for (int s = 0; s < 16; s++) {
            int isum = 0;
            for (int j = 0; j < 16; j++) isum += q[16 * s + j] * a[b].qs[16 * s + j];
            block += scale[s] * (float)isum - minv[s] * (float)a[b].bsums[s];
        }
        sum += a[b].d * block;
    }
    return sum;
}

static float dot_q4_0(const void *row, const void *act, int n) {
    return dot_blocks32(GGML_TYPE_Q4_0, sizeof(BlockQ4_0), row, act, n);
}
static float dot_q4_1(const void *row, const void *act, int n) {
    return dot_blocks32(GGML_TYPE_Q4_1, sizeof(BlockQ4_1), row, act, n);
}
static float dot_q5_0(const void *row, const void *act, int n) {
    return dot_blocks32(GGML_TYPE_Q5_0, sizeof(BlockQ5_0), row, act, n);
}
static float dot_q5_1(const void *row, const void *act, int n) {
    return dot_blocks32(GGML_TYPE_Q5_1, sizeof(BlockQ5_1), row, act, n);
}
static float dot_q8_0(const void *row, const void *act, int n) {
    return dot_blocks32(GGML_TYPE_Q8_0, sizeof(BlockQ8_0), row, act, n);
}
static float dot_q2_k(const void *row, const void *act, int n) {
    return dot_blocks256(GGML_TYPE_Q2_K, sizeof(BlockQ2_K), row, act, n);
}
static float dot_q3_k(const void *row, const void *act, int n) {
    return dot_blocks256(GGML_TYPE_Q3_K, sizeof(BlockQ3_K), row, act, n);
}
static float dot_q4_k(const void *row, const void *act, int n) {
    return dot_blocks256(GGML_TYPE_Q4_K, sizeof(BlockQ4_K), row, act, n);
}
static float dot_q5_k(const void *row, const void *act, int n) {
    return dot_blocks256(GGML_TYPE_Q5_K, sizeof(BlockQ5_K), row, act, n);
}
static float dot_q6_k(const void *row, const void *act, int n) {
    return dot_blocks256(GGML_TYPE_Q6_K, sizeof(BlockQ6_K), row, act, n);
}

static const ggml_vec_dot_fn scalar_dots[GGML_TYPE_LIMIT] = {
    [GGML_TYPE_F32] = dot_f32,   [GGML_TYPE_F16] = dot_f16,   [GGML_TYPE_BF16] = dot_bf16,
    [GGML_TYPE_Q4_0] = dot_q4_0, [GGML_TYPE_Q4_1] = dot_q4_1, [GGML_TYPE_Q5_0] = dot_q5_0,
    [GGML_TYPE_Q5_1] = dot_q5_1, [GGML_TYPE_Q8_0] = dot_q8_0, [GGML_TYPE_Q2_K] = dot_q2_k,
    [GGML_TYPE_Q3_K] = dot_q3_k, [GGML_TYPE_Q4_K] = dot_q4_k, [GGML_TYPE_Q5_K] = dot_q5_k,
    [GGML_TYPE_Q6_K] = dot_q6_k,
};

ggml_vec_dot_fn ggml_vec_dot_scalar(uint32_t type) {
    return type < GGML_TYPE_LIMIT ? scalar_dots[type] : NULL;
}
