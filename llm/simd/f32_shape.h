/* f32_shape.h - the fp32 matmul's loop over weight rows, shared by every
 * instruction set, which supplies its four-row and one-row dot steps. */
#ifndef LLM_SIMD_F32_SHAPE_H
#define LLM_SIMD_F32_SHAPE_H

#include <emmintrin.h>

/* Four rows (r0, r0 + n, ...) dotted with x; one row dotted with x. */
typedef __m128 f32_rows4_fn(const float *r0, const float *x, int n);
typedef float f32_row1_fn(const float *row, const float *x, int n);

/* sums + (r0 . x, r1 . x, r2 . x, r3 . x) over the columns [from, n) that
 * a vector loop left, rows stride apart; scalar, added once at the end. */
static inline __m128 f32_rows4_tail(__m128 sums, const float *r0, long stride, const float *x, int from,
                                    int n) {
    if (from < n) {
        const float *r1 = r0 + stride, *r2 = r1 + stride, *r3 = r2 + stride;
        float t[4] = {0, 0, 0, 0};
        for (int j = from; j < n; j++) {
            t[0] += r0[j] * x[j];
            t[1] += r1[j] * x[j];
            t[2] += r2[j] * x[j];
            t[3] += r3[j] * x[j];
        }
        sums = _mm_add_ps(sums, _mm_loadu_ps(t));
    }
    return sums;
}

/* out[b*d + i] = row i of w (d rows of n) . token b of x (batch of n).
 * Row block outside, tokens inside: a block of four rows stays in L1 while
 * every token of the batch uses it, and each token's arithmetic is the same
 * as alone. Always inlined, so each set's steps are direct inlined calls. */
static inline __attribute__((always_inline)) void f32_matmul_rows(float *out, const float *x, int batch,
                                                                  const float *w, int n, int d,
                                                                  f32_rows4_fn *rows4, f32_row1_fn *row1) {
    int i = 0;
    for (; i + 4 <= d; i += 4)
        for (int b = 0; b < batch; b++)
            _mm_storeu_ps(out + (long)b * d + i, rows4(w + (long)i * n, x + (long)b * n, n));
    for (; i < d; i++)
        for (int b = 0; b < batch; b++) out[(long)b * d + i] = row1(w + (long)i * n, x + (long)b * n, n);
}

#endif
