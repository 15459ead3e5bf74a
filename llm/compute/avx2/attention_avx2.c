/* attention_avx2.c - AVX2+FMA attention over one head's cached positions. */
#include "llm/tensor/ggml_types.h"
#include "llm/compute/avx2/avx2_ops.h"
#include "llm/compute/attention_group.h"
#include "llm/compute/kernel_sets.h"

/* out[c .. c + 8*W) = sum_p att[p] * v_p[c ..], in registers over all positions. */
TARGET_AVX2 static inline void avx2_weighted_cols(float *out, const float *att, const float *v, long stride,
                                                  int n_pos, int W) {
    __m256 acc[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()};
    for (int p = 0; p < n_pos; p++, v += stride) {
        __m256 a = _mm256_set1_ps(att[p]);
        for (int w = 0; w < W; w++) acc[w] = _mm256_fmadd_ps(a, _mm256_loadu_ps(v + 8 * w), acc[w]);
    }
    for (int w = 0; w < W; w++) _mm256_storeu_ps(out + 8 * w, acc[w]);
}

TARGET_AVX2 void kernels_attend_avx2(float *out, float *att, const float *q, const float *keys,
                                     const float *values, int stride, int n_pos, int hs, float scale) {
    for (int p = 0; p < n_pos; p++) att[p] = avx2_dot(q, keys + (long)p * stride, hs) * scale;
    kernels_softmax_avx2(att, n_pos);
    int c = 0;
    for (; c + 32 <= hs; c += 32) avx2_weighted_cols(out + c, att, values + c, stride, n_pos, 4);
    for (; c + 8 <= hs; c += 8) avx2_weighted_cols(out + c, att, values + c, stride, n_pos, 1);
    if (c < hs) {
        for (int i = c; i < hs; i++) out[i] = 0.0f;
        for (int p = 0; p < n_pos; p++) avx2_axpy(out + c, att[p], values + (long)p * stride + c, hs - c);
    }
}

TARGET_AVX2 static inline __m256 f16x8(const uint16_t *p) {
    return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)p));
}

/* Eight values from column c of a cached row of f16 (E = 2) or f32 (E = 4) values, as floats. */
TARGET_AVX2 static inline __m256 cols8(const void *row, int c, const int E) {
    return E == 4 ? _mm256_loadu_ps((const float *)row + c) : f16x8((const uint16_t *)row + c);
}

TARGET_AVX2 static inline __m256 i8x8(const int8_t *p) {
    return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *)p)));
}

/* The tiled kernels below run up to four queries over one key/value head,
 * reading and converting each cached row once for all of them, as
 * attention_sse2.c's do (see attention_group.h): only how many keys or
 * columns share the registers (16) shrinks as the tile grows. */

TARGET_AVX2 static inline __attribute__((always_inline)) void
scores_tile(const AttendQuery *qs, const void *keys, size_t row_bytes, int p, int count, int hs, float scale,
            const int E, const int NQ) {
    const void *first = kv_cache_row(keys, row_bytes, p);
    __m256 acc[ATTEND_TILE][4];
    for (int i = 0; i < NQ; i++)
        for (int r = 0; r < 4; r++) acc[i][r] = _mm256_setzero_ps();
    int j = 0;
    for (; j + 8 <= hs; j += 8) {
        __m256 k[4];
        for (int r = 0; r < count; r++) k[r] = cols8(kv_cache_row(first, row_bytes, r), j, E);
        for (int i = 0; i < NQ; i++) {
            __m256 qv = _mm256_loadu_ps(qs[i].q + j);
            for (int r = 0; r < count; r++) acc[i][r] = _mm256_fmadd_ps(qv, k[r], acc[i][r]);
        }
    }
    for (int i = 0; i < NQ; i++) {
        float tail[4] = {0}, s[4];
        for (int r = 0; r < count; r++)
            for (int t = j; t < hs; t++)
                tail[r] += qs[i].q[t] * kv_value(kv_cache_row(first, row_bytes, r), t, E);
        /* avx2_hsum4's lanes are independent: with two keys, lanes 2 and 3
         * repeat lanes 0 and 1 and are not stored. */
        __m128 sums = count > 2 ? avx2_hsum4(acc[i][0], acc[i][1], acc[i][2], acc[i][3])
                                : avx2_hsum4(acc[i][0], acc[i][1], acc[i][0], acc[i][1]);
        _mm_storeu_ps(s, _mm_mul_ps(_mm_add_ps(sums, _mm_loadu_ps(tail)), _mm_set1_ps(scale)));
        for (int r = 0; r < count && p + r < qs[i].n_pos; r++) qs[i].att[p + r] = s[r];
    }
}

