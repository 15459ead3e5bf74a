/* vec_sse2.c - SSE2 elementwise kernels: rmsnorm, softmax, swiglu, add. */
#include "lib/math.h"
#include "llm/compute/kernel_sets.h"
#include "llm/compute/sse2/sse2_ops.h"

void kernels_rmsnorm_sse2(float *out, const float *x, const float *weight, int n) {
    float ss = sse2_dot(x, x, n);
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

void kernels_softmax_sse2(float *x, int n) {
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

void kernels_swiglu_sse2(float *a, const float *b, int n) {
    int j = 0;
    for (; j + 4 <= n; j += 4) _mm_storeu_ps(a + j, sse2_swiglu4(_mm_loadu_ps(a + j), _mm_loadu_ps(b + j)));
    if (j < n) {
        float ta[4] = {0, 0, 0, 0}, tb[4] = {0, 0, 0, 0};
        for (int i = j; i < n; i++) ta[i - j] = a[i], tb[i - j] = b[i];
        _mm_storeu_ps(ta, sse2_swiglu4(_mm_loadu_ps(ta), _mm_loadu_ps(tb)));
        for (int i = j; i < n; i++) a[i] = ta[i - j];
    }
}

void kernels_add_sse2(float *x, const float *y, int n) {
    int j = 0;
    for (; j + 4 <= n; j += 4) _mm_storeu_ps(x + j, _mm_add_ps(_mm_loadu_ps(x + j), _mm_loadu_ps(y + j)));
    for (; j < n; j++) x[j] += y[j];
}
