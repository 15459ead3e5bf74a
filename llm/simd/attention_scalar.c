/* attention_scalar.c - plain C reference attention for one head. */
#include "llm/ggml_types.h"
#include "llm/simd/kernel_sets.h"

void kernels_attend_scalar(float *out, float *att, const float *q, const float *keys, const float *values,
                           int stride, int n_pos, int hs, float scale) {
    for (int p = 0; p < n_pos; p++) att[p] = kernels_dot_scalar(q, keys + (long)p * stride, hs) * scale;
    kernels_softmax_scalar(att, n_pos);
    for (int i = 0; i < hs; i++) out[i] = 0.0f;
    for (int p = 0; p < n_pos; p++) kernels_axpy_scalar(out, att[p], values + (long)p * stride, hs);
}

static void attend_f16_one(float *out, float *att, const float *q, const void *keys, const void *values,
                           size_t row_bytes, int n_pos, int hs, float scale) {
    for (int p = 0; p < n_pos; p++) {
        const uint16_t *k = kv_cache_row(keys, row_bytes, p);
        float sum = 0.0f;
        for (int i = 0; i < hs; i++) sum += q[i] * ggml_fp16_to_fp32(k[i]);
        att[p] = sum * scale;
    }
    kernels_softmax_scalar(att, n_pos);
    for (int i = 0; i < hs; i++) out[i] = 0.0f;
    for (int p = 0; p < n_pos; p++) {
        const uint16_t *v = kv_cache_row(values, row_bytes, p);
        for (int i = 0; i < hs; i++) out[i] += att[p] * ggml_fp16_to_fp32(v[i]);
    }
}

/* A q8_0 key: each block's integer-valued dot with q, times its scale. */
static void attend_q8_0_one(float *out, float *att, const float *q, const void *keys, const void *values,
                            size_t row_bytes, int n_pos, int hs, float scale) {
    for (int p = 0; p < n_pos; p++) {
        const BlockQ8_0 *k = kv_cache_row(keys, row_bytes, p);
        float sum = 0.0f;
        for (int b = 0; b < hs / QK32; b++) {
            float block = 0.0f;
            for (int j = 0; j < QK32; j++) block += q[b * QK32 + j] * (float)k[b].qs[j];
            sum += ggml_fp16_to_fp32(k[b].d) * block;
        }
        att[p] = sum * scale;
    }
    kernels_softmax_scalar(att, n_pos);
    for (int i = 0; i < hs; i++) out[i] = 0.0f;
    for (int p = 0; p < n_pos; p++) {
        const BlockQ8_0 *v = kv_cache_row(values, row_bytes, p);
        for (int b = 0; b < hs / QK32; b++) {
            float a = att[p] * ggml_fp16_to_fp32(v[b].d);
            for (int j = 0; j < QK32; j++) out[b * QK32 + j] += a * (float)v[b].qs[j];
        }
    }
}

void kernels_attend_f16_scalar(float *out, float *att, int att_stride, const float *q, int n_q,
                               const void *keys, const void *values, size_t row_bytes, int n_pos, int hs,
                               float scale) {
    attend_each_head(attend_f16_one, out, att, att_stride, q, n_q, keys, values, row_bytes, n_pos, hs, scale);
}

void kernels_attend_q8_0_scalar(float *out, float *att, int att_stride, const float *q, int n_q,
                                const void *keys, const void *values, size_t row_bytes, int n_pos, int hs,
                                float scale) {
    attend_each_head(attend_q8_0_one, out, att, att_stride, q, n_q, keys, values, row_bytes, n_pos, hs,
                     scale);
}
