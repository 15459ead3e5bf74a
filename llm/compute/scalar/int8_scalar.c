/* int8_scalar.c - plain C reference int8 matmuls (the SIMD variants are
 * tested against these). */
#include "llm/compute/kernel_sets.h"

void kernels_matmul_q8_scalar(float *out, const float *x, const int8_t *q, const float *s, int n, int d,
                              int group_size) {
    for (int i = 0; i < d; i++) {
        long base = (long)i * n;
        float sum = 0.0f;
        for (int j = 0; j < n; j++) sum += (float)q[base + j] * s[(base + j) / group_size] * x[j];
        out[i] = sum;
    }
}

void kernels_matmul_q8q_scalar(float *out, const int16_t *xq, const float *xs, int batch, const int8_t *wq,
                               const float *ws, int n, int d, int group_size) {
    int groups = n / group_size;
    for (int b = 0; b < batch; b++) {
        const int16_t *xb = xq + (long)b * n;
        const float *xsb = xs + (long)b * groups;
        for (int i = 0; i < d; i++) {
            const int8_t *row = wq + (long)i * n;
            float sum = 0.0f;
            for (int g = 0; g < groups; g++) {
                int32_t isum = 0;
                for (int j = g * group_size; j < (g + 1) * group_size; j++) isum += (int32_t)row[j] * xb[j];
                sum += (float)isum * (ws[(long)i * groups + g] * xsb[g]);
            }
            out[(long)b * d + i] = sum;
        }
    }
}
