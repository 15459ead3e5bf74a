/* ggml_simd.c - SSE2 and AVX2 dot products of ggml weight rows with
 * quantised activations for the common types (F16, Q8_0, Q4_0, Q4_K,
 * Q6_K; ggml_simd_more.c has the rest); ggml_vec_dot_best picks them for
 * the active kernel set and falls back to the scalar reference otherwise. Integer sums are exact, so
 * these agree with the scalar versions up to float summation order. */
#include <immintrin.h>

#include "lib/string.h"
#include "llm/ggml_types.h"
#include "llm/ggml_simd_internal.h"
#include "llm/kernels.h"

/* ---------------------------------------------------------------- SSE2 */

static float sse2_dot_q8_0(const void *row, const void *act, int n) {
    const BlockQ8_0 *w = row;
    const BlockQ8A *a = act;
    __m128 acc = _mm_setzero_ps();
    for (int b = 0; b < n / 32; b++) {
        __m128i s = _mm_add_epi32(sse2_dot16(load16(w[b].qs), load16(a[b].qs)),
                                  sse2_dot16(load16(w[b].qs + 16), load16(a[b].qs + 16)));
        acc = _mm_add_ps(acc, _mm_mul_ps(_mm_set1_ps(half_scale(w[b].d) * a[b].d), _mm_cvtepi32_ps(s)));
    }
    return sse2_hsum_ps(acc);
}

static float sse2_dot_q4_0(const void *row, const void *act, int n) {
    const BlockQ4_0 *w = row;
    const BlockQ8A *a = act;
    const __m128i mask = _mm_set1_epi8(0x0f), eight = _mm_set1_epi8(8);
    __m128 acc = _mm_setzero_ps();
    for (int b = 0; b < n / 32; b++) {
        __m128i raw = load16(w[b].qs);
        __m128i lo = _mm_sub_epi8(_mm_and_si128(raw, mask), eight);
        __m128i hi = _mm_sub_epi8(_mm_and_si128(_mm_srli_epi16(raw, 4), mask), eight);
        __m128i s = _mm_add_epi32(sse2_dot16(lo, load16(a[b].qs)), sse2_dot16(hi, load16(a[b].qs + 16)));
        acc = _mm_add_ps(acc, _mm_mul_ps(_mm_set1_ps(half_scale(w[b].d) * a[b].d), _mm_cvtepi32_ps(s)));
    }
    return sse2_hsum_ps(acc);
}

/* 6-bit scales and mins of a Q4_K block. */
static void k4_scales(const uint8_t *s, int *sc, int *m) {
    for (int j = 0; j < 8; j++) {
        if (j < 4) {
            sc[j] = s[j] & 63;
            m[j] = s[j + 4] & 63;
        } else {
            sc[j] = (s[j + 4] & 0xf) | ((s[j - 4] >> 6) << 4);
            m[j] = (s[j + 4] >> 4) | ((s[j] >> 6) << 4);
        }
    }
}

static float sse2_dot_q4_k(const void *row, const void *act, int n) {
    const BlockQ4_K *w = row;
    const BlockQ8K *a = act;
    const __m128i mask = _mm_set1_epi8(0x0f);
    float sum = 0;
    for (int b = 0; b < n / QK_K; b++) {
        int sc[8], m[8];
        k4_scales(w[b].scales, sc, m);
        int isum = 0, msum = 0;
        const int8_t *x = a[b].qs;
        for (int j = 0; j < 4; j++) {
            const uint8_t *q = w[b].qs + 32 * j;
            __m128i r0 = load16(q), r1 = load16(q + 16);
            __m128i lo = _mm_add_epi32(sse2_dot16(_mm_and_si128(r0, mask), load16(x + 64 * j)),
                                       sse2_dot16(_mm_and_si128(r1, mask), load16(x + 64 * j + 16)));
            __m128i hi = _mm_add_epi32(
                sse2_dot16(_mm_and_si128(_mm_srli_epi16(r0, 4), mask), load16(x + 64 * j + 32)),
                sse2_dot16(_mm_and_si128(_mm_srli_epi16(r1, 4), mask), load16(x + 64 * j + 48)));
            isum += sc[2 * j] * sse2_hsum_i32(lo) + sc[2 * j + 1] * sse2_hsum_i32(hi);
        }
        for (int j = 0; j < 8; j++) msum += m[j] * (a[b].bsums[2 * j] + a[b].bsums[2 * j + 1]);
        sum += a[b].d * (half_scale(w[b].d) * (float)isum - half_scale(w[b].dmin) * (float)msum);
    }
    return sum;
}

