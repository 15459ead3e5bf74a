/* attention_avx512.c - AVX-512 attention over one head's cached positions
 * (with quantised weights it is a tenth of a token's time). */
#include "llm/ggml_types.h"
#include "llm/simd/attention_group.h"
#include "llm/simd/avx512_ops.h"
#include "llm/simd/kernel_sets.h"

/* q . k for four keys `stride` apart, 16 columns per step (masked tail). */
TARGET_AVX512 static inline __m128 scores4(const float *q, const float *k, long stride, int hs) {
    __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    for (int c = 0; c < hs; c += 16) {
        __mmask16 m = first_lanes(hs - c);
        __m512 qc = _mm512_maskz_loadu_ps(m, q + c);
        a0 = _mm512_fmadd_ps(qc, _mm512_maskz_loadu_ps(m, k + c), a0);
        a1 = _mm512_fmadd_ps(qc, _mm512_maskz_loadu_ps(m, k + stride + c), a1);
        a2 = _mm512_fmadd_ps(qc, _mm512_maskz_loadu_ps(m, k + 2 * stride + c), a2);
        a3 = _mm512_fmadd_ps(qc, _mm512_maskz_loadu_ps(m, k + 3 * stride + c), a3);
    }
    return hsum4_ps(a0, a1, a2, a3);
}

/* One head: scores four keys at a time, the softmax, then the values
 * weighted in one pass per 64 columns (four registers per position). */
TARGET_AVX512 void kernels_attend_avx512(float *out, float *att, const float *q, const float *keys,
                                         const float *values, int stride, int n_pos, int hs, float scale) {
    int p = 0;
    for (; p + 4 <= n_pos; p += 4)
        _mm_storeu_ps(att + p,
                      _mm_mul_ps(scores4(q, keys + (long)p * stride, stride, hs), _mm_set1_ps(scale)));
    for (; p < n_pos; p++) {
        __m512 a = _mm512_setzero_ps();
        for (int c = 0; c < hs; c += 16) {
            __mmask16 m = first_lanes(hs - c);
            a = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, q + c),
                                _mm512_maskz_loadu_ps(m, keys + (long)p * stride + c), a);
        }
        att[p] = _mm512_reduce_add_ps(a) * scale;
    }
    kernels_softmax_avx512(att, n_pos);
    for (int c = 0; c < hs; c += 64) {
        __mmask16 m[4];
        for (int w = 0; w < 4; w++) m[w] = c + 16 * w < hs ? first_lanes(hs - c - 16 * w) : 0;
        __m512 acc[4] = {_mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps()};
        const float *v = values + c;
        for (int pos = 0; pos < n_pos; pos++, v += stride) {
            __m512 a = _mm512_set1_ps(att[pos]);
            for (int w = 0; w < 4; w++)
                acc[w] = _mm512_fmadd_ps(a, _mm512_maskz_loadu_ps(m[w], v + 16 * w), acc[w]);
        }
        for (int w = 0; w < 4; w++) _mm512_mask_storeu_ps(out + c + 16 * w, m[w], acc[w]);
    }
}

/* Up to 16 f16 values (mask m) as floats. */
TARGET_AVX512 static inline __m512 f16x16(const uint16_t *p, __mmask16 m) {
    return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, p));
}

TARGET_AVX512 static inline __m512 i8x16(const int8_t *p) {
    return _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i *)p)));
}

/* Mask of the first n lanes, none when n <= 0. */
static inline __mmask16 lanes_from(int n) {
    return n <= 0 ? (__mmask16)0 : first_lanes(n);
}

TARGET_AVX512 static inline float score_f16(const float *q, const uint16_t *k, int hs) {
    __m512 a = _mm512_setzero_ps();
    for (int c = 0; c < hs; c += 16) {
        __mmask16 m = first_lanes(hs - c);
        a = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, q + c), f16x16(k + c, m), a);
    }
    return _mm512_reduce_add_ps(a);
}

