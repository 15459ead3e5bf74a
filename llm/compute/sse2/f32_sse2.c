/* f32_sse2.c - SSE2 fp32 matmuls, dot and axpy: the x86_64 baseline, and
 * what the kernel runs under QEMU TCG when AVX2 is not enabled. Unaligned
 * loads throughout: legacy checkpoints put the weights at 28 + 4k byte
 * offsets. */
#include "llm/compute/f32_shape.h"
#include "llm/compute/kernel_sets.h"
#include "llm/compute/sse2/sse2_ops.h"

/* Tile sizes: 4 rows x 2 positions is 8 accumulators, 2 x vectors, a row
 * vector and a product (12 of the 16 registers). A single position takes
 * 4 rows at a time. */
#define GEMM_ROWS 4
#define GEMM_POSITIONS 2
#define MATVEC_ROWS 4

/* The tile of R rows by P positions (constants once inlined): one chain of
 * 4 lanes per output over j (multiply, then add), then f32_store_tile with
 * the tail (n % 4) summed in scalar from zero. */
static inline __attribute__((always_inline)) void tile_rp(float *out, long out_stride, const float *w, int n,
                                                          const float *x, long x_stride, const int R,
                                                          const int P, F32Prefetch *pf) {
    __m128 acc[F32_MAX_ROWS][F32_MAX_POSITIONS];
#pragma GCC unroll 8
    for (int r = 0; r < R; r++)
#pragma GCC unroll 8
        for (int p = 0; p < P; p++) acc[r][p] = _mm_setzero_ps();
    int n4 = n & ~3;
    const char *next = pf->next;
    long lines = pf->lines;
    for (int j = 0; j < n4; j += 4) {
        f32_prefetch_step(&next, &lines);
        __m128 xv[F32_MAX_POSITIONS];
#pragma GCC unroll 8
        for (int p = 0; p < P; p++) xv[p] = _mm_loadu_ps(x + p * x_stride + j);
#pragma GCC unroll 8
        for (int r = 0; r < R; r++) {
            __m128 wv = _mm_loadu_ps(w + (long)r * n + j);
#pragma GCC unroll 8
            for (int p = 0; p < P; p++) acc[r][p] = _mm_add_ps(acc[r][p], _mm_mul_ps(wv, xv[p]));
        }
    }
    pf->next = next;
    pf->lines = lines;
    if (n4 == n) {
        f32_store_tile(out, out_stride, acc, NULL, R, P);
        return;
    }
    float tails[F32_MAX_ROWS][F32_MAX_POSITIONS];
    for (int r = 0; r < R; r++)
        for (int p = 0; p < P; p++) {
            tails[r][p] = 0.0f;
            for (int j = n4; j < n; j++) tails[r][p] += w[(long)r * n + j] * x[p * x_stride + j];
        }
    f32_store_tile(out, out_stride, acc, tails, R, P);
}

static void tile(float *out, long out_stride, const float *w, int n, const float *x, long x_stride, int rows,
                 int positions, F32Prefetch *pf) {
    f32_tile(out, out_stride, w, n, x, x_stride, rows, positions, pf, GEMM_ROWS, MATVEC_ROWS, tile_rp);
}

void kernels_matmul_sse2(float *out, const float *x, const float *w, int n, int d) {
    f32_gemm(out, d, x, n, 1, w, n, d, MATVEC_ROWS, 1, tile);
}

void kernels_matmul_batch_sse2(float *out, int out_stride, const float *x, int x_stride, int batch,
                               const float *w, int n, int d) {
    f32_gemm(out, out_stride, x, x_stride, batch, w, n, d, GEMM_ROWS, GEMM_POSITIONS, tile);
}

float kernels_dot_sse2(const float *a, const float *b, int n) {
    return sse2_dot(a, b, n);
}

void kernels_axpy_sse2(float *y, float a, const float *x, int n) {
    sse2_axpy(y, a, x, n);
}
