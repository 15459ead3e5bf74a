/* q8_0_sse2.c - Q8_0 rows with Q8A activations, SSE2: four rows per pass
 * (ggml_sse2.h). */
#include "llm/compute/sse2/ggml_sse2.h"

/* One row's block as int16: the weight bytes go into the high byte of
 * each int16 (w * 256: no sign mask needed), and the totals, all multiples
 * of 256, are shifted back exactly. */
STEP void q8_0_decode(const uint8_t *block, __m128i v[4]) {
    const __m128i zero = _mm_setzero_si128();
    const uint8_t *qs = block + __builtin_offsetof(BlockQ8_0, qs);
    __m128i v0 = load16(qs), v1 = load16(qs + 16);
    v[0] = _mm_unpacklo_epi8(zero, v0), v[1] = _mm_unpackhi_epi8(zero, v0);
    v[2] = _mm_unpacklo_epi8(zero, v1), v[3] = _mm_unpackhi_epi8(zero, v1);
}

STEP __m128i q8_0_finish(__m128i totals, const BlockQ8A *a) {
    return _mm_srai_epi32(totals, 8);
}

/* Lane r = row r's block sum. */
STEP __m128i q8_0_totals(const uint8_t *const w[4], size_t off, const BlockQ8A *a) {
    return sse2_decoded_totals(w, off, a, q8_0_decode, q8_0_finish);
}

TCG_PAGE_ALIGNED static void matmul_q8_0(float *out, const uint8_t *rows, size_t row_bytes, const void *act,
                                         int n, int count) {
    sse2_matmul_rows(out, rows, row_bytes, act, n, count, sizeof(BlockQ8_0), q8_0_totals);
}

static float dot_q8_0(const void *row, const void *act, int n) {
    return dot_by_matmul(matmul_q8_0, row, act, n);
}

TCG_PAGE_ALIGNED static void gemm_q8_0(float *out, size_t out_stride, const uint8_t *rows, size_t row_bytes,
                                       const void *act, size_t act_stride, int n, int count, int batch) {
    sse2_gemm_rows(out, out_stride, rows, row_bytes, act, act_stride, n, count, batch, sizeof(BlockQ8_0),
                   q8_0_decode, q8_0_finish);
}

const GgmlKernel ggml_q8_0_sse2 = {dot_q8_0, matmul_q8_0, gemm_q8_0};
