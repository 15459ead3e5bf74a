/* f16_bf16_sse2.c - F16 and BF16 rows with fp32 activations, SSE2 (no
 * F16C: the halves are widened with integer operations), in registers,
 * never into a dequantised copy.
 *
 * Every (row, position) is one chain of multiply-adds on its own 4-lane
 * accumulator, 4 values a step; the last n % 4 go through the same step
 * from zero-padded copies; then one fixed horizontal sum. So a row's
 * result is the same bits whichever rows and positions it is computed
 * beside (half_rows.h): the decode matmul runs four rows by one position
 * (the rows 16 on prefetched), the prefill gemm two rows by four
 * positions, widening each weight vector once for the four. */
#include "llm/compute/sse2/ggml_sse2.h"
#include "llm/compute/half_rows.h"

#define DECODE_ROWS 4
#define GEMM_ROWS 2
#define GEMM_POSITIONS 4
#define AHEAD_ROWS 16

typedef __m128 (*widen4_fn)(const uint16_t *w);

/* Four half floats (exact for normal and subnormal values) to floats. */
STEP __m128 f16_4(const uint16_t *h) {
    __m128i raw = _mm_loadl_epi64((const __m128i *)h);
    __m128i v = _mm_unpacklo_epi16(raw, _mm_setzero_si128());
    __m128i sign = _mm_slli_epi32(_mm_and_si128(v, _mm_set1_epi32(0x8000)), 16);
    __m128i mag = _mm_slli_epi32(_mm_and_si128(v, _mm_set1_epi32(0x7fff)), 13);
    __m128 f = _mm_mul_ps(_mm_castsi128_ps(mag), _mm_castsi128_ps(_mm_set1_epi32(0x77800000))); /* 2^112 */
    return _mm_or_ps(f, _mm_castsi128_ps(sign));
}

/* bf16 is the top half of an fp32: put it there. */
STEP __m128 bf16_4(const uint16_t *h) {
    return _mm_castsi128_ps(_mm_unpacklo_epi16(_mm_setzero_si128(), _mm_loadl_epi64((const __m128i *)h)));
}

/* See half_tile_fn; R and P are constants where it is inlined. */
static inline __attribute__((always_inline)) void half_tile(float *out, size_t out_stride, const uint8_t *w,
                                                            size_t rb, const uint8_t *x, size_t xs, int n,
                                                            int R, int P, const uint8_t *ahead,
                                                            widen4_fn widen) {
    __m128 acc[DECODE_ROWS][GEMM_POSITIONS];
#pragma GCC unroll 4
    for (int r = 0; r < R; r++)
#pragma GCC unroll 4
        for (int p = 0; p < P; p++) acc[r][p] = _mm_setzero_ps();
    int k = 0;
    for (; k + 4 <= n; k += 4) {
        if (ahead && k % 32 == 0)
            for (int line = 0; line < R * 64; line += 64)
                _mm_prefetch((const char *)ahead + (size_t)k / 32 * (size_t)(R * 64) + line, _MM_HINT_T0);
        __m128 wv[DECODE_ROWS];
#pragma GCC unroll 4
        for (int r = 0; r < R; r++) wv[r] = widen((const uint16_t *)(w + r * rb) + k);
#pragma GCC unroll 4
        for (int p = 0; p < P; p++) {
            __m128 xv = _mm_loadu_ps((const float *)(x + p * xs) + k);
#pragma GCC unroll 4
            for (int r = 0; r < R; r++) acc[r][p] = _mm_add_ps(acc[r][p], _mm_mul_ps(wv[r], xv));
        }
    }
    if (k < n) {
        float xt[GEMM_POSITIONS][4] = {{0}};
        for (int p = 0; p < P; p++)
            __builtin_memcpy(xt[p], (const float *)(x + p * xs) + k, (size_t)(n - k) * 4);
#pragma GCC unroll 4
        for (int r = 0; r < R; r++) {
            uint16_t wt[4] = {0};
            __builtin_memcpy(wt, (const uint16_t *)(w + r * rb) + k, (size_t)(n - k) * 2);
            __m128 wv = widen(wt);
#pragma GCC unroll 4
            for (int p = 0; p < P; p++)
                acc[r][p] = _mm_add_ps(acc[r][p], _mm_mul_ps(wv, _mm_loadu_ps(xt[p])));
        }
    }
#pragma GCC unroll 4
    for (int r = 0; r < R; r++)
#pragma GCC unroll 4
        for (int p = 0; p < P; p++) out[p * out_stride + r] = sse2_hsum_ps(acc[r][p]);
}

/* The tile for each type. */
STEP void tile_f16(float *out, size_t out_stride, const uint8_t *w, size_t rb, const uint8_t *x, size_t xs,
                   int n, int R, int P, const uint8_t *ahead) {
    half_tile(out, out_stride, w, rb, x, xs, n, R, P, ahead, f16_4);
}

STEP void tile_bf16(float *out, size_t out_stride, const uint8_t *w, size_t rb, const uint8_t *x, size_t xs,
                    int n, int R, int P, const uint8_t *ahead) {
    half_tile(out, out_stride, w, rb, x, xs, n, R, P, ahead, bf16_4);
}

TCG_PAGE_ALIGNED static void matmul_f16(float *out, const uint8_t *rows, size_t row_bytes, const void *act,
                                        int n, int count) {
    half_matmul_rows(tile_f16, DECODE_ROWS, AHEAD_ROWS, out, rows, row_bytes, act, n, count);
}

TCG_PAGE_ALIGNED static void matmul_bf16(float *out, const uint8_t *rows, size_t row_bytes, const void *act,
                                         int n, int count) {
    half_matmul_rows(tile_bf16, DECODE_ROWS, AHEAD_ROWS, out, rows, row_bytes, act, n, count);
}

static float dot_f16(const void *row, const void *act, int n) {
    return dot_by_matmul(matmul_f16, row, act, n);
}

static float dot_bf16(const void *row, const void *act, int n) {
    return dot_by_matmul(matmul_bf16, row, act, n);
}

TCG_PAGE_ALIGNED static void gemm_f16(float *out, size_t out_stride, const uint8_t *rows, size_t row_bytes,
                                      const void *act, size_t act_stride, int n, int count, int batch) {
    half_gemm_rows(tile_f16, GEMM_ROWS, GEMM_POSITIONS, out, out_stride, rows, row_bytes, act, act_stride, n,
                   count, batch);
}

TCG_PAGE_ALIGNED static void gemm_bf16(float *out, size_t out_stride, const uint8_t *rows, size_t row_bytes,
                                       const void *act, size_t act_stride, int n, int count, int batch) {
    half_gemm_rows(tile_bf16, GEMM_ROWS, GEMM_POSITIONS, out, out_stride, rows, row_bytes, act, act_stride, n,
                   count, batch);
}

const GgmlKernel ggml_f16_sse2 = {dot_f16, matmul_f16, gemm_f16};
const GgmlKernel ggml_bf16_sse2 = {dot_bf16, matmul_bf16, gemm_bf16};
