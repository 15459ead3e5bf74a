/* attention_avx512.c - AVX-512 attention over one head's cached fp32
 * positions (the f16 and q8_0 caches: attention_tile_avx512.c). */
#include "llm/tensor/ggml_types.h"
#include "llm/compute/avx512/avx512_ops.h"
#include "llm/compute/kernel_sets.h"

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
