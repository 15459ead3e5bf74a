/* kernels_avx2.c - AVX2+FMA kernels. Each function carries its own target
 * attribute so this file builds with the SSE2 baseline flags; only call
 * these after checking CPUID (and, in the kernel, XCR0). */
#include <immintrin.h>

#include "lib/math.h"
#include "llm/kernels.h"

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

AVX2 static inline __m128 avx2_q8q_rows4(const int8_t *w0, const float *ws0, const int16_t *x,
                                         const float *xs, int n, int gs) {
    const int8_t *w1 = w0 + n, *w2 = w1 + n, *w3 = w2 + n;
    int groups = n / gs;
    const float *ws1 = ws0 + groups, *ws2 = ws1 + groups, *ws3 = ws2 + groups;
    __m256 f0 = _mm256_setzero_ps(), f1 = f0, f2 = f0, f3 = f0;
    for (int g = 0, base = 0; g < groups; g++, base += gs) {
        __m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0;
        for (int j = base; j < base + gs; j += 16) {
            __m256i xv = _mm256_loadu_si256((const __m256i *)(x + j));
            a0 = _mm256_add_epi32(a0, avx2_madd16(w0 + j, xv));
            a1 = _mm256_add_epi32(a1, avx2_madd16(w1 + j, xv));
            a2 = _mm256_add_epi32(a2, avx2_madd16(w2 + j, xv));
            a3 = _mm256_add_epi32(a3, avx2_madd16(w3 + j, xv));
        }
        float xsg = xs[g];
        f0 = _mm256_fmadd_ps(_mm256_cvtepi32_ps(a0), _mm256_set1_ps(ws0[g] * xsg), f0);
        f1 = _mm256_fmadd_ps(_mm256_cvtepi32_ps(a1), _mm256_set1_ps(ws1[g] * xsg), f1);
        f2 = _mm256_fmadd_ps(_mm256_cvtepi32_ps(a2), _mm256_set1_ps(ws2[g] * xsg), f2);
        f3 = _mm256_fmadd_ps(_mm256_cvtepi32_ps(a3), _mm256_set1_ps(ws3[g] * xsg), f3);
    }
    return avx2_hsum4(f0, f1, f2, f3);
}

AVX2 static inline float avx2_q8q_row1(const int8_t *w, const float *ws, const int16_t *x, const float *xs,
                                       int n, int gs) {
    __m256 f = _mm256_setzero_ps();
    for (int g = 0, base = 0; base < n; g++, base += gs) {
        __m256i a = _mm256_setzero_si256();
        for (int j = base; j < base + gs; j += 16)
            a = _mm256_add_epi32(a, avx2_madd16(w + j, _mm256_loadu_si256((const __m256i *)(x + j))));
        f = _mm256_fmadd_ps(_mm256_cvtepi32_ps(a), _mm256_set1_ps(ws[g] * xs[g]), f);
    }
    return avx2_hsum(f);
}

AVX2 static void matmul_q8q_avx2(float *out, const int16_t *xq, const float *xs, int batch, const int8_t *wq,
                                 const float *ws, int n, int d, int gs) {
    int groups = n / gs, i = 0;
    for (; i + 4 <= d; i += 4)
        for (int b = 0; b < batch; b++)
            _mm_storeu_ps(out + (long)b * d + i,
                          avx2_q8q_rows4(wq + (long)i * n, ws + (long)i * groups, xq + (long)b * n,
                                         xs + (long)b * groups, n, gs));
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

AVX2 static void matmul_q8_avx2(float *out, const float *x, const int8_t *q, const float *s, int n, int d,
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

AVX2 static float dot_avx2(const float *a, const float *b, int n) {
    __m256 acc = _mm256_setzero_ps();
    int j = 0;
    for (; j + 8 <= n; j += 8) acc = _mm256_fmadd_ps(_mm256_loadu_ps(a + j), _mm256_loadu_ps(b + j), acc);
    float sum = avx2_hsum(acc);
    for (; j < n; j++) sum += a[j] * b[j];
    return sum;
}

AVX2 static void axpy_avx2(float *y, float a, const float *x, int n) {
    __m256 av = _mm256_set1_ps(a);
    int j = 0;
    for (; j + 8 <= n; j += 8)
        _mm256_storeu_ps(y + j, _mm256_fmadd_ps(av, _mm256_loadu_ps(x + j), _mm256_loadu_ps(y + j)));
    for (; j < n; j++) y[j] += a * x[j];
}

AVX2 static void rmsnorm_avx2(float *out, const float *x, const float *weight, int n) {
    float ss = dot_avx2(x, x, n);
    float scale = 1.0f / sqrtf(ss / n + 1e-5f);
    __m256 sv = _mm256_set1_ps(scale);
    int j = 0;
    for (; j + 8 <= n; j += 8)
        _mm256_storeu_ps(
            out + j, _mm256_mul_ps(_mm256_loadu_ps(weight + j), _mm256_mul_ps(sv, _mm256_loadu_ps(x + j))));
    for (; j < n; j++) out[j] = weight[j] * (scale * x[j]);
}

AVX2 static void softmax_avx2(float *x, int n) {
    float max = x[0];
    for (int i = 1; i < n; i++)
        if (x[i] > max) max = x[i];
    float sum = 0.0f;
    for (int i = 0; i < n; i++) {
        x[i] = expf(x[i] - max);
        sum += x[i];
    }
    float inv = 1.0f / sum;
    __m256 iv = _mm256_set1_ps(inv);
    int j = 0;
    for (; j + 8 <= n; j += 8) _mm256_storeu_ps(x + j, _mm256_mul_ps(_mm256_loadu_ps(x + j), iv));
    for (; j < n; j++) x[j] *= inv;
}

AVX2 static void swiglu_avx2(float *a, const float *b, int n) {
    for (int i = 0; i < n; i++) {
        float v = a[i];
        a[i] = v / (1.0f + expf(-v)) * b[i];
    }
}

AVX2 static void add_avx2(float *x, const float *y, int n) {
    int j = 0;
    for (; j + 8 <= n; j += 8)
        _mm256_storeu_ps(x + j, _mm256_add_ps(_mm256_loadu_ps(x + j), _mm256_loadu_ps(y + j)));
    for (; j < n; j++) x[j] += y[j];
}

const KernelSet kernels_avx2 = {
    .name = "avx2",
    .matmul = matmul_avx2,
    .matmul_q8 = matmul_q8_avx2,
    .matmul_batch = matmul_batch_avx2,
    .matmul_q8q = matmul_q8q_avx2,
    .dot = dot_avx2,
    .axpy = axpy_avx2,
    .rmsnorm = rmsnorm_avx2,
    .softmax = softmax_avx2,
    .swiglu = swiglu_avx2,
    .add = add_avx2,
};
