/* attention_sse2.c - SSE2 attention over one head's cached positions. */
#include "lib/string.h"
#include "llm/tensor/ggml_types.h"
#include "llm/compute/attention_group.h"
#include "llm/compute/kernel_sets.h"
#include "llm/compute/target.h"
#include "llm/compute/sse2/sse2_ops.h"

/* out[c .. c + 4*W) = sum_p att[p] * v_p[c ..], accumulated in registers
 * over every position (W = 1, 2 or 4 vectors; the compiler unrolls). */
static inline void sse2_weighted_cols(float *out, const float *att, const float *v, long stride, int n_pos,
                                      int W) {
    __m128 acc[4] = {_mm_setzero_ps(), _mm_setzero_ps(), _mm_setzero_ps(), _mm_setzero_ps()};
    for (int p = 0; p < n_pos; p++, v += stride) {
        __m128 a = _mm_set1_ps(att[p]);
        for (int w = 0; w < W; w++) acc[w] = _mm_add_ps(acc[w], _mm_mul_ps(a, _mm_loadu_ps(v + 4 * w)));
    }
    for (int w = 0; w < W; w++) _mm_storeu_ps(out + 4 * w, acc[w]);
}

void kernels_attend_sse2(float *out, float *att, const float *q, const float *keys, const float *values,
                         int stride, int n_pos, int hs, float scale) {
    if (hs % 4 != 0) {
        for (int p = 0; p < n_pos; p++) att[p] = sse2_dot(q, keys + (long)p * stride, hs) * scale;
        kernels_softmax_sse2(att, n_pos);
        memset(out, 0, (size_t)hs * sizeof(float));
        for (int p = 0; p < n_pos; p++) sse2_axpy(out, att[p], values + (long)p * stride, hs);
        return;
    }
    /* Four positions' scores at a time: their keys are four rows stride apart. */
    __m128 sv = _mm_set1_ps(scale);
    int p = 0;
    for (; p + 4 <= n_pos; p += 4)
        _mm_storeu_ps(att + p, _mm_mul_ps(sse2_rows4(keys + (long)p * stride, stride, q, hs), sv));
    for (; p < n_pos; p++) att[p] = sse2_dot(q, keys + (long)p * stride, hs) * scale;
    kernels_softmax_sse2(att, n_pos);
    int c = 0;
    for (; c + 16 <= hs; c += 16) sse2_weighted_cols(out + c, att, values + c, stride, n_pos, 4);
    for (; c + 8 <= hs; c += 8) sse2_weighted_cols(out + c, att, values + c, stride, n_pos, 2);
    for (; c < hs; c += 4) sse2_weighted_cols(out + c, att, values + c, stride, n_pos, 1);
}

/* Four f16 values as floats, exactly (SSE2 has no conversion instruction):
 * the half's exponent and mantissa moved into a float's fields, scaled by
 * 2^112 to rebias the exponent (subnormal halves come out right too); the
 * sign ORed in. Infinities and NaNs are not expected in a KV cache. */
static inline __m128 sse2_f16x4(const uint16_t *p) {
    __m128i h = _mm_unpacklo_epi16(_mm_loadl_epi64((const __m128i *)p), _mm_setzero_si128());
    __m128i sign = _mm_slli_epi32(_mm_and_si128(h, _mm_set1_epi32(0x8000)), 16);
    __m128i magnitude = _mm_slli_epi32(_mm_and_si128(h, _mm_set1_epi32(0x7fff)), 13);
    __m128 f = _mm_mul_ps(_mm_castsi128_ps(magnitude), _mm_castsi128_ps(_mm_set1_epi32(0x77800000)));
    return _mm_or_ps(f, _mm_castsi128_ps(sign));
}

/* Sixteen int8 values as four vectors of floats. */
static inline void sse2_i8x16(const int8_t *p, __m128 f[4]) {
    __m128i z = _mm_setzero_si128(), b = _mm_loadu_si128((const __m128i *)p);
    __m128i lo = _mm_unpacklo_epi8(z, b), hi = _mm_unpackhi_epi8(z, b);
    f[0] = _mm_cvtepi32_ps(_mm_srai_epi32(_mm_unpacklo_epi16(z, lo), 24));
    f[1] = _mm_cvtepi32_ps(_mm_srai_epi32(_mm_unpackhi_epi16(z, lo), 24));
    f[2] = _mm_cvtepi32_ps(_mm_srai_epi32(_mm_unpacklo_epi16(z, hi), 24));
    f[3] = _mm_cvtepi32_ps(_mm_srai_epi32(_mm_unpackhi_epi16(z, hi), 24));
}

/* Eight int8 values as two vectors of floats. */
static inline void sse2_i8x8(const int8_t *p, __m128 f[2]) {
    __m128i z = _mm_setzero_si128(), lo = _mm_unpacklo_epi8(z, _mm_loadl_epi64((const __m128i *)p));
    f[0] = _mm_cvtepi32_ps(_mm_srai_epi32(_mm_unpacklo_epi16(z, lo), 24));
    f[1] = _mm_cvtepi32_ps(_mm_srai_epi32(_mm_unpackhi_epi16(z, lo), 24));
}

