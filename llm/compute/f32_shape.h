/* f32_shape.h - the fp32 matmul's loops, shared by every instruction set,
 * which supplies its register tile: weight rows by positions, whose k-loop
 * loads each row's and each position's vector once per step and multiplies
 * every pair of them. */
#ifndef LLM_SIMD_F32_SHAPE_H
#define LLM_SIMD_F32_SHAPE_H

#include <emmintrin.h>

/* Sums each of a0..a3 horizontally: returns (sum a0, sum a1, sum a2, sum a3). */
static inline __m128 sse2_hsum4(__m128 a0, __m128 a1, __m128 a2, __m128 a3) {
    __m128 s01 = _mm_add_ps(_mm_unpacklo_ps(a0, a1), _mm_unpackhi_ps(a0, a1));
    __m128 s23 = _mm_add_ps(_mm_unpacklo_ps(a2, a3), _mm_unpackhi_ps(a2, a3));
    return _mm_add_ps(_mm_movelh_ps(s01, s23), _mm_movehl_ps(s23, s01));
}

/* sums + (r0 . x, r1 . x, r2 . x, r3 . x) over the columns [from, n) that
 * a vector loop left, rows stride apart; scalar, added once at the end. */
static inline __m128 f32_rows4_tail(__m128 sums, const float *r0, long stride, const float *x, int from,
                                    int n) {
    if (from < n) {
        const float *r1 = r0 + stride, *r2 = r1 + stride, *r3 = r2 + stride;
        float t[4] = {0, 0, 0, 0};
        for (int j = from; j < n; j++) {
            t[0] += r0[j] * x[j];
            t[1] += r1[j] * x[j];
            t[2] += r2[j] * x[j];
            t[3] += r3[j] * x[j];
        }
        sums = _mm_add_ps(sums, _mm_loadu_ps(t));
    }
    return sums;
}

/* The largest tile any set uses: its accumulators are declared this size
 * and only the R x P used ones live in registers. */
#define F32_MAX_ROWS 8
#define F32_MAX_POSITIONS 6

/* The first count (1..4) lanes of s to out. */
static inline __attribute__((always_inline)) void f32_store_lanes(float *out, __m128 s, int count) {
    if (count == 4) {
        _mm_storeu_ps(out, s);
        return;
    }
    float t[4];
    _mm_storeu_ps(t, s);
    for (int i = 0; i < count; i++) out[i] = t[i];
}

/* A tile's outputs from its accumulators folded to four lanes each:
 * out[p * out_stride + r] = the sum of sums[r][p]'s lanes (sse2_hsum4, four
 * rows at a time), plus tails[r][p] when tails is not NULL (the SSE2 set's
 * scalar columns past the last whole vector). */
static inline __attribute__((always_inline)) void f32_store_tile(float *out, long out_stride,
                                                                 __m128 sums[][F32_MAX_POSITIONS],
                                                                 float tails[][F32_MAX_POSITIONS],
                                                                 const int R, const int P) {
    __m128 zero = _mm_setzero_ps();
#pragma GCC unroll 8
    for (int p = 0; p < P; p++)
#pragma GCC unroll 8
        for (int r = 0; r < R; r += 4) {
            int lanes = R - r < 4 ? R - r : 4;
            __m128 s = sse2_hsum4(sums[r][p], lanes > 1 ? sums[r + 1][p] : zero,
                                  lanes > 2 ? sums[r + 2][p] : zero, lanes > 3 ? sums[r + 3][p] : zero);
            if (tails)
                s = _mm_add_ps(s, _mm_setr_ps(tails[r][p], lanes > 1 ? tails[r + 1][p] : 0.0f,
                                              lanes > 2 ? tails[r + 2][p] : 0.0f,
                                              lanes > 3 ? tails[r + 3][p] : 0.0f));
            f32_store_lanes(out + p * out_stride + r, s, lanes);
        }
}

/* Lines (64 bytes) a tile prefetches into L2 for the tiles after it, one
 * per k-step from next on, while lines lasts. */
typedef struct {
    const char *next;
    long lines;
} F32Prefetch;

static inline __attribute__((always_inline)) void f32_prefetch_step(const char **next, long *lines) {
    if (*lines > 0) {
        _mm_prefetch(*next, _MM_HINT_T1);
        *next += 64;
        --*lines;
    }
}

/* out[p * out_stride + r] = row r of w (n floats each) . x + p * x_stride,
 * for r < R and p < P. Every output's arithmetic is one accumulator chain
 * over its row and the same horizontal sum whatever the tile's size, so a
 * position's result has the same bits in a batch as alone. Always inlined
 * with constant R and P, so its loops unroll over registers. */
typedef void f32_tile_rp_fn(float *out, long out_stride, const float *w, int n, const float *x, long x_stride,
                            int R, int P, F32Prefetch *pf);
