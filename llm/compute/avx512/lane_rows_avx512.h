/* lane_rows_avx512.h - internal: the AVX-512 VNNI Q8_0 and Q4_0 kernels
 * (q8_0_avx512.c, q4_0_avx512.c) with one weight row per 32-bit lane.
 *
 * Each row's block sum is an exact integer, s = sum (w - offset) * x, made
 * into a float once per block: acc = fma(float(s), d_w * d_x, acc), one
 * accumulator per row, no lanes left to add at the end. Any order of the
 * integer work gives the same s, so the matvec (rows in pairs or quads per
 * register, lanes reduced by shuffles) and the gemm (16 rows transposed,
 * one per lane, positions broadcast) give the same bits.
 *
 * Per 64 multiply-adds the gemm spends one vpdpbusd and, per block of a
 * position, three float ops for eight of them; the activations are read
 * straight from their Q8A blocks as 32-bit broadcasts. */
#ifndef LLM_SIMD_LANE_ROWS_AVX512_H
#define LLM_SIMD_LANE_ROWS_AVX512_H

#include "llm/compute/avx512/avx512_ops.h"
#include "llm/compute/avx512/ggml_avx512.h"

/* 1.5 * 2^23: an integer s with |s| < 2^22 added to its bits is the float
 * 1.5 * 2^23 + s, so subtracting it again gives float(s) exactly (a
 * float subtraction, which any port runs, instead of a conversion). */
#define LANE_MAGIC 0x4B400000
#define LANE_MAGIC_F 12582912.0f

static inline int32_t load_i32(const void *p) {
    int32_t v;
    __builtin_memcpy(&v, p, 4);
    return v;
}

/* Sixteen rows' block, transposed for the gemm: lane r of w[c] holds the
 * four unsigned weight bytes of row r that meet activation bytes 4c..4c+3;
 * lane r of d is row r's scale. */
typedef struct {
    __m512i w[8];
    __m512 d;
} LaneBlock;

/* A type's transposition of block b of the rows at `rows` + offs[r]. */
typedef void (*lane_block_fn)(LaneBlock *out, const uint8_t *rows, __m512i offs, int b);

/* Row r's fp16 scale at byte 0 of its block (the lane reads two more bytes
 * of the same block). */
TARGET_AVX512_VNNI static inline __m512 lane_scales(const uint8_t *block0, __m512i offs) {
    __m512i h = _mm512_i32gather_epi32(offs, block0, 1);
    return _mm512_cvtph_ps(_mm512_cvtepi32_epi16(h));
}

/* Positions per pass of the gemm: their accumulators stay in L1. */
#define LANE_GEMM_POSITIONS 64
/* The gemm asks for the sixteen rows' block this many blocks ahead into L1:
 * the gathers touch sixteen rows at once, which the hardware prefetchers
 * do not follow in time. */
#define LANE_GEMM_AHEAD 4

/* acc[g] plus one activation block's products with group g's block, for
 * G groups of sixteen rows sharing the activation broadcasts: the integer
 * sum starts at the magic number less the correction. */
TARGET_AVX512_VNNI static inline __attribute__((always_inline)) void
lane_position(const LaneBlock *w, int G, const BlockQ8A *a, int offset, __m512 *acc) {
    __m512i s[2];
    s[0] = s[1] = _mm512_set1_epi32(LANE_MAGIC - offset * a->qsum);
#pragma GCC unroll 8
    for (int c = 0; c < 8; c++) {
        __m512i x = _mm512_set1_epi32(load_i32(a->qs + 4 * c));
#pragma GCC unroll 2
        for (int g = 0; g < G; g++) s[g] = _mm512_dpbusd_epi32(s[g], w[g].w[c], x);
    }
    __m512 dx = _mm512_set1_ps(a->d);
#pragma GCC unroll 2
    for (int g = 0; g < G; g++) {
        __m512 f = _mm512_sub_ps(_mm512_castsi512_ps(s[g]), _mm512_set1_ps(LANE_MAGIC_F));
        acc[g] = _mm512_fmadd_ps(f, _mm512_mul_ps(w[g].d, dx), acc[g]);
    }
}

/* G groups of sixteen rows from p (lanes past `count` redo the last row
 * and are not stored) for every position. Block by block, the transposed
 * weights stay in registers while every position of the pass meets them. */
