/* f32_sse2.c - SSE2 fp32 matmuls, dot and axpy: the x86_64 baseline, and
 * what the kernel runs under QEMU TCG when AVX2 is not enabled. Unaligned
 * loads throughout: legacy checkpoints put the weights at 28 + 4k byte
 * offsets. */
#include "llm/simd/kernel_sets.h"
#include "llm/simd/sse2_ops.h"

/* Four rows (r0, r0 + n, ...) dotted with x, so each x load feeds four rows. */
static inline __m128 sse2_rows4(const float *r0, const float *x, int n) {
    const float *r1 = r0 + n, *r2 = r1 + n, *r3 = r2 + n;
    int n4 = n & ~3;
    __m128 a0 = _mm_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    for (int j = 0; j < n4; j += 4) {
        __m128 xv = _mm_loadu_ps(x + j);
        a0 = _mm_add_ps(a0, _mm_mul_ps(_mm_loadu_ps(r0 + j), xv));
        a1 = _mm_add_ps(a1, _mm_mul_ps(_mm_loadu_ps(r1 + j), xv));
        a2 = _mm_add_ps(a2, _mm_mul_ps(_mm_loadu_ps(r2 + j), xv));
        a3 = _mm_add_ps(a3, _mm_mul_ps(_mm_loadu_ps(r3 + j), xv));
    }
    __m128 sums = sse2_hsum4(a0, a1, a2, a3);
    if (n4 < n) {
        float t[4] = {0, 0, 0, 0};
        for (int j = n4; j < n; j++) {
            t[0] += r0[j] * x[j];
            t[1] += r1[j] * x[j];
            t[2] += r2[j] * x[j];
            t[3] += r3[j] * x[j];
        }
        sums = _mm_add_ps(sums, _mm_loadu_ps(t));
    }
    return sums;
}

static inline float sse2_row1(const float *row, const float *x, int n) {
    int n4 = n & ~3;
    __m128 acc = _mm_setzero_ps();
    for (int j = 0; j < n4; j += 4)
        acc = _mm_add_ps(acc, _mm_mul_ps(_mm_loadu_ps(row + j), _mm_loadu_ps(x + j)));
    float sum = sse2_hsum(acc);
    for (int j = n4; j < n; j++) sum += row[j] * x[j];
    return sum;
}

void kernels_matmul_sse2(float *out, const float *x, const float *w, int n, int d) {
    int i = 0;
    for (; i + 4 <= d; i += 4) _mm_storeu_ps(out + i, sse2_rows4(w + (long)i * n, x, n));
    for (; i < d; i++) out[i] = sse2_row1(w + (long)i * n, x, n);
}

/* Row block outside, tokens inside: a block of four rows stays in L1 while
 * every token of the batch uses it. */
void kernels_matmul_batch_sse2(float *out, const float *x, int batch, const float *w, int n, int d) {
    int i = 0;
    for (; i + 4 <= d; i += 4)
        for (int b = 0; b < batch; b++)
            _mm_storeu_ps(out + (long)b * d + i, sse2_rows4(w + (long)i * n, x + (long)b * n, n));
    for (; i < d; i++)
        for (int b = 0; b < batch; b++) out[(long)b * d + i] = sse2_row1(w + (long)i * n, x + (long)b * n, n);
}

float kernels_dot_sse2(const float *a, const float *b, int n) {
    return sse2_dot(a, b, n);
}

void kernels_axpy_sse2(float *y, float a, const float *x, int n) {
    sse2_axpy(y, a, x, n);
}
