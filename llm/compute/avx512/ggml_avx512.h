/* ggml_avx512.h - internal: the AVX-512 (BW, VL, VNNI) helpers of the ggml
 * matmuls (*_avx512.c). Eight rows per pass share the activation loads
 * (measured 5-8% faster than four on the 110M shape, 2 threads), addressed
 * as one pointer and the row stride (an array of row pointers spilled
 * registers). Every lane's arithmetic depends only on its own row, so a
 * row's result is the same whichever rows it is grouped with (a short tail
 * is redone as the last eight rows). Built with a target attribute (the
 * files compile with SSE2 baseline flags); ggml_dispatch.c offers them only
 * when cpu_features() has AVX-512 F/BW/VL/VNNI. */
#ifndef LLM_SIMD_GGML_AVX512_H
#define LLM_SIMD_GGML_AVX512_H

#include "llm/compute/avx2/ggml_avx2.h"

/* Prefetch distance and level: 24 rows ahead into L2 measured faster than
 * 8, 12, 16 or 48 rows, or than L1 (Q8_0 +12%, Q4_0 +5% at 2 threads). */
#define AHEAD_ROWS 24
#define PREFETCH_HINT _MM_HINT_T1

static inline short load_i16(const uint8_t *p) {
    short v;
    __builtin_memcpy(&v, p, 2);
    return v;
}

/* The 16 bytes at p of four rows rb apart, row r in 128-bit lane r. */
TARGET_AVX512_VNNI static inline __m512i row_bytes4(const uint8_t *p, size_t rb) {
    __m512i q = _mm512_castsi128_si512(load16(p));
    q = _mm512_inserti32x4(q, load16(p + rb), 1);
    q = _mm512_inserti32x4(q, load16(p + 2 * rb), 2);
    return _mm512_inserti32x4(q, load16(p + 3 * rb), 3);
}

/* Sum of the four floats of 128-bit lane r. */
TARGET_AVX512_VNNI static inline float lane_sum(__m512 v, int r) {
    __m128 h;
    switch (r) {
    case 0:
        h = _mm512_extractf32x4_ps(v, 0);
        break;
    case 1:
        h = _mm512_extractf32x4_ps(v, 1);
        break;
    case 2:
        h = _mm512_extractf32x4_ps(v, 2);
        break;
    default:
        h = _mm512_extractf32x4_ps(v, 3);
        break;
    }
    return sse2_hsum_ps(h);
}

/* Prefetch the rows AHEAD_ROWS on: a group of eight rows is one run of
 * 8 * row_bytes, and block b's share of it starts at 8 * b block bytes
 * (callers pass twice the block size: 4 * (2 * block) per block). Lines
 * are rounded up (some asked for twice, and the next share's start early),
 * which measured faster than asking for each line once. Prefetches past
 * the last row are harmless (never fault). Always inlined: a call left
 * standing has no visible effect, and the compiler would drop it. */
static inline __attribute__((always_inline)) void prefetch_group(const uint8_t *ahead, int b,
                                                                 size_t block_bytes) {
    for (size_t line = 0; line < 4 * block_bytes; line += 64)
        _mm_prefetch((const char *)ahead + 4 * (size_t)b * block_bytes + line, PREFETCH_HINT);
}

/* A type's eight rows rb apart (rb 0: one row eight times) into out[0..7],
 * prefetching the group at `ahead`. */
typedef void (*avx512_eight_fn)(float *out, const uint8_t *p, size_t rb, const void *act, int blocks,
                                const uint8_t *ahead);

/* Rows in groups of eight; a short tail is done as the last eight rows
 * again (each row's result is the same in any group), or row by row when
 * there are fewer than eight in all. */
static inline __attribute__((always_inline)) void avx512_matmul_rows(avx512_eight_fn eight, float *out,
                                                                     const uint8_t *rows, size_t row_bytes,
                                                                     const void *act, int blocks, int count) {
    int i = 0;
    for (; i + 8 <= count; i += 8)
        eight(out + i, rows + (size_t)i * row_bytes, row_bytes, act, blocks,
              rows + (size_t)(i + AHEAD_ROWS) * row_bytes);
    if (i == count) return;
    if (count >= 8) {
        float last[8];
        eight(last, rows + (size_t)(count - 8) * row_bytes, row_bytes, act, blocks, rows);
        for (; i < count; i++) out[i] = last[i - (count - 8)];
        return;
    }
    for (; i < count; i++) {
        float one[8];
        eight(one, rows + (size_t)i * row_bytes, 0, act, blocks, rows);
        out[i] = one[0];
    }
}

/* ---- rows times positions (prefill) ----
 * A type's tile: eight rows rb apart (rb 0: one row eight times) by P
 * positions act_stride bytes apart, into res[p * 8 + r]; P is 1 or the
 * type's wide tile (at most AVX512_GEMM_POSITIONS). Each (row, position) runs the eight-row
 * matmul's arithmetic on its own accumulator lanes, so results are its
 * bits; the weights are decoded once per block for the P positions. */
