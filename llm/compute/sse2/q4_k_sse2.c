/* q4_k_sse2.c - Q4_K rows with Q8K activations, SSE2. */
#include "llm/compute/k_gemm.h"

STEP float q4_k_block(const void *wp, const BlockQ8K *a) {
    const BlockQ4_K *w = wp;
    const __m128i mask = _mm_set1_epi8(0x0f);
    uint32_t words[4];
    k4_scales_mins(w->scales, words);
    const uint8_t *sc = (const uint8_t *)words;
    int isum = 0;
    const int8_t *x = a->qs;
    for (int j = 0; j < 4; j++) {
        const uint8_t *q = w->qs + 32 * j;
        __m128i r0 = load16(q), r1 = load16(q + 16);
        __m128i lo = _mm_add_epi32(sse2_dot16(_mm_and_si128(r0, mask), load16(x + 64 * j)),
                                   sse2_dot16(_mm_and_si128(r1, mask), load16(x + 64 * j + 16)));
        __m128i hi =
            _mm_add_epi32(sse2_dot16(_mm_and_si128(_mm_srli_epi16(r0, 4), mask), load16(x + 64 * j + 32)),
                          sse2_dot16(_mm_and_si128(_mm_srli_epi16(r1, 4), mask), load16(x + 64 * j + 48)));
        isum += sc[2 * j] * sse2_hsum_i32(lo) + sc[2 * j + 1] * sse2_hsum_i32(hi);
    }
    return k_block_sum(a->d, w->d, w->dmin, isum, k4_min_sum(sc + 8, a->bsums));
}

static float dot_q4_k(const void *row, const void *act, int n) {
    return k_row_dot(row, act, n, sizeof(BlockQ4_K), q4_k_block);
}

/* Prefill: four rows per decoded tile (k_gemm.h). */
STEP void q4_k_step(const uint8_t *decoded, const void *act, uint8_t *state) {
    k_step_sse2(decoded, act, state, 4, 1);
}

TCG_PAGE_ALIGNED static void gemm_q4_k(float *out, size_t out_stride, const uint8_t *rows, size_t row_bytes,
                                       const void *act, size_t act_stride, int n, int count, int batch) {
    chunked_gemm_rows(out, out_stride, rows, row_bytes, act, act_stride, n, count, batch, QK_K,
                      sizeof(BlockQ4_K), sizeof(BlockQ8K), 4, sizeof(float), q4_k_decode, q4_k_step,
                      k_finish);
}

const GgmlKernel ggml_q4_k_sse2 = {dot_q4_k, NULL, gemm_q4_k};
