/* f32_avx2.c - AVX2+FMA fp32 matmuls, dot and axpy. Each function carries
 * its own target attribute so this file builds with the SSE2 baseline
 * flags; only call these when cpu_features() reports AVX2 and FMA. */
#include "llm/simd/avx2_ops.h"
#include "llm/simd/f32_shape.h"
#include "llm/simd/kernel_sets.h"

/* Four rows at a time, two accumulators each when n allows, so the FMA
 * latency is hidden and each x load feeds four rows. */
TARGET_AVX2 static inline __m128 avx2_rows4(const float *r0, const float *x, int n) {
    const float *r1 = r0 + n, *r2 = r1 + n, *r3 = r2 + n;
    int n8 = n & ~7;
    __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    __m256 b0 = a0, b1 = a0, b2 = a0, b3 = a0;
    int j = 0;
    for (; j + 16 <= n; j += 16) {
        __m256 x0 = _mm256_loadu_ps(x + j), x1 = _mm256_loadu_ps(x + j + 8);
        a0 = _mm256_fmadd_ps(_mm256_loadu_ps(r0 + j), x0, a0);
        a1 = _mm256_fmadd_ps(_mm256_loadu_ps(r1 + j), x0, a1);
        a2 = _mm256_fmadd_ps(_mm256_loadu_ps(r2 + j), x0, a2);
        a3 = _mm256_fmadd_ps(_mm256_loadu_ps(r3 + j), x0, a3);
        b0 = _mm256_fmadd_ps(_mm256_loadu_ps(r0 + j + 8), x1, b0);
        b1 = _mm256_fmadd_ps(_mm256_loadu_ps(r1 + j + 8), x1, b1);
        b2 = _mm256_fmadd_ps(_mm256_loadu_ps(r2 + j + 8), x1, b2);
        b3 = _mm256_fmadd_ps(_mm256_loadu_ps(r3 + j + 8), x1, b3);
    }
    for (; j < n8; j += 8) {
        __m256 x0 = _mm256_loadu_ps(x + j);
        a0 = _mm256_fmadd_ps(_mm256_loadu_ps(r0 + j), x0, a0);
        a1 = _mm256_fmadd_ps(_mm256_loadu_ps(r1 + j), x0, a1);
        a2 = _mm256_fmadd_ps(_mm256_loadu_ps(r2 + j), x0, a2);
        a3 = _mm256_fmadd_ps(_mm256_loadu_ps(r3 + j), x0, a3);
    }
    __m128 sums = avx2_hsum4(_mm256_add_ps(a0, b0), _mm256_add_ps(a1, b1), _mm256_add_ps(a2, b2),
                             _mm256_add_ps(a3, b3));
    return f32_rows4_tail(sums, r0, n, x, n8, n);
}

TARGET_AVX2 void kernels_matmul_avx2(float *out, const float *x, const float *w, int n, int d) {
    f32_matmul_rows(out, x, 1, w, n, d, avx2_rows4, avx2_dot);
}

TARGET_AVX2 void kernels_matmul_batch_avx2(float *out, const float *x, int batch, const float *w, int n,
                                           int d) {
    f32_matmul_rows(out, x, batch, w, n, d, avx2_rows4, avx2_dot);
}

TARGET_AVX2 float kernels_dot_avx2(const float *a, const float *b, int n) {
    return avx2_dot(a, b, n);
}

TARGET_AVX2 void kernels_axpy_avx2(float *y, float a, const float *x, int n) {
    avx2_axpy(y, a, x, n);
}
