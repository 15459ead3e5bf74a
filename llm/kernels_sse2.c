/* kernels_sse2.c - SSE2 kernels: the x86_64 baseline, and what the kernel
 * runs under QEMU TCG when AVX2 is not enabled. Unaligned loads throughout:
 * legacy checkpoints put the weights at 28 + 4k byte offsets. */
#include <emmintrin.h>

#include "lib/math.h"
#include "lib/string.h"
#include "llm/kernels.h"

/* Sums each of a0..a3 horizontally: returns (sum a0, sum a1, sum a2, sum a3). */
static inline __m128 sse2_hsum4(__m128 a0, __m128 a1, __m128 a2, __m128 a3) {
    __m128 s01 = _mm_add_ps(_mm_unpacklo_ps(a0, a1), _mm_unpackhi_ps(a0, a1));
    __m128 s23 = _mm_add_ps(_mm_unpacklo_ps(a2, a3), _mm_unpackhi_ps(a2, a3));
    return _mm_add_ps(_mm_movelh_ps(s01, s23), _mm_movehl_ps(s23, s01));
}

static inline float sse2_hsum(__m128 v) {
    __m128 shuf = _mm_shuffle_ps(v, v, _MM_SHUFFLE(2, 3, 0, 1));
    __m128 sums = _mm_add_ps(v, shuf);
    shuf = _mm_movehl_ps(shuf, sums);
    return _mm_cvtss_f32(_mm_add_ss(sums, shuf));
}

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

static void matmul_sse2(float *out, const float *x, const float *w, int n, int d) {
    int i = 0;
    for (; i + 4 <= d; i += 4) _mm_storeu_ps(out + i, sse2_rows4(w + (long)i * n, x, n));
    for (; i < d; i++) out[i] = sse2_row1(w + (long)i * n, x, n);
}

/* Row block outside, tokens inside: a block of four rows stays in L1 while
 * every token of the batch uses it. */
static void matmul_batch_sse2(float *out, const float *x, int batch, const float *w, int n, int d) {
    int i = 0;
    for (; i + 4 <= d; i += 4)
        for (int b = 0; b < batch; b++)
            _mm_storeu_ps(out + (long)b * d + i, sse2_rows4(w + (long)i * n, x + (long)b * n, n));
    for (; i < d; i++)
        for (int b = 0; b < batch; b++) out[(long)b * d + i] = sse2_row1(w + (long)i * n, x + (long)b * n, n);
}

/* ---------------------------------------------------------------- int8 x int8
 * Under QEMU TCG every guest instruction costs about the same, so the inner
 * loop is kept short: per 16 weights and row, one load, two unpacks into the
 * HIGH byte of int16 lanes (w * 256: no shift needed to sign-extend) and two
 * pmaddwd + paddd. The 256 is folded into the group scale (exact). */

/* int32 lanes of sum_j w[j] * 256 * x[j] over one group. */
static inline __m128i sse2_group_dot(const int8_t *w, const int16_t *x, int gs) {
    const __m128i zero = _mm_setzero_si128();
    __m128i acc = zero;
    for (int j = 0; j < gs; j += 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(w + j));
        acc = _mm_add_epi32(
            acc, _mm_madd_epi16(_mm_unpacklo_epi8(zero, v), _mm_loadu_si128((const __m128i *)(x + j))));
        acc = _mm_add_epi32(
            acc, _mm_madd_epi16(_mm_unpackhi_epi8(zero, v), _mm_loadu_si128((const __m128i *)(x + j + 8))));
    }
    return acc;
}

