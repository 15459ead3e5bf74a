/* attention_avx2.c - AVX2+FMA attention over one head's cached positions. */
#include "llm/ggml_types.h"
#include "llm/simd/avx2_ops.h"
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

/* q . k for `count` (1..4) f16 keys row_bytes apart, in lanes 0..count-1. */
TARGET_AVX2 static inline __m128 scores_f16(const float *q, const void *keys, size_t row_bytes, int count,
                                            int hs) {
    __m256 acc[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()};
    int i = 0;
    for (; i + 8 <= hs; i += 8) {
        __m256 qv = _mm256_loadu_ps(q + i);
        for (int r = 0; r < count; r++)
            acc[r] =
                _mm256_fmadd_ps(qv, f16x8((const uint16_t *)kv_cache_row(keys, row_bytes, r) + i), acc[r]);
    }
    float tail[4] = {0};
    for (int r = 0; r < count; r++)
        for (int j = i; j < hs; j++)
            tail[r] += q[j] * ggml_fp16_to_fp32(((const uint16_t *)kv_cache_row(keys, row_bytes, r))[j]);
    return _mm_add_ps(avx2_hsum4(acc[0], acc[1], acc[2], acc[3]), _mm_loadu_ps(tail));
}

TARGET_AVX2 static void attend_f16_one(float *out, float *att, const float *q, const void *keys,
                                       const void *values, size_t row_bytes, int n_pos, int hs, float scale) {
    /* Four keys at a time (count 4 is a constant there: the accumulators stay
     * in registers), then the last one to three. */
    int p = 0;
    for (; p + 4 <= n_pos; p += 4)
        _mm_storeu_ps(att + p, _mm_mul_ps(scores_f16(q, kv_cache_row(keys, row_bytes, p), row_bytes, 4, hs),
                                          _mm_set1_ps(scale)));
    if (p < n_pos) {
        float s[4];
        _mm_storeu_ps(s, _mm_mul_ps(scores_f16(q, kv_cache_row(keys, row_bytes, p), row_bytes, n_pos - p, hs),
                                    _mm_set1_ps(scale)));
        for (int r = 0; p + r < n_pos; r++) att[p + r] = s[r];
    }
    kernels_softmax_avx2(att, n_pos);
    /* Up to 32 columns at a time in registers over every position. */
    int c = 0;
    while (c + 8 <= hs) {
        int vectors = (hs - c) / 8 < 4 ? (hs - c) / 8 : 4;
        __m256 acc[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()};
        for (int p = 0; p < n_pos; p++) {
            __m256 a = _mm256_set1_ps(att[p]);
            const uint16_t *v = (const uint16_t *)kv_cache_row(values, row_bytes, p) + c;
            for (int w = 0; w < vectors; w++) acc[w] = _mm256_fmadd_ps(a, f16x8(v + 8 * w), acc[w]);
        }
        for (int w = 0; w < vectors; w++) _mm256_storeu_ps(out + c + 8 * w, acc[w]);
        c += 8 * vectors;
    }
    for (int i = c; i < hs; i++) {
        float sum = 0.0f;
        for (int p = 0; p < n_pos; p++)
            sum += att[p] * ggml_fp16_to_fp32(((const uint16_t *)kv_cache_row(values, row_bytes, p))[i]);
        out[i] = sum;
    }
}

TARGET_AVX2 static void attend_q8_0_one(float *out, float *att, const float *q, const void *keys,
                                        const void *values, size_t row_bytes, int n_pos, int hs,
                                        float scale) {
    int blocks = hs / QK32;
    for (int p = 0; p < n_pos; p++) {
        const BlockQ8_0 *k = kv_cache_row(keys, row_bytes, p);
        __m256 acc = _mm256_setzero_ps();
        for (int b = 0; b < blocks; b++) {
            const float *qb = q + b * QK32;
            __m256 block = _mm256_mul_ps(_mm256_loadu_ps(qb), i8x8(k[b].qs));
            for (int w = 1; w < 4; w++)
                block = _mm256_fmadd_ps(_mm256_loadu_ps(qb + 8 * w), i8x8(k[b].qs + 8 * w), block);
            acc = _mm256_fmadd_ps(_mm256_set1_ps(ggml_fp16_to_fp32(k[b].d)), block, acc);
        }
        att[p] = avx2_hsum(acc) * scale;
    }
    kernels_softmax_avx2(att, n_pos);
    /* One block's 32 columns at a time, in registers over every position. */
    for (int b = 0; b < blocks; b++) {
        __m256 acc[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()};
        for (int p = 0; p < n_pos; p++) {
            const BlockQ8_0 *v = (const BlockQ8_0 *)kv_cache_row(values, row_bytes, p) + b;
            __m256 a = _mm256_set1_ps(att[p] * ggml_fp16_to_fp32(v->d));
            for (int w = 0; w < 4; w++) acc[w] = _mm256_fmadd_ps(a, i8x8(v->qs + 8 * w), acc[w]);
        }
        for (int w = 0; w < 4; w++) _mm256_storeu_ps(out + b * QK32 + 8 * w, acc[w]);
    }
}

TARGET_AVX2 void kernels_attend_f16_avx2(float *out, float *att, int att_stride, const float *q, int n_q,
                                         const void *keys, const void *values, size_t row_bytes, int n_pos,
                                         int hs, float scale) {
    attend_each_head(attend_f16_one, out, att, att_stride, q, n_q, keys, values, row_bytes, n_pos, hs, scale);
}

TARGET_AVX2 void kernels_attend_q8_0_avx2(float *out, float *att, int att_stride, const float *q, int n_q,
                                          const void *keys, const void *values, size_t row_bytes, int n_pos,
                                          int hs, float scale) {
    attend_each_head(attend_q8_0_one, out, att, att_stride, q, n_q, keys, values, row_bytes, n_pos, hs,
                     scale);
}