/* G (1..4) query heads over one f16 key/value head, each cached row read
 * and converted once for all of them: grouped-query attention shares a
 * key/value head between 2-8 query heads, and at long contexts reading
 * the cache is most of the work. Every head's arithmetic is what it would
 * be alone (G = 1), so results do not depend on the grouping. Keys are
 * scored four at a time, then the softmax, then the values weighted in one
 * pass per 64 columns (four registers per head). G is a constant at each
 * call, so the accumulators stay in registers. */
TARGET_AVX512 static inline __attribute__((always_inline)) void
attend_f16_group(float *out, float *att, int att_stride, const float *q, const uint8_t *keys,
                 const uint8_t *values, size_t row_bytes, int n_pos, int hs, float scale, const int G) {
    int p = 0;
    for (; p + 4 <= n_pos; p += 4) {
        __m512 acc[4][4];
#pragma GCC unroll 4
        for (int i = 0; i < G; i++)
#pragma GCC unroll 4
            for (int r = 0; r < 4; r++) acc[i][r] = _mm512_setzero_ps();
        const uint8_t *k = keys + (size_t)p * row_bytes;
        kv_prefetch(k, 4 * row_bytes);
        for (int c = 0; c < hs; c += 16) {
            __mmask16 m = first_lanes(hs - c);
            __m512 k0 = f16x16((const uint16_t *)k + c, m),
                   k1 = f16x16((const uint16_t *)(k + row_bytes) + c, m),
                   k2 = f16x16((const uint16_t *)(k + 2 * row_bytes) + c, m),
                   k3 = f16x16((const uint16_t *)(k + 3 * row_bytes) + c, m);
#pragma GCC unroll 4
            for (int i = 0; i < G; i++) {
                __m512 qc = _mm512_maskz_loadu_ps(m, q + (size_t)i * hs + c);
                acc[i][0] = _mm512_fmadd_ps(qc, k0, acc[i][0]);
                acc[i][1] = _mm512_fmadd_ps(qc, k1, acc[i][1]);
                acc[i][2] = _mm512_fmadd_ps(qc, k2, acc[i][2]);
                acc[i][3] = _mm512_fmadd_ps(qc, k3, acc[i][3]);
            }
        }
#pragma GCC unroll 4
        for (int i = 0; i < G; i++)
            _mm_storeu_ps(
                att + (size_t)i * att_stride + p,
                _mm_mul_ps(hsum4_ps(acc[i][0], acc[i][1], acc[i][2], acc[i][3]), _mm_set1_ps(scale)));
    }
    for (; p < n_pos; p++)
        for (int i = 0; i < G; i++)
            att[(size_t)i * att_stride + p] =
                score_f16(q + (size_t)i * hs, (const uint16_t *)(keys + (size_t)p * row_bytes), hs) * scale;
    for (int i = 0; i < G; i++) kernels_softmax_avx512(att + (size_t)i * att_stride, n_pos);
    for (int c = 0; c < hs; c += 64) {
        __mmask16 m0 = lanes_from(hs - c), m1 = lanes_from(hs - c - 16), m2 = lanes_from(hs - c - 32),
                  m3 = lanes_from(hs - c - 48);
        __m512 acc[4][4];
#pragma GCC unroll 4
        for (int i = 0; i < G; i++)
#pragma GCC unroll 4
            for (int w = 0; w < 4; w++) acc[i][w] = _mm512_setzero_ps();
        const uint8_t *row = values + (size_t)c * 2;
        for (int pos = 0; pos < n_pos; pos++, row += row_bytes) {
            const uint16_t *v = (const uint16_t *)row;
            kv_prefetch(v, 128);
            __m512 v0 = f16x16(v, m0), v1 = f16x16(v + 16, m1), v2 = f16x16(v + 32, m2),
                   v3 = f16x16(v + 48, m3);
#pragma GCC unroll 4
            for (int i = 0; i < G; i++) {
                __m512 a = _mm512_set1_ps(att[(size_t)i * att_stride + pos]);
                acc[i][0] = _mm512_fmadd_ps(a, v0, acc[i][0]);
                acc[i][1] = _mm512_fmadd_ps(a, v1, acc[i][1]);
                acc[i][2] = _mm512_fmadd_ps(a, v2, acc[i][2]);
                acc[i][3] = _mm512_fmadd_ps(a, v3, acc[i][3]);
            }
        }
#pragma GCC unroll 4
        for (int i = 0; i < G; i++) {
            float *o = out + (size_t)i * hs + c;
            _mm512_mask_storeu_ps(o, m0, acc[i][0]);
            _mm512_mask_storeu_ps(o + 16, m1, acc[i][1]);
            _mm512_mask_storeu_ps(o + 32, m2, acc[i][2]);
            _mm512_mask_storeu_ps(o + 48, m3, acc[i][3]);
        }
    }
}

