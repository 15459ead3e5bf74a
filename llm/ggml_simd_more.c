/* ggml_simd_more.c - SSE2 and AVX2 dot products for the less common ggml
 * types: Q4_1, Q5_0, Q5_1 (with Q8A activations), Q2_K, Q3_K, Q5_K (with
 * Q8K activations) and BF16 (fp32 activations). Weights are decoded to
 * small integers in registers and multiplied with the int8 activations in
 * integer arithmetic (cheap under QEMU TCG); scales and mins are applied
 * once per block, mins through the activation sums, as in the scalar
 * reference (ggml_types.c). */
#include "llm/ggml_simd_internal.h"

/* ------------------------------------------------------------ helpers */

/* Bit j of a 32-bit mask as 0x10 in byte j (lo: bytes 0..15, hi: 16..31):
 * the fifth bit of Q5_0/Q5_1 values. */
static inline void sse2_fifth_bits(const uint8_t qh[4], __m128i *lo, __m128i *hi) {
    uint32_t bits = (uint32_t)qh[0] | (uint32_t)qh[1] << 8 | (uint32_t)qh[2] << 16 | (uint32_t)qh[3] << 24;
    __m128i v = _mm_cvtsi32_si128((int)bits);
    v = _mm_unpacklo_epi8(v, v);  /* b0 b0 b1 b1 b2 b2 b3 b3 */
    v = _mm_unpacklo_epi16(v, v); /* b0 x4, b1 x4, b2 x4, b3 x4 */
    const __m128i select = _mm_set1_epi64x((long long)0x8040201008040201ull);
    const __m128i five = _mm_set1_epi8(0x10);
    __m128i l = _mm_unpacklo_epi32(v, v), h = _mm_unpackhi_epi32(v, v); /* b0 x8 b1 x8 / b2 x8 b3 x8 */
    *lo = _mm_and_si128(_mm_cmpeq_epi8(_mm_and_si128(l, select), select), five);
    *hi = _mm_and_si128(_mm_cmpeq_epi8(_mm_and_si128(h, select), select), five);
}

/* The 32 4-bit values of a Q4_x/Q5_x block: low nibbles (values 0..15)
 * then high nibbles (16..31). */
static inline void sse2_nibbles(const uint8_t *qs, __m128i *lo, __m128i *hi) {
    const __m128i mask = _mm_set1_epi8(0x0f);
    __m128i raw = load16(qs);
    *lo = _mm_and_si128(raw, mask);
    *hi = _mm_and_si128(_mm_srli_epi16(raw, 4), mask);
}

/* 16 signed bytes a times 16 signed bytes b, each product times scale:
 * four int32 sums. |a*b| must fit int16 (|a| <= 63 here). */
static inline __m128i sse2_dot16_scaled(__m128i a, __m128i b, __m128i scale16) {
    __m128i zero = _mm_setzero_si128();
    __m128i sa = _mm_cmpgt_epi8(zero, a), sb = _mm_cmpgt_epi8(zero, b);
    __m128i plo = _mm_mullo_epi16(_mm_unpacklo_epi8(a, sa), _mm_unpacklo_epi8(b, sb));
    __m128i phi = _mm_mullo_epi16(_mm_unpackhi_epi8(a, sa), _mm_unpackhi_epi8(b, sb));
    return _mm_add_epi32(_mm_madd_epi16(plo, scale16), _mm_madd_epi16(phi, scale16));
}

/* Sum over 16 sub-blocks of mins[s] * bsums[s] (both small). */
static inline int min_sum16(const int *mins, const int16_t *bsums) {
    int sum = 0;
    for (int s = 0; s < 16; s++) sum += mins[s] * bsums[s];
    return sum;
}

/* ------------------------------------------- SSE2: 32-value block types */

/* Q4_1, Q5_0, Q5_1 share one loop: values q (from nibbles, plus the fifth
 * bit, minus an offset), dot = d * a.d * sum(q x) + m * a.s. */
