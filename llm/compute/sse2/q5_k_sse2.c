/* q5_k_sse2.c - Q5_K rows with Q8K activations, SSE2. */
#include "llm/compute/k_gemm.h"

/* 16 five-bit values: the nibbles (shifted down by `shift`) plus bit `bit`
 * of the high bits as the fifth. */
static inline __m128i q5_values(__m128i raw, int shift, __m128i qh, int bit) {
    const __m128i mask = _mm_set1_epi8(0x0f), one = _mm_set1_epi8(1);
    return _mm_or_si128(_mm_and_si128(_mm_srli_epi16(raw, shift), mask),
                        _mm_slli_epi16(_mm_and_si128(_mm_srli_epi16(qh, bit), one), 4));
}

STEP float q5_k_block(const void *wp, const BlockQ8K *a) {
    const BlockQ5_K *w = wp;
    uint32_t words[4];
    k4_scales_mins(w->scales, words);
    const uint8_t *sc = (const uint8_t *)words;
    __m128i qh0 = load16(w->qh), qh1 = load16(w->qh + 16);
    __m128i acc = _mm_setzero_si128();
    for (int j = 0; j < 4; j++) {
        const int8_t *x = a->qs + 64 * j;
        __m128i r0 = load16(w->qs + 32 * j), r1 = load16(w->qs + 32 * j + 16);
        /* fifth bits: bit 2j of qh for the low nibbles, 2j+1 for the high */
        __m128i l0 = q5_values(r0, 0, qh0, 2 * j), l1 = q5_values(r1, 0, qh1, 2 * j);
        __m128i h0 = q5_values(r0, 4, qh0, 2 * j + 1), h1 = q5_values(r1, 4, qh1, 2 * j + 1);
        __m128i slo = _mm_set1_epi16((short)sc[2 * j]), shi = _mm_set1_epi16((short)sc[2 * j + 1]);
        acc = _mm_add_epi32(acc, sse2_dot16_scaled(l0, load16(x), slo));
        acc = _mm_add_epi32(acc, sse2_dot16_scaled(l1, load16(x + 16), slo));
        acc = _mm_add_epi32(acc, sse2_dot16_scaled(h0, load16(x + 32), shi));
        acc = _mm_add_epi32(acc, sse2_dot16_scaled(h1, load16(x + 48), shi));
    }
    return k_block_sum(a->d, w->d, w->dmin, sse2_hsum_i32(acc), k4_min_sum(sc + 8, a->bsums));
}

static float dot_q5_k(const void *row, const void *act, int n) {
    return k_row_dot(row, act, n, sizeof(BlockQ5_K), q5_k_block);
}

/* Prefill: four rows per decoded tile (k_gemm.h). */
STEP void q5_k_step(const uint8_t *decoded, const void *act, uint8_t *state) {
    k_step_sse2(decoded, act, state, 4, 1);
}

TCG_PAGE_ALIGNED static void gemm_q5_k(float *out, size_t out_stride, const uint8_t *rows, size_t row_bytes,
                                       const void *act, size_t act_stride, int n, int count, int batch) {
    chunked_gemm_rows(out, out_stride, rows, row_bytes, act, act_stride, n, count, batch, QK_K,
                      sizeof(BlockQ5_K), sizeof(BlockQ8K), 4, sizeof(float), q5_k_decode, q5_k_step,
                      k_finish);
}

const GgmlKernel ggml_q5_k_sse2 = {dot_q5_k, NULL, gemm_q5_k};