/* The same for any rows x positions up to the set's tile size. */
typedef void f32_tile_fn(float *out, long out_stride, const float *w, int n, const float *x, long x_stride,
                         int rows, int positions, F32Prefetch *pf);

/* tile_rp with R rows and 1..F32_MAX_POSITIONS positions, P made a
 * constant. */
static inline __attribute__((always_inline)) void
f32_tile_positions(float *out, long out_stride, const float *w, int n, const float *x, long x_stride,
                   const int R, int positions, F32Prefetch *pf, f32_tile_rp_fn *tile_rp) {
    switch (positions) {
    case 6:
        tile_rp(out, out_stride, w, n, x, x_stride, R, 6, pf);
        break;
    case 5:
        tile_rp(out, out_stride, w, n, x, x_stride, R, 5, pf);
        break;
    case 4:
        tile_rp(out, out_stride, w, n, x, x_stride, R, 4, pf);
        break;
    case 3:
        tile_rp(out, out_stride, w, n, x, x_stride, R, 3, pf);
        break;
    case 2:
        tile_rp(out, out_stride, w, n, x, x_stride, R, 2, pf);
        break;
    default:
        tile_rp(out, out_stride, w, n, x, x_stride, R, 1, pf);
        break;
    }
}

/* A set's f32_tile_fn over its tile_rp: matvec_rows x 1 for a single
 * position, else blocks of gemm_rows x positions, leftover rows one at a
 * time. */
static inline __attribute__((always_inline)) void f32_tile(float *out, long out_stride, const float *w, int n,
                                                           const float *x, long x_stride, int rows,
                                                           int positions, F32Prefetch *pf, int gemm_rows,
                                                           int matvec_rows, f32_tile_rp_fn *tile_rp) {
    if (rows == matvec_rows && positions == 1) {
        tile_rp(out, out_stride, w, n, x, x_stride, matvec_rows, 1, pf);
        return;
    }
    for (; rows >= gemm_rows; rows -= gemm_rows, w += (long)gemm_rows * n, out += gemm_rows)
        f32_tile_positions(out, out_stride, w, n, x, x_stride, gemm_rows, positions, pf, tile_rp);
    for (; rows > 0; rows--, w += n, out++)
        f32_tile_positions(out, out_stride, w, n, x, x_stride, 1, positions, pf, tile_rp);
}

/* Weight bytes per row block: the unit of the prefetch into L2, which
 * holds it beside the next block and up to 1 MiB of the batch's inputs. */
#define F32_BLOCK_BYTES (256 * 1024)

/* out[b * out_stride + i] = row i of w (d rows of n) . x + b * x_stride.
 * Row blocks of F32_BLOCK_BYTES; in a block, each tile of rows goes over
 * every tile of positions, its rows staying in L1 (a 6-row AVX-512 tile of
 * 768 floats is 18 KiB) while the inputs stream from L2: fewer L2 loads a
 * step than rows (4 x vectors against 6 row vectors; measured: 145 ->
 * 157 GFLOP/s on the 110M shape's matmuls, batch 64). Weights come
 * from memory once: while a block is used, its tiles prefetch the next
 * block in even slices, a line per k-step (a batch makes the matmul
 * compute-bound, but one core's misses alone do not keep the memory busy;
 * the slices in one burst before each tile stalled on the memory). */
static inline __attribute__((always_inline)) void f32_gemm(float *out, long out_stride, const float *x,
                                                           long x_stride, int batch, const float *w, int n,
                                                           int d, int tile_rows, int tile_positions,
                                                           f32_tile_fn *tile) {
    long fit = F32_BLOCK_BYTES / ((long)n * (long)sizeof(float)) / tile_rows * tile_rows;
    int block = fit < tile_rows ? tile_rows : fit > d ? d : (int)fit;
    int position_tiles = (batch + tile_positions - 1) / tile_positions;
    for (int i0 = 0; i0 < d; i0 += block) {
        int i1 = d - i0 < block ? d : i0 + block;
        const char *next_end = (const char *)(w + (long)(d - i1 < block ? d : i1 + block) * n);
        F32Prefetch pf = {(const char *)(w + (long)i1 * n), 0};
        long tiles = (long)position_tiles * ((i1 - i0 + tile_rows - 1) / tile_rows);
        long lines = batch > tile_positions ? ((next_end - pf.next) / 64 + tiles - 1) / tiles : 0;
        for (int i = i0; i < i1; i += tile_rows) {
            for (int b = 0; b < batch; b += tile_positions) {
                int positions = batch - b < tile_positions ? batch - b : tile_positions;
                long left = (next_end - pf.next) / 64;
                pf.lines = lines < left ? lines : left;
                tile(out + b * out_stride + i, out_stride, w + (long)i * n, n, x + b * x_stride, x_stride,
                     i1 - i < tile_rows ? i1 - i : tile_rows, positions, &pf);
            }
        }
    }
}

#endif
