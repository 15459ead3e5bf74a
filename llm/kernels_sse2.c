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

static void matmul_sse2(float *out, const float *x, const float *w, int n, int d) {
    int n4 = n & ~3;
    int i = 0;
    /* Four rows at a time so each x load feeds four multiplies. */
    for (; i + 4 <= d; i += 4) {
        const float *r0 = w + (long)i * n, *r1 = r0 + n, *r2 = r1 + n, *r3 = r2 + n;
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
        _mm_storeu_ps(out + i, sums);
    }
    for (; i < d; i++) {
        const float *row = w + (long)i * n;
        __m128 acc = _mm_setzero_ps();
        for (int j = 0; j < n4; j += 4)
            acc = _mm_add_ps(acc, _mm_mul_ps(_mm_loadu_ps(row + j), _mm_loadu_ps(x + j)));
        float sum = sse2_hsum(acc);
        for (int j = n4; j < n; j++) sum += row[j] * x[j];
        out[i] = sum;
    }
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
    .dot = dot_sse2,
    .axpy = axpy_sse2,
    .rmsnorm = rmsnorm_sse2,
    .softmax = softmax_sse2,
    .swiglu = swiglu_sse2,
    .add = add_sse2,
};
