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

#include "llm/simd/ggml_avx2.h"

/* Prefetch distance and level: 24 rows ahead into L2 measured faster than
 * 8, 12, 16 or 48 rows, or than L1 (Q8_0 +12%, Q4_0 +5% at 2 threads). */
#define AHEAD_ROWS 24
#define PREFETCH_HINT _MM_HINT_T1

static inline short load_i16(const uint8_t *p) {
    short v;
    __builtin_memcpy(&v, p, 2);
    return v;
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
#define AVX512_GEMM_POSITIONS 4
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

/* ---- k-quants (Q4_K, Q6_K): one accumulator per row ---- */

/* Activations of a Q8K block rearranged to meet the weights: register k
 * holds x[start[k]..] in its low 256 bits and the 32 values `gap` further
 * on in its high ones. */
TARGET_AVX512_VNNI static inline void k_act(const int8_t *qs, const int start[4], int gap, __m512i x[4]) {
    for (int k = 0; k < 4; k++)
        x[k] =
            _mm512_inserti64x4(_mm512_castsi256_si512(load32(qs + start[k])), load32(qs + start[k] + gap), 1);
}

/* A type's block step: acc plus one block of the row at w. */
typedef __m512 (*kq_block_fn)(const void *w, const BlockQ8K *a, const __m512i x[4], const __m512i pick[4],
                              __m512 acc);

/* A type's scale selectors for its block step, made once per eight rows. */
typedef void (*kq_picks_fn)(__m512i pick[4]);

/* Eight rows of a k-quant type (blocks of block_bytes; activations laid
 * out by k_act with start and gap). */
TARGET_AVX512_VNNI static inline __attribute__((always_inline)) void
kq_eight(float *out, const uint8_t *p, size_t rb, const BlockQ8K *a, int blocks, const uint8_t *ahead,
         size_t block_bytes, const int start[4], int gap, kq_picks_fn picks, kq_block_fn block) {
    __m512i pick[4];
    picks(pick);
    __m512 acc[8];
    for (int r = 0; r < 8; r++) acc[r] = _mm512_setzero_ps();
    for (int b = 0; b < blocks; b++, p += block_bytes) {
        __m512i x[4];
        k_act(a[b].qs, start, gap, x);
        prefetch_group(ahead, b, 2 * block_bytes);
        for (int r = 0; r < 8; r++) acc[r] = block(p + r * rb, &a[b], x, pick, acc[r]);
    }
    for (int r = 0; r < 8; r++) out[r] = _mm512_reduce_add_ps(acc[r]);
}

/* Eight rows of a k-quant type by P (at most 2) positions: kq_eight's
 * steps for each position on its own accumulators (the block step's weight
 * decoding is shared by the two positions where the compiler finds it). */
TARGET_AVX512_VNNI static inline __attribute__((always_inline)) void
kq_tile(float *res, const uint8_t *p, size_t rb, const uint8_t *act, size_t act_stride, int blocks, int P,
        size_t block_bytes, const int start[4], int gap, kq_picks_fn picks, kq_block_fn block) {
    __m512i pick[4];
    picks(pick);
    __m512 acc[2][8];
    for (int k = 0; k < P; k++)
        for (int r = 0; r < 8; r++) acc[k][r] = _mm512_setzero_ps();
    for (int b = 0; b < blocks; b++, p += block_bytes) {
        __m512i x[2][4];
        const BlockQ8K *a[2];
        for (int k = 0; k < P; k++) {
            a[k] = (const BlockQ8K *)(act + (size_t)k * act_stride) + b;
            k_act(a[k]->qs, start, gap, x[k]);
        }
        for (int r = 0; r < 8; r++)
            for (int k = 0; k < P; k++) acc[k][r] = block(p + r * rb, a[k], x[k], pick, acc[k][r]);
    }
    for (int k = 0; k < P; k++)
        for (int r = 0; r < 8; r++) res[k * 8 + r] = _mm512_reduce_add_ps(acc[k][r]);
}

#endif
