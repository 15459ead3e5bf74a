/* vec_avx2.c - AVX2+FMA elementwise kernels: rmsnorm, softmax, swiglu, add
 * (the AVX-512 set uses these too: they are a small share of a token). */
#include "lib/math.h"
#include "llm/compute/avx2/avx2_ops.h"
#include "llm/compute/kernel_sets.h"

TARGET_AVX2 void kernels_rmsnorm_avx2(float *out, const float *x, const float *weight, int n) {
    float ss = avx2_dot(x, x, n);
    float scale = 1.0f / sqrtf(ss / n + 1e-5f);
    __m256 sv = _mm256_set1_ps(scale);
    int j = 0;
    for (; j + 8 <= n; j += 8)
        _mm256_storeu_ps(
            out + j, _mm256_mul_ps(_mm256_loadu_ps(weight + j), _mm256_mul_ps(sv, _mm256_loadu_ps(x + j))));
    for (; j < n; j++) out[j] = weight[j] * (scale * x[j]);
}

/* e^x for eight floats: the same range reduction and degree-7 Taylor
 * polynomial as sse2_exp (vec_sse2.c), evaluated with FMA; within 2 ulp
 * for -87.3 <= x <= 88, 0 below (-inf included), clamped above. */
TARGET_AVX2 static inline __m256 avx2_exp(__m256 x) {
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

TARGET_AVX2 void kernels_softmax_avx2(float *x, int n) {
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

TARGET_AVX2 static inline __m256 avx2_swiglu8(__m256 a, __m256 b) {
    __m256 e = avx2_exp(_mm256_sub_ps(_mm256_setzero_ps(), a));
    return _mm256_mul_ps(_mm256_div_ps(a, _mm256_add_ps(_mm256_set1_ps(1.0f), e)), b);
}

TARGET_AVX2 void kernels_swiglu_avx2(float *a, const float *b, int n) {
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

TARGET_AVX2 void kernels_add_avx2(float *x, const float *y, int n) {
    int j = 0;
    for (; j + 8 <= n; j += 8)
        _mm256_storeu_ps(x + j, _mm256_add_ps(_mm256_loadu_ps(x + j), _mm256_loadu_ps(y + j)));
    for (; j < n; j++) x[j] += y[j];
}
