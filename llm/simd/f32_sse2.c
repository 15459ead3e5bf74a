/* f32_sse2.c - SSE2 fp32 matmuls, dot and axpy: the x86_64 baseline, and
 * what the kernel runs under QEMU TCG when AVX2 is not enabled. Unaligned
 * loads throughout: legacy checkpoints put the weights at 28 + 4k byte
 * offsets. */
#include "llm/simd/f32_shape.h"
#include "llm/simd/kernel_sets.h"
#include "llm/simd/sse2_ops.h"

/* The matmul's steps: four rows n apart, and one row (a dot). */
static inline __attribute__((always_inline)) __m128 sse2_matmul_rows4(const float *r0, const float *x,
                                                                      int n) {
    return sse2_rows4(r0, n, x, n);
}

void kernels_matmul_sse2(float *out, const float *x, const float *w, int n, int d) {
    f32_matmul_rows(out, x, 1, w, n, d, sse2_matmul_rows4, sse2_dot);
}

void kernels_matmul_batch_sse2(float *out, const float *x, int batch, const float *w, int n, int d) {
    f32_matmul_rows(out, x, batch, w, n, d, sse2_matmul_rows4, sse2_dot);
}

float kernels_dot_sse2(const float *a, const float *b, int n) {
    return sse2_dot(a, b, n);
}

void kernels_axpy_sse2(float *y, float a, const float *x, int n) {
    sse2_axpy(y, a, x, n);
}
