/* f16_bf16_avx2.c - F16 and BF16 rows with fp32 activations, AVX2 (F16C
 * converts the halves, BF16 is zero-extended and shifted into the top of
 * an fp32): widened in registers, never into a dequantised copy.
 *
 * Every (row, position) is one chain of FMAs on its own 8-lane
 * accumulator, 8 values a step; the last n % 8 go through the same step
 * with zeros after them (the halves copied into a padded buffer, the
 * activations loaded under a mask); then one fixed horizontal sum. So a
 * row's result is the same bits whichever rows and positions it is computed
 * beside: the decode matmul runs four rows by one position (the rows
 * AHEAD_ROWS on prefetched), the prefill gemm two rows by six positions,
 * converting each weight vector once for the six. */
#include "llm/compute/avx2/ggml_avx2.h"
#include "llm/compute/half_rows.h"

#define DECODE_ROWS 4
#define GEMM_ROWS 2
#define GEMM_POSITIONS 6
#define AHEAD_ROWS 16

typedef __m256 (*widen8_fn)(const uint16_t *w);

TARGET_AVX2 STEP __m256 f16_8(const uint16_t *w) {
    return _mm256_cvtph_ps(load16(w));
}

/* bf16 is the top half of an fp32: put it there. */
TARGET_AVX2 STEP __m256 bf16_8(const uint16_t *w) {
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(load16(w)), 16));
}

/* R rows (rb bytes apart) by P positions (xs bytes apart) into
 * out[p * out_stride + r]; with `ahead`, the R rows at it are prefetched
 * as the tile goes (R * 16 bytes of them a step). R and P are constants
 * where it is inlined. */
TARGET_AVX2 static inline __attribute__((always_inline)) void
half_tile(float *out, size_t out_stride, const uint8_t *w, size_t rb, const uint8_t *x, size_t xs, int n,
          int R, int P, const uint8_t *ahead, widen8_fn widen) {
    __m256 acc[DECODE_ROWS][GEMM_POSITIONS];
#pragma GCC unroll 4
    for (int r = 0; r < R; r++)
#pragma GCC unroll 6
        for (int p = 0; p < P; p++) acc[r][p] = _mm256_setzero_ps();
    int k = 0;
    for (; k + 8 <= n; k += 8) {
        if (ahead && k % 32 == 0)
            for (int line = 0; line < R * 64; line += 64)
                _mm_prefetch((const char *)ahead + (size_t)k / 32 * (size_t)(R * 64) + line, _MM_HINT_T0);
        __m256 wv[DECODE_ROWS];
#pragma GCC unroll 4
        for (int r = 0; r < R; r++) wv[r] = widen((const uint16_t *)(w + r * rb) + k);
#pragma GCC unroll 6
        for (int p = 0; p < P; p++) {
            __m256 xv = _mm256_loadu_ps((const float *)(x + p * xs) + k);
#pragma GCC unroll 4
            for (int r = 0; r < R; r++) acc[r][p] = _mm256_fmadd_ps(wv[r], xv, acc[r][p]);
        }
    }
    if (k < n) {
        __m256i lanes =
            _mm256_cmpgt_epi32(_mm256_set1_epi32(n - k), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
#pragma GCC unroll 4
        for (int r = 0; r < R; r++) {
            uint16_t tail[8] = {0};
            __builtin_memcpy(tail, (const uint16_t *)(w + r * rb) + k, (size_t)(n - k) * 2);
            __m256 wv = widen(tail);
#pragma GCC unroll 6
            for (int p = 0; p < P; p++)
                acc[r][p] = _mm256_fmadd_ps(wv, _mm256_maskload_ps((const float *)(x + p * xs) + k, lanes),
                                            acc[r][p]);
        }
    }
#pragma GCC unroll 4
    for (int r = 0; r < R; r++)
#pragma GCC unroll 6
        for (int p = 0; p < P; p++) out[p * out_stride + r] = avx2_hsum_ps(acc[r][p]);
}

/* The tile for each type. */
TARGET_AVX2 STEP void tile_f16(float *out, size_t out_stride, const uint8_t *w, size_t rb, const uint8_t *x,
                               size_t xs, int n, int R, int P, const uint8_t *ahead) {
    half_tile(out, out_stride, w, rb, x, xs, n, R, P, ahead, f16_8);
}

TARGET_AVX2 STEP void tile_bf16(float *out, size_t out_stride, const uint8_t *w, size_t rb, const uint8_t *x,
                                size_t xs, int n, int R, int P, const uint8_t *ahead) {
    half_tile(out, out_stride, w, rb, x, xs, n, R, P, ahead, bf16_8);
}

TARGET_AVX2 static void matmul_f16(float *out, const uint8_t *rows, size_t row_bytes, const void *act, int n,
                                   int count) {
    half_matmul_rows(tile_f16, DECODE_ROWS, AHEAD_ROWS, out, rows, row_bytes, act, n, count);
}

TARGET_AVX2 static void matmul_bf16(float *out, const uint8_t *rows, size_t row_bytes, const void *act, int n,
                                    int count) {
    half_matmul_rows(tile_bf16, DECODE_ROWS, AHEAD_ROWS, out, rows, row_bytes, act, n, count);
}

static float dot_f16(const void *row, const void *act, int n) {
    return dot_by_matmul(matmul_f16, row, act, n);
}

static float dot_bf16(const void *row, const void *act, int n) {
    return dot_by_matmul(matmul_bf16, row, act, n);
}

TARGET_AVX2 static void gemm_f16(float *out, size_t out_stride, const uint8_t *rows, size_t row_bytes,
                                 const void *act, size_t act_stride, int n, int count, int batch) {
    half_gemm_rows(tile_f16, GEMM_ROWS, GEMM_POSITIONS, out, out_stride, rows, row_bytes, act, act_stride, n,
                   count, batch);
}

TARGET_AVX2 static void gemm_bf16(float *out, size_t out_stride, const uint8_t *rows, size_t row_bytes,
                                  const void *act, size_t act_stride, int n, int count, int batch) {
    half_gemm_rows(tile_bf16, GEMM_ROWS, GEMM_POSITIONS, out, out_stride, rows, row_bytes, act, act_stride, n,
                   count, batch);
}

const GgmlKernel ggml_f16_avx2 = {dot_f16, matmul_f16, gemm_f16};
const GgmlKernel ggml_bf16_avx2 = {dot_bf16, matmul_bf16, gemm_bf16};
