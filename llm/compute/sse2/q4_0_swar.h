/* q4_0_swar.h - the Q4_0 prefill gemm in 64-bit general-purpose registers
 * (see q4_0_swar.c), used by the SSE2 set where it measures faster. */
#ifndef LLM_SIMD_Q4_0_SWAR_H
#define LLM_SIMD_Q4_0_SWAR_H

#include <stddef.h>
#include <stdint.h>

/* ggml_gemm_fn for Q4_0 rows and Q8A activations (values -127..127), the
 * SSE2 gemm's bits. */
void q4_0_swar_gemm(float *out, size_t out_stride, const uint8_t *rows, size_t row_bytes, const void *act,
                    size_t act_stride, int n, int count, int batch);

#endif
