/* f32_avx512.c - AVX-512 (F + BW) fp32 matmuls. Only call these when
 * cpu_features() reports AVX-512F, BW and VL (and AVX2+FMA). */
#include "llm/compute/avx512/avx512_ops.h"
#include "llm/compute/f32_shape.h"
#include "llm/compute/kernel_sets.h"

/* Tile sizes: 6 rows x 4 positions is 24 accumulators, 6 row vectors
 * loaded per step, one x vector at a time (31 of the 32 registers); each
 * step's 10 loads feed 24 FMAs. 6 x 4 rather than 4 x 6: a tile's inputs
 * stay in L1 while it goes over a row block, and 4 positions of 2048
 * floats fit it where 6 do not (measured: n = 2048, 128 against 112
 * GFLOP/s; n = 768 the same, 155). A single position takes 8 rows at a
 * time, eight independent chains to cover the FMA latency. */
#define GEMM_ROWS 6
#define GEMM_POSITIONS 4
#define MATVEC_ROWS 8

/* One k-step of a tile at column j: R row vectors, then each position's x
 * vector against all of them; masked loads (masked: only the lanes of m),
 * which never touch memory outside a row, for the first and last steps. */
TARGET_AVX512 static inline __attribute__((always_inline)) void
tile_step(__m512 acc[][F32_MAX_POSITIONS], const float *w, int n, const float *x, long x_stride, int j,
          const int R, const int P, __mmask16 m, const int masked) {
    __m512 wv[F32_MAX_ROWS];
#pragma GCC unroll 8
    for (int r = 0; r < R; r++)
        wv[r] = masked ? _mm512_maskz_loadu_ps(m, w + (long)r * n + j) : _mm512_loadu_ps(w + (long)r * n + j);
#pragma GCC unroll 8
    for (int p = 0; p < P; p++) {
        __m512 xv =
            masked ? _mm512_maskz_loadu_ps(m, x + p * x_stride + j) : _mm512_loadu_ps(x + p * x_stride + j);
#pragma GCC unroll 8
        for (int r = 0; r < R; r++) acc[r][p] = _mm512_fmadd_ps(wv[r], xv, acc[r][p]);
    }
}

/* The tile of R rows by P positions (constants once inlined): one chain of
 * 16 lanes per output over j, folded to 4 lanes, then f32_store_tile.
 * Lane l sums the columns j = l (mod 16). GGUF aligns tensors to 32 bytes,
 * so rows often start half a cache line in, and each row load would span
 * two lines (measured: 144 against 164 GFLOP/s). When the rows and the
 * inputs both do (the run state puts its inputs where the weights are:
 * llm/model/gguf_state.c), the steps start 8 columns in, on line boundaries:
 * lane l then sums the columns j = l + 8 (mod 16) in the same order, and
 * folding lanes l and l + 8 together adds the same two sums, so the bits
 * are those of the plain order. Only in a batch: the single-position
 * matvec waits on memory, and decode measured 2.6% slower with it. */
TARGET_AVX512 static inline __attribute__((always_inline)) void tile_rp(float *out, long out_stride,
                                                                        const float *w, int n, const float *x,
                                                                        long x_stride, const int R,
                                                                        const int P, F32Prefetch *pf) {
    __m512 acc[F32_MAX_ROWS][F32_MAX_POSITIONS];
#pragma GCC unroll 8
    for (int r = 0; r < R; r++)
#pragma GCC unroll 8
        for (int p = 0; p < P; p++) acc[r][p] = _mm512_setzero_ps();
    const char *next = pf->next;
    long lines = pf->lines;
    int j = 0;
    if (P > 1 && ((uintptr_t)w & 63) == 32 && ((uintptr_t)x & 63) == 32 && n >= 16) {
        tile_step(acc, w, n, x, x_stride, -8, R, P, 0xff00, 1);
        j = 8;
    }
    for (; j + 16 <= n; j += 16) {
        f32_prefetch_step(&next, &lines);
        tile_step(acc, w, n, x, x_stride, j, R, P, 0xffff, 0);
    }
    if (j < n) tile_step(acc, w, n, x, x_stride, j, R, P, first_lanes(n - j), 1);
    pf->next = next;
    pf->lines = lines;
    __m128 sums[F32_MAX_ROWS][F32_MAX_POSITIONS];
#pragma GCC unroll 8
    for (int r = 0; r < R; r++)
#pragma GCC unroll 8
        for (int p = 0; p < P; p++) {
            __m256 s = fold_ps(acc[r][p]);
            sums[r][p] = _mm_add_ps(_mm256_castps256_ps128(s), _mm256_extractf128_ps(s, 1));
        }
    f32_store_tile(out, out_stride, sums, NULL, R, P);
}

/* A tile of up to GEMM_ROWS x GEMM_POSITIONS (or MATVEC_ROWS x 1). */
TARGET_AVX512 static void tile(float *out, long out_stride, const float *w, int n, const float *x,
                               long x_stride, int rows, int positions, F32Prefetch *pf) {
    f32_tile(out, out_stride, w, n, x, x_stride, rows, positions, pf, GEMM_ROWS, MATVEC_ROWS, tile_rp);
}

TARGET_AVX512 void kernels_matmul_avx512(float *out, const float *x, const float *w, int n, int d) {
    f32_gemm(out, d, x, n, 1, w, n, d, MATVEC_ROWS, 1, tile);
}

TARGET_AVX512 void kernels_matmul_batch_avx512(float *out, int out_stride, const float *x, int x_stride,
                                               int batch, const float *w, int n, int d) {
    f32_gemm(out, out_stride, x, x_stride, batch, w, n, d, GEMM_ROWS, GEMM_POSITIONS, tile);
}
