/* int8_shape.h - the int8 matmuls' loops over weight rows, shared by the
 * SSE2 and AVX2 sets, which supply their dot steps. Always inlined, so each
 * set's steps become direct, inlined calls. */
#ifndef LLM_SIMD_INT8_SHAPE_H
#define LLM_SIMD_INT8_SHAPE_H

#include <emmintrin.h>
#include <stdbool.h>
#include <stdint.h>

/* sum_j q[j] * x[j] over a run of weights that share one scale. */
typedef float int8_run_dot_fn(const int8_t *q, const float *x, int len);

/* out[i] = sum_j q[i*n + j] * s[(i*n + j) / gs] * x[j]: each row walked in
 * runs that share one scale (groups may straddle rows). */
static inline __attribute__((always_inline)) void int8_matmul_by_runs(float *out, const float *x,
                                                                      const int8_t *q, const float *s, int n,
                                                                      int d, int gs,
                                                                      int8_run_dot_fn *run_dot) {
    for (int i = 0; i < d; i++) {
        long k = (long)i * n;
        float sum = 0.0f;
        for (int j = 0; j < n;) {
            long group = k / gs;
            long run = (group + 1) * gs - k;
            int len = run < n - j ? (int)run : n - j;
            sum += s[group] * run_dot(q + k, x + j, len);
            j += len;
            k += len;
        }
        out[i] = sum;
    }
}

/* Four weight rows (w0, w0 + n, ...; scales ws0, ws0 + n/gs, ...) against
 * one token x (scales xs); `ahead` is the next block to prefetch, or NULL. */
typedef __m128 int8_q8q_rows4_fn(const int8_t *w0, const float *ws0, const int16_t *x, const float *xs, int n,
                                 int gs, const int8_t *ahead);
/* One row against one token. */
typedef float int8_q8q_row1_fn(const int8_t *w, const float *ws, const int16_t *x, const float *xs, int n,
                               int gs);

/* The int8 x int8 matmul (see matmul_q8q_fn in kernels.h): row blocks of
 * four outside, tokens inside, so a block stays in L1 for the whole batch. */
static inline __attribute__((always_inline)) void
int8_matmul_q8q_rows(float *out, const int16_t *xq, const float *xs, int batch, const int8_t *wq,
                     const float *ws, int n, int d, int gs, bool prefetch, int8_q8q_rows4_fn *rows4,
                     int8_q8q_row1_fn *row1) {
    int groups = n / gs, i = 0;
    for (; i + 4 <= d; i += 4) {
        /* Prefetch only for one token (decode): a batch rereads the rows from L1. */
        const int8_t *ahead = prefetch && batch == 1 && i + 8 <= d ? wq + (long)(i + 4) * n : 0;
        for (int b = 0; b < batch; b++)
            _mm_storeu_ps(out + (long)b * d + i,
                          rows4(wq + (long)i * n, ws + (long)i * groups, xq + (long)b * n,
                                xs + (long)b * groups, n, gs, ahead));
    }
    for (; i < d; i++)
        for (int b = 0; b < batch; b++)
            out[(long)b * d + i] =
                row1(wq + (long)i * n, ws + (long)i * groups, xq + (long)b * n, xs + (long)b * groups, n, gs);
}

#endif
