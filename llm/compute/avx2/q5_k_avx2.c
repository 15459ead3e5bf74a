/* q5_k_avx2.c - Q5_K rows with Q8K activations, AVX2. */
#include "llm/compute/avx2/ggml_avx2.h"
#include "llm/compute/k_gemm.h"

/* 32 five-bit values: the nibbles (shifted down by `shift`) plus bit `bit`
 * of the high bits as the fifth. */
TARGET_AVX2 static inline __m256i q5_values(__m256i raw, int shift, __m256i qh, int bit) {
    const __m256i mask = _mm256_set1_epi8(0x0f), one = _mm256_set1_epi8(1);
    return _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(raw, shift), mask),
                           _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, bit), one), 4));
}

TARGET_AVX2 STEP float q5_k_block(const void *wp, const BlockQ8K *a) {
    const BlockQ5_K *w = wp;
    uint32_t words[4];
    k4_scales_mins(w->scales, words);
    const uint8_t *sc = (const uint8_t *)words;
    __m256i qh = load32(w->qh);
    __m256i acc = _mm256_setzero_si256();
    for (int j = 0; j < 4; j++) {
        const int8_t *x = a->qs + 64 * j;
        __m256i r = load32(w->qs + 32 * j);
        __m256i lo = q5_values(r, 0, qh, 2 * j), hi = q5_values(r, 4, qh, 2 * j + 1);
        acc = _mm256_add_epi32(acc, avx2_dot32_u_scaled(lo, load32(x), sc[2 * j], sc[2 * j]));
        acc = _mm256_add_epi32(acc, avx2_dot32_u_scaled(hi, load32(x + 32), sc[2 * j + 1], sc[2 * j + 1]));
    }
    return k_block_sum(a->d, w->d, w->dmin, avx2_hsum_i32(acc), k4_min_sum(sc + 8, a->bsums));
}

TARGET_AVX2 static float dot_q5_k(const void *row, const void *act, int n) {
    return k_row_dot(row, act, n, sizeof(BlockQ5_K), q5_k_block);
}

/* Prefill: two rows per decoded tile (k_gemm.h). */
TARGET_AVX2 STEP void q5_k_step(const uint8_t *decoded, const void *act, uint8_t *state) {
    k_step_avx2(decoded, act, state, 2, 1);
}

TARGET_AVX2 static void gemm_q5_k(float *out, size_t out_stride, const uint8_t *rows, size_t row_bytes,
                                  const void *act, size_t act_stride, int n, int count, int batch) {
    chunked_gemm_rows(out, out_stride, rows, row_bytes, act, act_stride, n, count, batch, QK_K,
                      sizeof(BlockQ5_K), sizeof(BlockQ8K), 2, sizeof(float), q5_k_decode, q5_k_step,
                      k_finish);
}

const GgmlKernel ggml_q5_k_avx2 = {dot_q5_k, NULL, gemm_q5_k};