/* Four rows against one token; ws0 = row 0's scales (rows are `groups` apart). */
static inline __m128 sse2_q8q_rows4(const int8_t *w0, const float *ws0, const int16_t *x, const float *xs,
                                    int n, int gs) {
    const __m128i zero = _mm_setzero_si128();
    const int8_t *w1 = w0 + n, *w2 = w1 + n, *w3 = w2 + n;
    int groups = n / gs;
    const float *ws1 = ws0 + groups, *ws2 = ws1 + groups, *ws3 = ws2 + groups;
    __m128 f0 = _mm_setzero_ps(), f1 = f0, f2 = f0, f3 = f0;
    for (int g = 0, base = 0; g < groups; g++, base += gs) {
        __m128i a0 = zero, a1 = zero, a2 = zero, a3 = zero;
        for (int j = base; j < base + gs; j += 16) {
            __m128i xl = _mm_loadu_si128((const __m128i *)(x + j));
            __m128i xh = _mm_loadu_si128((const __m128i *)(x + j + 8));
            __m128i v0 = _mm_loadu_si128((const __m128i *)(w0 + j));
            __m128i v1 = _mm_loadu_si128((const __m128i *)(w1 + j));
            a0 = _mm_add_epi32(a0, _mm_madd_epi16(_mm_unpacklo_epi8(zero, v0), xl));
            a1 = _mm_add_epi32(a1, _mm_madd_epi16(_mm_unpacklo_epi8(zero, v1), xl));
            a0 = _mm_add_epi32(a0, _mm_madd_epi16(_mm_unpackhi_epi8(zero, v0), xh));
            a1 = _mm_add_epi32(a1, _mm_madd_epi16(_mm_unpackhi_epi8(zero, v1), xh));
            __m128i v2 = _mm_loadu_si128((const __m128i *)(w2 + j));
            __m128i v3 = _mm_loadu_si128((const __m128i *)(w3 + j));
            a2 = _mm_add_epi32(a2, _mm_madd_epi16(_mm_unpacklo_epi8(zero, v2), xl));
            a3 = _mm_add_epi32(a3, _mm_madd_epi16(_mm_unpacklo_epi8(zero, v3), xl));
            a2 = _mm_add_epi32(a2, _mm_madd_epi16(_mm_unpackhi_epi8(zero, v2), xh));
            a3 = _mm_add_epi32(a3, _mm_madd_epi16(_mm_unpackhi_epi8(zero, v3), xh));
        }
        float xsg = xs[g] * (1.0f / 256.0f);
        f0 = _mm_add_ps(f0, _mm_mul_ps(_mm_cvtepi32_ps(a0), _mm_set1_ps(ws0[g] * xsg)));
        f1 = _mm_add_ps(f1, _mm_mul_ps(_mm_cvtepi32_ps(a1), _mm_set1_ps(ws1[g] * xsg)));
        f2 = _mm_add_ps(f2, _mm_mul_ps(_mm_cvtepi32_ps(a2), _mm_set1_ps(ws2[g] * xsg)));
        f3 = _mm_add_ps(f3, _mm_mul_ps(_mm_cvtepi32_ps(a3), _mm_set1_ps(ws3[g] * xsg)));
    }
    return sse2_hsum4(f0, f1, f2, f3);
}

static inline float sse2_q8q_row1(const int8_t *w, const float *ws, const int16_t *x, const float *xs, int n,
                                  int gs) {
    __m128 f = _mm_setzero_ps();
    for (int g = 0, base = 0; base < n; g++, base += gs) {
        __m128i a = sse2_group_dot(w + base, x + base, gs);
        f = _mm_add_ps(f, _mm_mul_ps(_mm_cvtepi32_ps(a), _mm_set1_ps(ws[g] * (xs[g] * (1.0f / 256.0f)))));
    }
    return sse2_hsum(f);
}

static void matmul_q8q_sse2(float *out, const int16_t *xq, const float *xs, int batch, const int8_t *wq,
                            const float *ws, int n, int d, int gs) {
    int groups = n / gs, i = 0;
    for (; i + 4 <= d; i += 4)
        for (int b = 0; b < batch; b++)
            _mm_storeu_ps(out + (long)b * d + i,
                          sse2_q8q_rows4(wq + (long)i * n, ws + (long)i * groups, xq + (long)b * n,
                                         xs + (long)b * groups, n, gs));
    for (; i < d; i++)
        for (int b = 0; b < batch; b++)
            out[(long)b * d + i] = sse2_q8q_row1(wq + (long)i * n, ws + (long)i * groups, xq + (long)b * n,
                                                 xs + (long)b * groups, n, gs);
}

/* Sign-extends four int8 values held in the low 32 bits of v to floats. */
static inline __m128 sse2_i8x4_to_ps(__m128i v) {
    __m128i w16 = _mm_unpacklo_epi8(v, v);      /* each byte doubled: b b */
    __m128i w32 = _mm_unpacklo_epi16(w16, w16); /* b b b b per lane */
    return _mm_cvtepi32_ps(_mm_srai_epi32(w32, 24));
}

