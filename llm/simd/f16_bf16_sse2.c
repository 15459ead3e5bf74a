/* f16_bf16_sse2.c - F16 and BF16 rows with fp32 activations, SSE2: eight
 * values per pass in two accumulators, the tail scalar. */
#include "llm/simd/ggml_sse2.h"

/* Four half floats (exact for normal and subnormal values) to floats. */
static inline __m128 half4(const uint16_t *h) {
    __m128i raw = _mm_loadl_epi64((const __m128i *)h);
    __m128i v = _mm_unpacklo_epi16(raw, _mm_setzero_si128());
    __m128i sign = _mm_slli_epi32(_mm_and_si128(v, _mm_set1_epi32(0x8000)), 16);
    __m128i mag = _mm_slli_epi32(_mm_and_si128(v, _mm_set1_epi32(0x7fff)), 13);
    __m128 f = _mm_mul_ps(_mm_castsi128_ps(mag), _mm_castsi128_ps(_mm_set1_epi32(0x77800000))); /* 2^112 */
    return _mm_or_ps(f, _mm_castsi128_ps(sign));
}

static float dot_f16(const void *row, const void *act, int n) {
    const uint16_t *w = row;
    const float *x = act;
    __m128 acc0 = _mm_setzero_ps(), acc1 = _mm_setzero_ps();
    int i = 0;
    for (; i + 8 <= n; i += 8) {
        acc0 = _mm_add_ps(acc0, _mm_mul_ps(half4(w + i), _mm_loadu_ps(x + i)));
        acc1 = _mm_add_ps(acc1, _mm_mul_ps(half4(w + i + 4), _mm_loadu_ps(x + i + 4)));
    }
    float lanes[4];
    _mm_storeu_ps(lanes, _mm_add_ps(acc0, acc1));
    float sum = lanes[0] + lanes[1] + lanes[2] + lanes[3];
    for (; i < n; i++) sum += ggml_fp16_to_fp32(w[i]) * x[i];
    return sum;
}

static float dot_bf16(const void *row, const void *act, int n) {
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

const GgmlKernel ggml_f16_sse2 = {dot_f16, NULL, NULL};
const GgmlKernel ggml_bf16_sse2 = {dot_bf16, NULL, NULL};
