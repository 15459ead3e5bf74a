/* f16_store.c - rows of floats to f16, as the KV cache stores them
 * (KernelSet.store_f16): with F16C (vcvtps2ph, round to nearest even) eight
 * values an instruction, else one value at a time (normal halves inline).
 * Both give the same bits for every float (tests/host/test_fp16.c compares
 * them), so a cache written on one path reads the same on the other. The
 * AVX2 and AVX-512 sets (which need F16C) take the F16C row directly; the
 * scalar and SSE2 sets take ggml_fp32_to_fp16_row, which still uses F16C
 * where the CPU has it (as QEMU's TCG CPUs do when the probe picks SSE2). */
#include <immintrin.h>

#include "llm/compute/cpu_features.h"
#include "llm/compute/kernel_sets.h"
#include "llm/tensor/ggml_types.h"

#define TARGET_F16C __attribute__((target("avx,f16c")))

TARGET_F16C void ggml_fp32_to_fp16_row_f16c(uint16_t *h, const float *x, int n) {
    int i = 0;
    for (; i + 8 <= n; i += 8)
        _mm_storeu_si128((__m128i *)(h + i),
                         _mm256_cvtps_ph(_mm256_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT));
    for (; i < n; i++) h[i] = ggml_fp32_to_fp16(x[i]);
}

/* ggml_fp32_to_fp16 inline for the values a half holds as a normal number
 * (every cached k and v in practice), the rest through it. Adding 0xfff
 * plus the kept part's lowest bit carries into it exactly when the dropped
 * 13 bits round it up to even; a carry out of the mantissa steps the
 * exponent, as rounding up should. Same bits as ggml_fp32_to_fp16. */
static inline uint16_t fp16_of(float f) {
    uint32_t u;
    __builtin_memcpy(&u, &f, 4);
    uint32_t abs = u & 0x7fffffffu;
    if (abs < 0x38800000u || abs >= 0x477ff000u) return ggml_fp32_to_fp16(f);
    uint32_t rebased = abs - (112u << 23);
    return (uint16_t)(((u >> 16) & 0x8000) | ((rebased + 0xfff + ((rebased >> 13) & 1)) >> 13));
}

void ggml_fp32_to_fp16_row(uint16_t *h, const float *x, int n) {
    if (cpu_features()->f16c) {
        ggml_fp32_to_fp16_row_f16c(h, x, n);
        return;
    }
    for (int i = 0; i < n; i++) h[i] = fp16_of(x[i]);
}