/* Four values from column c of a cached row of f16 (E = 2) or f32 (E = 4) values, as floats. */
static inline __m128 cols4(const void *row, int c, const int E) {
    return E == 4 ? _mm_loadu_ps((const float *)row + c) : sse2_f16x4((const uint16_t *)row + c);
}

/* The tiled kernels below run up to four queries over one key/value head
 * and read and convert each cached row once for all of them (see
 * attention_group.h): grouped-query attention shares a key/value head
 * between 2-8 query heads, a prefill batch between its positions, and at
 * long contexts reading the cache is most of the work. Only how many keys
 * or columns go through the registers at once shrinks as the tile grows
 * (SSE2 has 16). */

static inline __attribute__((always_inline)) void scores_tile(const AttendQuery *qs, const void *keys,
                                                              size_t row_bytes, int p, int count, int hs,
                                                              float scale, const int E, const int NQ) {
    const void *first = kv_cache_row(keys, row_bytes, p);
    __m128 acc[ATTEND_TILE][4];
    for (int i = 0; i < NQ; i++)
        for (int r = 0; r < 4; r++) acc[i][r] = _mm_setzero_ps();
    int j = 0;
    for (; j + 4 <= hs; j += 4) {
        __m128 k[4];
        for (int r = 0; r < count; r++) k[r] = cols4(kv_cache_row(first, row_bytes, r), j, E);
        for (int i = 0; i < NQ; i++) {
            __m128 qv = _mm_loadu_ps(qs[i].q + j);
            for (int r = 0; r < count; r++) acc[i][r] = _mm_add_ps(acc[i][r], _mm_mul_ps(qv, k[r]));
        }
    }
    for (int i = 0; i < NQ; i++) {
        float tail[4] = {0}, s[4];
        for (int r = 0; r < count; r++)
            for (int t = j; t < hs; t++)
                tail[r] += qs[i].q[t] * kv_value(kv_cache_row(first, row_bytes, r), t, E);
        /* sse2_hsum4's lanes are independent: with two keys, lanes 2 and 3
         * repeat lanes 0 and 1 and are not stored. */
        __m128 sums = count > 2 ? sse2_hsum4(acc[i][0], acc[i][1], acc[i][2], acc[i][3])
                                : sse2_hsum4(acc[i][0], acc[i][1], acc[i][0], acc[i][1]);
        _mm_storeu_ps(s, _mm_mul_ps(_mm_add_ps(sums, _mm_loadu_ps(tail)), _mm_set1_ps(scale)));
        for (int r = 0; r < count && p + r < qs[i].n_pos; r++) qs[i].att[p + r] = s[r];
    }
}

static inline __attribute__((always_inline)) void values_tile(const AttendQuery *qs, const void *values,
                                                              size_t row_bytes, int least, int most, int c,
                                                              int W, const int E, const int NQ) {
    __m128 acc[ATTEND_TILE][4];
    for (int i = 0; i < NQ; i++)
        for (int w = 0; w < W; w++) acc[i][w] = _mm_setzero_ps();
    for (int p = 0; p < most; p++) {
        const uint8_t *v = (const uint8_t *)kv_cache_row(values, row_bytes, p) + (size_t)c * E;
        kv_prefetch(v, 1);
        __m128 f[4];
        for (int w = 0; w < W; w++) f[w] = cols4(v, 4 * w, E);
        for (int i = 0; i < NQ; i++) {
            if (!query_sees(&qs[i], p, least)) continue;
            __m128 a = _mm_set1_ps(qs[i].att[p]);
            for (int w = 0; w < W; w++) acc[i][w] = _mm_add_ps(acc[i][w], _mm_mul_ps(a, f[w]));
        }
    }
    for (int i = 0; i < NQ; i++)
        for (int w = 0; w < W; w++) _mm_storeu_ps(qs[i].out + c + 4 * w, acc[i][w]);
}

static inline __attribute__((always_inline)) void tile_f16(const AttendQuery *qs, const uint8_t *keys,
                                                           const uint8_t *values, size_t row_bytes, int hs,
                                                           float scale, const int NQ) {
    attend_rows_tiled(qs, keys, values, row_bytes, hs, scale, 4, scores_tile, values_tile,
                      kernels_softmax_sse2, 2, NQ);
}

static inline __attribute__((always_inline)) void tile_f32(const AttendQuery *qs, const uint8_t *keys,
                                                           const uint8_t *values, size_t row_bytes, int hs,
                                                           float scale, const int NQ) {
    attend_rows_tiled(qs, keys, values, row_bytes, hs, scale, 4, scores_tile, values_tile,
                      kernels_softmax_sse2, 4, NQ);
}

/* The q8_0 tile: one key at a time (NQ accumulators), then 4 * W columns
 * of one block at a time. */