static inline float sse2_dot_q4q5(const uint8_t *p, const BlockQ8A *a, int n, int stride, int has_min,
                                  int has_fifth) {
    const __m128i sixteen = _mm_set1_epi8(16);
    __m128 acc = _mm_setzero_ps();
    float min_sum = 0;
    for (int b = 0; b < n / 32; b++, p += stride) {
        const uint8_t *qs = p + 2 + 2 * has_min + 4 * has_fifth;
        __m128i lo, hi;
        sse2_nibbles(qs, &lo, &hi);
        if (has_fifth) {
            __m128i flo, fhi;
            sse2_fifth_bits(p + 2 + 2 * has_min, &flo, &fhi);
            lo = _mm_or_si128(lo, flo);
            hi = _mm_or_si128(hi, fhi);
            if (!has_min) lo = _mm_sub_epi8(lo, sixteen), hi = _mm_sub_epi8(hi, sixteen);
        }
        __m128i s = _mm_add_epi32(sse2_dot16(lo, load16(a[b].qs)), sse2_dot16(hi, load16(a[b].qs + 16)));
        uint16_t d, m = 0;
        __builtin_memcpy(&d, p, 2);
        if (has_min) __builtin_memcpy(&m, p + 2, 2), min_sum += half_scale(m) * a[b].s;
        acc = _mm_add_ps(acc, _mm_mul_ps(_mm_set1_ps(half_scale(d) * a[b].d), _mm_cvtepi32_ps(s)));
    }
    return sse2_hsum_ps(acc) + min_sum;
}

static float sse2_dot_q4_1(const void *row, const void *act, int n) {
    return sse2_dot_q4q5(row, act, n, sizeof(BlockQ4_1), 1, 0);
}
static float sse2_dot_q5_0(const void *row, const void *act, int n) {
    return sse2_dot_q4q5(row, act, n, sizeof(BlockQ5_0), 0, 1);
}
static float sse2_dot_q5_1(const void *row, const void *act, int n) {
    return sse2_dot_q4q5(row, act, n, sizeof(BlockQ5_1), 1, 1);
}

/* -------------------------------------------------- SSE2: k-quant types */

static float sse2_dot_q2_k(const void *row, const void *act, int n) {
    const BlockQ2_K *w = row;
    const BlockQ8K *a = act;
    const __m128i three = _mm_set1_epi8(3);
    float sum = 0;
    for (int b = 0; b < n / QK_K; b++) {
        int sc[16], m[16];
        q2_k_scales(&w[b], sc, m);
        __m128i acc = _mm_setzero_si128();
        for (int half = 0; half < 2; half++) {
            __m128i r0 = load16(w[b].qs + 32 * half), r1 = load16(w[b].qs + 32 * half + 16);
            for (int j = 0; j < 4; j++) {
                int s = 8 * half + 2 * j;
                const int8_t *x = a[b].qs + 128 * half + 32 * j;
                __m128i q0 = _mm_and_si128(_mm_srli_epi16(r0, 2 * j), three);
                __m128i q1 = _mm_and_si128(_mm_srli_epi16(r1, 2 * j), three);
                acc = _mm_add_epi32(acc, sse2_dot16_scaled(q0, load16(x), _mm_set1_epi16((short)sc[s])));
                acc = _mm_add_epi32(acc,
                                    sse2_dot16_scaled(q1, load16(x + 16), _mm_set1_epi16((short)sc[s + 1])));
            }
        }
        int msum = min_sum16(m, a[b].bsums);
        sum +=
            a[b].d * (half_scale(w[b].d) * (float)sse2_hsum_i32(acc) - half_scale(w[b].dmin) * (float)msum);
    }
    return sum;
}

static float sse2_dot_q3_k(const void *row, const void *act, int n) {
    const BlockQ3_K *w = row;
    const BlockQ8K *a = act;
    const __m128i three = _mm_set1_epi8(3), one = _mm_set1_epi8(1), four = _mm_set1_epi8(4);
    float sum = 0;
    for (int b = 0; b < n / QK_K; b++) {
        int sc[16];
        q3_k_scales(w[b].scales, sc);
        __m128i hm0 = load16(w[b].hmask), hm1 = load16(w[b].hmask + 16);
        __m128i acc = _mm_setzero_si128();
        for (int half = 0; half < 2; half++) {
            __m128i r0 = load16(w[b].qs + 32 * half), r1 = load16(w[b].qs + 32 * half + 16);
            for (int j = 0; j < 4; j++) {
                int s = 8 * half + 2 * j, bit = 4 * half + j;
                const int8_t *x = a[b].qs + 128 * half + 32 * j;
                /* value = low two bits - 4 when the hmask bit is clear */
                __m128i h0 = _mm_and_si128(_mm_srli_epi16(hm0, bit), one);
                __m128i h1 = _mm_and_si128(_mm_srli_epi16(hm1, bit), one);
                __m128i q0 = _mm_sub_epi8(_mm_and_si128(_mm_srli_epi16(r0, 2 * j), three),
                                          _mm_andnot_si128(_mm_slli_epi16(h0, 2), four));
                __m128i q1 = _mm_sub_epi8(_mm_and_si128(_mm_srli_epi16(r1, 2 * j), three),
                                          _mm_andnot_si128(_mm_slli_epi16(h1, 2), four));
                acc = _mm_add_epi32(acc, sse2_dot16_scaled(q0, load16(x), _mm_set1_epi16((short)sc[s])));
                acc = _mm_add_epi32(acc,
                                    sse2_dot16_scaled(q1, load16(x + 16), _mm_set1_epi16((short)sc[s + 1])));
            }
        }
        sum += a[b].d * half_scale(w[b].d) * (float)sse2_hsum_i32(acc);
    }
    return sum;
}

