/* avx512_ops.h - AVX-512 reductions shared by the AVX-512 kernel families. */
#ifndef LLM_SIMD_AVX512_OPS_H
#define LLM_SIMD_AVX512_OPS_H

#include <immintrin.h>

#include "llm/compute/target.h"

/* The upper 256 bits of a float vector (AVX-512F only: no DQ needed). */
TARGET_AVX512 static inline __m256 hi256_ps(__m512 v) {
    return _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1));
}

TARGET_AVX512 static inline __m256 fold_ps(__m512 v) {
    return _mm256_add_ps(_mm512_castps512_ps256(v), hi256_ps(v));
}

/* Horizontal sums of four vectors, returned as one 4-lane vector. */
TARGET_AVX512 static inline __m128 hsum4_ps(__m512 a0, __m512 a1, __m512 a2, __m512 a3) {
    __m256 s01 = _mm256_hadd_ps(fold_ps(a0), fold_ps(a1));
    __m256 s23 = _mm256_hadd_ps(fold_ps(a2), fold_ps(a3));
    __m256 s = _mm256_hadd_ps(s01, s23);
    return _mm_add_ps(_mm256_castps256_ps128(s), _mm256_extractf128_ps(s, 1));
}

/* Mask of the first n (<= 16) lanes. */
static inline __mmask16 first_lanes(int n) {
    return n >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << n) - 1);
}

#endif