static inline __attribute__((always_inline)) void tile_q8_0(const AttendQuery *qs, const uint8_t *keys,
                                                            const uint8_t *values, size_t row_bytes, int hs,
                                                            float scale, const int NQ) {
    int blocks = hs / QK32, least, most;
    visible_range(qs, NQ, &least, &most);
    for (int p = 0; p < most; p++) {
        const BlockQ8_0 *k = (const BlockQ8_0 *)kv_cache_row(keys, row_bytes, p);
        __m128 acc[ATTEND_TILE];
        for (int i = 0; i < NQ; i++) acc[i] = _mm_setzero_ps();
        for (int b = 0; b < blocks; b++) {
            __m128 f[8], d = _mm_set1_ps(ggml_fp16_to_fp32(k[b].d));
            sse2_i8x16(k[b].qs, f), sse2_i8x16(k[b].qs + 16, f + 4);
            for (int i = 0; i < NQ; i++) {
                const float *qb = qs[i].q + b * QK32;
                __m128 block = _mm_setzero_ps();
                for (int w = 0; w < 8; w++)
                    block = _mm_add_ps(block, _mm_mul_ps(_mm_loadu_ps(qb + 4 * w), f[w]));
                acc[i] = _mm_add_ps(acc[i], _mm_mul_ps(d, block));
            }
        }
        for (int i = 0; i < NQ; i++)
            if (p < qs[i].n_pos) qs[i].att[p] = sse2_hsum(acc[i]) * scale;
    }
    for (int i = 0; i < NQ; i++) kernels_softmax_sse2(qs[i].att, qs[i].n_pos);
    const int W = NQ == 1 ? 8 : NQ == 2 ? 4 : 2;
    for (int b = 0; b < blocks; b++)
        for (int c = 0; c < QK32; c += 4 * W) {
            __m128 acc[ATTEND_TILE][8];
            for (int i = 0; i < NQ; i++)
                for (int w = 0; w < W; w++) acc[i][w] = _mm_setzero_ps();
            for (int p = 0; p < most; p++) {
                const BlockQ8_0 *v = (const BlockQ8_0 *)kv_cache_row(values, row_bytes, p) + b;
                float d = ggml_fp16_to_fp32(v->d);
                __m128 f[8];
                for (int w = 0; w < W; w += 4 < W ? 4 : W) {
                    if (W >= 4)
                        sse2_i8x16(v->qs + c + 4 * w, f + w);
                    else
                        sse2_i8x8(v->qs + c + 4 * w, f + w);
                }
                for (int i = 0; i < NQ; i++) {
                    if (!query_sees(&qs[i], p, least)) continue;
                    __m128 a = _mm_set1_ps(qs[i].att[p] * d);
                    for (int w = 0; w < W; w++) acc[i][w] = _mm_add_ps(acc[i][w], _mm_mul_ps(a, f[w]));
                }
            }
            for (int i = 0; i < NQ; i++)
                for (int w = 0; w < W; w++) _mm_storeu_ps(qs[i].out + b * QK32 + c + 4 * w, acc[i][w]);
        }
}

TCG_PAGE_ALIGNED void kernels_attend_f16_sse2(float *out, float *att, int att_stride, const float *q, int n_q,
                                              const void *keys, const void *values, size_t row_bytes,
                                              int n_pos, int hs, float scale) {
    heads_as_tiles(tile_f16, out, att, att_stride, q, n_q, keys, values, row_bytes, n_pos, hs, scale);
}

TCG_PAGE_ALIGNED void kernels_attend_q8_0_sse2(float *out, float *att, int att_stride, const float *q,
                                               int n_q, const void *keys, const void *values,
                                               size_t row_bytes, int n_pos, int hs, float scale) {
    heads_as_tiles(tile_q8_0, out, att, att_stride, q, n_q, keys, values, row_bytes, n_pos, hs, scale);
}

TCG_PAGE_ALIGNED void kernels_attend_f16_tile_sse2(const AttendQuery *qs, int n, const void *keys,
                                                   const void *values, size_t row_bytes, int hs,
                                                   float scale) {
    in_tiles(tile_f16, qs, n, keys, values, row_bytes, hs, scale);
}

TCG_PAGE_ALIGNED void kernels_attend_q8_0_tile_sse2(const AttendQuery *qs, int n, const void *keys,
                                                    const void *values, size_t row_bytes, int hs,
                                                    float scale) {
    in_tiles(tile_q8_0, qs, n, keys, values, row_bytes, hs, scale);
}

TCG_PAGE_ALIGNED void kernels_attend_f32_sse2(float *out, float *att, int att_stride, const float *q, int n_q,
                                              const void *keys, const void *values, size_t row_bytes,
                                              int n_pos, int hs, float scale) {
    heads_as_tiles(tile_f32, out, att, att_stride, q, n_q, keys, values, row_bytes, n_pos, hs, scale);
}

TCG_PAGE_ALIGNED void kernels_attend_f32_tile_sse2(const AttendQuery *qs, int n, const void *keys,
                                                   const void *values, size_t row_bytes, int hs,
                                                   float scale) {
    in_tiles(tile_f32, qs, n, keys, values, row_bytes, hs, scale);
}
