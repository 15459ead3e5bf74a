/* f32_scalar.c - plain C reference fp32 matmuls, dot and axpy, written for
 * clarity; the SIMD variants are tested against these. */
#include "llm/compute/kernel_sets.h"

void kernels_matmul_scalar(float *out, const float *x, const float *w, int n, int d) {
    for (int i = 0; i < d; i++) {
        const float *row = w + (long)i * n;
        float sum = 0.0f;
        for (int j = 0; j < n; j++) sum += row[j] * x[j];
        out[i] = sum;
    }
}

void kernels_matmul_batch_scalar(float *out, int out_stride, const float *x, int x_stride, int batch,
                                 const float *w, int n, int d) {
    for (int b = 0; b < batch; b++)
        kernels_matmul_scalar(out + (long)b * out_stride, x + (long)b * x_stride, w, n, d);
}

float kernels_dot_scalar(const float *a, const float *b, int n) {
    float sum = 0.0f;
    for (int i = 0; i < n; i++) sum += a[i] * b[i];
    return sum;
}

void kernels_axpy_scalar(float *y, float a, const float *x, int n) {
    for (int i = 0; i < n; i++) y[i] += a * x[i];
}