/* The 6-bit values (0..63, unsigned) of one Q6_K half-block (128 values). */
static inline void q6_decode_half(const uint8_t *ql, const uint8_t *qh, __m128i out[8]) {
    const __m128i m4 = _mm_set1_epi8(0x0f), m30 = _mm_set1_epi8(0x30);
    for (int k = 0; k < 2; k++) {
        __m128i l0 = load16(ql + 16 * k), l1 = load16(ql + 32 + 16 * k), h = load16(qh + 16 * k);
        out[0 + k] = _mm_or_si128(_mm_and_si128(l0, m4), _mm_and_si128(_mm_slli_epi16(h, 4), m30));
        out[2 + k] = _mm_or_si128(_mm_and_si128(l1, m4), _mm_and_si128(_mm_slli_epi16(h, 2), m30));
        out[4 + k] = _mm_or_si128(_mm_and_si128(_mm_srli_epi16(l0, 4), m4), _mm_and_si128(h, m30));
        out[6 + k] =
            _mm_or_si128(_mm_and_si128(_mm_srli_epi16(l1, 4), m4), _mm_and_si128(_mm_srli_epi16(h, 2), m30));
    }
}

static float sse2_dot_q6_k(const void *row, const void *act, int n) {
    const BlockQ6_K *w = row;
    const BlockQ8K *a = act;
    const __m128i bias = _mm_set1_epi8(32);
    float sum = 0;
    for (int b = 0; b < n / QK_K; b++) {
        int isum = 0;
        for (int half = 0; half < 2; half++) {
            __m128i v[8];
            q6_decode_half(w[b].ql + 64 * half, w[b].qh + 32 * half, v);
            const int8_t *x = a[b].qs + 128 * half;
            for (int s = 0; s < 8; s++) {
                __m128i d = sse2_dot16(_mm_sub_epi8(v[s], bias), load16(x + 16 * s));
                isum += w[b].scales[8 * half + s] * sse2_hsum_i32(d);
            }
        }
        sum += a[b].d * half_scale(w[b].d) * (float)isum;
    }
    return sum;
}

/* Four half floats (exact for normal and subnormal values) to floats. */
static inline __m128 sse2_half4(const uint16_t *h) {
    __m128i raw = _mm_loadl_epi64((const __m128i *)h);
    __m128i v = _mm_unpacklo_epi16(raw, _mm_setzero_si128());
    __m128i sign = _mm_slli_epi32(_mm_and_si128(v, _mm_set1_epi32(0x8000)), 16);
    __m128i mag = _mm_slli_epi32(_mm_and_si128(v, _mm_set1_epi32(0x7fff)), 13);
    __m128 f = _mm_mul_ps(_mm_castsi128_ps(mag), _mm_castsi128_ps(_mm_set1_epi32(0x77800000))); /* 2^112 */
    return _mm_or_ps(f, _mm_castsi128_ps(sign));
}

static float sse2_dot_f16(const void *row, const void *act, int n) {
    const uint16_t *w = row;
    const float *x = act;
    __m128 acc0 = _mm_setzero_ps(), acc1 = _mm_setzero_ps();
    int i = 0;
    for (; i + 8 <= n; i += 8) {
        acc0 = _mm_add_ps(acc0, _mm_mul_ps(sse2_half4(w + i), _mm_loadu_ps(x + i)));
        acc1 = _mm_add_ps(acc1, _mm_mul_ps(sse2_half4(w + i + 4), _mm_loadu_ps(x + i + 4)));
    }
    float lanes[4];
    _mm_storeu_ps(lanes, _mm_add_ps(acc0, acc1));
    float sum = lanes[0] + lanes[1] + lanes[2] + lanes[3];
    for (; i < n; i++) sum += ggml_fp16_to_fp32(w[i]) * x[i];
    return sum;
}

