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

/* (sum a0, sum a1, sum a2, sum a3) of int32 lanes: integer adds only. */
static inline __m128i sse2_hsum4_epi32(__m128i a0, __m128i a1, __m128i a2, __m128i a3) {
    __m128i s01 = _mm_add_epi32(_mm_unpacklo_epi32(a0, a1), _mm_unpackhi_epi32(a0, a1));
    __m128i s23 = _mm_add_epi32(_mm_unpacklo_epi32(a2, a3), _mm_unpackhi_epi32(a2, a3));
    return _mm_add_epi32(_mm_unpacklo_epi64(s01, s23), _mm_unpackhi_epi64(s01, s23));
}

/* Four rows against one token; ws0 = row 0's scales (rows are `groups`
 * apart). Each group's four integer sums are made exact (the lanes hold
 * multiples of 256: shifting first keeps a 1024-wide group inside int32),
 * then scaled and accumulated for the four rows at once: four float
 * operations per group instead of sixteen (float ops are what cost most
 * under QEMU TCG). Per row this is the scalar reference's arithmetic:
 * sum += (float)isum * (ws * xs), group by group. */
static inline __m128 sse2_q8q_rows4(const int8_t *w0, const float *ws0, const int16_t *x, const float *xs,
                                    int n, int gs) {
    const __m128i zero = _mm_setzero_si128();
    const int8_t *w1 = w0 + n, *w2 = w1 + n, *w3 = w2 + n;
    int groups = n / gs;
    const float *ws1 = ws0 + groups, *ws2 = ws1 + groups, *ws3 = ws2 + groups;
    __m128 f = _mm_setzero_ps();
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
        __m128i isum = sse2_hsum4_epi32(_mm_srai_epi32(a0, 8), _mm_srai_epi32(a1, 8), _mm_srai_epi32(a2, 8),
                                        _mm_srai_epi32(a3, 8));
        __m128 scales = _mm_mul_ps(_mm_set_ps(ws3[g], ws2[g], ws1[g], ws0[g]), _mm_set1_ps(xs[g]));
        f = _mm_add_ps(f, _mm_mul_ps(_mm_cvtepi32_ps(isum), scales));
    }
    return f;
}

