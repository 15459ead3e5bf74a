/* q6_k_sse2.c - Q6_K rows with Q8K activations, SSE2. */
#include "llm/simd/ggml_sse2.h"

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

STEP float q6_k_block(const void *wp, const BlockQ8K *a) {
    const BlockQ6_K *w = wp;
    const __m128i bias = _mm_set1_epi8(32);
    int isum = 0;
    for (int half = 0; half < 2; half++) {
        __m128i v[8];
        q6_decode_half(w->ql + 64 * half, w->qh + 32 * half, v);
        const int8_t *x = a->qs + 128 * half;
        for (int s = 0; s < 8; s++) {
            __m128i d = sse2_dot16(_mm_sub_epi8(v[s], bias), load16(x + 16 * s));
            isum += w->scales[8 * half + s] * sse2_hsum_i32(d);
        }
    }
    return a->d * half_scale(w->d) * (float)isum;
}

static float dot_q6_k(const void *row, const void *act, int n) {
    return k_row_dot(row, act, n, sizeof(BlockQ6_K), q6_k_block);
}

const GgmlKernel ggml_q6_k_sse2 = {dot_q6_k, NULL, NULL};