/* ---------------------------------------------------------------- AVX2 */

AVX2 static float avx2_dot_q8_0(const void *row, const void *act, int n) {
    const BlockQ8_0 *w = row;
    const BlockQ8A *a = act;
    __m256 acc = _mm256_setzero_ps();
    for (int b = 0; b < n / 32; b++) {
        __m256 s = _mm256_cvtepi32_ps(avx2_dot32(load32(w[b].qs), load32(a[b].qs)));
        acc = _mm256_fmadd_ps(_mm256_set1_ps(half_scale(w[b].d) * a[b].d), s, acc);
    }
    __m128 h = _mm_add_ps(_mm256_castps256_ps128(acc), _mm256_extractf128_ps(acc, 1));
    h = _mm_add_ps(h, _mm_movehl_ps(h, h));
    h = _mm_add_ss(h, _mm_shuffle_ps(h, h, 1));
    return _mm_cvtss_f32(h);
}

AVX2 static float avx2_dot_q4_0(const void *row, const void *act, int n) {
    const BlockQ4_0 *w = row;
    const BlockQ8A *a = act;
    const __m128i mask = _mm_set1_epi8(0x0f), eight = _mm_set1_epi8(8);
    __m256 acc = _mm256_setzero_ps();
    for (int b = 0; b < n / 32; b++) {
        __m128i raw = load16(w[b].qs);
        __m128i lo = _mm_sub_epi8(_mm_and_si128(raw, mask), eight);
        __m128i hi = _mm_sub_epi8(_mm_and_si128(_mm_srli_epi16(raw, 4), mask), eight);
        __m256i q = _mm256_inserti128_si256(_mm256_castsi128_si256(lo), hi, 1);
        __m256 s = _mm256_cvtepi32_ps(avx2_dot32(q, load32(a[b].qs)));
        acc = _mm256_fmadd_ps(_mm256_set1_ps(half_scale(w[b].d) * a[b].d), s, acc);
    }
    __m128 h = _mm_add_ps(_mm256_castps256_ps128(acc), _mm256_extractf128_ps(acc, 1));
    h = _mm_add_ps(h, _mm_movehl_ps(h, h));
    h = _mm_add_ss(h, _mm_shuffle_ps(h, h, 1));
    return _mm_cvtss_f32(h);
}

AVX2 static float avx2_dot_q4_k(const void *row, const void *act, int n) {
    const BlockQ4_K *w = row;
    const BlockQ8K *a = act;
    const __m256i mask = _mm256_set1_epi8(0x0f);
    float sum = 0;
    for (int b = 0; b < n / QK_K; b++) {
        int sc[8], m[8];
        k4_scales(w[b].scales, sc, m);
        const int8_t *x = a[b].qs;
        __m256i acc = _mm256_setzero_si256();
        for (int j = 0; j < 4; j++) {
            __m256i r = load32(w[b].qs + 32 * j);
            __m256i lo = avx2_dot32_u(_mm256_and_si256(r, mask), load32(x + 64 * j));
            __m256i hi =
                avx2_dot32_u(_mm256_and_si256(_mm256_srli_epi16(r, 4), mask), load32(x + 64 * j + 32));
            acc = _mm256_add_epi32(acc, _mm256_mullo_epi32(lo, _mm256_set1_epi32(sc[2 * j])));
            acc = _mm256_add_epi32(acc, _mm256_mullo_epi32(hi, _mm256_set1_epi32(sc[2 * j + 1])));
        }
        int msum = 0;
        for (int j = 0; j < 8; j++) msum += m[j] * (a[b].bsums[2 * j] + a[b].bsums[2 * j + 1]);
        sum +=
            a[b].d * (half_scale(w[b].d) * (float)avx2_hsum_i32(acc) - half_scale(w[b].dmin) * (float)msum);
    }
    return sum;
}

