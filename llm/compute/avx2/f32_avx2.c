/* f32_avx2.c - AVX2+FMA fp32 matmuls, dot and axpy. Each function carries
 * its own target attribute so this file builds with the SSE2 baseline
 * flags; only call these when cpu_features() reports AVX2 and FMA. */
#include "llm/compute/avx2/avx2_ops.h"
#include "llm/compute/f32_shape.h"
#include "llm/compute/kernel_sets.h"

/* Tile sizes: 4 rows x 3 positions is 12 accumulators, 3 x vectors loaded
 * per step and one row vector at a time (16 of the 16 registers); each
 * step's 7 loads feed 12 FMAs. A single position takes 8 rows at a time,
 * eight independent chains to cover the FMA latency. */
#define GEMM_ROWS 4
#define GEMM_POSITIONS 3
#define MATVEC_ROWS 8

/* One k-step of a tile at column j: each position's x vector, then each
 * row's vector against all of them; masked loads for the tail (n % 8),
 * which never touch memory past a row. */
TARGET_AVX2 static inline __attribute__((always_inline)) void tile_step(__m256 acc[][F32_MAX_POSITIONS],
                                                                        const float *w, int n, const float *x,
                                                                        long x_stride, int j, const int R,
                                                                        const int P, const int tail) {
    __m256i m = _mm256_cmpgt_epi32(_mm256_set1_epi32(n - j), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    __m256 xv[F32_MAX_POSITIONS];
#pragma GCC unroll 8
    for (int p = 0; p < P; p++)
        xv[p] = tail ? _mm256_maskload_ps(x + p * x_stride + j, m) : _mm256_loadu_ps(x + p * x_stride + j);
#pragma GCC unroll 8
    for (int r = 0; r < R; r++) {
        __m256 wv = tail ? _mm256_maskload_ps(w + (long)r * n + j, m) : _mm256_loadu_ps(w + (long)r * n + j);
#pragma GCC unroll 8
        for (int p = 0; p < P; p++) acc[r][p] = _mm256_fmadd_ps(wv, xv[p], acc[r][p]);
    }
}

/* The tile of R rows by P positions (constants once inlined): one chain of
 * 8 lanes per output over j, folded to 4 lanes, then f32_store_tile. */
TARGET_AVX2 static inline __attribute__((always_inline)) void tile_rp(float *out, long out_stride,
                                                                      const float *w, int n, const float *x,
                                                                      long x_stride, const int R, const int P,
                                                                      F32Prefetch *pf) {
    __m256 acc[F32_MAX_ROWS][F32_MAX_POSITIONS];
#pragma GCC unroll 8
    for (int r = 0; r < R; r++)
#pragma GCC unroll 8
        for (int p = 0; p < P; p++) acc[r][p] = _mm256_setzero_ps();
    const char *next = pf->next;
    long lines = pf->lines;
    int j = 0;
    for (; j + 8 <= n; j += 8) {
        f32_prefetch_step(&next, &lines);
        tile_step(acc, w, n, x, x_stride, j, R, P, 0);
    }
    if (j < n) tile_step(acc, w, n, x, x_stride, j, R, P, 1);
    pf->next = next;
    pf->lines = lines;
    __m128 sums[F32_MAX_ROWS][F32_MAX_POSITIONS];
#pragma GCC unroll 8
    for (int r = 0; r < R; r++)
#pragma GCC unroll 8
        for (int p = 0; p < P; p++)
            sums[r][p] = _mm_add_ps(_mm256_castps256_ps128(acc[r][p]), _mm256_extractf128_ps(acc[r][p], 1));
    f32_store_tile(out, out_stride, sums, NULL, R, P);
}

/* A tile of up to GEMM_ROWS x GEMM_POSITIONS (or MATVEC_ROWS x 1). */
TARGET_AVX2 static void tile(float *out, long out_stride, const float *w, int n, const float *x,
                             long x_stride, int rows, int positions, F32Prefetch *pf) {
    f32_tile(out, out_stride, w, n, x, x_stride, rows, positions, pf, GEMM_ROWS, MATVEC_ROWS, tile_rp);
}

TARGET_AVX2 void kernels_matmul_avx2(float *out, const float *x, const float *w, int n, int d) {
    f32_gemm(out, d, x, n, 1, w, n, d, MATVEC_ROWS, 1, tile);
}

TARGET_AVX2 void kernels_matmul_batch_avx2(float *out, int out_stride, const float *x, int x_stride,
                                           int batch, const float *w, int n, int d) {
    f32_gemm(out, out_stride, x, x_stride, batch, w, n, d, GEMM_ROWS, GEMM_POSITIONS, tile);
}

TARGET_AVX2 float kernels_dot_avx2(const float *a, const float *b, int n) {
    return avx2_dot(a, b, n);
}

TARGET_AVX2 void kernels_axpy_avx2(float *y, float a, const float *x, int n) {
    avx2_axpy(y, a, x, n);
}
