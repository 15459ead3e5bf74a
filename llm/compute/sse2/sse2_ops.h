/* sse2_ops.h - SSE2 reductions and vector steps shared by the SSE2 kernel
 * families (f32_sse2.c, vec_sse2.c, attention_sse2.c). */
#ifndef LLM_SIMD_SSE2_OPS_H
#define LLM_SIMD_SSE2_OPS_H

#include <emmintrin.h>

#include "llm/compute/f32_shape.h"

static inline float sse2_hsum(__m128 v) {
    __m128 shuf = _mm_shuffle_ps(v, v, _MM_SHUFFLE(2, 3, 0, 1));
    __m128 sums = _mm_add_ps(v, shuf);
    shuf = _mm_movehl_ps(shuf, sums);
    return _mm_cvtss_f32(_mm_add_ss(sums, shuf));
}

static inline float sse2_dot(const float *a, const float *b, int n) {
    __m128 acc = _mm_setzero_ps();
    int j = 0;
    for (; j + 4 <= n; j += 4) acc = _mm_add_ps(acc, _mm_mul_ps(_mm_loadu_ps(a + j), _mm_loadu_ps(b + j)));
    float sum = sse2_hsum(acc);
    for (; j < n; j++) sum += a[j] * b[j];
    return sum;
}

static inline void sse2_axpy(float *y, float a, const float *x, int n) {
    __m128 av = _mm_set1_ps(a);
    int j = 0;
    for (; j + 4 <= n; j += 4)
        _mm_storeu_ps(y + j, _mm_add_ps(_mm_loadu_ps(y + j), _mm_mul_ps(av, _mm_loadu_ps(x + j))));
    for (; j < n; j++) y[j] += a * x[j];
}

/* Four rows (r0, r0 + stride, ...) dotted with x, so each x load feeds four
 * rows: (r0 . x, r1 . x, r2 . x, r3 . x). */
static inline __attribute__((always_inline)) __m128 sse2_rows4(const float *r0, long stride, const float *x,
                                                               int n) {
    const float *r1 = r0 + stride, *r2 = r1 + stride, *r3 = r2 + stride;
    int n4 = n & ~3;
    __m128 a0 = _mm_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    for (int j = 0; j < n4; j += 4) {
        __m128 xv = _mm_loadu_ps(x + j);
        a0 = _mm_add_ps(a0, _mm_mul_ps(_mm_loadu_ps(r0 + j), xv));
        a1 = _mm_add_ps(a1, _mm_mul_ps(_mm_loadu_ps(r1 + j), xv));
        a2 = _mm_add_ps(a2, _mm_mul_ps(_mm_loadu_ps(r2 + j), xv));
        a3 = _mm_add_ps(a3, _mm_mul_ps(_mm_loadu_ps(r3 + j), xv));
    }
    return f32_rows4_tail(sse2_hsum4(a0, a1, a2, a3), r0, stride, x, n4, n);
}

#endif
