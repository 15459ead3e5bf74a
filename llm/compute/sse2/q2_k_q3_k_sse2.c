/* q2_k_q3_k_sse2.c - Q2_K and Q3_K rows (2-bit values, a scale per 16)
 * with Q8K activations, SSE2. */
#include "llm/compute/k_gemm.h"

/* acc plus 32 values (q0: the first 16, q1: the next) times x, the first
 * 16 products weighted by scale s0, the next by s1. */
static inline __m128i sse2_scaled_pair(__m128i acc, __m128i q0, __m128i q1, const int8_t *x, int s0, int s1) {
    acc = _mm_add_epi32(acc, sse2_dot16_scaled(q0, load16(x), _mm_set1_epi16((short)s0)));
    return _mm_add_epi32(acc, sse2_dot16_scaled(q1, load16(x + 16), _mm_set1_epi16((short)s1)));
}

STEP float q2_k_block(const void *wp, const BlockQ8K *a) {
    const BlockQ2_K *w = wp;
    const __m128i three = _mm_set1_epi8(3);
    int sc[16], m[16];
    q2_k_scales(w, sc, m);
    __m128i acc = _mm_setzero_si128();
    for (int half = 0; half < 2; half++) {
        __m128i r0 = load16(w->qs + 32 * half), r1 = load16(w->qs + 32 * half + 16);
        for (int j = 0; j < 4; j++) {
            int s = 8 * half + 2 * j;
            __m128i q0 = _mm_and_si128(_mm_srli_epi16(r0, 2 * j), three);
            __m128i q1 = _mm_and_si128(_mm_srli_epi16(r1, 2 * j), three);
            acc = sse2_scaled_pair(acc, q0, q1, a->qs + 128 * half + 32 * j, sc[s], sc[s + 1]);
        }
    }
    return k_block_sum(a->d, w->d, w->dmin, sse2_hsum_i32(acc), min_sum16(m, a->bsums));
}

/* 16 Q3_K values: low two bits (shifted down by 2j) minus 4 where the
 * hmask bit is clear. */
static inline __m128i q3_values(__m128i r, int j, __m128i hm, int bit) {
    const __m128i three = _mm_set1_epi8(3), one = _mm_set1_epi8(1), four = _mm_set1_epi8(4);
    __m128i h = _mm_and_si128(_mm_srli_epi16(hm, bit), one);
    return _mm_sub_epi8(_mm_and_si128(_mm_srli_epi16(r, 2 * j), three),
                        _mm_andnot_si128(_mm_slli_epi16(h, 2), four));
}

STEP float q3_k_block(const void *wp, const BlockQ8K *a) {
    const BlockQ3_K *w = wp;
    int sc[16];
    q3_k_scales(w->scales, sc);
    __m128i hm0 = load16(w->hmask), hm1 = load16(w->hmask + 16);
    __m128i acc = _mm_setzero_si128();
    for (int half = 0; half < 2; half++) {
        __m128i r0 = load16(w->qs + 32 * half), r1 = load16(w->qs + 32 * half + 16);
        for (int j = 0; j < 4; j++) {
            int s = 8 * half + 2 * j, bit = 4 * half + j;
            __m128i q0 = q3_values(r0, j, hm0, bit), q1 = q3_values(r1, j, hm1, bit);
            acc = sse2_scaled_pair(acc, q0, q1, a->qs + 128 * half + 32 * j, sc[s], sc[s + 1]);
        }
    }
    return a->d * half_scale(w->d) * (float)sse2_hsum_i32(acc);
}

static float dot_q2_k(const void *row, const void *act, int n) {
    return k_row_dot(row, act, n, sizeof(BlockQ2_K), q2_k_block);
}

static float dot_q3_k(const void *row, const void *act, int n) {
    return k_row_dot(row, act, n, sizeof(BlockQ3_K), q3_k_block);
}

/* Prefill: four rows per decoded tile (k_gemm.h). */
STEP void q2_k_step(const uint8_t *decoded, const void *act, uint8_t *state) {
    k_step_sse2(decoded, act, state, 4, 1);
}

STEP void q3_k_step(const uint8_t *decoded, const void *act, uint8_t *state) {
    k_step_sse2(decoded, act, state, 4, 0);
}

TCG_PAGE_ALIGNED static void gemm_q2_k(float *out, size_t out_stride, const uint8_t *rows, size_t row_bytes,
                                       const void *act, size_t act_stride, int n, int count, int batch) {
    chunked_gemm_rows(out, out_stride, rows, row_bytes, act, act_stride, n, count, batch, QK_K,
                      sizeof(BlockQ2_K), sizeof(BlockQ8K), 4, sizeof(float), q2_k_decode, q2_k_step,
                      k_finish);
}

TCG_PAGE_ALIGNED static void gemm_q3_k(float *out, size_t out_stride, const uint8_t *rows, size_t row_bytes,
                                       const void *act, size_t act_stride, int n, int count, int batch) {
    chunked_gemm_rows(out, out_stride, rows, row_bytes, act, act_stride, n, count, batch, QK_K,
                      sizeof(BlockQ3_K), sizeof(BlockQ8K), 4, sizeof(float), q3_k_decode, q3_k_step,
                      k_finish);
}

const GgmlKernel ggml_q2_k_sse2 = {dot_q2_k, NULL, gemm_q2_k};
const GgmlKernel ggml_q3_k_sse2 = {dot_q3_k, NULL, gemm_q3_k};