TARGET_AVX2 static inline __attribute__((always_inline)) void
values_tile(const AttendQuery *qs, const void *values, size_t row_bytes, int least, int most, int c, int W,
            const int E, const int NQ) {
    __m256 acc[ATTEND_TILE][4];
    for (int i = 0; i < NQ; i++)
        for (int w = 0; w < W; w++) acc[i][w] = _mm256_setzero_ps();
    for (int p = 0; p < most; p++) {
        const uint8_t *v = (const uint8_t *)kv_cache_row(values, row_bytes, p) + (size_t)c * E;
        kv_prefetch(v, 1);
        __m256 f[4];
        for (int w = 0; w < W; w++) f[w] = cols8(v, 8 * w, E);
        for (int i = 0; i < NQ; i++) {
            if (!query_sees(&qs[i], p, least)) continue;
            __m256 a = _mm256_set1_ps(qs[i].att[p]);
            for (int w = 0; w < W; w++) acc[i][w] = _mm256_fmadd_ps(a, f[w], acc[i][w]);
        }
    }
    for (int i = 0; i < NQ; i++)
        for (int w = 0; w < W; w++) _mm256_storeu_ps(qs[i].out + c + 8 * w, acc[i][w]);
}

TARGET_AVX2 static inline __attribute__((always_inline)) void
tile_f16(const AttendQuery *qs, const uint8_t *keys, const uint8_t *values, size_t row_bytes, int hs,
         float scale, const int NQ) {
    attend_rows_tiled(qs, keys, values, row_bytes, hs, scale, 8, scores_tile, values_tile,
                      kernels_softmax_avx2, 2, NQ);
}

TARGET_AVX2 static inline __attribute__((always_inline)) void
tile_f32(const AttendQuery *qs, const uint8_t *keys, const uint8_t *values, size_t row_bytes, int hs,
         float scale, const int NQ) {
    attend_rows_tiled(qs, keys, values, row_bytes, hs, scale, 8, scores_tile, values_tile,
                      kernels_softmax_avx2, 4, NQ);
}

/* The q8_0 tile: one key at a time (NQ accumulators), then 8 * W columns
 * of one block at a time. */
