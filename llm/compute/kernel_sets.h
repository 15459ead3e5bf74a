/* kernel_sets.h - every kernel of every instruction set, for the KernelSet
 * tables in kernels.c (callers go through a KernelSet, never these).
 * One file per family and set: f32_<set>.c (matmuls, dot, axpy), int8_<set>.c
 * (int8 matmuls), vec_<set>.c (rmsnorm, softmax, swiglu, add) and
 * attention_<set>.c; scalar is the reference. AVX-512 widens only the
 * memory-bound matmuls, attention and its softmax; its other kernels are
 * the AVX2 ones. */
#ifndef LLM_SIMD_KERNEL_SETS_H
#define LLM_SIMD_KERNEL_SETS_H

#include "llm/compute/kernels.h"

matmul_fn kernels_matmul_scalar, kernels_matmul_sse2, kernels_matmul_avx2, kernels_matmul_avx512;
matmul_batch_fn kernels_matmul_batch_scalar, kernels_matmul_batch_sse2, kernels_matmul_batch_avx2,
    kernels_matmul_batch_avx512;
dot_fn kernels_dot_scalar, kernels_dot_sse2, kernels_dot_avx2;
axpy_fn kernels_axpy_scalar, kernels_axpy_sse2, kernels_axpy_avx2;

matmul_q8_fn kernels_matmul_q8_scalar, kernels_matmul_q8_sse2, kernels_matmul_q8_avx2;
matmul_q8q_fn kernels_matmul_q8q_scalar, kernels_matmul_q8q_sse2, kernels_matmul_q8q_avx2,
    kernels_matmul_q8q_avx512;
/* The SSE2 set's batched gemms (int8 x int8, Q4_0): SSE2 (pmaddwd), or
 * 64-bit integer SIMD within a register (int8_swar.c, q4_0_swar.c: fast
 * under QEMU TCG); KERNELS_GEMM_MEASURE (the default) chooses per type by
 * timing the first calls. Same bits either way. */
enum { KERNELS_GEMM_MEASURE = -1, KERNELS_GEMM_PMADDWD = 0, KERNELS_GEMM_SWAR = 1 };
void kernels_sse2_gemm_force(int gemm);
int kernels_sse2_gemm_forced(void);
/* The int8 one in use, or -1 while still measuring. */
int kernels_sse2_q8q_gemm_chosen(void);

rmsnorm_fn kernels_rmsnorm_scalar, kernels_rmsnorm_sse2, kernels_rmsnorm_avx2;
softmax_fn kernels_softmax_scalar, kernels_softmax_sse2, kernels_softmax_avx2, kernels_softmax_avx512;
swiglu_fn kernels_swiglu_scalar, kernels_swiglu_sse2, kernels_swiglu_avx2;
add_fn kernels_add_scalar, kernels_add_sse2, kernels_add_avx2;

attend_fn kernels_attend_scalar, kernels_attend_sse2, kernels_attend_avx2, kernels_attend_avx512;
attend_kv_fn kernels_attend_f16_scalar, kernels_attend_f16_sse2, kernels_attend_f16_avx2,
    kernels_attend_f16_avx512;
attend_kv_fn kernels_attend_q8_0_scalar, kernels_attend_q8_0_sse2, kernels_attend_q8_0_avx2,
    kernels_attend_q8_0_avx512;
attend_kv_fn kernels_attend_f32_scalar, kernels_attend_f32_sse2, kernels_attend_f32_avx2,
    kernels_attend_f32_avx512;
attend_kv_tile_fn kernels_attend_f32_tile_scalar, kernels_attend_f32_tile_sse2, kernels_attend_f32_tile_avx2,
    kernels_attend_f32_tile_avx512;
attend_kv_tile_fn kernels_attend_f16_tile_scalar, kernels_attend_f16_tile_sse2, kernels_attend_f16_tile_avx2,
    kernels_attend_f16_tile_avx512;
attend_kv_tile_fn kernels_attend_q8_0_tile_scalar, kernels_attend_q8_0_tile_sse2,
    kernels_attend_q8_0_tile_avx2, kernels_attend_q8_0_tile_avx512;

/* f16_store.c: a KV row to f16 with F16C (the CPU must have it). */
void ggml_fp32_to_fp16_row_f16c(uint16_t *h, const float *x, int n);

/* Row p of a typed KV cache whose rows are row_bytes apart (attend_f16,
 * attend_q8_0). */
static inline const void *kv_cache_row(const void *base, size_t row_bytes, int p) {
    return (const unsigned char *)base + (size_t)p * row_bytes;
}

#endif
