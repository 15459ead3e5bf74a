/* q4_k_avx2.c - Q4_K rows with Q8K activations, AVX2: two rows per pass
 * (ggml_avx2.h). */
#include "llm/simd/ggml_avx2.h"

TARGET_AVX2 STEP __m256 q4_k_step(const void *wp, const void *ap, __m256 acc) {
    const BlockQ4_K *w = wp;
    const BlockQ8K *a = ap;
    const __m256i mask = _mm256_set1_epi8(0x0f);
    uint32_t words[4];
    k4_scales_mins(w->scales, words);
    const uint8_t *sc = (const uint8_t *)words;
    __m256i isum = _mm256_setzero_si256();
    for (int j = 0; j < 4; j++) {
        __m256i r = load32(w->qs + 32 * j);
        __m256i lo = _mm256_maddubs_epi16(_mm256_and_si256(r, mask), load32(a->qs + 64 * j));
        __m256i hi = _mm256_maddubs_epi16(_mm256_and_si256(_mm256_srli_epi16(r, 4), mask),
                                          load32(a->qs + 64 * j + 32));
        isum = _mm256_add_epi32(isum, _mm256_madd_epi16(lo, _mm256_set1_epi16(sc[2 * j])));
        isum = _mm256_add_epi32(isum, _mm256_madd_epi16(hi, _mm256_set1_epi16(sc[2 * j + 1])));
    }
    __m256i msum = avx2_k4_min_sums(words, a->bsums);
    acc = _mm256_fmadd_ps(_mm256_set1_ps(a->d * half_scale(w->d)), _mm256_cvtepi32_ps(isum), acc);
    return _mm256_fnmadd_ps(_mm256_set1_ps(a->d * half_scale(w->dmin)), _mm256_cvtepi32_ps(msum), acc);
}

TARGET_AVX2 static void matmul_q4_k(float *out, const uint8_t *rows, size_t row_bytes, const void *act, int n,
                                    int count) {
    avx2_matmul_rows(out, rows, row_bytes, act, n, count, sizeof(BlockQ4_K), sizeof(BlockQ8K), QK_K,
                     q4_k_step);
}

static float dot_q4_k(const void *row, const void *act, int n) {
    return dot_by_matmul(matmul_q4_k, row, act, n);
}

TARGET_AVX2 static void gemm_q4_k(float *out, size_t out_stride, const uint8_t *rows, size_t row_bytes,
                                  const void *act, size_t act_stride, int n, int count, int batch) {
    avx2_gemm_rows(out, out_stride, rows, row_bytes, act, act_stride, n, count, batch, sizeof(BlockQ4_K),
                   sizeof(BlockQ8K), QK_K, q4_k_step);
}

const GgmlKernel ggml_q4_k_avx2 = {dot_q4_k, matmul_q4_k, gemm_q4_k};
