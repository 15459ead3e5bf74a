/* q6_k_avx2.c - Q6_K rows with Q8K activations, AVX2: two rows per pass
 * (ggml_avx2.h). */
#include "llm/simd/ggml_avx2.h"

/* Values 0..63 (q + 32) times x, per-16 signed scales, minus
 * 32 * scale * sum(x) through the bsums. */
TARGET_AVX2 STEP __m256 q6_k_step(const void *wp, const void *ap, __m256 acc) {
    const BlockQ6_K *w = wp;
    const BlockQ8K *a = ap;
    const __m256i m4 = _mm256_set1_epi8(0x0f), m30 = _mm256_set1_epi8(0x30);
    const __m256i scales16 = _mm256_cvtepi8_epi16(load16(w->scales));
    __m256i isum = _mm256_setzero_si256();
    for (int half = 0; half < 2; half++) {
        __m256i l0 = load32(w->ql + 64 * half), l1 = load32(w->ql + 64 * half + 32);
        __m256i h = load32(w->qh + 32 * half);
        __m256i q[4];
        q[0] = _mm256_or_si256(_mm256_and_si256(l0, m4), _mm256_and_si256(_mm256_slli_epi16(h, 4), m30));
        q[1] = _mm256_or_si256(_mm256_and_si256(l1, m4), _mm256_and_si256(_mm256_slli_epi16(h, 2), m30));
        q[2] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l0, 4), m4), _mm256_and_si256(h, m30));
        q[3] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l1, 4), m4),
                               _mm256_and_si256(_mm256_srli_epi16(h, 2), m30));
        /* this half's eight scales as int16 in both lanes; group k takes
         * scale 2k in the low lane and 2k+1 in the high one */
        __m256i sc = _mm256_broadcastsi128_si256(half ? _mm256_extracti128_si256(scales16, 1)
                                                      : _mm256_castsi256_si128(scales16));
        for (int k = 0; k < 4; k++) {
            __m256i p = _mm256_maddubs_epi16(q[k], load32(a->qs + 128 * half + 32 * k));
            __m256i pick = _mm256_set_m128i(_mm_set1_epi16((short)(0x0100 * (4 * k + 3) + 4 * k + 2)),
                                            _mm_set1_epi16((short)(0x0100 * (4 * k + 1) + 4 * k)));
            isum = _mm256_add_epi32(isum, _mm256_madd_epi16(p, _mm256_shuffle_epi8(sc, pick)));
        }
    }
    __m256i bias = _mm256_madd_epi16(load32(a->bsums), scales16);
    isum = _mm256_sub_epi32(isum, _mm256_slli_epi32(bias, 5));
    return _mm256_fmadd_ps(_mm256_set1_ps(a->d * half_scale(w->d)), _mm256_cvtepi32_ps(isum), acc);
}

TARGET_AVX2 static void matmul_q6_k(float *out, const uint8_t *rows, size_t row_bytes, const void *act, int n,
                                    int count) {
    avx2_matmul_rows(out, rows, row_bytes, act, n, count, sizeof(BlockQ6_K), sizeof(BlockQ8K), QK_K,
                     q6_k_step);
}

static float dot_q6_k(const void *row, const void *act, int n) {
    return dot_by_matmul(matmul_q6_k, row, act, n);
}

TARGET_AVX2 static void gemm_q6_k(float *out, size_t out_stride, const uint8_t *rows, size_t row_bytes,
                                  const void *act, size_t act_stride, int n, int count, int batch) {
    avx2_gemm_rows(out, out_stride, rows, row_bytes, act, act_stride, n, count, batch, sizeof(BlockQ6_K),
                   sizeof(BlockQ8K), QK_K, q6_k_step);
}

const GgmlKernel ggml_q6_k_avx2 = {dot_q6_k, matmul_q6_k, gemm_q6_k};
