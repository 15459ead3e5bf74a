/* attention_avx2.c - AVX2+FMA attention over one head's cached positions. */
#include "llm/ggml_types.h"
#include "llm/simd/avx2_ops.h"
#include "llm/simd/attention_group.h"
#include "llm/simd/kernel_sets.h"

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

TARGET_AVX2 static inline __m256 i8x8(const int8_t *p) {
    return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *)p)));
}

/* The grouped kernels below run G (1..4) query heads over one key/value
 * head, reading and converting each cached row once for all of them, as
 * attention_sse2.c's do: every head's arithmetic is what it is alone, in
 * the same order; only how many keys or columns share the registers (16)
 * shrinks as G grows. */

/* Scores of `count` (1..4) f16 keys row_bytes apart for G heads, into
 * att[i * att_stride + 0 .. count). */
TARGET_AVX2 static inline __attribute__((always_inline)) void
scores_f16_group(float *att, int att_stride, const float *q, const void *keys, size_t row_bytes, int count,
                 int hs, float scale, const int G) {
    __m256 acc[4][4];
    for (int i = 0; i < G; i++)
        for (int r = 0; r < 4; r++) acc[i][r] = _mm256_setzero_ps();
    int j = 0;
    for (; j + 8 <= hs; j += 8) {
        __m256 k[4];
        for (int r = 0; r < count; r++) k[r] = f16x8((const uint16_t *)kv_cache_row(keys, row_bytes, r) + j);
        for (int i = 0; i < G; i++) {
            __m256 qv = _mm256_loadu_ps(q + (size_t)i * hs + j);
            for (int r = 0; r < count; r++) acc[i][r] = _mm256_fmadd_ps(qv, k[r], acc[i][r]);
        }
    }
    for (int i = 0; i < G; i++) {
        const float *qi = q + (size_t)i * hs;
        float tail[4] = {0}, s[4];
        for (int r = 0; r < count; r++)
            for (int t = j; t < hs; t++)
                tail[r] += qi[t] * ggml_fp16_to_fp32(((const uint16_t *)kv_cache_row(keys, row_bytes, r))[t]);
        /* avx2_hsum4's lanes are independent: with two keys, lanes 2 and 3
         * repeat lanes 0 and 1 and are not stored. */
        __m128 sums = count > 2 ? avx2_hsum4(acc[i][0], acc[i][1], acc[i][2], acc[i][3])
                                : avx2_hsum4(acc[i][0], acc[i][1], acc[i][0], acc[i][1]);
        _mm_storeu_ps(s, _mm_mul_ps(_mm_add_ps(sums, _mm_loadu_ps(tail)), _mm_set1_ps(scale)));
        for (int r = 0; r < count; r++) att[(size_t)i * att_stride + r] = s[r];
    }
}

/* out[i * hs + c .. + 8 * W) = sum_p att_i[p] * v_p[c ..] for G heads, in
 * registers over every position. */
TARGET_AVX2 static inline __attribute__((always_inline)) void
values_f16_group(float *out, const float *att, int att_stride, const void *values, size_t row_bytes,
                 int n_pos, int hs, int c, int W, const int G) {
    __m256 acc[4][4];
    for (int i = 0; i < G; i++)
        for (int w = 0; w < W; w++) acc[i][w] = _mm256_setzero_ps();
    for (int p = 0; p < n_pos; p++) {
        const uint16_t *v = (const uint16_t *)kv_cache_row(values, row_bytes, p) + c;
        kv_prefetch(v, 1);
        __m256 f[4];
        for (int w = 0; w < W; w++) f[w] = f16x8(v + 8 * w);
        for (int i = 0; i < G; i++) {
            __m256 a = _mm256_set1_ps(att[(size_t)i * att_stride + p]);
            for (int w = 0; w < W; w++) acc[i][w] = _mm256_fmadd_ps(a, f[w], acc[i][w]);
        }
    }
    for (int i = 0; i < G; i++)
        for (int w = 0; w < W; w++) _mm256_storeu_ps(out + (size_t)i * hs + c + 8 * w, acc[i][w]);
}

