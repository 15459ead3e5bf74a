/* vec_scalar.c - plain C reference elementwise kernels (lib expf). */
#include "lib/math.h"
#include "llm/compute/kernel_sets.h"

void kernels_rmsnorm_scalar(float *out, const float *x, const float *weight, int n) {
    float ss = 0.0f;
    for (int i = 0; i < n; i++) ss += x[i] * x[i];
    float scale = 1.0f / sqrtf(ss / n + 1e-5f);
    for (int i = 0; i < n; i++) out[i] = weight[i] * (scale * x[i]);
}

void kernels_softmax_scalar(float *x, int n) {
    float max = x[0];
    for (int i = 1; i < n; i++)
        if (x[i] > max) max = x[i];
    float sum = 0.0f;
    for (int i = 0; i < n; i++) {
        x[i] = expf(x[i] - max);
        sum += x[i];
    }
    float inv = 1.0f / sum;
    for (int i = 0; i < n; i++) x[i] *= inv;
}

void kernels_swiglu_scalar(float *a, const float *b, int n) {
    for (int i = 0; i < n; i++) {
        float v = a[i];
        a[i] = v / (1.0f + expf(-v)) * b[i];
    }
}

void kernels_add_scalar(float *x, const float *y, int n) {
    for (int i = 0; i < n; i++) x[i] += y[i];
}