/* sum_j q[j] * x[j] for one run of weights that share a scale. */
static inline float sse2_dot_q8(const int8_t *q, const float *x, int len) {
    __m128 acc0 = _mm_setzero_ps(), acc1 = acc0;
    int j = 0;
    for (; j + 16 <= len; j += 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(q + j));
        __m128i lo = _mm_unpacklo_epi8(v, v), hi = _mm_unpackhi_epi8(v, v);
        __m128 f0 = _mm_cvtepi32_ps(_mm_srai_epi32(_mm_unpacklo_epi16(lo, lo), 24));
        __m128 f1 = _mm_cvtepi32_ps(_mm_srai_epi32(_mm_unpackhi_epi16(lo, lo), 24));
        __m128 f2 = _mm_cvtepi32_ps(_mm_srai_epi32(_mm_unpacklo_epi16(hi, hi), 24));
        __m128 f3 = _mm_cvtepi32_ps(_mm_srai_epi32(_mm_unpackhi_epi16(hi, hi), 24));
        acc0 = _mm_add_ps(acc0, _mm_mul_ps(f0, _mm_loadu_ps(x + j)));
        acc1 = _mm_add_ps(acc1, _mm_mul_ps(f1, _mm_loadu_ps(x + j + 4)));
        acc0 = _mm_add_ps(acc0, _mm_mul_ps(f2, _mm_loadu_ps(x + j + 8)));
        acc1 = _mm_add_ps(acc1, _mm_mul_ps(f3, _mm_loadu_ps(x + j + 12)));
    }
    for (; j + 4 <= len; j += 4) {
        int32_t packed;
        memcpy(&packed, q + j, 4);
        acc0 = _mm_add_ps(acc0, _mm_mul_ps(sse2_i8x4_to_ps(_mm_cvtsi32_si128(packed)), _mm_loadu_ps(x + j)));
    }
    float sum = sse2_hsum(_mm_add_ps(acc0, acc1));
    for (; j < len; j++) sum += (float)q[j] * x[j];
    return sum;
}

static void matmul_q8_sse2(float *out, const float *x, const int8_t *q, const float *s, int n, int d,
                           int group_size) {
    for (int i = 0; i < d; i++) {
        long k = (long)i * n;
        float sum = 0.0f;
        /* Walk the row in runs that share one scale (groups may straddle rows). */
        for (int j = 0; j < n;) {
            long group = k / group_size;
            long run = (group + 1) * group_size - k;
            int len = run < n - j ? (int)run : n - j;
            sum += s[group] * sse2_dot_q8(q + k, x + j, len);
            j += len;
            k += len;
        }
        out[i] = sum;
    }
}

static float dot_sse2(const float *a, const float *b, int n) {
    __m128 acc = _mm_setzero_ps();
    int j = 0;
    for (; j + 4 <= n; j += 4) acc = _mm_add_ps(acc, _mm_mul_ps(_mm_loadu_ps(a + j), _mm_loadu_ps(b + j)));
    float sum = sse2_hsum(acc);
    for (; j < n; j++) sum += a[j] * b[j];
    return sum;
}

static void axpy_sse2(float *y, float a, const float *x, int n) {
    __m128 av = _mm_set1_ps(a);
    int j = 0;
    for (; j + 4 <= n; j += 4)
        _mm_storeu_ps(y + j, _mm_add_ps(_mm_loadu_ps(y + j), _mm_mul_ps(av, _mm_loadu_ps(x + j))));
    for (; j < n; j++) y[j] += a * x[j];
}

static void rmsnorm_sse2(float *out, const float *x, const float *weight, int n) {
    float ss = dot_sse2(x, x, n);
    float scale = 1.0f / sqrtf(ss / n + 1e-5f);
    __m128 sv = _mm_set1_ps(scale);
    int j = 0;
    for (; j + 4 <= n; j += 4)
        _mm_storeu_ps(out + j, _mm_mul_ps(_mm_loadu_ps(weight + j), _mm_mul_ps(sv, _mm_loadu_ps(x + j))));
    for (; j < n; j++) out[j] = weight[j] * (scale * x[j]);
}

static void softmax_sse2(float *x, int n) {
    float max = x[0];
    for (int i = 1; i < n; i++)
        if (x[i] > max) max = x[i];
    float sum = 0.0f;
    for (int i = 0; i < n; i++) {
        x[i] = expf(x[i] - max);
        sum += x[i];
    }
    __m128 inv = _mm_set1_ps(1.0f / sum);
    int j = 0;
    for (; j + 4 <= n; j += 4) _mm_storeu_ps(x + j, _mm_mul_ps(_mm_loadu_ps(x + j), inv));
    for (; j < n; j++) x[j] *= 1.0f / sum;
}

static void swiglu_sse2(float *a, const float *b, int n) {
    for (int i = 0; i < n; i++) {
        float v = a[i];
        a[i] = v / (1.0f + expf(-v)) * b[i];
    }
}

static void add_sse2(float *x, const float *y, int n) {
    int j = 0;
    for (; j + 4 <= n; j += 4) _mm_storeu_ps(x + j, _mm_add_ps(_mm_loadu_ps(x + j), _mm_loadu_ps(y + j)));
    for (; j < n; j++) x[j] += y[j];
}

const KernelSet kernels_sse2 = {
    .name = "sse2",
    .matmul = matmul_sse2,
    .matmul_q8 = matmul_q8_sse2,
    .matmul_batch = matmul_batch_sse2,
    .matmul_q8q = matmul_q8q_sse2,
    .dot = dot_sse2,
    .axpy = axpy_sse2,
    .rmsnorm = rmsnorm_sse2,
    .softmax = softmax_sse2,
    .swiglu = swiglu_sse2,
    .add = add_sse2,
};
