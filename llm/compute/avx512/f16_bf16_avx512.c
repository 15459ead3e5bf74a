/* f16_bf16_avx512.c - F16 and BF16 rows with fp32 activations, AVX-512:
 * the halves are widened in registers (vcvtph2ps for F16, a zero-extend
 * and a shift into the top of an fp32 for BF16: no AVX512_BF16 needed),
 * never into a dequantised copy.
 *
 * Every (row, position) is one chain of FMAs on its own 16-lane
 * accumulator, 16 values a step, the last n % 16 through masked loads
 * (zeros elsewhere), then one fixed horizontal sum. So a row's result is
 * the same bits whichever rows and positions it is computed beside: the
 * decode matmul runs eight rows by one position (eight chains hide the FMA
 * latency; the group 24 rows on is prefetched), the prefill gemm four rows
 * by six positions, converting each weight vector once for the six. Built
 * with a target attribute; ggml_dispatch.c offers it with the AVX-512
 * kernel set (which needs F, BW, VL and VNNI). */
#include "llm/compute/avx512/avx512_ops.h"
#include "llm/compute/avx512/ggml_avx512.h"
#include "llm/compute/half_rows.h"

/* Rows per tile: decode (one position), prefill (GEMM_POSITIONS each). */
#define DECODE_ROWS 8
#define GEMM_ROWS 4
#define GEMM_POSITIONS 6

/* Sixteen halves, or the first `lanes` of them (the rest zero). */
typedef __m512 (*widen16_fn)(const uint16_t *w, __mmask16 lanes);

TARGET_AVX512 STEP __m512 f16_16(const uint16_t *w, __mmask16 lanes) {
    if (lanes == 0xffff) return _mm512_cvtph_ps(load32(w));
    return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(lanes, w));
}

/* bf16 is the top half of an fp32: put it there. */
TARGET_AVX512 STEP __m512 bf16_16(const uint16_t *w, __mmask16 lanes) {
    __m256i h = lanes == 0xffff ? load32(w) : _mm256_maskz_loadu_epi16(lanes, w);
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
}

/* R rows (rb bytes apart) by P positions (xs bytes apart) into
 * out[p * out_stride + r]; with `ahead`, the R rows at it are prefetched
 * into L2 as the tile goes (R * 32 bytes of them a step). R and P are
 * constants where it is inlined. */
TARGET_AVX512 static inline __attribute__((always_inline)) void
half_tile(float *out, size_t out_stride, const uint8_t *w, size_t rb, const uint8_t *x, size_t xs, int n,
          int R, int P, const uint8_t *ahead, widen16_fn widen) {
    __m512 acc[DECODE_ROWS][GEMM_POSITIONS]; /* R <= DECODE_ROWS */
#pragma GCC unroll 8
    for (int r = 0; r < R; r++)
#pragma GCC unroll 6
        for (int p = 0; p < P; p++) acc[r][p] = _mm512_setzero_ps();
    int k = 0;
    for (; k + 16 <= n; k += 16) {
        if (ahead)
            for (int line = 0; line < R * 32; line += 64)
                _mm_prefetch((const char *)ahead + (size_t)k / 16 * (size_t)(R * 32) + line, PREFETCH_HINT);
        __m512 wv[DECODE_ROWS];
#pragma GCC unroll 8
        for (int r = 0; r < R; r++) wv[r] = widen((const uint16_t *)(w + r * rb) + k, 0xffff);
#pragma GCC unroll 6
        for (int p = 0; p < P; p++) {
            __m512 xv = _mm512_loadu_ps((const float *)(x + p * xs) + k);
#pragma GCC unroll 8
            for (int r = 0; r < R; r++) acc[r][p] = _mm512_fmadd_ps(wv[r], xv, acc[r][p]);
        }
    }
    if (k < n) {
        __mmask16 lanes = first_lanes(n - k);
#pragma GCC unroll 8
        for (int r = 0; r < R; r++) {
            __m512 wv = widen((const uint16_t *)(w + r * rb) + k, lanes);
#pragma GCC unroll 6
            for (int p = 0; p < P; p++)
                acc[r][p] = _mm512_fmadd_ps(wv, _mm512_maskz_loadu_ps(lanes, (const float *)(x + p * xs) + k),
                                            acc[r][p]);
        }
    }
#pragma GCC unroll 8
    for (int r = 0; r < R; r++)
#pragma GCC unroll 6
        for (int p = 0; p < P; p++) out[p * out_stride + r] = _mm512_reduce_add_ps(acc[r][p]);
}

/* The tile for each type. */
TARGET_AVX512 STEP void tile_f16(float *out, size_t out_stride, const uint8_t *w, size_t rb, const uint8_t *x,
                                 size_t xs, int n, int R, int P, const uint8_t *ahead) {
    half_tile(out, out_stride, w, rb, x, xs, n, R, P, ahead, f16_16);
}

TARGET_AVX512 STEP void tile_bf16(float *out, size_t out_stride, const uint8_t *w, size_t rb,
                                  const uint8_t *x, size_t xs, int n, int R, int P, const uint8_t *ahead) {
    half_tile(out, out_stride, w, rb, x, xs, n, R, P, ahead, bf16_16);
}

TARGET_AVX512 static void matmul_f16(float *out, const uint8_t *rows, size_t row_bytes, const void *act,
                                     int n, int count) {
    half_matmul_rows(tile_f16, DECODE_ROWS, AHEAD_ROWS, out, rows, row_bytes, act, n, count);
}

TARGET_AVX512 static void matmul_bf16(float *out, const uint8_t *rows, size_t row_bytes, const void *act,
                                      int n, int count) {
    half_matmul_rows(tile_bf16, DECODE_ROWS, AHEAD_ROWS, out, rows, row_bytes, act, n, count);
}

static float dot_f16(const void *row, const void *act, int n) {
    return dot_by_matmul(matmul_f16, row, act, n);
}

static float dot_bf16(const void *row, const void *act, int n) {
    return dot_by_matmul(matmul_bf16, row, act, n);
}

TARGET_AVX512 static void gemm_f16(float *out, size_t out_stride, const uint8_t *rows, size_t row_bytes,
                                   const void *act, size_t act_stride, int n, int count, int batch) {
    half_gemm_rows(tile_f16, GEMM_ROWS, GEMM_POSITIONS, out, out_stride, rows, row_bytes, act, act_stride, n,
                   count, batch);
}

TARGET_AVX512 static void gemm_bf16(float *out, size_t out_stride, const uint8_t *rows, size_t row_bytes,
                                    const void *act, size_t act_stride, int n, int count, int batch) {
    half_gemm_rows(tile_bf16, GEMM_ROWS, GEMM_POSITIONS, out, out_stride, rows, row_bytes, act, act_stride, n,
                   count, batch);
}

const GgmlKernel ggml_f16_avx512 = {dot_f16, matmul_f16, gemm_f16};
const GgmlKernel ggml_bf16_avx512 = {dot_bf16, matmul_bf16, gemm_bf16};
