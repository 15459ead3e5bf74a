/* int8_avx2.c - AVX2 int8 matmuls: fp32 activations against int8 weights,
 * and int8 x int8. Only call these when cpu_features() reports AVX2 and FMA. */
#include "llm/compute/avx2/avx2_ops.h"
#include "llm/compute/int8_shape.h"
#include "llm/compute/kernel_sets.h"

/* ---------------------------------------------------------------- int8 x int8
 * vpmovsxbw sign-extends 16 weights straight from memory, vpmaddwd multiplies
 * them with the int16 activations: three instructions per 16 weights and
 * row. (The vpmaddubsw sign trick needs vpsignb + vpabsb + vpmaddubsw +
 * vpmaddwd-with-ones per 32: no fewer instructions, and a saturation case.) */

TARGET_AVX2 static inline __m256i avx2_madd16(const int8_t *w, __m256i x) {
    return _mm256_madd_epi16(_mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)w)), x);
}

/* Four rows against one token. Each group's integer sums are reduced to one
 * exact int32 per row (|sum| <= 1024 * 128 * 127 fits), then scaled and
 * accumulated for the four rows at once, with the scalar reference's
 * arithmetic: sum += (float)isum * (ws * xs), group by group, no FMA. So
 * the result is bit-identical to the scalar and SSE2 kernels. */
TARGET_AVX2 static inline __m128 avx2_q8q_rows4(const int8_t *w0, const float *ws0, const int16_t *x,
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

TARGET_AVX2 static inline float avx2_q8q_row1(const int8_t *w, const float *ws, const int16_t *x,
                                              const float *xs, int n, int gs) {
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

TARGET_AVX2 void kernels_matmul_q8q_avx2(float *out, const int16_t *xq, const float *xs, int batch,
                                         const int8_t *wq, const float *ws, int n, int d, int gs) {
    int8_matmul_q8q_rows(out, xq, xs, batch, wq, ws, n, d, gs, true, avx2_q8q_rows4, avx2_q8q_row1);
}

/* sum_j q[j] * x[j] for one run of weights that share a scale. */
TARGET_AVX2 static inline float avx2_dot_q8(const int8_t *q, const float *x, int len) {
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

TARGET_AVX2 void kernels_matmul_q8_avx2(float *out, const float *x, const int8_t *q, const float *s, int n,
                                        int d, int group_size) {
    int8_matmul_by_runs(out, x, q, s, n, d, group_size, avx2_dot_q8);
}
