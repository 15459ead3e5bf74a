/* kernels_internal.h - AVX2+FMA kernels shared with the AVX-512 set (which
 * only widens the matmuls; the rest is not memory-bound and stays AVX2).
 * Not for callers outside llm/kernels*.c: they go through a KernelSet. */
#ifndef LLM_KERNELS_INTERNAL_H
#define LLM_KERNELS_INTERNAL_H

#include <stdint.h>

void kernels_matmul_q8_avx2(float *out, const float *x, const int8_t *q, const float *s, int n, int d,
                            int group_size);
float kernels_dot_avx2(const float *a, const float *b, int n);
void kernels_axpy_avx2(float *y, float a, const float *x, int n);
void kernels_rmsnorm_avx2(float *out, const float *x, const float *weight, int n);
void kernels_softmax_avx2(float *x, int n);
void kernels_swiglu_avx2(float *a, const float *b, int n);
void kernels_attend_avx2(float *out, float *att, const float *q, const float *keys, const float *values,
                         int stride, int n_pos, int hs, float scale);
void kernels_add_avx2(float *x, const float *y, int n);

#endif
