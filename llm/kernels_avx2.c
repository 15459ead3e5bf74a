/* kernels_avx2.c - AVX2+FMA kernels. Each function carries its own target
 * attribute so this file builds with the SSE2 baseline flags; only call
 * these after checking CPUID (and, in the kernel, XCR0). */
#include <immintrin.h>

#include "lib/math.h"
#include "llm/kernels.h"
#include "llm/kernels_internal.h"

#define AVX2 __attribute__((target("avx2,fma")))

AVX2 static inline float avx2_hsum(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_shuffle_ps(s, s, 1));
    return _mm_cvtss_f32(s);
}

/* Horizontal sums of four vectors, returned as one 4-lane vector. */
AVX2 static inline __m128 avx2_hsum4(__m256 a0, __m256 a1, __m256 a2, __m256 a3) {
    __m256 s01 = _mm256_hadd_ps(a0, a1); /* a0 pairs, a1 pairs per 128-bit half */
    __m256 s23 = _mm256_hadd_ps(a2, a3);
    __m256 s = _mm256_hadd_ps(s01, s23); /* per half: a0 a1 a2 a3 partial sums */
    return _mm_add_ps(_mm256_castps256_ps128(s), _mm256_extractf128_ps(s, 1));
}

/* Four rows at a time, two accumulators each when n allows, so the FMA
 * latency is hidden and each x load feeds four rows. */
AVX2 static inline __m128 avx2_rows4(const float *r0, const float *x, int n) {
    const float *r1 = r0 + n, *r2 = r1 + n, *r3 = r2 + n;
    int n8 = n & ~7;
    __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    __m256 b0 = a0, b1 = a0, b2 = a0, b3 = a0;
    int j = 0;
    for (; j + 16 <= n; j += 16) {
        __m256 x0 = _mm256_loadu_ps(x + j), x1 = _mm256_loadu_ps(x + j + 8);
        a0 = _mm256_fmadd_ps(_mm256_loadu_ps(r0 + j), x0, a0);
        a1 = _mm256_fmadd_ps(_mm256_loadu_ps(r1 + j), x0, a1);
        a2 = _mm256_fmadd_ps(_mm256_loadu_ps(r2 + j), x0, a2);
        a3 = _mm256_fmadd_ps(_mm256_loadu_ps(r3 + j), x0, a3);
        b0 = _mm256_fmadd_ps(_mm256_loadu_ps(r0 + j + 8), x1, b0);
        b1 = _mm256_fmadd_ps(_mm256_loadu_ps(r1 + j + 8), x1, b1);
        b2 = _mm256_fmadd_ps(_mm256_loadu_ps(r2 + j + 8), x1, b2);
        b3 = _mm256_fmadd_ps(_mm256_loadu_ps(r3 + j + 8), x1, b3);
    }
    for (; j < n8; j += 8) {
        __m256 x0 = _mm256_loadu_ps(x + j);
        a0 = _mm256_fmadd_ps(_mm256_loadu_ps(r0 + j), x0, a0);
        a1 = _mm256_fmadd_ps(_mm256_loadu_ps(r1 + j), x0, a1);
        a2 = _mm256_fmadd_ps(_mm256_loadu_ps(r2 + j), x0, a2);
        a3 = _mm256_fmadd_ps(_mm256_loadu_ps(r3 + j), x0, a3);
    }
    __m128 sums = avx2_hsum4(_mm256_add_ps(a0, b0), _mm256_add_ps(a1, b1), _mm256_add_ps(a2, b2),
                             _mm256_add_ps(a3, b3));
    if (n8 < n) {
        float t[4] = {0, 0, 0, 0};
        for (j = n8; j < n; j++) {
            t[0] += r0[j] * x[j];
            t[1] += r1[j] * x[j];
            t[2] += r2[j] * x[j];
            t[3] += r3[j] * x[j];
        }
        sums = _mm_add_ps(sums, _mm_loadu_ps(t));
    }
    return sums;
}

