/* f16_bf16_avx2.c - F16 and BF16 rows with fp32 activations, AVX2 (F16C
 * converts the halves): 16 values per pass in two accumulators, the tail
 * scalar. */
#include "llm/simd/ggml_avx2.h"

TARGET_AVX2 static inline __m256 f16_8(const uint16_t *w) {
    return _mm256_cvtph_ps(load16(w));
}

/* bf16 is the top half of an fp32: put it there. */
TARGET_AVX2 static inline __m256 bf16_8(const uint16_t *w) {
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(load16(w)), 16));
}

typedef __m256 (*avx2_widen_fn)(const uint16_t *w);

/* sum w[i] * x[i], eight weights at a time through `widen`, the tail one
 * at a time through `scalar`. */
TARGET_AVX2 static inline __attribute__((always_inline)) float
dot_halves(const uint16_t *w, const float *x, int n, avx2_widen_fn widen, float (*scalar)(uint16_t)) {
    __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
    int i = 0;
    for (; i + 16 <= n; i += 16) {
        acc0 = _mm256_fmadd_ps(widen(w + i), _mm256_loadu_ps(x + i), acc0);
        acc1 = _mm256_fmadd_ps(widen(w + i + 8), _mm256_loadu_ps(x + i + 8), acc1);
    }
    float sum = avx2_hsum_ps(_mm256_add_ps(acc0, acc1));
    for (; i < n; i++) sum += scalar(w[i]) * x[i];
    return sum;
}

TARGET_AVX2 static float dot_f16(const void *row, const void *act, int n) {
    return dot_halves(row, act, n, f16_8, ggml_fp16_to_fp32);
}

TARGET_AVX2 static float dot_bf16(const void *row, const void *act, int n) {
    return dot_halves(row, act, n, bf16_8, ggml_bf16_to_fp32);
}

const GgmlKernel ggml_f16_avx2 = {dot_f16, NULL, NULL};
const GgmlKernel ggml_bf16_avx2 = {dot_bf16, NULL, NULL};
