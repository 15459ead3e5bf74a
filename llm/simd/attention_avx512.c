/* attention_avx512.c - AVX-512 attention over one head's cached positions
 * (with quantised weights it is a tenth of a token's time). */
#include "llm/ggml_types.h"
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
    kernels_softmax_avx2(att, n_pos);
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

/* q . k for four f16 keys row_bytes apart (the rows past n_pos are not read:
 * count keys, 1..4). */
TARGET_AVX512 static inline __m128 scores4_f16(const float *q, const void *keys, size_t row_bytes, int count,
                                               int hs) {
    __m512 acc[4] = {_mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps()};
    for (int c = 0; c < hs; c += 16) {
        __mmask16 m = first_lanes(hs - c);
        __m512 qc = _mm512_maskz_loadu_ps(m, q + c);
        for (int r = 0; r < count; r++)
            acc[r] = _mm512_fmadd_ps(qc, f16x16((const uint16_t *)kv_cache_row(keys, row_bytes, r) + c, m),
                                     acc[r]);
    }
    return hsum4_ps(acc[0], acc[1], acc[2], acc[3]);
}

TARGET_AVX512 void kernels_attend_f16_avx512(float *out, float *att, const float *q, const void *keys,
                                             const void *values, size_t row_bytes, int n_pos, int hs,
                                             float scale) {
    /* Four keys at a time (count 4 is a constant there: the accumulators stay
     * in registers), then the last one to three. */
    int p = 0;
    for (; p + 4 <= n_pos; p += 4)
        _mm_storeu_ps(att + p, _mm_mul_ps(scores4_f16(q, kv_cache_row(keys, row_bytes, p), row_bytes, 4, hs),
                                          _mm_set1_ps(scale)));
    if (p < n_pos) {
        float s[4];
        _mm_storeu_ps(s,
                      _mm_mul_ps(scores4_f16(q, kv_cache_row(keys, row_bytes, p), row_bytes, n_pos - p, hs),
                                 _mm_set1_ps(scale)));
        for (int r = 0; p + r < n_pos; r++) att[p + r] = s[r];
    }
    kernels_softmax_avx2(att, n_pos);
    for (int c = 0; c < hs; c += 64) {
        __mmask16 m[4];
        for (int w = 0; w < 4; w++) m[w] = c + 16 * w < hs ? first_lanes(hs - c - 16 * w) : 0;
        __m512 acc[4] = {_mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps()};
        for (int p = 0; p < n_pos; p++) {
            __m512 a = _mm512_set1_ps(att[p]);
            const uint16_t *v = (const uint16_t *)kv_cache_row(values, row_bytes, p) + c;
            for (int w = 0; w < 4; w++) acc[w] = _mm512_fmadd_ps(a, f16x16(v + 16 * w, m[w]), acc[w]);
        }
        for (int w = 0; w < 4; w++) _mm512_mask_storeu_ps(out + c + 16 * w, m[w], acc[w]);
    }
}

TARGET_AVX512 void kernels_attend_q8_0_avx512(float *out, float *att, const float *q, const void *keys,
                                              const void *values, size_t row_bytes, int n_pos, int hs,
                                              float scale) {
    int blocks = hs / QK32;
    for (int p = 0; p < n_pos; p++) {
        const BlockQ8_0 *k = kv_cache_row(keys, row_bytes, p);
        __m512 acc = _mm512_setzero_ps();
        for (int b = 0; b < blocks; b++) {
            const float *qb = q + b * QK32;
            __m512 block = _mm512_mul_ps(_mm512_loadu_ps(qb), i8x16(k[b].qs));
            block = _mm512_fmadd_ps(_mm512_loadu_ps(qb + 16), i8x16(k[b].qs + 16), block);
            acc = _mm512_fmadd_ps(_mm512_set1_ps(ggml_fp16_to_fp32(k[b].d)), block, acc);
        }
        att[p] = _mm512_reduce_add_ps(acc) * scale;
    }
    kernels_softmax_avx2(att, n_pos);
    /* Two blocks' 64 columns at a time, in registers over every position. */
    for (int b = 0; b < blocks; b += 2) {
        int pair = b + 1 < blocks ? 2 : 1;
        __m512 acc[4] = {_mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps()};
        for (int p = 0; p < n_pos; p++) {
            const BlockQ8_0 *v = (const BlockQ8_0 *)kv_cache_row(values, row_bytes, p) + b;
            for (int i = 0; i < pair; i++) {
                __m512 a = _mm512_set1_ps(att[p] * ggml_fp16_to_fp32(v[i].d));
                acc[2 * i] = _mm512_fmadd_ps(a, i8x16(v[i].qs), acc[2 * i]);
                acc[2 * i + 1] = _mm512_fmadd_ps(a, i8x16(v[i].qs + 16), acc[2 * i + 1]);
            }
        }
        for (int w = 0; w < 2 * pair; w++) _mm512_storeu_ps(out + b * QK32 + 16 * w, acc[w]);
    }
}
