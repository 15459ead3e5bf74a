/* half_rows.h - internal: the loops of the F16 and BF16 kernels
 * (f16_bf16_sse2.c, _avx2.c, _avx512.c) around a set's tile, which
 * multiplies R rows by P positions with fp32 activations and gives every
 * (row, position) its own accumulator, so a row's result is the same bits
 * in any tile: the decode matmul and the prefill gemm below agree exactly.
 * Inlined into each kernel with the set's tile and sizes as constants. */
#ifndef LLM_SIMD_HALF_ROWS_H
#define LLM_SIMD_HALF_ROWS_H

#include <stddef.h>
#include <stdint.h>

/* R rows (rb bytes apart) by P positions (xs bytes apart) into
 * out[p * out_stride + r], prefetching the R rows at `ahead` (NULL: none)
 * as it goes. */
typedef void (*half_tile_fn)(float *out, size_t out_stride, const uint8_t *w, size_t rb, const uint8_t *x,
                             size_t xs, int n, int R, int P, const uint8_t *ahead);

/* Decode: `rows` rows a pass with the rows `ahead_rows` on prefetched (past
 * the last row is harmless: prefetches never fault), the rest one by one. */
static inline __attribute__((always_inline)) void half_matmul_rows(half_tile_fn tile, int rows_per_pass,
                                                                   int ahead_rows, float *out,
                                                                   const uint8_t *rows, size_t row_bytes,
                                                                   const void *x, int n, int count) {
    int i = 0;
    for (; i + rows_per_pass <= count; i += rows_per_pass)
        tile(out + i, 0, rows + (size_t)i * row_bytes, row_bytes, x, 0, n, rows_per_pass, 1,
             rows + (size_t)(i + ahead_rows) * row_bytes);
    for (; i < count; i++) tile(out + i, 0, rows + (size_t)i * row_bytes, row_bytes, x, 0, n, 1, 1, NULL);
}

/* The rows of one group of P positions: R at a time, then one by one. */
static inline __attribute__((always_inline)) void half_gemm_group(half_tile_fn tile, int R, int P, float *out,
                                                                  size_t out_stride, const uint8_t *rows,
                                                                  size_t row_bytes, const uint8_t *x,
                                                                  size_t xs, int n, int count) {
    int i = 0;
    for (; i + R <= count; i += R)
        tile(out + i, out_stride, rows + (size_t)i * row_bytes, row_bytes, x, xs, n, R, P, NULL);
    for (; i < count; i++)
        tile(out + i, out_stride, rows + (size_t)i * row_bytes, row_bytes, x, xs, n, 1, P, NULL);
}

/* Prefill: positions in groups of P (then one by one), each group over
 * every row, so its activations stay in L1 while the rows (a tile of
 * gguf_matmul.c's, sized for L2) go by. */
static inline __attribute__((always_inline)) void
half_gemm_rows(half_tile_fn tile, int R, int P, float *out, size_t out_stride, const uint8_t *rows,
               size_t row_bytes, const void *act, size_t act_stride, int n, int count, int batch) {
    const uint8_t *x = act;
    int p = 0;
    for (; p + P <= batch; p += P)
        half_gemm_group(tile, R, P, out + (size_t)p * out_stride, out_stride, rows, row_bytes,
                        x + (size_t)p * act_stride, act_stride, n, count);
    for (; p < batch; p++)
        half_gemm_group(tile, R, 1, out + (size_t)p * out_stride, out_stride, rows, row_bytes,
                        x + (size_t)p * act_stride, act_stride, n, count);
}

#endif
