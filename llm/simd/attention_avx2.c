/* attention_avx2.c - AVX2+FMA attention over one head's cached positions. */
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

TARGET_AVX2 void kernels_attend_avx2(float *out, float *att, const float *q, const float *keys, const float *values,
                              int stride, int n_pos, int hs, float scale) {
    for (int p = 0; p < n_pos; p++) att[p] = avx2_dot(q, keys + (long)p * stride, hs) * scale;
    kernels_softmax_avx2(att, n_pos);
    int c = 0;
    for (; c + 32 <= hs; c += 32) avx2_weighted_cols(out + c, att, values + c, stride, n_pos, 4);
    for (; c + 8 <= hs; c += 8) avx2_weighted_cols(out + c, att, values + c, stride, n_pos, 1);
    if (c < hs) {
        for (int i = c; i < hs; i++) out[i] = 0.0f;
        for (int p = 0; p < n_pos; p++)
            avx2_axpy(out + c, att[p], values + (long)p * stride + c, hs - c);
    }
}
