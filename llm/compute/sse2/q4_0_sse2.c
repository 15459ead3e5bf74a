/* q4_0_sse2.c - Q4_0 rows with Q8A activations, SSE2: four rows per pass
 * (ggml_sse2.h). */
#include "llm/compute/sse2/ggml_sse2.h"
#include "llm/compute/kernel_sets.h"
#include "llm/compute/sse2/q4_0_swar.h"
#include "llm/compute/timed_choice.h"

/* One row's block as int16: the nibbles are unsigned (0..15), widened
 * with zeros; the -8 comes off the totals as 8 * sum(x) (the activations'
 * exact integer sum). */
STEP void q4_0_decode(const uint8_t *block, __m128i v[4]) {
    const __m128i zero = _mm_setzero_si128();
    __m128i lo, hi;
    sse2_nibbles(block + __builtin_offsetof(BlockQ4_0, qs), &lo, &hi);
    v[0] = _mm_unpacklo_epi8(lo, zero), v[1] = _mm_unpackhi_epi8(lo, zero);
    v[2] = _mm_unpacklo_epi8(hi, zero), v[3] = _mm_unpackhi_epi8(hi, zero);
}

STEP __m128i q4_0_finish(__m128i totals, const BlockQ8A *a) {
    return _mm_sub_epi32(totals, _mm_set1_epi32(8 * a->qsum));
}

/* Lane r = row r's block sum. */
STEP __m128i q4_0_totals(const uint8_t *const w[4], size_t off, const BlockQ8A *a) {
    return sse2_decoded_totals(w, off, a, q4_0_decode, q4_0_finish);
}

TCG_PAGE_ALIGNED static void matmul_q4_0(float *out, const uint8_t *rows, size_t row_bytes, const void *act,
                                         int n, int count) {
    sse2_matmul_rows(out, rows, row_bytes, act, n, count, sizeof(BlockQ4_0), q4_0_totals);
}

static float dot_q4_0(const void *row, const void *act, int n) {
    return dot_by_matmul(matmul_q4_0, row, act, n);
}

TCG_PAGE_ALIGNED static void gemm_q4_0_pmaddwd(float *out, size_t out_stride, const uint8_t *rows,
                                               size_t row_bytes, const void *act, size_t act_stride, int n,
                                               int count, int batch) {
    sse2_gemm_rows(out, out_stride, rows, row_bytes, act, act_stride, n, count, batch, sizeof(BlockQ4_0),
                   q4_0_decode, q4_0_finish);
}

/* The faster of the two gemms here, by timing (q4_0_swar.c: ~3x cheaper
 * under QEMU TCG, slower on a CPU). */
static TimedChoice gemm_choice = TIMED_CHOICE_INIT;

static void gemm_q4_0(float *out, size_t out_stride, const uint8_t *rows, size_t row_bytes, const void *act,
                      size_t act_stride, int n, int count, int batch) {
    int timed, gemm = timed_choice_pick(&gemm_choice, kernels_sse2_gemm_forced(), &timed);
    uint64_t start = timed ? timed_choice_ticks() : 0;
    /* The SWAR gemm packs four positions a word: one or two left over
     * would cost a whole word, more than the pmaddwd gemm takes for them
     * (tools/tcg_cost.py: ~1170 units per word against ~470 per position
     * per block of four rows). */
    int rest = gemm != KERNELS_GEMM_SWAR ? batch : batch % 4 == 1 || batch % 4 == 2 ? batch % 4 : 0;
    if (rest < batch)
        q4_0_swar_gemm(out, out_stride, rows, row_bytes, act, act_stride, n, count, batch - rest);
    if (rest)
        gemm_q4_0_pmaddwd(out + (size_t)(batch - rest) * out_stride, out_stride, rows, row_bytes,
                          (const uint8_t *)act + (size_t)(batch - rest) * act_stride, act_stride, n, count,
                          rest);
    if (timed)
        timed_choice_record(&gemm_choice, gemm, timed_choice_ticks() - start, (double)batch * n * count);
}

const GgmlKernel ggml_q4_0_sse2 = {dot_q4_0, matmul_q4_0, gemm_q4_0};