TARGET_AVX2 static inline __attribute__((always_inline)) void
tile_q8_0(const AttendQuery *qs, const uint8_t *keys, const uint8_t *values, size_t row_bytes, int hs,
          float scale, const int NQ) {
    int blocks = hs / QK32, least, most;
    visible_range(qs, NQ, &least, &most);
    for (int p = 0; p < most; p++) {
        const BlockQ8_0 *k = kv_cache_row(keys, row_bytes, p);
        __m256 acc[ATTEND_TILE];
        for (int i = 0; i < NQ; i++) acc[i] = _mm256_setzero_ps();
        for (int b = 0; b < blocks; b++) {
            __m256 f[4], d = _mm256_set1_ps(ggml_fp16_to_fp32(k[b].d));
            for (int w = 0; w < 4; w++) f[w] = i8x8(k[b].qs + 8 * w);
            for (int i = 0; i < NQ; i++) {
                const float *qb = qs[i].q + b * QK32;
                __m256 block = _mm256_mul_ps(_mm256_loadu_ps(qb), f[0]);
                for (int w = 1; w < 4; w++) block = _mm256_fmadd_ps(_mm256_loadu_ps(qb + 8 * w), f[w], block);
                acc[i] = _mm256_fmadd_ps(d, block, acc[i]);
            }
        }
        for (int i = 0; i < NQ; i++)
            if (p < qs[i].n_pos) qs[i].att[p] = avx2_hsum(acc[i]) * scale;
    }
    for (int i = 0; i < NQ; i++) kernels_softmax_avx2(qs[i].att, qs[i].n_pos);
    const int W = NQ <= 2 ? 4 : 2;
    for (int b = 0; b < blocks; b++)
        for (int c = 0; c < QK32; c += 8 * W) {
            __m256 acc[ATTEND_TILE][4];
            for (int i = 0; i < NQ; i++)
                for (int w = 0; w < W; w++) acc[i][w] = _mm256_setzero_ps();
            for (int p = 0; p < most; p++) {
                const BlockQ8_0 *v = (const BlockQ8_0 *)kv_cache_row(values, row_bytes, p) + b;
                float d = ggml_fp16_to_fp32(v->d);
                __m256 f[4];
                for (int w = 0; w < W; w++) f[w] = i8x8(v->qs + c + 8 * w);
                for (int i = 0; i < NQ; i++) {
                    if (!query_sees(&qs[i], p, least)) continue;
                    __m256 a = _mm256_set1_ps(qs[i].att[p] * d);
                    for (int w = 0; w < W; w++) acc[i][w] = _mm256_fmadd_ps(a, f[w], acc[i][w]);
                }
            }
            for (int i = 0; i < NQ; i++)
                for (int w = 0; w < W; w++) _mm256_storeu_ps(qs[i].out + b * QK32 + c + 8 * w, acc[i][w]);
        }
}

TCG_PAGE_ALIGNED TARGET_AVX2 void kernels_attend_f16_avx2(float *out, float *att, int att_stride,
                                                          const float *q, int n_q, const void *keys,
                                                          const void *values, size_t row_bytes, int n_pos,
                                                          int hs, float scale) {
    heads_as_tiles(tile_f16, out, att, att_stride, q, n_q, keys, values, row_bytes, n_pos, hs, scale);
}

TCG_PAGE_ALIGNED TARGET_AVX2 void kernels_attend_q8_0_avx2(float *out, float *att, int att_stride,
                                                           const float *q, int n_q, const void *keys,
                                                           const void *values, size_t row_bytes, int n_pos,
                                                           int hs, float scale) {
    heads_as_tiles(tile_q8_0, out, att, att_stride, q, n_q, keys, values, row_bytes, n_pos, hs, scale);
}

TCG_PAGE_ALIGNED TARGET_AVX2 void kernels_attend_f16_tile_avx2(const AttendQuery *qs, int n, const void *keys,
                                                               const void *values, size_t row_bytes, int hs,
                                                               float scale) {
    in_tiles(tile_f16, qs, n, keys, values, row_bytes, hs, scale);
}

TCG_PAGE_ALIGNED TARGET_AVX2 void kernels_attend_q8_0_tile_avx2(const AttendQuery *qs, int n,
                                                                const void *keys, const void *values,
                                                                size_t row_bytes, int hs, float scale) {
    in_tiles(tile_q8_0, qs, n, keys, values, row_bytes, hs, scale);
}

TCG_PAGE_ALIGNED TARGET_AVX2 void kernels_attend_f32_avx2(float *out, float *att, int att_stride,
                                                          const float *q, int n_q, const void *keys,
                                                          const void *values, size_t row_bytes, int n_pos,
                                                          int hs, float scale) {
    heads_as_tiles(tile_f32, out, att, att_stride, q, n_q, keys, values, row_bytes, n_pos, hs, scale);
}

TCG_PAGE_ALIGNED TARGET_AVX2 void kernels_attend_f32_tile_avx2(const AttendQuery *qs, int n, const void *keys,
                                                               const void *values, size_t row_bytes, int hs,
                                                               float scale) {
    in_tiles(tile_f32, qs, n, keys, values, row_bytes, hs, scale);
}