/* One row, the same per-group arithmetic as sse2_q8q_rows4. */
static inline float sse2_q8q_row1(const int8_t *w, const float *ws, const int16_t *x, const float *xs, int n,
                                  int gs) {
    float sum = 0.0f;
    for (int g = 0, base = 0; base < n; g++, base += gs) {
        __m128i a = _mm_srai_epi32(sse2_group_dot(w + base, x + base, gs), 8);
        a = _mm_add_epi32(a, _mm_shuffle_epi32(a, _MM_SHUFFLE(1, 0, 3, 2)));
        a = _mm_add_epi32(a, _mm_shuffle_epi32(a, _MM_SHUFFLE(2, 3, 0, 1)));
        sum += (float)_mm_cvtsi128_si32(a) * (ws[g] * xs[g]);
    }
    return sum;
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

/* e^x for four floats, within 2 ulp of the exact value for -87.3 <= x <= 88
 * (x = k ln2 + r, |r| <= ln2/2, e^r by its Taylor series to r^7, whose
 * truncation error is below 0.1 ulp; 2^k built in the exponent bits).
 * Smaller x, -inf included, gives 0; larger x is clamped to 88 (e^88 ~
 * 1.7e38, finite), so finite input never yields NaN or inf. Float
 * arithmetic only: under QEMU TCG the double-precision lib expf is slow. */
static inline __m128 sse2_exp(__m128 x) {
    const __m128 lowest = _mm_set1_ps(-87.33f);
    __m128 underflow = _mm_cmplt_ps(x, lowest);
    x = _mm_min_ps(_mm_max_ps(x, lowest), _mm_set1_ps(88.0f));
    __m128i k = _mm_cvtps_epi32(_mm_mul_ps(x, _mm_set1_ps(1.44269504f)));
    __m128 kf = _mm_cvtepi32_ps(k);
    /* ln2 in two parts: kf * 0.693359375 is exact for |k| < 2^15. */
    __m128 r = _mm_sub_ps(x, _mm_mul_ps(kf, _mm_set1_ps(0.693359375f)));
    r = _mm_add_ps(r, _mm_mul_ps(kf, _mm_set1_ps(2.12194440e-4f)));
    __m128 p = _mm_set1_ps(1.0f / 5040.0f);
    p = _mm_add_ps(_mm_mul_ps(p, r), _mm_set1_ps(1.0f / 720.0f));
    p = _mm_add_ps(_mm_mul_ps(p, r), _mm_set1_ps(1.0f / 120.0f));
    p = _mm_add_ps(_mm_mul_ps(p, r), _mm_set1_ps(1.0f / 24.0f));
    p = _mm_add_ps(_mm_mul_ps(p, r), _mm_set1_ps(1.0f / 6.0f));
    p = _mm_add_ps(_mm_mul_ps(p, r), _mm_set1_ps(0.5f));
    p = _mm_add_ps(_mm_mul_ps(p, r), _mm_set1_ps(1.0f));
    p = _mm_add_ps(_mm_mul_ps(p, r), _mm_set1_ps(1.0f));
    __m128 two_k = _mm_castsi128_ps(_mm_slli_epi32(_mm_add_epi32(k, _mm_set1_epi32(127)), 23));
    return _mm_andnot_ps(underflow, _mm_mul_ps(p, two_k));
}

static void softmax_sse2(float *x, int n) {
    int n4 = n & ~3, j = 0;
    float max = x[0];
    if (n4) {
        __m128 m = _mm_loadu_ps(x);
        for (j = 4; j < n4; j += 4) m = _mm_max_ps(m, _mm_loadu_ps(x + j));
        m = _mm_max_ps(m, _mm_shuffle_ps(m, m, _MM_SHUFFLE(1, 0, 3, 2)));
        m = _mm_max_ps(m, _mm_shuffle_ps(m, m, _MM_SHUFFLE(2, 3, 0, 1)));
        max = _mm_cvtss_f32(m);
    }
    for (j = n4; j < n; j++)
        if (x[j] > max) max = x[j];
    __m128 mv = _mm_set1_ps(max), sums = _mm_setzero_ps();
    for (j = 0; j < n4; j += 4) {
        __m128 e = sse2_exp(_mm_sub_ps(_mm_loadu_ps(x + j), mv));
        _mm_storeu_ps(x + j, e);
        sums = _mm_add_ps(sums, e);
    }
    if (j < n) {
        /* Tail through a padded vector; the padding's exp is 0. */
        float t[4] = {-1e30f, -1e30f, -1e30f, -1e30f};
        for (int i = j; i < n; i++) t[i - j] = x[i];
        __m128 e = sse2_exp(_mm_sub_ps(_mm_loadu_ps(t), mv));
        sums = _mm_add_ps(sums, e);
        _mm_storeu_ps(t, e);
        for (int i = j; i < n; i++) x[i] = t[i - j];
    }
    float inv = 1.0f / sse2_hsum(sums);
    __m128 iv = _mm_set1_ps(inv);
    for (j = 0; j < n4; j += 4) _mm_storeu_ps(x + j, _mm_mul_ps(_mm_loadu_ps(x + j), iv));
    for (; j < n; j++) x[j] *= inv;
}

/* silu(a) * b for four lanes. */
static inline __m128 sse2_swiglu4(__m128 a, __m128 b) {
    __m128 e = sse2_exp(_mm_sub_ps(_mm_setzero_ps(), a));
    return _mm_mul_ps(_mm_div_ps(a, _mm_add_ps(_mm_set1_ps(1.0f), e)), b);
}

static void swiglu_sse2(float *a, const float *b, int n) {
    int j = 0;
    for (; j + 4 <= n; j += 4) _mm_storeu_ps(a + j, sse2_swiglu4(_mm_loadu_ps(a + j), _mm_loadu_ps(b + j)));
    if (j < n) {
        float ta[4] = {0, 0, 0, 0}, tb[4] = {0, 0, 0, 0};
        for (int i = j; i < n; i++) ta[i - j] = a[i], tb[i - j] = b[i];
        _mm_storeu_ps(ta, sse2_swiglu4(_mm_loadu_ps(ta), _mm_loadu_ps(tb)));
        for (int i = j; i < n; i++) a[i] = ta[i - j];
    }
}

/* Scores of four cached positions (rows stride floats apart) against q;
 * hs % 4 == 0. */
static inline __m128 sse2_scores4(const float *k0, long stride, const float *q, int hs) {
    const float *k1 = k0 + stride, *k2 = k1 + stride, *k3 = k2 + stride;
    __m128 a0 = _mm_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    for (int j = 0; j < hs; j += 4) {
        __m128 qv = _mm_loadu_ps(q + j);
        a0 = _mm_add_ps(a0, _mm_mul_ps(_mm_loadu_ps(k0 + j), qv));
        a1 = _mm_add_ps(a1, _mm_mul_ps(_mm_loadu_ps(k1 + j), qv));
        a2 = _mm_add_ps(a2, _mm_mul_ps(_mm_loadu_ps(k2 + j), qv));
        a3 = _mm_add_ps(a3, _mm_mul_ps(_mm_loadu_ps(k3 + j), qv));
    }
    return sse2_hsum4(a0, a1, a2, a3);
}

/* out[c .. c + 4*W) = sum_p att[p] * v_p[c ..], accumulated in registers
 * over every position (W = 1, 2 or 4 vectors; the compiler unrolls). */
static inline void sse2_weighted_cols(float *out, const float *att, const float *v, long stride, int n_pos,
                                      int W) {
    __m128 acc[4] = {_mm_setzero_ps(), _mm_setzero_ps(), _mm_setzero_ps(), _mm_setzero_ps()};
    for (int p = 0; p < n_pos; p++, v += stride) {
        __m128 a = _mm_set1_ps(att[p]);
        for (int w = 0; w < W; w++) acc[w] = _mm_add_ps(acc[w], _mm_mul_ps(a, _mm_loadu_ps(v + 4 * w)));
    }
    for (int w = 0; w < W; w++) _mm_storeu_ps(out + 4 * w, acc[w]);
}

static void attend_sse2(float *out, float *att, const float *q, const float *keys, const float *values,
                        int stride, int n_pos, int hs, float scale) {
    if (hs % 4 != 0) {
        for (int p = 0; p < n_pos; p++) att[p] = dot_sse2(q, keys + (long)p * stride, hs) * scale;
        softmax_sse2(att, n_pos);
        memset(out, 0, (size_t)hs * sizeof(float));
        for (int p = 0; p < n_pos; p++) axpy_sse2(out, att[p], values + (long)p * stride, hs);
        return;
    }
    __m128 sv = _mm_set1_ps(scale);
    int p = 0;
    for (; p + 4 <= n_pos; p += 4)
        _mm_storeu_ps(att + p, _mm_mul_ps(sse2_scores4(keys + (long)p * stride, stride, q, hs), sv));
    for (; p < n_pos; p++) att[p] = dot_sse2(q, keys + (long)p * stride, hs) * scale;
    softmax_sse2(att, n_pos);
    int c = 0;
    for (; c + 16 <= hs; c += 16) sse2_weighted_cols(out + c, att, values + c, stride, n_pos, 4);
    for (; c + 8 <= hs; c += 8) sse2_weighted_cols(out + c, att, values + c, stride, n_pos, 2);
    for (; c < hs; c += 4) sse2_weighted_cols(out + c, att, values + c, stride, n_pos, 1);
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
    .attend = attend_sse2,
};
