/* q8_0_store.h - rows of floats to q8_0 blocks, as the KV cache stores
 * them (kv_store_row): per block of 32, d = max |x| / 127 kept in f16 and
 * each x * (1 / d) rounded half away from zero, as ggml's reference
 * quantiser. Every variant gives the scalar one's bytes (the vector ones
 * round with a truncation and the exact remainder, as lib's roundf does,
 * never the CPU's round-half-to-even); tests/host/test_kv_store.c compares
 * them. Each kernel set has one (KernelSet.store_q8_0). */
#ifndef LLM_SIMD_Q8_0_STORE_H
#define LLM_SIMD_Q8_0_STORE_H

#include "llm/tensor/ggml_types.h"

/* n / 32 blocks of x into out. */
typedef void q8_0_store_fn(BlockQ8_0 *out, const float *x, int n);
q8_0_store_fn q8_0_store_scalar, q8_0_store_sse2, q8_0_store_avx2, q8_0_store_avx512;

#endif
