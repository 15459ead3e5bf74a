/* q6_k_avx512.c - Q6_K rows with Q8K activations, AVX-512 VNNI: eight rows
 * per pass, one accumulator per row (ggml_avx512.h). */
#include "llm/simd/ggml_avx512.h"

/* Group k of both halves: values 32k.. of half 0 in the low 256 bits and
 * of half 1 in the high ones, unsigned (q + 32); per-16 signed scales. */
TARGET_AVX512_VNNI STEP __m512 q6_k_block(const void *wp, const BlockQ8K *a, const __m512i x[4],
                                          const __m512i pick[4], __m512 acc) {
    const BlockQ6_K *w = wp;
    const __m512i m4 = _mm512_set1_epi8(0x0f), m30 = _mm512_set1_epi8(0x30);
    __m512i l0 = _mm512_inserti64x4(_mm512_castsi256_si512(load32(w->ql)), load32(w->ql + 64), 1);
    __m512i l1 = _mm512_inserti64x4(_mm512_castsi256_si512(load32(w->ql + 32)), load32(w->ql + 96), 1);
    __m512i h = _mm512_loadu_si512((const void *)w->qh);
    __m512i q[4];
    q[0] = _mm512_or_si512(_mm512_and_si512(l0, m4), _mm512_and_si512(_mm512_slli_epi16(h, 4), m30));
    q[1] = _mm512_or_si512(_mm512_and_si512(l1, m4), _mm512_and_si512(_mm512_slli_epi16(h, 2), m30));
    q[2] = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi16(l0, 4), m4), _mm512_and_si512(h, m30));
    q[3] = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi16(l1, 4), m4),
                           _mm512_and_si512(_mm512_srli_epi16(h, 2), m30));
    __m256i scales16 = _mm256_cvtepi8_epi16(load16(w->scales));
    __m512i sc = _mm512_castsi256_si512(scales16);
    __m512i isum = _mm512_setzero_si512();
    for (int k = 0; k < 4; k++)
        isum = _mm512_dpwssd_epi32(isum, _mm512_maddubs_epi16(q[k], x[k]),
                                   _mm512_permutexvar_epi16(pick[k], sc));
    __m256i bias = _mm256_slli_epi32(_mm256_madd_epi16(load32(a->bsums), scales16), 5);
    isum = _mm512_sub_epi32(isum, _mm512_zextsi256_si512(bias));
    __m128 d = _mm_mul_ss(_mm_cvtph_ps(_mm_cvtsi32_si128(w->d)), _mm_set_ss(a->d));
    return _mm512_fmadd_ps(_mm512_broadcastss_ps(d), _mm512_cvtepi32_ps(isum), acc);
}

/* Group k: words 0-7 scale 2k, 8-15 scale 2k+1 (half 0), 16-23 scale
 * 8+2k, 24-31 scale 9+2k (half 1). */
TARGET_AVX512_VNNI static inline __m512i pick_q6(int k) {
    __m128i a = _mm_set1_epi16((short)(2 * k)), b = _mm_set1_epi16((short)(2 * k + 1));
    __m128i c = _mm_set1_epi16((short)(8 + 2 * k)), d = _mm_set1_epi16((short)(9 + 2 * k));
    __m256i lo = _mm256_set_m128i(b, a), hi = _mm256_set_m128i(d, c);
    return _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1);
}

TARGET_AVX512_VNNI STEP void q6_k_picks(__m512i pick[4]) {
    for (int k = 0; k < 4; k++) pick[k] = pick_q6(k);
}

/* Group k of both halves: activations from 32k with 128 between them. */
TARGET_AVX512_VNNI static void q6_k_eight(float *out, const uint8_t *p, size_t rb, const void *act,
                                          int blocks, const uint8_t *ahead) {
    static const int start[4] = {0, 32, 64, 96};
    kq_eight(out, p, rb, act, blocks, ahead, sizeof(BlockQ6_K), start, 128, q6_k_picks, q6_k_block);
}

TARGET_AVX512_VNNI static void matmul_q6_k(float *out, const uint8_t *rows, size_t row_bytes, const void *act,
                                           int n, int count) {
    avx512_matmul_rows(q6_k_eight, out, rows, row_bytes, act, n / QK_K, count);
}

static float dot_q6_k(const void *row, const void *act, int n) {
    return dot_by_matmul(matmul_q6_k, row, act, n);
}

/* Eight rows by P positions (at most 2): kq_tile with this type's layout. */
TARGET_AVX512_VNNI static inline __attribute__((always_inline)) void
q6_k_tile(float *res, const uint8_t *p, size_t rb, const uint8_t *act, size_t act_stride, int blocks, int P) {
    static const int start[4] = {0, 32, 64, 96};
    kq_tile(res, p, rb, act, act_stride, blocks, P, sizeof(BlockQ6_K), start, 128, q6_k_picks, q6_k_block);
}

TARGET_AVX512_VNNI static void gemm_q6_k(float *out, size_t out_stride, const uint8_t *rows, size_t row_bytes,
                                         const void *act, size_t act_stride, int n, int count, int batch) {
    avx512_gemm_rows(q6_k_tile, 2, out, out_stride, rows, row_bytes, act, act_stride, n / QK_K, count, batch);
}

const GgmlKernel ggml_q6_k_avx512 = {dot_q6_k, matmul_q6_k, gemm_q6_k};
