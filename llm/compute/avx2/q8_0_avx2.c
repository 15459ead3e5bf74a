/* q8_0_avx2.c - Q8_0 rows with Q8A activations, AVX2: two rows per pass
 * (ggml_avx2.h). */
#include "llm/compute/avx2/ggml_avx2.h"

TARGET_AVX2 STEP __m256 q8_0_step(const void *wp, const void *ap, __m256 acc) {
    const BlockQ8_0 *w = wp;
    const BlockQ8A *a = ap;
    __m256 s = _mm256_cvtepi32_ps(avx2_dot32(load32(w->qs), load32(a->qs)));
    return _mm256_fmadd_ps(_mm256_set1_ps(half_scale(w->d) * a->d), s, acc);
}

TARGET_AVX2 static void matmul_q8_0(float *out, const uint8_t *rows, size_t row_bytes, const void *act, int n,
                                    int count) {
    avx2_matmul_rows(out, rows, row_bytes, act, n, count, sizeof(BlockQ8_0), sizeof(BlockQ8A), QK32,
                     q8_0_step);
}

static float dot_q8_0(const void *row, const void *act, int n) {
    return dot_by_matmul(matmul_q8_0, row, act, n);
}

TARGET_AVX2 static void gemm_q8_0(float *out, size_t out_stride, const uint8_t *rows, size_t row_bytes,
                                  const void *act, size_t act_stride, int n, int count, int batch) {
    avx2_gemm_rows(out, out_stride, rows, row_bytes, act, act_stride, n, count, batch, sizeof(BlockQ8_0),
                   sizeof(BlockQ8A), QK32, q8_0_step);
}

const GgmlKernel ggml_q8_0_avx2 = {dot_q8_0, matmul_q8_0, gemm_q8_0};
