/* avx2_ops.h - AVX2+FMA reductions and vector steps shared by the AVX2
 * kernel families (and the AVX-512 set's AVX2 parts). */
#ifndef LLM_SIMD_AVX2_OPS_H
#define LLM_SIMD_AVX2_OPS_H

#include <immintrin.h>

#include "llm/compute/target.h"

TARGET_AVX2 static inline float avx2_hsum(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_shuffle_ps(s, s, 1));
    return _mm_cvtss_f32(s);
}

/* Horizontal sums of four vectors, returned as one 4-lane vector. */
TARGET_AVX2 static inline __m128 avx2_hsum4(__m256 a0, __m256 a1, __m256 a2, __m256 a3) {
    __m256 s01 = _mm256_hadd_ps(a0, a1); /* a0 pairs, a1 pairs per 128-bit half */
    __m256 s23 = _mm256_hadd_ps(a2, a3);
    __m256 s = _mm256_hadd_ps(s01, s23); /* per half: a0 a1 a2 a3 partial sums */
    return _mm_add_ps(_mm256_castps256_ps128(s), _mm256_extractf128_ps(s, 1));
}

TARGET_AVX2 static inline float avx2_dot(const float *a, const float *b, int n) {
    __m256 acc = _mm256_setzero_ps();
    int j = 0;
    for (; j + 8 <= n; j += 8) acc = _mm256_fmadd_ps(_mm256_loadu_ps(a + j), _mm256_loadu_ps(b + j), acc);
    float sum = avx2_hsum(acc);
    for (; j < n; j++) sum += a[j] * b[j];
    return sum;
}

TARGET_AVX2 static inline void avx2_axpy(float *y, float a, const float *x, int n) {
    __m256 av = _mm256_set1_ps(a);
    int j = 0;
    for (; j + 8 <= n; j += 8)
        _mm256_storeu_ps(y + j, _mm256_fmadd_ps(av, _mm256_loadu_ps(x + j), _mm256_loadu_ps(y + j)));
    for (; j < n; j++) y[j] += a * x[j];
}

#endif
