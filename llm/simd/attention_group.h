/* attention_group.h - the loop of the grouped f16 attention kernels
 * (attention_sse2.c, attention_avx2.c): G (1..4) query heads over one
 * key/value head, each set supplying its scoring and value steps. */
#ifndef LLM_SIMD_ATTENTION_GROUP_H
#define LLM_SIMD_ATTENTION_GROUP_H

#include <xmmintrin.h>

#include "llm/ggml_types.h"
#include "llm/simd/kernel_sets.h"

/* Bytes past the cached row being read that the f16 kernels ask for: each
 * head's rows are sequential, yet the hardware prefetcher alone left
 * attention over 4097 positions of the 1B shape 25% slower (AVX-512, CPU
 * time of the kernels alone: 512-4096 bytes ahead tried, 1024 the best). */
#define KV_PREFETCH_AHEAD 1024

/* Asks for the cache lines KV_PREFETCH_AHEAD past [row, row + bytes). */
static inline __attribute__((always_inline)) void kv_prefetch(const void *row, size_t bytes) {
    for (size_t b = 0; b < bytes; b += 64) _mm_prefetch((const char *)row + KV_PREFETCH_AHEAD + b, _MM_HINT_T0);
}

/* Scores of `count` keys row_bytes apart for G heads, into
 * att[i * att_stride + 0 .. count). */
typedef void scores_group_fn(float *att, int att_stride, const float *q, const void *keys, size_t row_bytes,
                             int count, int hs, float scale, int G);
/* out[i * hs + c .. + lanes * W) = sum_p att_i[p] * v_p[c ..] for G heads. */
typedef void values_group_fn(float *out, const float *att, int att_stride, const void *values,
                             size_t row_bytes, int n_pos, int hs, int c, int W, int G);

/* Keys two or four at a time (fewer as G grows, so G x keys accumulators
 * fit in 16 registers), the softmax per head, the values W vectors of
 * `lanes` columns at a time, and the columns no vector covers one by one.
 * Always inlined, so the steps are direct inlined calls with G constant. */
static inline __attribute__((always_inline)) void
attend_f16_grouped(float *out, float *att, int att_stride, const float *q, const void *keys,
                   const void *values, size_t row_bytes, int n_pos, int hs, float scale, int lanes,
                   scores_group_fn *scores, values_group_fn *weighted, softmax_fn *softmax, const int G) {
    const int K = G <= 2 ? 4 : 2, W = G <= 2 ? 4 : 2;
    int p = 0;
    for (; p + K <= n_pos; p += K) {
        kv_prefetch(kv_cache_row(keys, row_bytes, p), K * row_bytes);
        scores(att + p, att_stride, q, kv_cache_row(keys, row_bytes, p), row_bytes, K, hs, scale, G);
    }
    if (p < n_pos)
        scores(att + p, att_stride, q, kv_cache_row(keys, row_bytes, p), row_bytes, n_pos - p, hs, scale, G);
    for (int i = 0; i < G; i++) softmax(att + (size_t)i * att_stride, n_pos);
    int c = 0;
    for (; c + lanes * W <= hs; c += lanes * W)
        weighted(out, att, att_stride, values, row_bytes, n_pos, hs, c, W, G);
    for (; c + lanes <= hs; c += lanes) weighted(out, att, att_stride, values, row_bytes, n_pos, hs, c, 1, G);
    for (int i = 0; i < G; i++)
        for (int t = c; t < hs; t++) {
            float sum = 0.0f;
            for (int pos = 0; pos < n_pos; pos++)
                sum += att[(size_t)i * att_stride + pos] *
                       ggml_fp16_to_fp32(((const uint16_t *)kv_cache_row(values, row_bytes, pos))[t]);
            out[(size_t)i * hs + t] = sum;
        }
}

#endif
