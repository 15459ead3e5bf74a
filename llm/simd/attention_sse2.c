/* attention_sse2.c - SSE2 attention over one head's cached positions. */
#include "lib/string.h"
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
