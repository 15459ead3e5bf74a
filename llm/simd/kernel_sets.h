/* kernel_sets.h - every kernel of every instruction set, for the KernelSet
 * tables in llm/kernels.c (callers go through a KernelSet, never these).
 * One file per family and set: f32_<set>.c (matmuls, dot, axpy), int8_<set>.c
 * (int8 matmuls), vec_<set>.c (rmsnorm, softmax, swiglu, add) and
 * attention_<set>.c; scalar is the reference. AVX-512 widens only the
 * memory-bound matmuls, attention and its softmax; its other kernels are
 * the AVX2 ones. */
#ifndef LLM_SIMD_KERNEL_SETS_H
#define LLM_SIMD_KERNEL_SETS_H

#include "llm/kernels.h"

matmul_fn kernels_matmul_scalar, kernels_matmul_sse2, kernels_matmul_avx2, kernels_matmul_avx512;
matmul_batch_fn kernels_matmul_batch_scalar, kernels_matmul_batch_sse2, kernels_matmul_batch_avx2,
    kernels_matmul_batch_avx512;
dot_fn kernels_dot_scalar, kernels_dot_sse2, kernels_dot_avx2;
axpy_fn kernels_axpy_scalar, kernels_axpy_sse2, kernels_axpy_avx2;

matmul_q8_fn kernels_matmul_q8_scalar, kernels_matmul_q8_sse2, kernels_matmul_q8_avx2;
matmul_q8q_fn kernels_matmul_q8q_scalar, kernels_matmul_q8q_sse2, kernels_matmul_q8q_avx2,
    kernels_matmul_q8q_avx512;

rmsnorm_fn kernels_rmsnorm_scalar, kernels_rmsnorm_sse2, kernels_rmsnorm_avx2;
softmax_fn kernels_softmax_scalar, kernels_softmax_sse2, kernels_softmax_avx2, kernels_softmax_avx512;
swiglu_fn kernels_swiglu_scalar, kernels_swiglu_sse2, kernels_swiglu_avx2;
add_fn kernels_add_scalar, kernels_add_sse2, kernels_add_avx2;

attend_fn kernels_attend_scalar, kernels_attend_sse2, kernels_attend_avx2, kernels_attend_avx512;
attend_kv_fn kernels_attend_f16_scalar, kernels_attend_f16_sse2, kernels_attend_f16_avx2,
    kernels_attend_f16_avx512;
attend_kv_fn kernels_attend_q8_0_scalar, kernels_attend_q8_0_sse2, kernels_attend_q8_0_avx2,
    kernels_attend_q8_0_avx512;
attend_kv_tile_fn kernels_attend_f16_tile_avx512, kernels_attend_q8_0_tile_avx512;

/* Row p of a typed KV cache whose rows are row_bytes apart (attend_f16,
 * attend_q8_0). */
static inline const void *kv_cache_row(const void *base, size_t row_bytes, int p) {
    return (const unsigned char *)base + (size_t)p * row_bytes;
}

/* One query head's attention over a typed KV cache (the attend_kv_fn
 * arguments less att_stride and n_q). */
typedef void attend_one_head_fn(float *out, float *att, const float *q, const void *keys, const void *values,
                                size_t row_bytes, int n_pos, int hs, float scale);

/* An attend_kv_fn's body for the sets that run a group's query heads one
 * after another: inlined with a constant one_head, so the call is direct. */
static inline __attribute__((always_inline)) void attend_each_head(attend_one_head_fn *one_head, float *out,
                                                                   float *att, int att_stride, const float *q,
                                                                   int n_q, const void *keys,
                                                                   const void *values, size_t row_bytes,
                                                                   int n_pos, int hs, float scale) {
    for (int i = 0; i < n_q; i++)
        one_head(out + (size_t)i * hs, att + (size_t)i * att_stride, q + (size_t)i * hs, keys, values,
                 row_bytes, n_pos, hs, scale);
}

/* An attend_kv_fn's body for the sets that read each cached row once for a
 * group of up to four query heads: GROUP(out, att, att_stride, q, keys,
 * values, row_bytes, n_pos, hs, scale, G) runs G heads, with G a constant
 * at each call so the group's accumulators can stay in registers. */
#define ATTEND_IN_GROUPS_OF_FOUR(GROUP, out, att, att_stride, q, n_q, keys, values, row_bytes, n_pos, hs,    \
                                 scale)                                                                      \
    for (int first_ = 0; first_ < (n_q); first_ += 4) {                                                      \
        float *o_ = (out) + (size_t)first_ * (hs), *a_ = (att) + (size_t)first_ * (att_stride);              \
        const float *q_ = (q) + (size_t)first_ * (hs);                                                       \
        switch ((n_q)-first_) {                                                                              \
        case 1:                                                                                              \
            GROUP(o_, a_, att_stride, q_, keys, values, row_bytes, n_pos, hs, scale, 1);                     \
            break;                                                                                           \
        case 2:                                                                                              \
            GROUP(o_, a_, att_stride, q_, keys, values, row_bytes, n_pos, hs, scale, 2);                     \
            break;                                                                                           \
        case 3:                                                                                              \
            GROUP(o_, a_, att_stride, q_, keys, values, row_bytes, n_pos, hs, scale, 3);                     \
            break;                                                                                           \
        default:                                                                                             \
            GROUP(o_, a_, att_stride, q_, keys, values, row_bytes, n_pos, hs, scale, 4);                     \
            break;                                                                                           \
        }                                                                                                    \
    }

#endif
