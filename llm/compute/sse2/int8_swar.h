/* int8_swar.h - the int8 x int8 prefill gemm in 64-bit general-purpose
 * registers (see int8_swar.c), used by the SSE2 set where it measures faster. */
#ifndef LLM_SIMD_INT8_SWAR_H
#define LLM_SIMD_INT8_SWAR_H

#include <stdint.h>

/* Widest group it takes (gs % 16 == 0). */
#define INT8_SWAR_MAX_GROUP 256

/* matmul_q8q (kernels.h) for rows 0..rows4-1 (rows4 % 4 == 0, rows4 <= d;
 * the caller does the rest), activations in -127..127, gs <= INT8_SWAR_MAX_GROUP.
 * Bit-identical to the one-position kernels. */
void int8_swar_gemm_rows4(float *out, const int16_t *xq, const float *xs, int batch, const int8_t *wq,
                          const float *ws, int n, int d, int rows4, int gs);

#endif
