/* q6_k_sse2.c - Q6_K rows with Q8K activations, SSE2. */
#include "llm/compute/k_gemm.h"

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

/* Prefill: four rows per decoded tile (k_gemm.h). */
STEP void q6_k_step(const uint8_t *decoded, const void *act, uint8_t *state) {
    k_step_sse2(decoded, act, state, 4, 0);
}

TCG_PAGE_ALIGNED static void gemm_q6_k(float *out, size_t out_stride, const uint8_t *rows, size_t row_bytes,
                                       const void *act, size_t act_stride, int n, int count, int batch) {
    chunked_gemm_rows(out, out_stride, rows, row_bytes, act, act_stride, n, count, batch, QK_K,
                      sizeof(BlockQ6_K), sizeof(BlockQ8K), 4, sizeof(float), q6_k_decode, q6_k_step,
                      k_finish);
}

const GgmlKernel ggml_q6_k_sse2 = {dot_q6_k, NULL, gemm_q6_k};
