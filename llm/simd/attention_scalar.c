/* attention_scalar.c - plain C reference attention for one head. */
#include "llm/simd/kernel_sets.h"

void kernels_attend_scalar(float *out, float *att, const float *q, const float *keys, const float *values,
                          int stride, int n_pos, int hs, float scale) {
    for (int p = 0; p < n_pos; p++) att[p] = kernels_dot_scalar(q, keys + (long)p * stride, hs) * scale;
    kernels_softmax_scalar(att, n_pos);
    for (int i = 0; i < hs; i++) out[i] = 0.0f;
    for (int p = 0; p < n_pos; p++) kernels_axpy_scalar(out, att[p], values + (long)p * stride, hs);
}
