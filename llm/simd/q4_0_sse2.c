/* q4_0_sse2.c - Q4_0 rows with Q8A activations, SSE2: four rows per pass
 * (ggml_sse2.h). */
#include "llm/simd/ggml_sse2.h"

/* Lane r = row r's block sum. The nibbles are unsigned (0..15), widened
 * with zeros; the -8 comes off the totals as 8 * sum(x) (the activations'
 * exact integer sum). */
STEP __m128i q4_0_totals(const uint8_t *const w[4], size_t off, const BlockQ8A *a) {
    const __m128i zero = _mm_setzero_si128();
    __m128i x[4], s[4];
    sse2_widen32(a->qs, x);
    for (int r = 0; r < 4; r++) {
        __m128i lo, hi;
        sse2_nibbles(w[r] + off + __builtin_offsetof(BlockQ4_0, qs), &lo, &hi);
        s[r] = sse2_dot32_i16(_mm_unpacklo_epi8(lo, zero), _mm_unpackhi_epi8(lo, zero),
                              _mm_unpacklo_epi8(hi, zero), _mm_unpackhi_epi8(hi, zero), x);
    }
    return _mm_sub_epi32(sse2_row_totals(s), _mm_set1_epi32(8 * a->qsum));
}

HOT_LOOP static void matmul_q4_0(float *out, const uint8_t *rows, size_t row_bytes, const void *act, int n,
                                 int count) {
    sse2_matmul_rows(out, rows, row_bytes, act, n, count, sizeof(BlockQ4_0), q4_0_totals);
}

static float dot_q4_0(const void *row, const void *act, int n) {
    return dot_by_matmul(matmul_q4_0, row, act, n);
}

const GgmlKernel ggml_q4_0_sse2 = {dot_q4_0, matmul_q4_0};