TARGET_AVX2 static inline __attribute__((always_inline)) void
attend_f16_group(float *out, float *att, int att_stride, const float *q, const void *keys, const void *values,
                 size_t row_bytes, int n_pos, int hs, float scale, const int G) {
    attend_f16_grouped(out, att, att_stride, q, keys, values, row_bytes, n_pos, hs, scale, 8,
                       scores_f16_group, values_f16_group, kernels_softmax_avx2, G);
}

TARGET_AVX2 static inline __attribute__((always_inline)) void
attend_q8_0_group(float *out, float *att, int att_stride, const float *q, const void *keys,
                  const void *values, size_t row_bytes, int n_pos, int hs, float scale, const int G) {
    int blocks = hs / QK32;
    for (int p = 0; p < n_pos; p++) {
        const BlockQ8_0 *k = kv_cache_row(keys, row_bytes, p);
        __m256 acc[4];
        for (int i = 0; i < G; i++) acc[i] = _mm256_setzero_ps();
        for (int b = 0; b < blocks; b++) {
            __m256 f[4], d = _mm256_set1_ps(ggml_fp16_to_fp32(k[b].d));
            for (int w = 0; w < 4; w++) f[w] = i8x8(k[b].qs + 8 * w);
            for (int i = 0; i < G; i++) {
                const float *qb = q + (size_t)i * hs + b * QK32;
                __m256 block = _mm256_mul_ps(_mm256_loadu_ps(qb), f[0]);
                for (int w = 1; w < 4; w++) block = _mm256_fmadd_ps(_mm256_loadu_ps(qb + 8 * w), f[w], block);
                acc[i] = _mm256_fmadd_ps(d, block, acc[i]);
            }
        }
        for (int i = 0; i < G; i++) att[(size_t)i * att_stride + p] = avx2_hsum(acc[i]) * scale;
    }
    for (int i = 0; i < G; i++) kernels_softmax_avx2(att + (size_t)i * att_stride, n_pos);
    /* 8 * W columns of one block at a time, in registers over every position. */
    const int W = G <= 2 ? 4 : 2;
    for (int b = 0; b < blocks; b++)
        for (int c = 0; c < QK32; c += 8 * W) {
            __m256 acc[4][4];
            for (int i = 0; i < G; i++)
                for (int w = 0; w < W; w++) acc[i][w] = _mm256_setzero_ps();
            for (int p = 0; p < n_pos; p++) {
                const BlockQ8_0 *v = (const BlockQ8_0 *)kv_cache_row(values, row_bytes, p) + b;
                float d = ggml_fp16_to_fp32(v->d);
                __m256 f[4];
                for (int w = 0; w < W; w++) f[w] = i8x8(v->qs + c + 8 * w);
                for (int i = 0; i < G; i++) {
                    __m256 a = _mm256_set1_ps(att[(size_t)i * att_stride + p] * d);
                    for (int w = 0; w < W; w++) acc[i][w] = _mm256_fmadd_ps(a, f[w], acc[i][w]);
                }
            }
            for (int i = 0; i < G; i++)
                for (int w = 0; w < W; w++)
                    _mm256_storeu_ps(out + (size_t)i * hs + b * QK32 + c + 8 * w, acc[i][w]);
        }
}

TARGET_AVX2 void kernels_attend_f16_avx2(float *out, float *att, int att_stride, const float *q, int n_q,
                                         const void *keys, const void *values, size_t row_bytes, int n_pos,
                                         int hs, float scale) {
    ATTEND_IN_GROUPS_OF_FOUR(attend_f16_group, out, att, att_stride, q, n_q, keys, values, row_bytes, n_pos,
                             hs, scale);
}

TARGET_AVX2 void kernels_attend_q8_0_avx2(float *out, float *att, int att_stride, const float *q, int n_q,
                                          const void *keys, const void *values, size_t row_bytes, int n_pos,
                                          int hs, float scale) {
    ATTEND_IN_GROUPS_OF_FOUR(attend_q8_0_group, out, att, att_stride, q, n_q, keys, values, row_bytes, n_pos,
                             hs, scale);
}
