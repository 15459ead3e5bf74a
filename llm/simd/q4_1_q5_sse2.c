/* q4_1_q5_sse2.c - Q4_1, Q5_0 and Q5_1 rows with Q8A activations, SSE2:
 * one loop, values q (nibbles, plus the fifth bit, minus an offset),
 * dot = d * a.d * sum(q x) + m * a.s. */
#include "llm/simd/ggml_sse2.h"

static inline float dot_q4q5(const uint8_t *p, const BlockQ8A *a, int n, int stride, int has_min,
                             int has_fifth) {
    const __m128i sixteen = _mm_set1_epi8(16);
    __m128 acc = _mm_setzero_ps();
    float min_sum = 0;
    for (int b = 0; b < n / QK32; b++, p += stride) {
        __m128i lo, hi;
        q4q5_values(p, has_min, has_fifth, &lo, &hi);
        if (has_fifth && !has_min) lo = _mm_sub_epi8(lo, sixteen), hi = _mm_sub_epi8(hi, sixteen);
        __m128i s = _mm_add_epi32(sse2_dot16(lo, load16(a[b].qs)), sse2_dot16(hi, load16(a[b].qs + 16)));
        float scale = q4q5_scale(p, has_min, &a[b], &min_sum);
        acc = _mm_add_ps(acc, _mm_mul_ps(_mm_set1_ps(scale), _mm_cvtepi32_ps(s)));
    }
    return sse2_hsum_ps(acc) + min_sum;
}

static float dot_q4_1(const void *row, const void *act, int n) {
    return dot_q4q5(row, act, n, sizeof(BlockQ4_1), 1, 0);
}
static float dot_q5_0(const void *row, const void *act, int n) {
    return dot_q4q5(row, act, n, sizeof(BlockQ5_0), 0, 1);
}
static float dot_q5_1(const void *row, const void *act, int n) {
    return dot_q4q5(row, act, n, sizeof(BlockQ5_1), 1, 1);
}

const GgmlKernel ggml_q4_1_sse2 = {dot_q4_1, NULL, NULL};
const GgmlKernel ggml_q5_0_sse2 = {dot_q5_0, NULL, NULL};
const GgmlKernel ggml_q5_1_sse2 = {dot_q5_1, NULL, NULL};