/* attend_f16_group with the head size a constant for the common 64 and 128:
 * the column loops unroll and their masks fold away (the same arithmetic,
 * the same bits). */
TARGET_AVX512 static inline __attribute__((always_inline)) void
attend_f16_sized(float *out, float *att, int att_stride, const float *q, const uint8_t *keys,
                 const uint8_t *values, size_t row_bytes, int n_pos, int hs, float scale, const int G) {
    if (hs == 64)
        attend_f16_group(out, att, att_stride, q, keys, values, row_bytes, n_pos, 64, scale, G);
    else if (hs == 128)
        attend_f16_group(out, att, att_stride, q, keys, values, row_bytes, n_pos, 128, scale, G);
    else
        attend_f16_group(out, att, att_stride, q, keys, values, row_bytes, n_pos, hs, scale, G);
}

/* attend_f16_group's way over a q8_0 cache: G (1..4) query heads, each
 * block converted once for all of them, every head's arithmetic its own. */
TARGET_AVX512 static inline __attribute__((always_inline)) void
attend_q8_0_group(float *out, float *att, int att_stride, const float *q, const uint8_t *keys,
                  const uint8_t *values, size_t row_bytes, int n_pos, int hs, float scale, const int G) {
    int blocks = hs / QK32;
    for (int p = 0; p < n_pos; p++) {
        const BlockQ8_0 *k = (const BlockQ8_0 *)(keys + (size_t)p * row_bytes);
        __m512 acc[4];
#pragma GCC unroll 4
        for (int i = 0; i < G; i++) acc[i] = _mm512_setzero_ps();
        for (int b = 0; b < blocks; b++) {
            __m512 k0 = i8x16(k[b].qs), k1 = i8x16(k[b].qs + 16), d = _mm512_set1_ps(_cvtsh_ss(k[b].d));
#pragma GCC unroll 4
            for (int i = 0; i < G; i++) {
                const float *qb = q + (size_t)i * hs + b * QK32;
                __m512 block = _mm512_mul_ps(_mm512_loadu_ps(qb), k0);
                block = _mm512_fmadd_ps(_mm512_loadu_ps(qb + 16), k1, block);
                acc[i] = _mm512_fmadd_ps(d, block, acc[i]);
            }
        }
#pragma GCC unroll 4
        for (int i = 0; i < G; i++) att[(size_t)i * att_stride + p] = _mm512_reduce_add_ps(acc[i]) * scale;
    }
    for (int i = 0; i < G; i++) kernels_softmax_avx512(att + (size_t)i * att_stride, n_pos);
    /* Two blocks' 64 columns at a time, in registers over every position. */
    for (int b = 0; b < blocks; b += 2) {
        int pair = b + 1 < blocks;
        __m512 acc[4][4];
#pragma GCC unroll 4
        for (int i = 0; i < G; i++)
#pragma GCC unroll 4
            for (int w = 0; w < 4; w++) acc[i][w] = _mm512_setzero_ps();
        for (int p = 0; p < n_pos; p++) {
            const BlockQ8_0 *v = (const BlockQ8_0 *)(values + (size_t)p * row_bytes) + b;
            __m512 v0 = i8x16(v[0].qs), v1 = i8x16(v[0].qs + 16), v2 = v0, v3 = v1;
            float d0 = _cvtsh_ss(v[0].d), d1 = 0.0f;
            if (pair) v2 = i8x16(v[1].qs), v3 = i8x16(v[1].qs + 16), d1 = _cvtsh_ss(v[1].d);
#pragma GCC unroll 4
            for (int i = 0; i < G; i++) {
                float w = att[(size_t)i * att_stride + p];
                __m512 a = _mm512_set1_ps(w * d0);
                acc[i][0] = _mm512_fmadd_ps(a, v0, acc[i][0]);
                acc[i][1] = _mm512_fmadd_ps(a, v1, acc[i][1]);
                if (pair) {
                    a = _mm512_set1_ps(w * d1);
                    acc[i][2] = _mm512_fmadd_ps(a, v2, acc[i][2]);
                    acc[i][3] = _mm512_fmadd_ps(a, v3, acc[i][3]);
                }
            }
        }
#pragma GCC unroll 4
        for (int i = 0; i < G; i++)
            for (int w = 0; w < 2 + 2 * pair; w++)
                _mm512_storeu_ps(out + (size_t)i * hs + b * QK32 + 16 * w, acc[i][w]);
    }
}