AVX2 static inline float avx2_row1(const float *row, const float *x, int n) {
    int n8 = n & ~7;
    __m256 acc = _mm256_setzero_ps();
    for (int j = 0; j < n8; j += 8)
        acc = _mm256_fmadd_ps(_mm256_loadu_ps(row + j), _mm256_loadu_ps(x + j), acc);
    float sum = avx2_hsum(acc);
    for (int j = n8; j < n; j++) sum += row[j] * x[j];
    return sum;
}

AVX2 static void matmul_avx2(float *out, const float *x, const float *w, int n, int d) {
    int i = 0;
    for (; i + 4 <= d; i += 4) _mm_storeu_ps(out + i, avx2_rows4(w + (long)i * n, x, n));
    for (; i < d; i++) out[i] = avx2_row1(w + (long)i * n, x, n);
}

/* Row block outside, tokens inside: four weight rows stay in L1 for the batch. */
AVX2 static void matmul_batch_avx2(float *out, const float *x, int batch, const float *w, int n, int d) {
    int i = 0;
    for (; i + 4 <= d; i += 4)
        for (int b = 0; b < batch; b++)
            _mm_storeu_ps(out + (long)b * d + i, avx2_rows4(w + (long)i * n, x + (long)b * n, n));
    for (; i < d; i++)
        for (int b = 0; b < batch; b++) out[(long)b * d + i] = avx2_row1(w + (long)i * n, x + (long)b * n, n);
}

/* ---------------------------------------------------------------- int8 x int8
 * vpmovsxbw sign-extends 16 weights straight from memory, vpmaddwd multiplies
 * them with the int16 activations: three instructions per 16 weights and
 * row. (The vpmaddubsw sign trick needs vpsignb + vpabsb + vpmaddubsw +
 * vpmaddwd-with-ones per 32: no fewer instructions, and a saturation case.) */

AVX2 static inline __m256i avx2_madd16(const int8_t *w, __m256i x) {
    return _mm256_madd_epi16(_mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)w)), x);
}

/* Four rows against one token. Each group's integer sums are reduced to one
 * exact int32 per row (|sum| <= 1024 * 128 * 127 fits), then scaled and
 * accumulated for the four rows at once, with the scalar reference's
 * arithmetic: sum += (float)isum * (ws * xs), group by group, no FMA. So
 * the result is bit-identical to the scalar and SSE2 kernels. */
AVX2 static inline __m128 avx2_q8q_rows4(const int8_t *w0, const float *ws0, const int16_t *x,
                                         const float *xs, int n, int gs, const int8_t *ahead) {
    const int8_t *w1 = w0 + n, *w2 = w1 + n, *w3 = w2 + n;
    int groups = n / gs;
    const float *ws1 = ws0 + groups, *ws2 = ws1 + groups, *ws3 = ws2 + groups;
    __m128 f = _mm_setzero_ps();
    for (int g = 0, base = 0; g < groups; g++, base += gs) {
        __m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0;
        /* The next block's rows (4 * n contiguous bytes), a group's share at
         * a time: the hardware prefetcher alone leaves decode latency-bound. */
        if (ahead)
            for (int k = 0; k < 4 * gs; k += 64)
                _mm_prefetch((const char *)ahead + 4 * base + k, _MM_HINT_T0);
        for (int j = base; j < base + gs; j += 16) {
            __m256i xv = _mm256_loadu_si256((const __m256i *)(x + j));
            a0 = _mm256_add_epi32(a0, avx2_madd16(w0 + j, xv));
            a1 = _mm256_add_epi32(a1, avx2_madd16(w1 + j, xv));
            a2 = _mm256_add_epi32(a2, avx2_madd16(w2 + j, xv));
            a3 = _mm256_add_epi32(a3, avx2_madd16(w3 + j, xv));
        }
        /* Per 128-bit half: (a0, a1, a2, a3) partial sums; then both halves. */
        __m256i h = _mm256_hadd_epi32(_mm256_hadd_epi32(a0, a1), _mm256_hadd_epi32(a2, a3));
        __m128i isum = _mm_add_epi32(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1));
        __m128 scales = _mm_mul_ps(_mm_set_ps(ws3[g], ws2[g], ws1[g], ws0[g]), _mm_set1_ps(xs[g]));
        f = _mm_add_ps(f, _mm_mul_ps(_mm_cvtepi32_ps(isum), scales));
    }
    return f;
}