TARGET_AVX512_VNNI static inline __attribute__((always_inline)) void
lane_gemm_groups(lane_block_fn transpose, size_t block_bytes, int offset, int G, float *out,
                 size_t out_stride, const uint8_t *p, size_t row_bytes, const void *act, size_t act_stride,
                 int blocks, int count, int batch) {
    const __m512i lane = _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
    __m512 acc[LANE_GEMM_POSITIONS][2];
    __m512i offs[2];
#pragma GCC unroll 2
    for (int g = 0; g < G; g++)
        offs[g] = _mm512_mullo_epi32(
            _mm512_min_epi32(_mm512_add_epi32(lane, _mm512_set1_epi32(16 * g)), _mm512_set1_epi32(count - 1)),
            _mm512_set1_epi32((int)row_bytes));
    for (int q0 = 0; q0 < batch; q0 += LANE_GEMM_POSITIONS) {
        int P = batch - q0 < LANE_GEMM_POSITIONS ? batch - q0 : LANE_GEMM_POSITIONS;
        const uint8_t *a0 = (const uint8_t *)act + (size_t)q0 * act_stride;
        for (int k = 0; k < P; k++) acc[k][0] = acc[k][1] = _mm512_setzero_ps();
        for (int b = 0; b < blocks; b++) {
            LaneBlock w[2];
            for (int r = 0; r < 16 * G; r++)
                _mm_prefetch((const char *)p + (size_t)r * row_bytes +
                                 (size_t)(b + LANE_GEMM_AHEAD) * block_bytes,
                             _MM_HINT_T0);
#pragma GCC unroll 2
            for (int g = 0; g < G; g++) transpose(&w[g], p, offs[g], b);
            int k = 0;
            for (; k + 2 <= P; k += 2)
#pragma GCC unroll 2
                for (int j = 0; j < 2; j++)
                    lane_position(w, G, (const BlockQ8A *)(a0 + (size_t)(k + j) * act_stride) + b, offset,
                                  acc[k + j]);
            for (; k < P; k++)
                lane_position(w, G, (const BlockQ8A *)(a0 + (size_t)k * act_stride) + b, offset, acc[k]);
        }
        for (int g = 0; g < G; g++) {
            __mmask16 keep = first_lanes(count - 16 * g);
            for (int k = 0; k < P; k++)
                _mm512_mask_storeu_ps(out + (size_t)(q0 + k) * out_stride + 16 * g, keep, acc[k][g]);
        }
    }
}

/* Rows 0..count-1 for every position: 32 at a time (two groups share the
 * activation loads), a last 16 or fewer as one group. */
TARGET_AVX512_VNNI static inline __attribute__((always_inline)) void
lane_gemm(lane_block_fn transpose, size_t block_bytes, int offset, float *out, size_t out_stride,
          const uint8_t *rows, size_t row_bytes, const void *act, size_t act_stride, int blocks, int count,
          int batch) {
    int i = 0;
    for (; count - i > 16; i += 32)
        lane_gemm_groups(transpose, block_bytes, offset, 2, out + i, out_stride, rows + (size_t)i * row_bytes,
                         row_bytes, act, act_stride, blocks, count - i, batch);
    if (i < count)
        lane_gemm_groups(transpose, block_bytes, offset, 1, out + i, out_stride, rows + (size_t)i * row_bytes,
                         row_bytes, act, act_stride, blocks, count - i, batch);
}

/* ---- the matvec: lanes reduced by shuffles ---- */

/* a + b lane pairs: in each 128-bit lane, (a0+a2, b0+b2, a1+a3, b1+b3). */
TARGET_AVX512_VNNI static inline __m512i lane_sum_pairs32(__m512i a, __m512i b) {
    return _mm512_add_epi32(_mm512_unpacklo_epi32(a, b), _mm512_unpackhi_epi32(a, b));
}

/* In each 128-bit lane, (a0+a2, a1+a3, b0+b2, b1+b3) in 32-bit pairs. */
TARGET_AVX512_VNNI static inline __m512i lane_sum_pairs64(__m512i a, __m512i b) {
    return _mm512_add_epi32(_mm512_unpacklo_epi64(a, b), _mm512_unpackhi_epi64(a, b));
}

/* 128-bit lanes 0+1 and 2+3 of a, then of b. */
TARGET_AVX512_VNNI static inline __m512i lane_sum_halves(__m512i a, __m512i b) {
    return _mm512_add_epi32(_mm512_shuffle_i64x2(a, b, 0x88), _mm512_shuffle_i64x2(a, b, 0xdd));
}

/* Prefetch distance of the matvec, in rows (L2, as ggml_avx512.h). */
#define LANE_AHEAD_ROWS 32

/* A type's sixteen rows at p, rb apart, into out[0..15], prefetching the
 * group at `ahead`. */
typedef void (*lane_sixteen_fn)(float *out, const uint8_t *p, size_t rb, const void *act, int blocks,
                                const uint8_t *ahead);

/* acc's lanes put in row order (lane `from[r]` holds row r): out[0..15]. */
TARGET_AVX512_VNNI static inline void lane_store_rows(float *out, __m512 acc, __m512i from) {
    _mm512_storeu_ps(out, _mm512_permutexvar_ps(from, acc));
}

/* Rows in groups of sixteen; a short tail is the last sixteen rows again
 * (each row's result is the same in any group), or, with fewer than sixteen
 * in all, the gemm for one position (the same bits). */
static inline __attribute__((always_inline)) void lane_matmul_rows(lane_sixteen_fn sixteen, ggml_gemm_fn gemm,
                                                                   float *out, const uint8_t *rows,
                                                                   size_t row_bytes, const void *act, int n,
                                                                   int blocks, int count) {
    int i = 0;
    for (; i + 16 <= count; i += 16)
        sixteen(out + i, rows + (size_t)i * row_bytes, row_bytes, act, blocks,
                rows + (size_t)(i + LANE_AHEAD_ROWS) * row_bytes);
    if (i == count) return;
    if (count >= 16) {
        float last[16];
        sixteen(last, rows + (size_t)(count - 16) * row_bytes, row_bytes, act, blocks, rows);
        for (; i < count; i++) out[i] = last[i - (count - 16)];
        return;
    }
    gemm(out, 0, rows, row_bytes, act, 0, n, count, 1);
}

#endif