static float sse2_dot_q5_k(const void *row, const void *act, int n) {
    const BlockQ5_K *w = row;
    const BlockQ8K *a = act;
    const __m128i mask = _mm_set1_epi8(0x0f), one = _mm_set1_epi8(1);
    float sum = 0;
    for (int b = 0; b < n / QK_K; b++) {
        uint32_t words[4];
        k4_scales_mins(w[b].scales, words);
        const uint8_t *sc = (const uint8_t *)words, *m = sc + 8;
        __m128i qh0 = load16(w[b].qh), qh1 = load16(w[b].qh + 16);
        __m128i acc = _mm_setzero_si128();
        for (int j = 0; j < 4; j++) {
            const int8_t *x = a[b].qs + 64 * j;
            __m128i r0 = load16(w[b].qs + 32 * j), r1 = load16(w[b].qs + 32 * j + 16);
            /* fifth bits: bit 2j of qh for the low nibbles, 2j+1 for the high */
            __m128i l0 = _mm_or_si128(_mm_and_si128(r0, mask),
                                      _mm_slli_epi16(_mm_and_si128(_mm_srli_epi16(qh0, 2 * j), one), 4));
            __m128i l1 = _mm_or_si128(_mm_and_si128(r1, mask),
                                      _mm_slli_epi16(_mm_and_si128(_mm_srli_epi16(qh1, 2 * j), one), 4));
            __m128i h0 = _mm_or_si128(_mm_and_si128(_mm_srli_epi16(r0, 4), mask),
                                      _mm_slli_epi16(_mm_and_si128(_mm_srli_epi16(qh0, 2 * j + 1), one), 4));
            __m128i h1 = _mm_or_si128(_mm_and_si128(_mm_srli_epi16(r1, 4), mask),
                                      _mm_slli_epi16(_mm_and_si128(_mm_srli_epi16(qh1, 2 * j + 1), one), 4));
            __m128i slo = _mm_set1_epi16((short)sc[2 * j]), shi = _mm_set1_epi16((short)sc[2 * j + 1]);
            acc = _mm_add_epi32(acc, sse2_dot16_scaled(l0, load16(x), slo));
            acc = _mm_add_epi32(acc, sse2_dot16_scaled(l1, load16(x + 16), slo));
            acc = _mm_add_epi32(acc, sse2_dot16_scaled(h0, load16(x + 32), shi));
            acc = _mm_add_epi32(acc, sse2_dot16_scaled(h1, load16(x + 48), shi));
        }
        int msum = 0;
        for (int j = 0; j < 8; j++) msum += m[j] * (a[b].bsums[2 * j] + a[b].bsums[2 * j + 1]);
        sum +=
            a[b].d * (half_scale(w[b].d) * (float)sse2_hsum_i32(acc) - half_scale(w[b].dmin) * (float)msum);
    }
    return sum;
}

static float sse2_dot_bf16(const void *row, const void *act, int n) {
    const uint16_t *w = row;
    const float *x = act;
    const __m128i zero = _mm_setzero_si128();
    __m128 acc0 = _mm_setzero_ps(), acc1 = _mm_setzero_ps();
    int i = 0;
    for (; i + 8 <= n; i += 8) {
        __m128i raw = load16(w + i);
        /* bf16 is the top half of an fp32: put it there */
        acc0 = _mm_add_ps(acc0,
                          _mm_mul_ps(_mm_castsi128_ps(_mm_unpacklo_epi16(zero, raw)), _mm_loadu_ps(x + i)));
        acc1 = _mm_add_ps(
            acc1, _mm_mul_ps(_mm_castsi128_ps(_mm_unpackhi_epi16(zero, raw)), _mm_loadu_ps(x + i + 4)));
    }
    float sum = sse2_hsum_ps(_mm_add_ps(acc0, acc1));
    for (; i < n; i++) sum += ggml_bf16_to_fp32(w[i]) * x[i];
    return sum;
}

/* ------------------------------------------------------------- AVX2 */

AVX2 static inline __m256i avx2_join(__m128i lo, __m128i hi) {
    return _mm256_inserti128_si256(_mm256_castsi128_si256(lo), hi, 1);
}

