/* q8_0_sse2.c - Q8_0 rows with Q8A activations, SSE2: four rows per pass
 * (ggml_sse2.h). */
#include "llm/simd/ggml_sse2.h"

/* Lane r = row r's block sum. The weight bytes go into the high byte of
 * each int16 (w * 256: no sign mask needed), and the totals, all multiples
 * of 256, are shifted back exactly. */
STEP __m128i q8_0_totals(const uint8_t *const w[4], size_t off, const BlockQ8A *a) {
    const __m128i zero = _mm_setzero_si128();
    __m128i x[4], s[4];
    sse2_widen32(a->qs, x);
    for (int r = 0; r < 4; r++) {
        const uint8_t *qs = w[r] + off + __builtin_offsetof(BlockQ8_0, qs);
        __m128i v0 = load16(qs), v1 = load16(qs + 16);
        s[r] = sse2_dot32_i16(_mm_unpacklo_epi8(zero, v0), _mm_unpackhi_epi8(zero, v0),
                              _mm_unpacklo_epi8(zero, v1), _mm_unpackhi_epi8(zero, v1), x);
    }
    return _mm_srai_epi32(sse2_row_totals(s), 8);
}

HOT_LOOP static void matmul_q8_0(float *out, const uint8_t *rows, size_t row_bytes, const void *act, int n,
                                 int count) {
    sse2_matmul_rows(out, rows, row_bytes, act, n, count, sizeof(BlockQ8_0), q8_0_totals);
}

static float dot_q8_0(const void *row, const void *act, int n) {
    return dot_by_matmul(matmul_q8_0, row, act, n);
}

const GgmlKernel ggml_q8_0_sse2 = {dot_q8_0, matmul_q8_0};
