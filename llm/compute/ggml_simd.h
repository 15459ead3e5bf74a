/* ggml_simd.h - internal: the SIMD dot products and matmuls of ggml weight
 * rows with quantised activations, one file per type family and
 * instruction set (q4_0_sse2.c, q4_0_avx2.c, q4_0_avx512.c, ...), each
 * exporting a GgmlKernel per type; ggml_dispatch.c picks among them for the
 * active kernel set. Loop shapes an instruction set's files share are
 * inline helpers in ggml_sse2.h, ggml_avx2.h and ggml_avx512.h, taking the
 * per-type step. Integer sums are exact, so every variant agrees with the
 * scalar reference (ggml_scalar.c) up to float summation order. */
#ifndef LLM_SIMD_GGML_SIMD_H
#define LLM_SIMD_GGML_SIMD_H

#include <immintrin.h>
#include <stdint.h>

#include "llm/tensor/ggml_blocks.h"
#include "llm/compute/target.h"

/* A per-type step handed to a shared loop helper as a constant: inlined
 * there, whatever the compiler's size heuristics say. */
#define STEP static inline __attribute__((always_inline))

/* One type's kernels in one instruction set: the single-row dot, the
 * multi-row matmul and the rows-by-positions gemm (NULL when the type has
 * none in that set). */
typedef struct {
    ggml_vec_dot_fn dot;
    ggml_matmul_fn matmul;
    ggml_gemm_fn gemm;
} GgmlKernel;

extern const GgmlKernel ggml_q8_0_sse2, ggml_q8_0_avx2, ggml_q8_0_avx512;
extern const GgmlKernel ggml_q4_0_sse2, ggml_q4_0_avx2, ggml_q4_0_avx512;
extern const GgmlKernel ggml_q4_1_sse2, ggml_q4_1_avx2, ggml_q5_0_sse2, ggml_q5_0_avx2;
extern const GgmlKernel ggml_q5_1_sse2, ggml_q5_1_avx2;
extern const GgmlKernel ggml_q2_k_sse2, ggml_q2_k_avx2, ggml_q3_k_sse2, ggml_q3_k_avx2;
extern const GgmlKernel ggml_q4_k_sse2, ggml_q4_k_avx2, ggml_q4_k_avx512;
extern const GgmlKernel ggml_q5_k_sse2, ggml_q5_k_avx2;
extern const GgmlKernel ggml_q6_k_sse2, ggml_q6_k_avx2, ggml_q6_k_avx512;
extern const GgmlKernel ggml_f16_sse2, ggml_f16_avx2, ggml_f16_avx512;
extern const GgmlKernel ggml_bf16_sse2, ggml_bf16_avx2, ggml_bf16_avx512;

/* The AVX-512 activation quantisers (q8_act_avx512.c): the scalar bytes. */
void ggml_quantize_act_q8a_avx512(void *out, const float *x, int n);
void ggml_quantize_act_q8k_avx512(void *out, const float *x, int n);

/* The dot product of one row run through a multi-row matmul, so a row's
 * dot and its matmul row are the same number. */
static inline float dot_by_matmul(ggml_matmul_fn matmul, const void *row, const void *act, int n) {
    float out;
    matmul(&out, row, 0, act, n, 1);
    return out;
}

/* A type's block step for the single-row k-quant dots: one block's
 * contribution to the row's sum. */
typedef float (*k_block_fn)(const void *w, const BlockQ8K *a);

/* The dot product of a row of k-quant blocks (block_bytes each), block by
 * block; inlined for each type: block is a constant. */
static inline __attribute__((always_inline)) float k_row_dot(const void *row, const void *act, int n,
                                                             size_t block_bytes, k_block_fn block) {
    const uint8_t *w = row;
    const BlockQ8K *a = act;
    float sum = 0;
    for (int b = 0; b < n / QK_K; b++) sum += block(w + (size_t)b * block_bytes, &a[b]);
    return sum;
}

/* Sum over the eight 32-value groups of a Q4_K/Q5_K block of min j times
 * the group's activation sum (two bsums). */
static inline int k4_min_sum(const uint8_t m[8], const int16_t bsums[16]) {
    int sum = 0;
    for (int j = 0; j < 8; j++) sum += m[j] * (bsums[2 * j] + bsums[2 * j + 1]);
    return sum;
}

/* Sum over 16 sub-blocks of mins[s] * bsums[s] (both small). */
static inline int min_sum16(const int mins[16], const int16_t bsums[16]) {
    int sum = 0;
    for (int s = 0; s < 16; s++) sum += mins[s] * bsums[s];
    return sum;
}

/* A k-quant block's float contribution from its integer sums: the scaled
 * values minus the scaled mins, times the activation scale. */
static inline float k_block_sum(float ad, uint16_t d, uint16_t dmin, int isum, int msum) {
    return ad * (half_scale(d) * (float)isum - half_scale(dmin) * (float)msum);
}

#endif