#define AVX512_GEMM_POSITIONS 8
typedef void (*avx512_tile_fn)(float *res, const uint8_t *p, size_t rb, const uint8_t *act, size_t act_stride,
                               int blocks, int P);

/* The eight rows at p (rb apart) for every position, in tiles of wide
 * positions and then single ones. tile is a type's always-inlined tile and
 * wide a constant, so the two calls become two unrolled copies of it. */
static inline __attribute__((always_inline)) void
avx512_gemm_eight(avx512_tile_fn tile, int wide, float *out, size_t out_stride, int first, int rows,
                  const uint8_t *p, size_t rb, const uint8_t *act, size_t act_stride, int blocks, int batch) {
    float res[AVX512_GEMM_POSITIONS * 8];
    for (int q = 0; q < batch;) {
        int P = batch - q >= wide ? wide : 1;
        if (P == wide)
            tile(res, p, rb, act + (size_t)q * act_stride, act_stride, blocks, wide);
        else
            tile(res, p, rb, act + (size_t)q * act_stride, act_stride, blocks, 1);
        for (int k = 0; k < P; k++)
            for (int r = first; r < rows; r++) out[(size_t)(q + k) * out_stride + r - first] = res[k * 8 + r];
        q += P;
    }
}

/* A type's gemm: rows in groups of eight; a short tail is the last eight
 * rows again, or row by row (rb 0) when there are fewer than eight in all,
 * as avx512_matmul_rows does. One call site, so one pair of tile copies. */
static inline __attribute__((always_inline)) void
avx512_gemm_rows(avx512_tile_fn tile, int wide, float *out, size_t out_stride, const uint8_t *rows,
                 size_t row_bytes, const void *act, size_t act_stride, int blocks, int count, int batch) {
    for (int i = 0; i < count;) {
        int first = 0, n_rows = 8, step = 8;
        const uint8_t *p = rows + (size_t)i * row_bytes;
        size_t rb = row_bytes;
        if (i + 8 > count && count >= 8) { /* the tail: the last eight rows, keeping the new ones */
            first = i - (count - 8);
            p = rows + (size_t)(count - 8) * row_bytes;
            step = count - i;
        } else if (i + 8 > count) { /* fewer than eight rows in all */
            n_rows = 1, step = 1, rb = 0;
        }
        avx512_gemm_eight(tile, wide, out + i, out_stride, first, n_rows, p, rb, act, act_stride, blocks,
                          batch);
        i += step;
    }
}

/* ---- k-quants (Q4_K, Q6_K): four rows per register ----
 * Eight rows as two groups of four, one row per 128-bit lane, so the
 * per-block float work (scales, mins, accumulation) serves four rows in
 * one instruction, and a prefill tile decodes a block's weights and scales
 * once for its P positions. Activations meet each row's 16-byte runs as
 * broadcasts. */

/* lane_byte_words in every lane. */
TARGET_AVX512_VNNI static inline __m512i byte_words(int first, int run) {
    return _mm512_broadcast_i32x4(lane_byte_words(first, run));
}

/* 16 signed bytes at p broadcast to every lane. */
TARGET_AVX512_VNNI static inline __m512i bcast16(const int8_t *p) {
    return _mm512_broadcast_i32x4(load16(p));
}

/* A type's block step: one block of the four rows at p (rb apart) by P
 * positions (a[k]: position k's activation block) into acc[k]. */
typedef void (*kq_block4_fn)(__m512 acc[], const uint8_t *p, size_t rb, const BlockQ8K *const a[], int P);

/* Eight rows (p, rb apart; rb 0: one row eight times) by P positions
 * act_stride bytes apart into res[k * 8 + r], as two groups of four one
 * after the other (a group's P accumulators and block sums fit the
 * registers); a group's rows at `ahead` are prefetched when it is not
 * NULL (the matvec streams its rows; a prefill tile's rows stay in L2). */
TARGET_AVX512_VNNI static inline __attribute__((always_inline)) void
kq_rows(float *res, const uint8_t *p, size_t rb, const uint8_t *act, size_t act_stride, int blocks, int P,
        const uint8_t *ahead, size_t block_bytes, kq_block4_fn block4) {
#pragma GCC unroll 1
    for (int g = 0; g < 2; g++) {
        const uint8_t *q = p + 4 * g * rb;
        __m512 acc[AVX512_GEMM_POSITIONS];
#pragma GCC unroll 8
        for (int k = 0; k < P; k++) acc[k] = _mm512_setzero_ps();
        for (int b = 0; b < blocks; b++, q += block_bytes) {
            if (ahead) prefetch_group(ahead + 4 * g * rb, b, block_bytes);
            const BlockQ8K *a[AVX512_GEMM_POSITIONS];
#pragma GCC unroll 8
            for (int k = 0; k < P; k++) a[k] = (const BlockQ8K *)(act + (size_t)k * act_stride) + b;
            block4(acc, q, rb, a, P);
        }
#pragma GCC unroll 8
        for (int k = 0; k < P; k++)
            for (int r = 0; r < 4; r++) res[k * 8 + 4 * g + r] = lane_sum(acc[k], r);
    }
}

#endif