/* Unsigned bytes u (0..63) times signed bytes x, bytes 0-15 weighted by
 * scale_lo and 16-31 by scale_hi: eight int32 sums. */
AVX2 static inline __m256i avx2_dot32_u_scaled(__m256i u, __m256i x, int scale_lo, int scale_hi) {
    __m256i scales = avx2_join(_mm_set1_epi16((short)scale_lo), _mm_set1_epi16((short)scale_hi));
    return _mm256_madd_epi16(_mm256_maddubs_epi16(u, x), scales);
}

AVX2 static inline float avx2_hsum_ps(__m256 v) {
    return sse2_hsum_ps(_mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1)));
}

AVX2 static inline float avx2_dot_q4q5(const uint8_t *p, const BlockQ8A *a, int n, int stride, int has_min,
                                       int has_fifth) {
    __m256 acc = _mm256_setzero_ps();
    float min_sum = 0;
    for (int b = 0; b < n / 32; b++, p += stride) {
        __m128i lo, hi;
        sse2_nibbles(p + 2 + 2 * has_min + 4 * has_fifth, &lo, &hi);
        if (has_fifth) {
            __m128i flo, fhi;
            sse2_fifth_bits(p + 2 + 2 * has_min, &flo, &fhi);
            lo = _mm_or_si128(lo, flo);
            hi = _mm_or_si128(hi, fhi);
        }
        __m256i q = avx2_join(lo, hi), x = load32(a[b].qs);
        /* Q4_1/Q5_1 values are unsigned (0..31); Q5_0's are signed (-16..15) */
        __m256i s = has_min ? avx2_dot32_u(q, x) : avx2_dot32(_mm256_sub_epi8(q, _mm256_set1_epi8(16)), x);
        uint16_t d, m = 0;
        __builtin_memcpy(&d, p, 2);
        if (has_min) __builtin_memcpy(&m, p + 2, 2), min_sum += half_scale(m) * a[b].s;
        acc = _mm256_fmadd_ps(_mm256_set1_ps(half_scale(d) * a[b].d), _mm256_cvtepi32_ps(s), acc);
    }
    return avx2_hsum_ps(acc) + min_sum;
}

AVX2 static float avx2_dot_q4_1(const void *row, const void *act, int n) {
    return avx2_dot_q4q5(row, act, n, sizeof(BlockQ4_1), 1, 0);
}
AVX2 static float avx2_dot_q5_0(const void *row, const void *act, int n) {
    return avx2_dot_q4q5(row, act, n, sizeof(BlockQ5_0), 0, 1);
}
AVX2 static float avx2_dot_q5_1(const void *row, const void *act, int n) {
    return avx2_dot_q4q5(row, act, n, sizeof(BlockQ5_1), 1, 1);
}

AVX2 static float avx2_dot_q2_k(const void *row, const void *act, int n) {
    const BlockQ2_K *w = row;
    const BlockQ8K *a = act;
    const __m256i three = _mm256_set1_epi8(3);
    float sum = 0;
    for (int b = 0; b < n / QK_K; b++) {
        int sc[16], m[16];
        q2_k_scales(&w[b], sc, m);
        __m256i acc = _mm256_setzero_si256();
        for (int half = 0; half < 2; half++) {
            __m256i r = load32(w[b].qs + 32 * half);
            for (int j = 0; j < 4; j++) {
                int s = 8 * half + 2 * j;
                __m256i q = _mm256_and_si256(_mm256_srli_epi16(r, 2 * j), three);
                acc = _mm256_add_epi32(
                    acc, avx2_dot32_u_scaled(q, load32(a[b].qs + 128 * half + 32 * j), sc[s], sc[s + 1]));
            }
        }
        int msum = min_sum16(m, a[b].bsums);
        sum +=
            a[b].d * (half_scale(w[b].d) * (float)avx2_hsum_i32(acc) - half_scale(w[b].dmin) * (float)msum);
    }
    return sum;
}