AVX2 static inline float avx2_q8q_row1(const int8_t *w, const float *ws, const int16_t *x, const float *xs,
                                       int n, int gs) {
    float sum = 0.0f;
    for (int g = 0, base = 0; base < n; g++, base += gs) {
        __m256i a = _mm256_setzero_si256();
        for (int j = base; j < base + gs; j += 16)
            a = _mm256_add_epi32(a, avx2_madd16(w + j, _mm256_loadu_si256((const __m256i *)(x + j))));
        __m128i h = _mm_add_epi32(_mm256_castsi256_si128(a), _mm256_extracti128_si256(a, 1));
        h = _mm_add_epi32(h, _mm_shuffle_epi32(h, _MM_SHUFFLE(1, 0, 3, 2)));
        h = _mm_add_epi32(h, _mm_shuffle_epi32(h, _MM_SHUFFLE(2, 3, 0, 1)));
        sum += (float)_mm_cvtsi128_si32(h) * (ws[g] * xs[g]);
    }
    return sum;
}

AVX2 static void matmul_q8q_avx2(float *out, const int16_t *xq, const float *xs, int batch, const int8_t *wq,
                                 const float *ws, int n, int d, int gs) {
    int groups = n / gs, i = 0;
    for (; i + 4 <= d; i += 4) {
        /* Prefetch only for one token (decode): a batch rereads the rows from L1. */
        const int8_t *ahead = batch == 1 && i + 8 <= d ? wq + (long)(i + 4) * n : 0;
        for (int b = 0; b < batch; b++)
            _mm_storeu_ps(out + (long)b * d + i,
                          avx2_q8q_rows4(wq + (long)i * n, ws + (long)i * groups, xq + (long)b * n,
                                         xs + (long)b * groups, n, gs, ahead));
    }
    for (; i < d; i++)
        for (int b = 0; b < batch; b++)
            out[(long)b * d + i] = avx2_q8q_row1(wq + (long)i * n, ws + (long)i * groups, xq + (long)b * n,
                                                 xs + (long)b * groups, n, gs);
}

/* sum_j q[j] * x[j] for one run of weights that share a scale. */
AVX2 static inline float avx2_dot_q8(const int8_t *q, const float *x, int len) {
    __m256 acc0 = _mm256_setzero_ps(), acc1 = acc0;
    int j = 0;
    for (; j + 16 <= len; j += 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(q + j));
        __m256 f0 = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(v));
        __m256 f1 = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128(v, 8)));
        acc0 = _mm256_fmadd_ps(f0, _mm256_loadu_ps(x + j), acc0);
        acc1 = _mm256_fmadd_ps(f1, _mm256_loadu_ps(x + j + 8), acc1);
    }
    for (; j + 8 <= len; j += 8) {
        __m256 f = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *)(q + j))));
        acc0 = _mm256_fmadd_ps(f, _mm256_loadu_ps(x + j), acc0);
    }
    float sum = avx2_hsum(_mm256_add_ps(acc0, acc1));
    for (; j < len; j++) sum += (float)q[j] * x[j];
    return sum;
}

AVX2 void kernels_matmul_q8_avx2(float *out, const float *x, const int8_t *q, const float *s, int n, int d,
                                 int group_size) {
    for (int i = 0; i < d; i++) {
        long k = (long)i * n;
        float sum = 0.0f;
        for (int j = 0; j < n;) {
            long group = k / group_size;
            long run = (group + 1) * group_size - k;
            int len = run < n - j ? (int)run : n - j;
            sum += s[group] * avx2_dot_q8(q + k, x + j, len);
            j += len;
            k += len;
        }
        out[i] = sum;
    }
}

AVX2 float kernels_dot_avx2(const float *a, const float *b, int n) {
    __m256 acc = _mm256_setzero_ps();
    int j = 0;
    for (; j + 8 <= n; j += 8) acc = _mm256_fmadd_ps(_mm256_loadu_ps(a + j), _mm256_loadu_ps(b + j), acc);
    float sum = avx2_hsum(acc);
    for (; j < n; j++) sum += a[j] * b[j];
    return sum;
}

