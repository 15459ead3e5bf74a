/* ggml_avx2.h - internal: the AVX2 helpers of the ggml dot products
 * (*_avx2.c), including the two-rows-per-pass matmul loop. */
#ifndef LLM_SIMD_GGML_AVX2_H
#define LLM_SIMD_GGML_AVX2_H

#include "llm/compute/sse2/ggml_sse2.h"

TARGET_AVX2 static inline __m256i load32(const void *p) {
    return _mm256_loadu_si256((const __m256i *)p);
}

TARGET_AVX2 static inline __m256i avx2_join(__m128i lo, __m128i hi) {
    return _mm256_inserti128_si256(_mm256_castsi128_si256(lo), hi, 1);
}

/* 32 signed bytes (a) times 32 signed bytes (b, never -128): eight int32 sums,
 * lanes 0-3 from bytes 0-15 and lanes 4-7 from bytes 16-31. */
TARGET_AVX2 static inline __m256i avx2_dot32(__m256i a, __m256i b) {
    __m256i p = _mm256_maddubs_epi16(_mm256_sign_epi8(a, a), _mm256_sign_epi8(b, a));
    return _mm256_madd_epi16(p, _mm256_set1_epi16(1));
}

/* Unsigned bytes (0..63) times signed bytes. */
TARGET_AVX2 static inline __m256i avx2_dot32_u(__m256i u, __m256i b) {
    return _mm256_madd_epi16(_mm256_maddubs_epi16(u, b), _mm256_set1_epi16(1));
}

/* Unsigned bytes u (0..63) times signed bytes x, bytes 0-15 weighted by
 * scale_lo and 16-31 by scale_hi: eight int32 sums. */
TARGET_AVX2 static inline __m256i avx2_dot32_u_scaled(__m256i u, __m256i x, int scale_lo, int scale_hi) {
    __m256i scales = avx2_join(_mm_set1_epi16((short)scale_lo), _mm_set1_epi16((short)scale_hi));
    return _mm256_madd_epi16(_mm256_maddubs_epi16(u, x), scales);
}

TARGET_AVX2 static inline int avx2_hsum_i32(__m256i v) {
    return sse2_hsum_i32(_mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1)));
}

TARGET_AVX2 static inline float avx2_hsum_ps(__m256 v) {
    return sse2_hsum_ps(_mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1)));
}

/* pshufb indexes (one 128-bit lane) making int16 words of bytes: word w
 * is byte first + w / run, zero-extended (the k-quant scale pickers). */
static inline __m128i lane_byte_words(int first, int run) {
    uint64_t lo = 0, hi = 0;
    for (int w = 0; w < 4; w++) {
        lo |= (uint64_t)(0x8000 | (first + w / run)) << (16 * w);
        hi |= (uint64_t)(0x8000 | (first + (w + 4) / run)) << (16 * w);
    }
    return _mm_set_epi64x((long long)hi, (long long)lo);
}

/* ---- two rows per pass (Q8_0, Q4_0; the k-quants: kquant_avx2.h) ----
 * A type's step adds one block's contribution to a row's float
 * accumulator (eight lanes, summed once per row). The loop runs the same
 * steps in the same order for every row, whether it is computed alone or
 * beside another, so results do not depend on how rows are grouped or
 * split over threads. */
typedef __m256 (*avx2_step_fn)(const void *w, const void *a, __m256 acc);

/* out[i] = row i . act for count consecutive rows of blocks of
 * block_bytes (act: blocks of act_bytes, each covering elems values): two
 * rows per pass share the activation loads, and the pair after next is
 * prefetched (the weights stream from memory once per token, too fast for
 * the hardware prefetcher alone). Prefetches past the last row are
 * harmless. Inlined for each type: step is a constant. */