AVX2 static float avx2_dot_q3_k(const void *row, const void *act, int n) {
    const BlockQ3_K *w = row;
    const BlockQ8K *a = act;
    const __m256i three = _mm256_set1_epi8(3), one = _mm256_set1_epi8(1);
    float sum = 0;
    for (int b = 0; b < n / QK_K; b++) {
        int sc[16];
        q3_k_scales(w[b].scales, sc);
        __m256i hm = load32(w[b].hmask);
        __m256i acc = _mm256_setzero_si256();
        for (int half = 0; half < 2; half++) {
            __m256i r = load32(w[b].qs + 32 * half);
            for (int j = 0; j < 4; j++) {
                int s = 8 * half + 2 * j, bit = 4 * half + j;
                /* unsigned value u = low bits + 4 * hmask bit = q + 4 */
                __m256i h = _mm256_and_si256(_mm256_srli_epi16(hm, bit), one);
                __m256i u = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(r, 2 * j), three),
                                            _mm256_slli_epi16(h, 2));
                acc = _mm256_add_epi32(
                    acc, avx2_dot32_u_scaled(u, load32(a[b].qs + 128 * half + 32 * j), sc[s], sc[s + 1]));
            }
        }
        /* sum sc * (u - 4) * x = sum sc * u * x - 4 * sum sc * bsum */
        int bias = min_sum16(sc, a[b].bsums);
        sum += a[b].d * half_scale(w[b].d) * (float)(avx2_hsum_i32(acc) - 4 * bias);
    }
    return sum;
}

AVX2 static float avx2_dot_q5_k(const void *row, const void *act, int n) {
    const BlockQ5_K *w = row;
    const BlockQ8K *a = act;
    const __m256i mask = _mm256_set1_epi8(0x0f), one = _mm256_set1_epi8(1);
    float sum = 0;
    for (int b = 0; b < n / QK_K; b++) {
        uint32_t words[4];
        k4_scales_mins(w[b].scales, words);
        const uint8_t *sc = (const uint8_t *)words, *m = sc + 8;
        __m256i qh = load32(w[b].qh);
        __m256i acc = _mm256_setzero_si256();
        for (int j = 0; j < 4; j++) {
            const int8_t *x = a[b].qs + 64 * j;
            __m256i r = load32(w[b].qs + 32 * j);
            __m256i lo =
                _mm256_or_si256(_mm256_and_si256(r, mask),
                                _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 2 * j), one), 4));
            __m256i hi = _mm256_or_si256(
                _mm256_and_si256(_mm256_srli_epi16(r, 4), mask),
                _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 2 * j + 1), one), 4));
            acc = _mm256_add_epi32(acc, avx2_dot32_u_scaled(lo, load32(x), sc[2 * j], sc[2 * j]));
            acc =
                _mm256_add_epi32(acc, avx2_dot32_u_scaled(hi, load32(x + 32), sc[2 * j + 1], sc[2 * j + 1]));
        }
        int msum = 0;
        for (int j = 0; j < 8; j++) msum += m[j] * (a[b].bsums[2 * j] + a[b].bsums[2 * j + 1]);
        sum +=
            a[b].d * (half_scale(w[b].d) * (float)avx2_hsum_i32(acc) - half_scale(w[b].dmin) * (float)msum);
    }
    return sum;
}

AVX2 static float avx2_dot_bf16(const void *row, const void *act, int n) {
    const uint16_t *w = row;
    const float *x = act;
    __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
    int i = 0;
    for (; i + 16 <= n; i += 16) {
        __m256i w0 = _mm256_slli_epi32(_mm256_cvtepu16_epi32(load16(w + i)), 16);
        __m256i w1 = _mm256_slli_epi32(_mm256_cvtepu16_epi32(load16(w + i + 8)), 16);
        acc0 = _mm256_fmadd_ps(_mm256_castsi256_ps(w0), _mm256_loadu_ps(x + i), acc0);
        acc1 = _mm256_fmadd_ps(_mm256_castsi256_ps(w1), _mm256_loadu_ps(x + i + 8), acc1);
    }
    float sum = avx2_hsum_ps(_mm256_add_ps(acc0, acc1));
    for (; i < n; i++) sum += ggml_bf16_to_fp32(w[i]) * x[i];
    return sum;
}

ggml_vec_dot_fn ggml_vec_dot_simd_more(uint32_t type, int avx2) {
    switch (type) {
    case GGML_TYPE_Q4_1:
        return avx2 ? avx2_dot_q4_1 : sse2_dot_q4_1;
    case GGML_TYPE_Q5_0:
        return avx2 ? avx2_dot_q5_0 : sse2_dot_q5_0;
    case GGML_TYPE_Q5_1:
        return avx2 ? avx2_dot_q5_1 : sse2_dot_q5_1;
    case GGML_TYPE_Q2_K:
        return avx2 ? avx2_dot_q2_k : sse2_dot_q2_k;
    case GGML_TYPE_Q3_K:
        return avx2 ? avx2_dot_q3_k : sse2_dot_q3_k;
    case GGML_TYPE_Q5_K:
        return avx2 ? avx2_dot_q5_k : sse2_dot_q5_k;
    case GGML_TYPE_BF16:
        return avx2 ? avx2_dot_bf16 : sse2_dot_bf16;
    default:
        return NULL;
    }
}
