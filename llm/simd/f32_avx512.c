/* f32_avx512.c - AVX-512 (F + BW) fp32 matmuls. Only call these when
 * cpu_features() reports AVX-512F, BW and VL (and AVX2+FMA). */
#include "llm/simd/avx512_ops.h"
#include "llm/simd/f32_shape.h"
#include "llm/simd/kernel_sets.h"

/* ---------------------------------------------------------------- fp32
 * Four rows against one x, two chains of 16 per row; the tail (n % 16) goes
 * through masked loads, which never touch memory past the row. */
TARGET_AVX512 static inline __m128 rows4(const float *r0, const float *x, int n) {
    const float *r1 = r0 + n, *r2 = r1 + n, *r3 = r2 + n;
    __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    __m512 b0 = a0, b1 = a0, b2 = a0, b3 = a0;
    int j = 0;
    for (; j + 32 <= n; j += 32) {
        __m512 x0 = _mm512_loadu_ps(x + j), x1 = _mm512_loadu_ps(x + j + 16);
        a0 = _mm512_fmadd_ps(_mm512_loadu_ps(r0 + j), x0, a0);
        a1 = _mm512_fmadd_ps(_mm512_loadu_ps(r1 + j), x0, a1);
        a2 = _mm512_fmadd_ps(_mm512_loadu_ps(r2 + j), x0, a2);
        a3 = _mm512_fmadd_ps(_mm512_loadu_ps(r3 + j), x0, a3);
        b0 = _mm512_fmadd_ps(_mm512_loadu_ps(r0 + j + 16), x1, b0);
        b1 = _mm512_fmadd_ps(_mm512_loadu_ps(r1 + j + 16), x1, b1);
        b2 = _mm512_fmadd_ps(_mm512_loadu_ps(r2 + j + 16), x1, b2);
        b3 = _mm512_fmadd_ps(_mm512_loadu_ps(r3 + j + 16), x1, b3);
    }
    for (; j < n; j += 16) {
        __mmask16 m = n - j >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (n - j)) - 1);
        __m512 x0 = _mm512_maskz_loadu_ps(m, x + j);
        a0 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, r0 + j), x0, a0);
        a1 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, r1 + j), x0, a1);
        a2 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, r2 + j), x0, a2);
        a3 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, r3 + j), x0, a3);
    }
    return hsum4_ps(_mm512_add_ps(a0, b0), _mm512_add_ps(a1, b1), _mm512_add_ps(a2, b2),
                    _mm512_add_ps(a3, b3));
}

TARGET_AVX512 static inline float row1(const float *row, const float *x, int n) {
    __m512 acc = _mm512_setzero_ps();
    for (int j = 0; j < n; j += 16) {
        __mmask16 m = n - j >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (n - j)) - 1);
        acc = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, row + j), _mm512_maskz_loadu_ps(m, x + j), acc);
    }
    __m256 s = fold_ps(acc);
    __m128 h = _mm_add_ps(_mm256_castps256_ps128(s), _mm256_extractf128_ps(s, 1));
    h = _mm_add_ps(h, _mm_movehl_ps(h, h));
    h = _mm_add_ss(h, _mm_shuffle_ps(h, h, 1));
    return _mm_cvtss_f32(h);
}

/* (Software prefetch of the next block measured slower here: the fp32
 * stream is bandwidth-bound and the hardware prefetcher keeps up.) */
TARGET_AVX512 void kernels_matmul_avx512(float *out, const float *x, const float *w, int n, int d) {
    f32_matmul_rows(out, x, 1, w, n, d, rows4, row1);
}

TARGET_AVX512 void kernels_matmul_batch_avx512(float *out, const float *x, int batch, const float *w, int n,
                                               int d) {
    f32_matmul_rows(out, x, batch, w, n, d, rows4, row1);
}
