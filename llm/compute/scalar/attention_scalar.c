/* attention_scalar.c - plain C reference attention: one head over an f32
 * cache (llama2.c models), tiles of queries over a GGUF model's f16, f32
 * or q8_0 one. */
#include "llm/tensor/ggml_types.h"
#include "llm/compute/attention_group.h"
#include "llm/compute/kernel_sets.h"

void kernels_attend_scalar(float *out, float *att, const float *q, const float *keys, const float *values,
                           int stride, int n_pos, int hs, float scale) {
    for (int p = 0; p < n_pos; p++) att[p] = kernels_dot_scalar(q, keys + (long)p * stride, hs) * scale;
    kernels_softmax_scalar(att, n_pos);
    for (int i = 0; i < hs; i++) out[i] = 0.0f;
    for (int p = 0; p < n_pos; p++) kernels_axpy_scalar(out, att[p], values + (long)p * stride, hs);
}

/* The tiles read each cached row once for up to four queries (see
 * attention_group.h); each query's sums run in the order they would alone. */

static inline float f16_at(const void *row, int i) {
    return ggml_fp16_to_fp32(((const uint16_t *)row)[i]);
}

/* q . an f16 key row. */
static inline float f16_key_dot(const float *q, const void *row, int hs) {
    float sum = 0.0f;
    for (int j = 0; j < hs; j++) sum += q[j] * f16_at(row, j);
    return sum;
}

/* out += weight * an f16 value row. */
static inline void add_f16_value(float *out, float weight, const void *row, int hs) {
    for (int j = 0; j < hs; j++) out[j] += weight * f16_at(row, j);
}

/* q . an f32 key row, and out += weight * an f32 value row: the llama2.c
 * path's dot and axpy. */
static inline float f32_key_dot(const float *q, const void *row, int hs) {
    return kernels_dot_scalar(q, row, hs);
}

static inline void add_f32_value(float *out, float weight, const void *row, int hs) {
    kernels_axpy_scalar(out, weight, row, hs);
}

/* q . a q8_0 key row: each block's integer-valued dot with q, times its scale. */
static inline float q8_0_key_dot(const float *q, const void *row, int hs) {
    const BlockQ8_0 *k = row;
    float sum = 0.0f;
    for (int b = 0; b < hs / QK32; b++) {
        float block = 0.0f;
        for (int j = 0; j < QK32; j++) block += q[b * QK32 + j] * (float)k[b].qs[j];
        sum += ggml_fp16_to_fp32(k[b].d) * block;
    }
    return sum;
}

/* out += weight * a q8_0 value row: the weight times each block's scale
 * first, then times its integers. */
static inline void add_q8_0_value(float *out, float weight, const void *row, int hs) {
    const BlockQ8_0 *v = row;
    for (int b = 0; b < hs / QK32; b++) {
        float a = weight * ggml_fp16_to_fp32(v[b].d);
        for (int j = 0; j < QK32; j++) out[b * QK32 + j] += a * (float)v[b].qs[j];
    }
}

/* Each cached key scored for the queries that see it, the softmax per
 * query, then out = sum over the positions each query sees of weight *
 * value (key_dot, add_value: one row's share). */
static inline __attribute__((always_inline)) void
tile_rows(const AttendQuery *qs, const uint8_t *keys, const uint8_t *values, size_t row_bytes, int hs,
          float scale, float key_dot(const float *q, const void *row, int hs),
          void add_value(float *out, float weight, const void *row, int hs), const int NQ) {
    int least, most;
    visible_range(qs, NQ, &least, &most);
    for (int p = 0; p < most; p++)
        for (int i = 0; i < NQ; i++)
            if (query_sees(&qs[i], p, least))
                qs[i].att[p] = key_dot(qs[i].q, kv_cache_row(keys, row_bytes, p), hs) * scale;
    for (int i = 0; i < NQ; i++) {
        kernels_softmax_scalar(qs[i].att, qs[i].n_pos);
        for (int j = 0; j < hs; j++) qs[i].out[j] = 0.0f;
    }
    for (int p = 0; p < most; p++)
        for (int i = 0; i < NQ; i++)
            if (query_sees(&qs[i], p, least))
                add_value(qs[i].out, qs[i].att[p], kv_cache_row(values, row_bytes, p), hs);
}

static inline __attribute__((always_inline)) void tile_f16(const AttendQuery *qs, const uint8_t *keys,
                                                           const uint8_t *values, size_t row_bytes, int hs,
                                                           float scale, const int NQ) {
    tile_rows(qs, keys, values, row_bytes, hs, scale, f16_key_dot, add_f16_value, NQ);
}

static inline __attribute__((always_inline)) void tile_f32(const AttendQuery *qs, const uint8_t *keys,
                                                           const uint8_t *values, size_t row_bytes, int hs,
                                                           float scale, const int NQ) {
    tile_rows(qs, keys, values, row_bytes, hs, scale, f32_key_dot, add_f32_value, NQ);
}

static inline __attribute__((always_inline)) void tile_q8_0(const AttendQuery *qs, const uint8_t *keys,
                                                            const uint8_t *values, size_t row_bytes, int hs,
                                                            float scale, const int NQ) {
    tile_rows(qs, keys, values, row_bytes, hs, scale, q8_0_key_dot, add_q8_0_value, NQ);
}

void kernels_attend_f16_scalar(float *out, float *att, int att_stride, const float *q, int n_q,
                               const void *keys, const void *values, size_t row_bytes, int n_pos, int hs,
                               float scale) {
    heads_as_tiles(tile_f16, out, att, att_stride, q, n_q, keys, values, row_bytes, n_pos, hs, scale);
}

void kernels_attend_q8_0_scalar(float *out, float *att, int att_stride, const float *q, int n_q,
                                const void *keys, const void *values, size_t row_bytes, int n_pos, int hs,
                                float scale) {
    heads_as_tiles(tile_q8_0, out, att, att_stride, q, n_q, keys, values, row_bytes, n_pos, hs, scale);
}

void kernels_attend_f16_tile_scalar(const AttendQuery *qs, int n, const void *keys, const void *values,
                                    size_t row_bytes, int hs, float scale) {
    in_tiles(tile_f16, qs, n, keys, values, row_bytes, hs, scale);
}

void kernels_attend_q8_0_tile_scalar(const AttendQuery *qs, int n, const void *keys, const void *values,
                                     size_t row_bytes, int hs, float scale) {
    in_tiles(tile_q8_0, qs, n, keys, values, row_bytes, hs, scale);
}

void kernels_attend_f32_scalar(float *out, float *att, int att_stride, const float *q, int n_q,
                               const void *keys, const void *values, size_t row_bytes, int n_pos, int hs,
                               float scale) {
    heads_as_tiles(tile_f32, out, att, att_stride, q, n_q, keys, values, row_bytes, n_pos, hs, scale);
}

void kernels_attend_f32_tile_scalar(const AttendQuery *qs, int n, const void *keys, const void *values,
                                    size_t row_bytes, int hs, float scale) {
    in_tiles(tile_f32, qs, n, keys, values, row_bytes, hs, scale);
}
