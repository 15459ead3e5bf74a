/* kquant_avx2.h - internal: the AVX2 loop of the k-quant matmuls and
 * gemms (q4_k_avx2.c): two rows per register, one per 128-bit lane, so a
 * block's float work (scales, mins, accumulation) serves both rows in one
 * instruction, and a prefill tile decodes a block's weights and scales
 * once for its positions. Every lane's arithmetic depends only on its own
 * row, and the matvec runs the gemm's block step with one position, so a
 * row's result is the same bits whichever rows and positions it is
 * computed with. */
#ifndef LLM_SIMD_KQUANT_AVX2_H
#define LLM_SIMD_KQUANT_AVX2_H

#include "llm/compute/avx2/ggml_avx2.h"

/* Positions per prefill tile: four measured 10-20% faster than two (110M
 * Q4_K_M prefill), though they spill a few registers. */
#define KQ2_POSITIONS 4

/* The 16 bytes at p of two rows rb apart, row r in lane r. */
TARGET_AVX2 static inline __m256i row_bytes2(const uint8_t *p, size_t rb) {
    return avx2_join(load16(p), load16(p + rb));
}

/* 16 bytes at p in both lanes. */
TARGET_AVX2 static inline __m256i bcast16_avx2(const int8_t *p) {
    return _mm256_broadcastsi128_si256(load16(p));
}

/* lane_byte_words in both lanes. */
TARGET_AVX2 static inline __m256i byte_words_avx2(int first, int run) {
    return _mm256_broadcastsi128_si256(lane_byte_words(first, run));
}

/* A type's block step: one block of the two rows at q (rb apart) by P
 * positions (a[k]: position k's activation block) into acc[k]. */
typedef void (*kq2_block_fn)(__m256 acc[], const uint8_t *q, size_t rb, const BlockQ8K *const a[], int P);

/* Two rows (p, rb apart; rb 0: one row twice, only lane 0 stored when
 * rows is 1) by P positions: out[k * out_stride + r]. */
TARGET_AVX2 static inline __attribute__((always_inline)) void
kq2_tile(float *out, size_t out_stride, const uint8_t *p, size_t rb, int rows, const uint8_t *act,
         size_t act_stride, int blocks, int P, size_t block_bytes, kq2_block_fn block) {
    __m256 acc[KQ2_POSITIONS];
#pragma GCC unroll 4
    for (int k = 0; k < P; k++) acc[k] = _mm256_setzero_ps();
    for (int b = 0; b < blocks; b++, p += block_bytes) {
        const BlockQ8K *a[KQ2_POSITIONS];
#pragma GCC unroll 4
        for (int k = 0; k < P; k++) a[k] = (const BlockQ8K *)(act + (size_t)k * act_stride) + b;
        block(acc, p, rb, a, P);
    }
#pragma GCC unroll 4
    for (int k = 0; k < P; k++) {
        out[(size_t)k * out_stride] = sse2_hsum_ps(_mm256_castps256_ps128(acc[k]));
        if (rows == 2) out[(size_t)k * out_stride + 1] = sse2_hsum_ps(_mm256_extractf128_ps(acc[k], 1));
    }
}

/* The matvec: rows in pairs (a last odd row as a pair with itself), the
 * pair after next prefetched (the weights stream from memory once per
 * token). Prefetches past the last row are harmless. */
TARGET_AVX2 static inline __attribute__((always_inline)) void kq2_matmul(float *out, const uint8_t *rows,
                                                                         size_t row_bytes, const void *act,
                                                                         int n, int count, size_t block_bytes,
                                                                         kq2_block_fn block) {
    int blocks = n / QK_K;
    for (int i = 0; i < count; i += 2) {
        const uint8_t *w = rows + (size_t)i * row_bytes, *ahead = w + 4 * row_bytes;
        for (size_t line = 0; line < 2 * row_bytes; line += 64)
            _mm_prefetch((const char *)ahead + line, _MM_HINT_T0);
        int pair = i + 1 < count;
        kq2_tile(out + i, 0, w, pair ? row_bytes : 0, pair ? 2 : 1, act, 0, blocks, 1, block_bytes, block);
    }
}

/* The gemm: row pairs by tiles of KQ2_POSITIONS positions, then single
 * positions. */
TARGET_AVX2 static inline __attribute__((always_inline)) void
kq2_gemm(float *out, size_t out_stride, const uint8_t *rows, size_t row_bytes, const void *act,
         size_t act_stride, int n, int count, int batch, size_t block_bytes, kq2_block_fn block) {
    int blocks = n / QK_K;
    for (int i = 0; i < count; i += 2) {
        const uint8_t *w = rows + (size_t)i * row_bytes;
        int pair = i + 1 < count;
        size_t rb = pair ? row_bytes : 0;
        int q = 0;
        for (; q + KQ2_POSITIONS <= batch; q += KQ2_POSITIONS)
            kq2_tile(out + (size_t)q * out_stride + i, out_stride, w, rb, pair ? 2 : 1,
                     (const uint8_t *)act + (size_t)q * act_stride, act_stride, blocks, KQ2_POSITIONS,
                     block_bytes, block);
        for (; q < batch; q++)
            kq2_tile(out + (size_t)q * out_stride + i, out_stride, w, rb, pair ? 2 : 1,
                     (const uint8_t *)act + (size_t)q * act_stride, act_stride, blocks, 1, block_bytes,
                     block);
    }
}

#endif