AVX2 void kernels_axpy_avx2(float *y, float a, const float *x, int n) {
    __m256 av = _mm256_set1_ps(a);
    int j = 0;
    for (; j + 8 <= n; j += 8)
        _mm256_storeu_ps(y + j, _mm256_fmadd_ps(av, _mm256_loadu_ps(x + j), _mm256_loadu_ps(y + j)));
    for (; j < n; j++) y[j] += a * x[j];
}

AVX2 void kernels_rmsnorm_avx2(float *out, const float *x, const float *weight, int n) {
    float ss = kernels_dot_avx2(x, x, n);
    float scale = 1.0f / sqrtf(ss / n + 1e-5f);
    __m256 sv = _mm256_set1_ps(scale);
    int j = 0;
    for (; j + 8 <= n; j += 8)
        _mm256_storeu_ps(
            out + j, _mm256_mul_ps(_mm256_loadu_ps(weight + j), _mm256_mul_ps(sv, _mm256_loadu_ps(x + j))));
    for (; j < n; j++) out[j] = weight[j] * (scale * x[j]);
}

/* e^x for eight floats: the same range reduction and degree-7 Taylor
 * polynomial as sse2_exp (kernels_sse2.c), evaluated with FMA; within 2 ulp
 * for -87.3 <= x <= 88, 0 below (-inf included), clamped above. */
AVX2 static inline __m256 avx2_exp(__m256 x) {
    const __m256 lowest = _mm256_set1_ps(-87.33f);
    __m256 underflow = _mm256_cmp_ps(x, lowest, _CMP_LT_OQ);
    x = _mm256_min_ps(_mm256_max_ps(x, lowest), _mm256_set1_ps(88.0f));
    __m256i k = _mm256_cvtps_epi32(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504f)));
    __m256 kf = _mm256_cvtepi32_ps(k);
    __m256 r = _mm256_fnmadd_ps(kf, _mm256_set1_ps(0.693359375f), x);
    r = _mm256_fmadd_ps(kf, _mm256_set1_ps(2.12194440e-4f), r);
    __m256 p = _mm256_set1_ps(1.0f / 5040.0f);
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 720.0f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 120.0f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 24.0f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 6.0f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(0.5f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
    __m256 two_k = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(k, _mm256_set1_epi32(127)), 23));
    return _mm256_andnot_ps(underflow, _mm256_mul_ps(p, two_k));
}

AVX2 void kernels_softmax_avx2(float *x, int n) {
    int n8 = n & ~7, j;
    float max = x[0];
    if (n8) {
        __m256 m8 = _mm256_loadu_ps(x);
        for (j = 8; j < n8; j += 8) m8 = _mm256_max_ps(m8, _mm256_loadu_ps(x + j));
        __m128 m = _mm_max_ps(_mm256_castps256_ps128(m8), _mm256_extractf128_ps(m8, 1));
        m = _mm_max_ps(m, _mm_shuffle_ps(m, m, _MM_SHUFFLE(1, 0, 3, 2)));
        m = _mm_max_ps(m, _mm_shuffle_ps(m, m, _MM_SHUFFLE(2, 3, 0, 1)));
        max = _mm_cvtss_f32(m);
    }
    for (j = n8; j < n; j++)
        if (x[j] > max) max = x[j];
    __m256 mv = _mm256_set1_ps(max), sums = _mm256_setzero_ps();
    for (j = 0; j < n8; j += 8) {
        __m256 e = avx2_exp(_mm256_sub_ps(_mm256_loadu_ps(x + j), mv));
        _mm256_storeu_ps(x + j, e);
        sums = _mm256_add_ps(sums, e);
    }
    if (j < n) {
        /* Tail through a padded vector; the padding's exp is 0. */
        float t[8] = {-1e30f, -1e30f, -1e30f, -1e30f, -1e30f, -1e30f, -1e30f, -1e30f};
        for (int i = j; i < n; i++) t[i - j] = x[i];
        __m256 e = avx2_exp(_mm256_sub_ps(_mm256_loadu_ps(t), mv));
        sums = _mm256_add_ps(sums, e);
        _mm256_storeu_ps(t, e);
        for (int i = j; i < n; i++) x[i] = t[i - j];
    }
    float inv = 1.0f / avx2_hsum(sums);
    __m256 iv = _mm256_set1_ps(inv);
    for (j = 0; j < n8; j += 8) _mm256_storeu_ps(x + j, _mm256_mul_ps(_mm256_loadu_ps(x + j), iv));
    for (; j < n; j++) x[j] *= inv;
}

