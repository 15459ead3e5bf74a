/* q2_k_q3_k_avx2.c - Q2_K and Q3_K rows (2-bit values, a scale per 16)
 * with Q8K activations, AVX2. */
#include "llm/compute/avx2/ggml_avx2.h"
#include "llm/compute/k_gemm.h"

TARGET_AVX2 STEP float q2_k_block(const void *wp, const BlockQ8K *a) {
    const BlockQ2_K *w = wp;
    const __m256i three = _mm256_set1_epi8(3);
    int sc[16], m[16];
    q2_k_scales(w, sc, m);
    __m256i acc = _mm256_setzero_si256();
    for (int half = 0; half < 2; half++) {
        __m256i r = load32(w->qs + 32 * half);
        for (int j = 0; j < 4; j++) {
            int s = 8 * half + 2 * j;
            __m256i q = _mm256_and_si256(_mm256_srli_epi16(r, 2 * j), three);
            acc = _mm256_add_epi32(
                acc, avx2_dot32_u_scaled(q, load32(a->qs + 128 * half + 32 * j), sc[s], sc[s + 1]));
        }
    }
    return k_block_sum(a->d, w->d, w->dmin, avx2_hsum_i32(acc), min_sum16(m, a->bsums));
}

TARGET_AVX2 STEP float q3_k_block(const void *wp, const BlockQ8K *a) {
    const BlockQ3_K *w = wp;
    const __m256i three = _mm256_set1_epi8(3), one = _mm256_set1_epi8(1);
    int sc[16];
    q3_k_scales(w->scales, sc);
    __m256i hm = load32(w->hmask);
    __m256i acc = _mm256_setzero_si256();
    for (int half = 0; half < 2; half++) {
        __m256i r = load32(w->qs + 32 * half);
        for (int j = 0; j < 4; j++) {
            int s = 8 * half + 2 * j, bit = 4 * half + j;
            /* unsigned value u = low bits + 4 * hmask bit = q + 4 */
            __m256i h = _mm256_and_si256(_mm256_srli_epi16(hm, bit), one);
            __m256i u = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(r, 2 * j), three),
                                        _mm256_slli_epi16(h, 2));
            acc = _mm256_add_epi32(
                acc, avx2_dot32_u_scaled(u, load32(a->qs + 128 * half + 32 * j), sc[s], sc[s + 1]));
        }
    }
    /* sum sc * (u - 4) * x = sum sc * u * x - 4 * sum sc * bsum */
    int bias = min_sum16(sc, a->bsums);
    return a->d * half_scale(w->d) * (float)(avx2_hsum_i32(acc) - 4 * bias);
}

TARGET_AVX2 static float dot_q2_k(const void *row, const void *act, int n) {
    return k_row_dot(row, act, n, sizeof(BlockQ2_K), q2_k_block);
}

TARGET_AVX2 static float dot_q3_k(const void *row, const void *act, int n) {
    return k_row_dot(row, act, n, sizeof(BlockQ3_K), q3_k_block);
}

/* Prefill: two rows per decoded tile (k_gemm.h). */
TARGET_AVX2 STEP void q2_k_step(const uint8_t *decoded, const void *act, uint8_t *state) {
    k_step_avx2(decoded, act, state, 2, 1);
}

TARGET_AVX2 STEP void q3_k_step(const uint8_t *decoded, const void *act, uint8_t *state) {
    k_step_avx2(decoded, act, state, 2, 0);
}

TARGET_AVX2 static void gemm_q2_k(float *out, size_t out_stride, const uint8_t *rows, size_t row_bytes,
                                  const void *act, size_t act_stride, int n, int count, int batch) {
    chunked_gemm_rows(out, out_stride, rows, row_bytes, act, act_stride, n, count, batch, QK_K,
                      sizeof(BlockQ2_K), sizeof(BlockQ8K), 2, sizeof(float), q2_k_decode, q2_k_step,
                      k_finish);
}

TARGET_AVX2 static void gemm_q3_k(float *out, size_t out_stride, const uint8_t *rows, size_t row_bytes,
                                  const void *act, size_t act_stride, int n, int count, int batch) {
    chunked_gemm_rows(out, out_stride, rows, row_bytes, act, act_stride, n, count, batch, QK_K,
                      sizeof(BlockQ3_K), sizeof(BlockQ8K), 2, sizeof(float), q3_k_decode, q3_k_step,
                      k_finish);
}

const GgmlKernel ggml_q2_k_avx2 = {dot_q2_k, NULL, gemm_q2_k};
const GgmlKernel ggml_q3_k_avx2 = {dot_q3_k, NULL, gemm_q3_k};
