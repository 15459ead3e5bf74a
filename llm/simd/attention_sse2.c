/* attention_sse2.c - SSE2 attention over one head's cached positions. */
#include "lib/string.h"
#include "llm/ggml_types.h"
#include "llm/simd/kernel_sets.h"
#include "llm/simd/sse2_ops.h"

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

static inline const uint16_t *f16_row(const void *base, size_t row_bytes, int p) {
    return kv_cache_row(base, row_bytes, p);
}

/* q . k for `count` (1..4) f16 keys row_bytes apart, in lanes 0..count-1. */
static inline __m128 sse2_scores_f16(const float *q, const void *keys, size_t row_bytes, int count, int hs) {
    __m128 acc[4] = {_mm_setzero_ps(), _mm_setzero_ps(), _mm_setzero_ps(), _mm_setzero_ps()};
    int i = 0;
    for (; i + 4 <= hs; i += 4) {
        __m128 qv = _mm_loadu_ps(q + i);
        for (int r = 0; r < count; r++)
            acc[r] = _mm_add_ps(acc[r], _mm_mul_ps(qv, sse2_f16x4(f16_row(keys, row_bytes, r) + i)));
    }
    float tail[4] = {0};
    for (int r = 0; r < count; r++)
        for (int j = i; j < hs; j++) tail[r] += q[j] * ggml_fp16_to_fp32(f16_row(keys, row_bytes, r)[j]);
    return _mm_add_ps(sse2_hsum4(acc[0], acc[1], acc[2], acc[3]), _mm_loadu_ps(tail));
}

static void attend_f16_one(float *out, float *att, const float *q, const void *keys, const void *values,
                           size_t row_bytes, int n_pos, int hs, float scale) {
    __m128 sv = _mm_set1_ps(scale);
    /* Four keys at a time (count 4 is a constant there: the accumulators stay
     * in registers), then the last one to three. */
    int p = 0;
    for (; p + 4 <= n_pos; p += 4)
        _mm_storeu_ps(att + p,
                      _mm_mul_ps(sse2_scores_f16(q, kv_cache_row(keys, row_bytes, p), row_bytes, 4, hs), sv));
    if (p < n_pos) {
        float s[4];
        _mm_storeu_ps(
            s,
            _mm_mul_ps(sse2_scores_f16(q, kv_cache_row(keys, row_bytes, p), row_bytes, n_pos - p, hs), sv));
        for (int r = 0; p + r < n_pos; r++) att[p + r] = s[r];
    }
    kernels_softmax_sse2(att, n_pos);
    /* Sixteen columns at a time in registers over every position. */
    int c = 0;
    while (c + 4 <= hs) {
        int w_count = (hs - c) / 4 < 4 ? (hs - c) / 4 : 4;
        __m128 acc[4] = {_mm_setzero_ps(), _mm_setzero_ps(), _mm_setzero_ps(), _mm_setzero_ps()};
        for (int p = 0; p < n_pos; p++) {
            __m128 a = _mm_set1_ps(att[p]);
            const uint16_t *v = f16_row(values, row_bytes, p) + c;
            for (int w = 0; w < w_count; w++)
                acc[w] = _mm_add_ps(acc[w], _mm_mul_ps(a, sse2_f16x4(v + 4 * w)));
        }
        for (int w = 0; w < w_count; w++) _mm_storeu_ps(out + c + 4 * w, acc[w]);
        c += 4 * w_count;
    }
    for (int i = c; i < hs; i++) {
        float sum = 0.0f;
        for (int p = 0; p < n_pos; p++) sum += att[p] * ggml_fp16_to_fp32(f16_row(values, row_bytes, p)[i]);
        out[i] = sum;
    }
}

static void attend_q8_0_one(float *out, float *att, const float *q, const void *keys, const void *values,
                            size_t row_bytes, int n_pos, int hs, float scale) {
    int blocks = hs / QK32;
    for (int p = 0; p < n_pos; p++) {
        const BlockQ8_0 *k = (const BlockQ8_0 *)kv_cache_row(keys, row_bytes, p);
        __m128 acc = _mm_setzero_ps();
        for (int b = 0; b < blocks; b++) {
            __m128 f[8], block = _mm_setzero_ps();
            sse2_i8x16(k[b].qs, f), sse2_i8x16(k[b].qs + 16, f + 4);
            for (int w = 0; w < 8; w++)
                block = _mm_add_ps(block, _mm_mul_ps(_mm_loadu_ps(q + b * QK32 + 4 * w), f[w]));
            acc = _mm_add_ps(acc, _mm_mul_ps(_mm_set1_ps(ggml_fp16_to_fp32(k[b].d)), block));
        }
        att[p] = sse2_hsum(acc) * scale;
    }
    kernels_softmax_sse2(att, n_pos);
    /* One block's 32 columns at a time, in registers over every position. */
    for (int b = 0; b < blocks; b++) {
        __m128 acc[8];
        for (int w = 0; w < 8; w++) acc[w] = _mm_setzero_ps();
        for (int p = 0; p < n_pos; p++) {
            const BlockQ8_0 *v = (const BlockQ8_0 *)kv_cache_row(values, row_bytes, p) + b;
            __m128 a = _mm_set1_ps(att[p] * ggml_fp16_to_fp32(v->d)), f[8];
            sse2_i8x16(v->qs, f), sse2_i8x16(v->qs + 16, f + 4);
            for (int w = 0; w < 8; w++) acc[w] = _mm_add_ps(acc[w], _mm_mul_ps(a, f[w]));
        }
        for (int w = 0; w < 8; w++) _mm_storeu_ps(out + b * QK32 + 4 * w, acc[w]);
    }
}

void kernels_attend_f16_sse2(float *out, float *att, int att_stride, const float *q, int n_q,
                             const void *keys, const void *values, size_t row_bytes, int n_pos, int hs,
                             float scale) {
    attend_each_head(attend_f16_one, out, att, att_stride, q, n_q, keys, values, row_bytes, n_pos, hs, scale);
}

void kernels_attend_q8_0_sse2(float *out, float *att, int att_stride, const float *q, int n_q,
                              const void *keys, const void *values, size_t row_bytes, int n_pos, int hs,
                              float scale) {
    attend_each_head(attend_q8_0_one, out, att, att_stride, q, n_q, keys, values, row_bytes, n_pos, hs,
                     scale);
}
