/* kernels_scalar.c - plain C reference versions of every kernel, written
 * for clarity; the SIMD variants are tested against these. */
#include "lib/math.h"
#include "llm/kernels.h"

static void matmul_scalar(float *out, const float *x, const float *w, int n, int d) {
    for (int i = 0; i < d; i++) {
        const float *row = w + (long)i * n;
        float sum = 0.0f;
        for (int j = 0; j < n; j++) sum += row[j] * x[j];
        out[i] = sum;
    }
}

static void matmul_q8_scalar(float *out, const float *x, const int8_t *q, const float *s, int n, int d,
                             int group_size) {
    for (int i = 0; i < d; i++) {
        long base = (long)i * n;
        float sum = 0.0f;
        for (int j = 0; j < n; j++) sum += (float)q[base + j] * s[(base + j) / group_size] * x[j];
        out[i] = sum;
    }
}

static void matmul_batch_scalar(float *out, const float *x, int batch, const float *w, int n, int d) {
    for (int b = 0; b < batch; b++) matmul_scalar(out + (long)b * d, x + (long)b * n, w, n, d);
}

static void matmul_q8q_scalar(float *out, const int16_t *xq, const float *xs, int batch, const int8_t *wq,
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

static float dot_scalar(const float *a, const float *b, int n) {
    float sum = 0.0f;
    for (int i = 0; i < n; i++) sum += a[i] * b[i];
    return sum;
}

static void axpy_scalar(float *y, float a, const float *x, int n) {
    for (int i = 0; i < n; i++) y[i] += a * x[i];
}

static void rmsnorm_scalar(float *out, const float *x, const float *weight, int n) {
    float ss = 0.0f;
    for (int i = 0; i < n; i++) ss += x[i] * x[i];
    float scale = 1.0f / sqrtf(ss / n + 1e-5f);
    for (int i = 0; i < n; i++) out[i] = weight[i] * (scale * x[i]);
}

static void softmax_scalar(float *x, int n) {
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

static void swiglu_scalar(float *a, const float *b, int n) {
    for (int i = 0; i < n; i++) {
        float v = a[i];
        a[i] = v / (1.0f + expf(-v)) * b[i];
    }
}

static void add_scalar(float *x, const float *y, int n) {
    for (int i = 0; i < n; i++) x[i] += y[i];
}

static void attend_scalar(float *out, float *att, const float *q, const float *keys, const float *values,
                          int stride, int n_pos, int hs, float scale) {
    for (int p = 0; p < n_pos; p++) att[p] = dot_scalar(q, keys + (long)p * stride, hs) * scale;
    softmax_scalar(att, n_pos);
    for (int i = 0; i < hs; i++) out[i] = 0.0f;
    for (int p = 0; p < n_pos; p++) axpy_scalar(out, att[p], values + (long)p * stride, hs);
}

const KernelSet kernels_scalar = {
    .name = "scalar",
    .matmul = matmul_scalar,
    .matmul_q8 = matmul_q8_scalar,
    .matmul_batch = matmul_batch_scalar,
    .matmul_q8q = matmul_q8q_scalar,
    .dot = dot_scalar,
    .axpy = axpy_scalar,
    .rmsnorm = rmsnorm_scalar,
    .softmax = softmax_scalar,
    .swiglu = swiglu_scalar,
    .add = add_scalar,
    .attend = attend_scalar,
};