AVX2 static inline __m256 avx2_swiglu8(__m256 a, __m256 b) {
    __m256 e = avx2_exp(_mm256_sub_ps(_mm256_setzero_ps(), a));
    return _mm256_mul_ps(_mm256_div_ps(a, _mm256_add_ps(_mm256_set1_ps(1.0f), e)), b);
}

AVX2 void kernels_swiglu_avx2(float *a, const float *b, int n) {
    int j = 0;
    for (; j + 8 <= n; j += 8)
        _mm256_storeu_ps(a + j, avx2_swiglu8(_mm256_loadu_ps(a + j), _mm256_loadu_ps(b + j)));
    if (j < n) {
        float ta[8] = {0}, tb[8] = {0};
        for (int i = j; i < n; i++) ta[i - j] = a[i], tb[i - j] = b[i];
        _mm256_storeu_ps(ta, avx2_swiglu8(_mm256_loadu_ps(ta), _mm256_loadu_ps(tb)));
        for (int i = j; i < n; i++) a[i] = ta[i - j];
    }
}

/* out[c .. c + 8*W) = sum_p att[p] * v_p[c ..], in registers over all positions. */
AVX2 static inline void avx2_weighted_cols(float *out, const float *att, const float *v, long stride,
                                           int n_pos, int W) {
    __m256 acc[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()};
    for (int p = 0; p < n_pos; p++, v += stride) {
        __m256 a = _mm256_set1_ps(att[p]);
        for (int w = 0; w < W; w++) acc[w] = _mm256_fmadd_ps(a, _mm256_loadu_ps(v + 8 * w), acc[w]);
    }
    for (int w = 0; w < W; w++) _mm256_storeu_ps(out + 8 * w, acc[w]);
}

AVX2 void kernels_attend_avx2(float *out, float *att, const float *q, const float *keys, const float *values,
                              int stride, int n_pos, int hs, float scale) {
    for (int p = 0; p < n_pos; p++) att[p] = kernels_dot_avx2(q, keys + (long)p * stride, hs) * scale;
    kernels_softmax_avx2(att, n_pos);
    int c = 0;
    for (; c + 32 <= hs; c += 32) avx2_weighted_cols(out + c, att, values + c, stride, n_pos, 4);
    for (; c + 8 <= hs; c += 8) avx2_weighted_cols(out + c, att, values + c, stride, n_pos, 1);
    if (c < hs) {
        for (int i = c; i < hs; i++) out[i] = 0.0f;
        for (int p = 0; p < n_pos; p++)
            kernels_axpy_avx2(out + c, att[p], values + (long)p * stride + c, hs - c);
    }
}

AVX2 void kernels_add_avx2(float *x, const float *y, int n) {
    int j = 0;
    for (; j + 8 <= n; j += 8)
        _mm256_storeu_ps(x + j, _mm256_add_ps(_mm256_loadu_ps(x + j), _mm256_loadu_ps(y + j)));
    for (; j < n; j++) x[j] += y[j];
}

const KernelSet kernels_avx2 = {
    .name = "avx2",
    .matmul = matmul_avx2,
    .matmul_q8 = kernels_matmul_q8_avx2,
    .matmul_batch = matmul_batch_avx2,
    .matmul_q8q = matmul_q8q_avx2,
    .dot = kernels_dot_avx2,
    .axpy = kernels_axpy_avx2,
    .rmsnorm = kernels_rmsnorm_avx2,
    .softmax = kernels_softmax_avx2,
    .swiglu = kernels_swiglu_avx2,
    .add = kernels_add_avx2,
    .attend = kernels_attend_avx2,
};