AVX2 static float avx2_dot_q6_k(const void *row, const void *act, int n) {
    const BlockQ6_K *w = row;
    const BlockQ8K *a = act;
    float sum = 0;
    for (int b = 0; b < n / QK_K; b++) {
        int isum = 0, bias = 0;
        for (int half = 0; half < 2; half++) {
            __m128i v[8];
            q6_decode_half(w[b].ql + 64 * half, w[b].qh + 32 * half, v);
            const int8_t *x = a[b].qs + 128 * half;
            const int8_t *sc = w[b].scales + 8 * half;
            __m256i acc = _mm256_setzero_si256();
            for (int s = 0; s < 8; s += 2) {
                __m256i q = _mm256_inserti128_si256(_mm256_castsi128_si256(v[s]), v[s + 1], 1);
                __m256i d = avx2_dot32_u(q, load32(x + 16 * s));
                __m256i scales = _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_set1_epi32(sc[s])),
                                                         _mm_set1_epi32(sc[s + 1]), 1);
                acc = _mm256_add_epi32(acc, _mm256_mullo_epi32(d, scales));
            }
            isum += avx2_hsum_i32(acc);
            for (int s = 0; s < 8; s++) bias += sc[s] * a[b].bsums[8 * half + s];
        }
        /* (q - 32) * x summed = q * x - 32 * sum(x). */
        sum += a[b].d * half_scale(w[b].d) * (float)(isum - 32 * bias);
    }
    return sum;
}

AVX2 static float avx2_dot_f16(const void *row, const void *act, int n) {
    const uint16_t *w = row;
    const float *x = act;
    __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
    int i = 0;
    for (; i + 16 <= n; i += 16) {
        acc0 = _mm256_fmadd_ps(_mm256_cvtph_ps(load16(w + i)), _mm256_loadu_ps(x + i), acc0);
        acc1 = _mm256_fmadd_ps(_mm256_cvtph_ps(load16(w + i + 8)), _mm256_loadu_ps(x + i + 8), acc1);
    }
    __m256 acc = _mm256_add_ps(acc0, acc1);
    __m128 h = _mm_add_ps(_mm256_castps256_ps128(acc), _mm256_extractf128_ps(acc, 1));
    h = _mm_add_ps(h, _mm_movehl_ps(h, h));
    h = _mm_add_ss(h, _mm_shuffle_ps(h, h, 1));
    float sum = _mm_cvtss_f32(h);
    for (; i < n; i++) sum += ggml_fp16_to_fp32(w[i]) * x[i];
    return sum;
}

/* CPUID.1:ECX.F16C[bit 29]; the AVX2 F16 dot needs it (the kernel only
 * checks AVX2 and FMA before selecting the AVX2 set). */
static int cpu_has_f16c(void) {
    uint32_t a = 1, b, c = 0, d;
    __asm__ volatile("cpuid" : "+a"(a), "=b"(b), "+c"(c), "=d"(d));
    return (c >> 29) & 1;
}

ggml_vec_dot_fn ggml_vec_dot_simd(uint32_t type, int avx2) {
    static int f16c = -1;
    switch (type) {
    case GGML_TYPE_F16:
        if (avx2 && f16c < 0) f16c = cpu_has_f16c();
        return avx2 && f16c ? avx2_dot_f16 : sse2_dot_f16;
    case GGML_TYPE_Q8_0:
        return avx2 ? avx2_dot_q8_0 : sse2_dot_q8_0;
    case GGML_TYPE_Q4_0:
        return avx2 ? avx2_dot_q4_0 : sse2_dot_q4_0;
    case GGML_TYPE_Q4_K:
        return avx2 ? avx2_dot_q4_k : sse2_dot_q4_k;
    case GGML_TYPE_Q6_K:
        return avx2 ? avx2_dot_q6_k : sse2_dot_q6_k;
    default:
        return ggml_vec_dot_simd_more(type, avx2);
    }
}

ggml_vec_dot_fn ggml_vec_dot_best(uint32_t type) {
    if (kernels == &kernels_scalar) return ggml_vec_dot_scalar(type);
    ggml_vec_dot_fn fn = ggml_vec_dot_simd(type, kernels == &kernels_avx2);
    return fn ? fn : ggml_vec_dot_scalar(type);
}