/* The query heads in groups of four, then the rest; q8 is a constant at each
 * call below, so each kernel's group function is inlined with a constant G. */
TARGET_AVX512 static inline __attribute__((always_inline)) void
attend_in_groups(int q8, float *out, float *att, int att_stride, const float *q, int n_q, const void *keys,
                 const void *values, size_t row_bytes, int n_pos, int hs, float scale) {
    for (int i = 0; i < n_q; i += 4) {
        float *o = out + (size_t)i * hs, *a = att + (size_t)i * att_stride;
        const float *qi = q + (size_t)i * hs;
        int left = n_q - i;
        if (q8) {
            if (left == 1)
                attend_q8_0_group(o, a, att_stride, qi, keys, values, row_bytes, n_pos, hs, scale, 1);
            else if (left == 2)
                attend_q8_0_group(o, a, att_stride, qi, keys, values, row_bytes, n_pos, hs, scale, 2);
            else if (left == 3)
                attend_q8_0_group(o, a, att_stride, qi, keys, values, row_bytes, n_pos, hs, scale, 3);
            else
                attend_q8_0_group(o, a, att_stride, qi, keys, values, row_bytes, n_pos, hs, scale, 4);
        } else {
            if (left == 1)
                attend_f16_sized(o, a, att_stride, qi, keys, values, row_bytes, n_pos, hs, scale, 1);
            else if (left == 2)
                attend_f16_sized(o, a, att_stride, qi, keys, values, row_bytes, n_pos, hs, scale, 2);
            else if (left == 3)
                attend_f16_sized(o, a, att_stride, qi, keys, values, row_bytes, n_pos, hs, scale, 3);
            else
                attend_f16_sized(o, a, att_stride, qi, keys, values, row_bytes, n_pos, hs, scale, 4);
        }
    }
}

TARGET_AVX512 void kernels_attend_f16_avx512(float *out, float *att, int att_stride, const float *q, int n_q,
                                             const void *keys, const void *values, size_t row_bytes,
                                             int n_pos, int hs, float scale) {
    attend_in_groups(0, out, att, att_stride, q, n_q, keys, values, row_bytes, n_pos, hs, scale);
}

TARGET_AVX512 void kernels_attend_q8_0_avx512(float *out, float *att, int att_stride, const float *q, int n_q,
                                              const void *keys, const void *values, size_t row_bytes,
                                              int n_pos, int hs, float scale) {
    attend_in_groups(1, out, att, att_stride, q, n_q, keys, values, row_bytes, n_pos, hs, scale);
}