TARGET_AVX2 static inline __attribute__((always_inline)) void
avx2_matmul_rows(float *out, const uint8_t *rows, size_t row_bytes, const void *act, int n, int count,
                 size_t block_bytes, size_t act_bytes, int elems, avx2_step_fn step) {
    const uint8_t *a = act;
    int blocks = n / elems, i = 0;
    for (; i + 2 <= count; i += 2) {
        const uint8_t *w0 = rows + (size_t)i * row_bytes, *w1 = w0 + row_bytes;
        const char *ahead = (const char *)w0 + 4 * row_bytes;
        __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
        for (int b = 0; b < blocks; b++) {
            for (size_t line = 0; line < block_bytes; line += 64) {
                _mm_prefetch(ahead + b * block_bytes + line, _MM_HINT_T0);
                _mm_prefetch(ahead + row_bytes + b * block_bytes + line, _MM_HINT_T0);
            }
            acc0 = step(w0 + b * block_bytes, a + b * act_bytes, acc0);
            acc1 = step(w1 + b * block_bytes, a + b * act_bytes, acc1);
        }
        out[i] = avx2_hsum_ps(acc0);
        out[i + 1] = avx2_hsum_ps(acc1);
    }
    for (; i < count; i++) {
        const uint8_t *w0 = rows + (size_t)i * row_bytes;
        __m256 acc0 = _mm256_setzero_ps();
        for (int b = 0; b < blocks; b++) acc0 = step(w0 + b * block_bytes, a + b * act_bytes, acc0);
        out[i] = avx2_hsum_ps(acc0);
    }
}

/* ---- rows times positions (prefill) ----
 * A tile of R rows (1 or 2) by P positions (1..4) runs the same steps as
 * avx2_matmul_rows, block by block, each (row, position) on its own
 * accumulator: each output is bit-identical to the matmul's. Within a
 * block the steps of one weight block differ only in their activations, so
 * the compiler decodes the weights once for the P positions (common
 * subexpressions: nothing is stored in between) and the activation loads
 * are shared by the R rows. */
TARGET_AVX2 static inline __attribute__((always_inline)) void
avx2_gemm_tile(float *out, size_t out_stride, const uint8_t *w, size_t row_bytes, const uint8_t *a,
               size_t act_stride, int blocks, size_t block_bytes, size_t act_bytes, int R, int P,
               avx2_step_fn step) {
    __m256 acc[2][4];
#pragma GCC unroll 2
    for (int r = 0; r < R; r++)
#pragma GCC unroll 4
        for (int p = 0; p < P; p++) acc[r][p] = _mm256_setzero_ps();
    for (int b = 0; b < blocks; b++)
#pragma GCC unroll 2
        for (int r = 0; r < R; r++)
#pragma GCC unroll 4
            for (int p = 0; p < P; p++)
                acc[r][p] =
                    step(w + r * row_bytes + b * block_bytes, a + p * act_stride + b * act_bytes, acc[r][p]);
#pragma GCC unroll 2
    for (int r = 0; r < R; r++)
#pragma GCC unroll 4
        for (int p = 0; p < P; p++) out[p * out_stride + r] = avx2_hsum_ps(acc[r][p]);
}

/* R rows (w) by every position: four positions at a time, then one. */
TARGET_AVX2 static inline __attribute__((always_inline)) void
avx2_gemm_positions(float *out, size_t out_stride, const uint8_t *w, size_t row_bytes, const uint8_t *act,
                    size_t act_stride, int blocks, int batch, size_t block_bytes, size_t act_bytes, int R,
                    avx2_step_fn step) {
    int p = 0;
    for (; p + 4 <= batch; p += 4)
        avx2_gemm_tile(out + (size_t)p * out_stride, out_stride, w, row_bytes, act + (size_t)p * act_stride,
                       act_stride, blocks, block_bytes, act_bytes, R, 4, step);
    for (; p < batch; p++)
        avx2_gemm_tile(out + (size_t)p * out_stride, out_stride, w, row_bytes, act + (size_t)p * act_stride,
                       act_stride, blocks, block_bytes, act_bytes, R, 1, step);
}

/* The tiles of rows 0..count-1 by positions 0..batch-1: two rows at a time
 * (a last odd row alone). Inlined for each type: step is a constant. */
TARGET_AVX2 static inline __attribute__((always_inline)) void
avx2_gemm_rows(float *out, size_t out_stride, const uint8_t *rows, size_t row_bytes, const void *act,
               size_t act_stride, int n, int count, int batch, size_t block_bytes, size_t act_bytes,
               int elems, avx2_step_fn step) {
    int blocks = n / elems, i = 0;
    for (; i + 2 <= count; i += 2)
        avx2_gemm_positions(out + i, out_stride, rows + (size_t)i * row_bytes, row_bytes, act, act_stride,
                            blocks, batch, block_bytes, act_bytes, 2, step);
    if (i < count)
        avx2_gemm_positions(out + i, out_stride, rows + (size_t)i * row_bytes, row_bytes, act, act_stride,
                            blocks, batch, block_bytes, act_bytes, 1, step);
}

#endif
