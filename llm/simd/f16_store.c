/* f16_store.c - rows of floats to f16, as the KV cache stores them: with
 * F16C (vcvtps2ph, round to nearest even) eight values an instruction when
 * the CPU has it, else ggml_fp32_to_fp16 one value at a time. Both give the
 * same bits for every float (tests/host/test_kernels.c compares them), so
 * a cache written on one path reads the same on the other. */
#include <immintrin.h>

#include "llm/cpu_features.h"
#include "llm/ggml_types.h"

#define TARGET_F16C __attribute__((target("avx,f16c")))

TARGET_F16C static void fp16_row_f16c(uint16_t *h, const float *x, int n) {
    int i = 0;
    for (; i + 8 <= n; i += 8)
        _mm_storeu_si128((__m128i *)(h + i), _mm256_cvtps_ph(_mm256_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT));
    for (; i < n; i++) h[i] = ggml_fp32_to_fp16(x[i]);
}

void ggml_fp32_to_fp16_row(uint16_t *h, const float *x, int n) {
    if (cpu_features()->f16c) {
        fp16_row_f16c(h, x, n);
        return;
    }
    for (int i = 0; i < n; i++) h[i] = ggml_fp32_to_fp16(x[i]);
}
