/* q4_1_q5_avx2.c - Q4_1, Q5_0 and Q5_1 rows with Q8A activations, AVX2:
 * one loop, the block decoded as in q4_1_q5_sse2.c, 32 values per multiply. */
#include "llm/simd/ggml_avx2.h"

TARGET_AVX2 static inline float dot_q4q5(const uint8_t *p, const BlockQ8A *a, int n, int stride, int has_min,
                                         int has_fifth) {
    __m256 acc = _mm256_setzero_ps();
    float min_sum = 0;
    for (int b = 0; b < n / QK32; b++, p += stride) {
        __m128i lo, hi;
        q4q5_values(p, has_min, has_fifth, &lo, &hi);
        __m256i q = avx2_join(lo, hi), x = load32(a[b].qs);
        /* Q4_1/Q5_1 values are unsigned (0..31); Q5_0's are signed (-16..15) */
        __m256i s = has_min ? avx2_dot32_u(q, x) : avx2_dot32(_mm256_sub_epi8(q, _mm256_set1_epi8(16)), x);
        float scale = q4q5_scale(p, has_min, &a[b], &min_sum);
        acc = _mm256_fmadd_ps(_mm256_set1_ps(scale), _mm256_cvtepi32_ps(s), acc);
    }
    return avx2_hsum_ps(acc) + min_sum;
}

TARGET_AVX2 static float dot_q4_1(const void *row, const void *act, int n) {
    return dot_q4q5(row, act, n, sizeof(BlockQ4_1), 1, 0);
}
TARGET_AVX2 static float dot_q5_0(const void *row, const void *act, int n) {
    return dot_q4q5(row, act, n, sizeof(BlockQ5_0), 0, 1);
}
TARGET_AVX2 static float dot_q5_1(const void *row, const void *act, int n) {
    return dot_q4q5(row, act, n, sizeof(BlockQ5_1), 1, 1);
}

const GgmlKernel ggml_q4_1_avx2 = {dot_q4_1, NULL, NULL};
const GgmlKernel ggml_q5_0_avx2 = {dot_q5_0, NULL, NULL};
const GgmlKernel ggml_q5_1_avx2 = {dot_q5_1, NULL, NULL};
