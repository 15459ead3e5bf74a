/* q4_0_avx2.c - Q4_0 rows with Q8A activations, AVX2: two rows per pass
 * (ggml_avx2.h). */
#include "llm/compute/avx2/ggml_avx2.h"

/* Nibbles (0..15) times x, minus 8 * x: pairs stay within int16. */
TARGET_AVX2 STEP __m256 q4_0_step(const void *wp, const void *ap, __m256 acc) {
    const BlockQ4_0 *w = wp;
    const BlockQ8A *a = ap;
    const __m256i mask = _mm256_set1_epi8(0x0f), eight = _mm256_set1_epi8(8);
    __m256i raw = _mm256_broadcastsi128_si256(load16(w->qs));
    __m256i q = _mm256_and_si256(_mm256_srlv_epi64(raw, _mm256_set_epi64x(4, 4, 0, 0)), mask);
    __m256i x = load32(a->qs);
    __m256i p = _mm256_sub_epi16(_mm256_maddubs_epi16(q, x), _mm256_maddubs_epi16(eight, x));
    __m256 s = _mm256_cvtepi32_ps(_mm256_madd_epi16(p, _mm256_set1_epi16(1)));
    return _mm256_fmadd_ps(_mm256_set1_ps(half_scale(w->d) * a->d), s, acc);
}

TARGET_AVX2 static void matmul_q4_0(float *out, const uint8_t *rows, size_t row_bytes, const void *act, int n,
                                    int count) {
    avx2_matmul_rows(out, rows, row_bytes, act, n, count, sizeof(BlockQ4_0), sizeof(BlockQ8A), QK32,
                     q4_0_step);
}

static float dot_q4_0(const void *row, const void *act, int n) {
    return dot_by_matmul(matmul_q4_0, row, act, n);
}

TARGET_AVX2 static void gemm_q4_0(float *out, size_t out_stride, const uint8_t *rows, size_t row_bytes,
                                  const void *act, size_t act_stride, int n, int count, int batch) {
    avx2_gemm_rows(out, out_stride, rows, row_bytes, act, act_stride, n, count, batch, sizeof(BlockQ4_0),
                   sizeof(BlockQ8A), QK32, q4_0_step);
}

const GgmlKernel ggml_q4_0_avx2 = {dot_q4_0, matmul_q4_0, gemm_q4_0};
