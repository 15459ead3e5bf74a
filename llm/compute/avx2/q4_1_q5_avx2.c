/* q4_1_q5_avx2.c - Q4_1, Q5_0 and Q5_1 rows with Q8A activations, AVX2:
 * one loop, the block decoded as in q4_1_q5_sse2.c, 32 values per multiply. */
#include "llm/compute/avx2/ggml_avx2.h"
#include "llm/compute/ggml_gemm_chunked.h"

TARGET_AVX2 static inline float dot_q4q5(const uint8_t *p, const BlockQ8A *a, int n, int stride, int has_min,
                                         int has_fifth) {
    __m256 acc = _mm256_setzero_ps();
    float min_sum = 0;
    for (int b = 0; b < n / QK32; b++, p += stride) {
        __m128i lo, hi;
        q4q5_values(p, has_min, has_fifth, &lo, &hi);
        __m256i q = avx2_join(lo, hi), x = load32(a[b].qs);
        /* Q4_1/Q5_1 values are unsigned (0..31); Q5_0's are signed (-16..15) */
        __m256i s = has_min ? avx2_dot32_u(q, x) : avx2_dot32(_mm256_sub_epi8(q, _mm256_set1_epi8(16)), x);
        float scale = q4q5_scale(p, has_min, &a[b], &min_sum);
        acc = _mm256_fmadd_ps(_mm256_set1_ps(scale), _mm256_cvtepi32_ps(s), acc);
    }
    return avx2_hsum_ps(acc) + min_sum;
}

TARGET_AVX2 static float dot_q4_1(const void *row, const void *act, int n) {
    return dot_q4q5(row, act, n, sizeof(BlockQ4_1), 1, 0);
}
TARGET_AVX2 static float dot_q5_0(const void *row, const void *act, int n) {
    return dot_q4q5(row, act, n, sizeof(BlockQ5_0), 0, 1);
}
TARGET_AVX2 static float dot_q5_1(const void *row, const void *act, int n) {
    return dot_q4q5(row, act, n, sizeof(BlockQ5_1), 1, 1);
}

/* ---- prefill (ggml_gemm_chunked.h): a block decoded once, then the
 * dot's own multiply and accumulate per position ---- */
typedef struct {
    __m256i q;  /* 0..31 unsigned (Q4_1, Q5_1), -16..15 (Q5_0) */
    float d, m; /* half_scale of d and m */
} Q4Q5Decoded;

typedef struct {
    __m256 acc;
    float min_sum;
} Q4Q5State;

TARGET_AVX2 static inline __attribute__((always_inline)) void q4q5_decode(const uint8_t *p, uint8_t *out,
                                                                          int has_min, int has_fifth) {
    Q4Q5Decoded *d = (Q4Q5Decoded *)out;
    __m128i lo, hi;
    uint16_t dh, mh = 0;
    q4q5_values(p, has_min, has_fifth, &lo, &hi);
    d->q = avx2_join(lo, hi);
    if (!has_min) d->q = _mm256_sub_epi8(d->q, _mm256_set1_epi8(16));
    __builtin_memcpy(&dh, p, 2);
    if (has_min) __builtin_memcpy(&mh, p + 2, 2);
    d->d = half_scale(dh), d->m = half_scale(mh);
}

/* Two rows: the activations loaded once. */
TARGET_AVX2 static inline __attribute__((always_inline)) void
q4q5_step(const uint8_t *decoded, const void *act, uint8_t *state, int has_min) {
    const BlockQ8A *a = act;
    __m256i x = load32(a->qs);
    for (int r = 0; r < 2; r++) {
        const Q4Q5Decoded *d = (const Q4Q5Decoded *)(decoded + (size_t)r * CHUNKED_DECODED_BYTES);
        Q4Q5State *st = (Q4Q5State *)state + r;
        __m256i s = has_min ? avx2_dot32_u(d->q, x) : avx2_dot32(d->q, x);
        st->acc = _mm256_fmadd_ps(_mm256_set1_ps(d->d * a->d), _mm256_cvtepi32_ps(s), st->acc);
        if (has_min) st->min_sum += d->m * a->s;
    }
}

TARGET_AVX2 static float q4q5_finish(const uint8_t *state) {
    const Q4Q5State *st = (const Q4Q5State *)state;
    return avx2_hsum_ps(st->acc) + st->min_sum;
}

TARGET_AVX2 STEP void q4_1_decode(const uint8_t *p, uint8_t *out) {
    q4q5_decode(p, out, 1, 0);
}
TARGET_AVX2 STEP void q5_0_decode(const uint8_t *p, uint8_t *out) {
    q4q5_decode(p, out, 0, 1);
}
TARGET_AVX2 STEP void q5_1_decode(const uint8_t *p, uint8_t *out) {
    q4q5_decode(p, out, 1, 1);
}
TARGET_AVX2 STEP void q4q5_step_min(const uint8_t *decoded, const void *act, uint8_t *state) {
    q4q5_step(decoded, act, state, 1);
}
TARGET_AVX2 STEP void q4q5_step_no_min(const uint8_t *decoded, const void *act, uint8_t *state) {
    q4q5_step(decoded, act, state, 0);
}

TARGET_AVX2 static void gemm_q4_1(float *out, size_t out_stride, const uint8_t *rows, size_t row_bytes,
                                  const void *act, size_t act_stride, int n, int count, int batch) {
    chunked_gemm_rows(out, out_stride, rows, row_bytes, act, act_stride, n, count, batch, QK32,
                      sizeof(BlockQ4_1), sizeof(BlockQ8A), 2, sizeof(Q4Q5State), q4_1_decode, q4q5_step_min,
                      q4q5_finish);
}

TARGET_AVX2 static void gemm_q5_0(float *out, size_t out_stride, const uint8_t *rows, size_t row_bytes,
                                  const void *act, size_t act_stride, int n, int count, int batch) {
    chunked_gemm_rows(out, out_stride, rows, row_bytes, act, act_stride, n, count, batch, QK32,
                      sizeof(BlockQ5_0), sizeof(BlockQ8A), 2, sizeof(Q4Q5State), q5_0_decode,
                      q4q5_step_no_min, q4q5_finish);
}

TARGET_AVX2 static void gemm_q5_1(float *out, size_t out_stride, const uint8_t *rows, size_t row_bytes,
                                  const void *act, size_t act_stride, int n, int count, int batch) {
    chunked_gemm_rows(out, out_stride, rows, row_bytes, act, act_stride, n, count, batch, QK32,
                      sizeof(BlockQ5_1), sizeof(BlockQ8A), 2, sizeof(Q4Q5State), q5_1_decode, q4q5_step_min,
                      q4q5_finish);
}

const GgmlKernel ggml_q4_1_avx2 = {dot_q4_1, NULL, gemm_q4_1};
const GgmlKernel ggml_q5_0_avx2 = {dot_q5_0, NULL, gemm_q5_0};
const GgmlKernel ggml_q5_1_avx2 = {dot_q5_1, NULL, gemm_q5_1};
