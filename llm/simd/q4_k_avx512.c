/* q4_k_avx512.c - Q4_K rows with Q8K activations, AVX-512 VNNI: eight rows
 * per pass, one accumulator per row (ggml_avx512.h). */
#include "llm/simd/ggml_avx512.h"

/* int16 index vectors picking scale s0 for words 0-15 and s1 for 16-31. */
TARGET_AVX512_VNNI static inline __m512i pick2(int s0, int s1) {
    return _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_set1_epi16((short)s0)),
                              _mm256_set1_epi16((short)s1), 1);
}

TARGET_AVX512_VNNI STEP __m512 q4_k_block(const void *wp, const BlockQ8K *a, const __m512i x[4],
                                          const __m512i pick[4], __m512 acc) {
    const BlockQ4_K *w = wp;
    const __m512i m4 = _mm512_set1_epi8(0x0f);
    uint32_t words[4];
    k4_scales_mins(w->scales, words);
    __m512i sc16 = _mm512_castsi128_si512(_mm_cvtepu8_epi16(_mm_loadl_epi64((const __m128i *)words)));
    __m512i isum = _mm512_setzero_si512();
    for (int h = 0; h < 2; h++) {
        __m512i z = _mm512_loadu_si512((const void *)(w->qs + 64 * h));
        __m512i lo = _mm512_maddubs_epi16(_mm512_and_si512(z, m4), x[2 * h]);
        __m512i hi = _mm512_maddubs_epi16(_mm512_and_si512(_mm512_srli_epi16(z, 4), m4), x[2 * h + 1]);
        isum = _mm512_dpwssd_epi32(isum, lo, _mm512_permutexvar_epi16(pick[2 * h], sc16));
        isum = _mm512_dpwssd_epi32(isum, hi, _mm512_permutexvar_epi16(pick[2 * h + 1], sc16));
    }
    __m256i msum = avx2_k4_min_sums(words, a->bsums);
    /* d and dmin side by side, converted by F16C (exact, subnormals too) */
    uint32_t halves;
    __builtin_memcpy(&halves, &w->d, 4);
    __m128 dd = _mm_mul_ps(_mm_cvtph_ps(_mm_cvtsi32_si128((int)halves)), _mm_set1_ps(a->d));
    acc = _mm512_fmadd_ps(_mm512_broadcastss_ps(dd), _mm512_cvtepi32_ps(isum), acc);
    return _mm512_fnmadd_ps(_mm512_broadcastss_ps(_mm_movehdup_ps(dd)),
                            _mm512_cvtepi32_ps(_mm512_zextsi256_si512(msum)), acc);
}

/* Register h of the low nibbles holds scales 4h (words 0-15) and 4h+2; of
 * the high nibbles 4h+1 and 4h+3. */
TARGET_AVX512_VNNI STEP void q4_k_picks(__m512i pick[4]) {
    for (int h = 0; h < 2; h++) {
        pick[2 * h] = pick2(4 * h, 4 * h + 2);
        pick[2 * h + 1] = pick2(4 * h + 1, 4 * h + 3);
    }
}

/* Bytes 0-63 of qs: low nibbles are values 0-31 and 64-95, high nibbles
 * 32-63 and 96-127 (bytes 64-127 likewise + 128): activations from 0, 32,
 * 128, 160 with 64 between the halves. */
TARGET_AVX512_VNNI static void q4_k_eight(float *out, const uint8_t *p, size_t rb, const void *act,
                                          int blocks, const uint8_t *ahead) {
    static const int start[4] = {0, 32, 128, 160};
    kq_eight(out, p, rb, act, blocks, ahead, sizeof(BlockQ4_K), start, 64, q4_k_picks, q4_k_block);
}

TARGET_AVX512_VNNI static void matmul_q4_k(float *out, const uint8_t *rows, size_t row_bytes, const void *act,
                                           int n, int count) {
    avx512_matmul_rows(q4_k_eight, out, rows, row_bytes, act, n / QK_K, count);
}

static float dot_q4_k(const void *row, const void *act, int n) {
    return dot_by_matmul(matmul_q4_k, row, act, n);
}

/* Eight rows by P positions (at most 2): kq_tile with this type's layout. */
TARGET_AVX512_VNNI static inline __attribute__((always_inline)) void
q4_k_tile(float *res, const uint8_t *p, size_t rb, const uint8_t *act, size_t act_stride, int blocks, int P) {
    static const int start[4] = {0, 32, 128, 160};
    kq_tile(res, p, rb, act, act_stride, blocks, P, sizeof(BlockQ4_K), start, 64, q4_k_picks, q4_k_block);
}

TARGET_AVX512_VNNI static void gemm_q4_k(float *out, size_t out_stride, const uint8_t *rows, size_t row_bytes,
                                         const void *act, size_t act_stride, int n, int count, int batch) {
    avx512_gemm_rows(q4_k_tile, 2, out, out_stride, rows, row_bytes, act, act_stride, n / QK_K, count, batch);
}

const GgmlKernel ggml_q4_k_avx512 = {dot_q4_k, matmul_q4_k, gemm_q4_k};
