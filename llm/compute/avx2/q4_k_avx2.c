/* q4_k_avx2.c - Q4_K rows with Q8K activations, AVX2: two rows per
 * register (kquant_avx2.h). */
#include "llm/compute/avx2/kquant_avx2.h"

/* k4_scales_mins for two rows at once: v holds each row's first 16 block
 * bytes (d, dmin, the 12 scale bytes: words w0, w1, w2 in dwords 1-3) in
 * its lane; each lane comes out as scales 0-7 in bytes 0-7, mins in 8-15. */
TARGET_AVX2 static inline __m256i k4_scales_mins2(__m256i v) {
    __m256i x = _mm256_shuffle_epi32(v, 0xED); /* w0, w2, w1, w2 */
    __m256i y = _mm256_shuffle_epi32(v, 0xA5); /* w0, w0, w1, w1 */
    const __m256i shift = _mm256_broadcastsi128_si256(_mm_set_epi32(4, 0, 0, 0));
    const __m256i low =
        _mm256_broadcastsi128_si256(_mm_set_epi32(0x0f0f0f0f, 0x3f3f3f3f, 0x0f0f0f0f, 0x3f3f3f3f));
    const __m256i top = _mm256_broadcastsi128_si256(_mm_set_epi32(0x30303030, 0, 0x30303030, 0));
    /* scales/mins 4-7 take bits 6-7 of w0/w1 as their bits 4-5 */
    return _mm256_or_si256(_mm256_and_si256(_mm256_srlv_epi32(x, shift), low),
                           _mm256_and_si256(_mm256_srli_epi32(y, 2), top));
}

/* One block of two rows (q, rb apart) by P positions, lane r for row r:
 * acc += (d d_x) sum_j sc_j (q . x)_j - (dmin d_x) sum_j m_j sum_j(x).
 * Two maddubs give a sub-block's products four to an int16 (at most
 * 4 * 15 * 127), one madd applies its scale; the weights and scales are
 * decoded once for the P positions. */
TARGET_AVX2 STEP void q4_k_block2(__m256 acc[], const uint8_t *q, size_t rb, const BlockQ8K *const a[],
                                  int P) {
    const __m256i m4 = _mm256_set1_epi8(0x0f);
    __m256i head = row_bytes2(q, rb), sm = k4_scales_mins2(head), isum[KQ2_POSITIONS];
#pragma GCC unroll 4
    for (int k = 0; k < P; k++) isum[k] = _mm256_setzero_si256();
#pragma GCC unroll 4
    for (int m = 0; m < 4; m++) {
        const uint8_t *qs = q + __builtin_offsetof(BlockQ4_K, qs) + 32 * m;
        __m256i r0 = row_bytes2(qs, rb), r1 = row_bytes2(qs + 16, rb);
        __m256i lo0 = _mm256_and_si256(r0, m4), hi0 = _mm256_and_si256(_mm256_srli_epi16(r0, 4), m4);
        __m256i lo1 = _mm256_and_si256(r1, m4), hi1 = _mm256_and_si256(_mm256_srli_epi16(r1, 4), m4);
        __m256i sc_lo = _mm256_shuffle_epi8(sm, byte_words_avx2(2 * m, 8));
        __m256i sc_hi = _mm256_shuffle_epi8(sm, byte_words_avx2(2 * m + 1, 8));
#pragma GCC unroll 4
        for (int k = 0; k < P; k++) {
            const int8_t *x = a[k]->qs + 64 * m;
            __m256i dl = _mm256_add_epi16(_mm256_maddubs_epi16(lo0, bcast16_avx2(x)),
                                          _mm256_maddubs_epi16(lo1, bcast16_avx2(x + 16)));
            __m256i dh = _mm256_add_epi16(_mm256_maddubs_epi16(hi0, bcast16_avx2(x + 32)),
                                          _mm256_maddubs_epi16(hi1, bcast16_avx2(x + 48)));
            isum[k] = _mm256_add_epi32(
                isum[k], _mm256_add_epi32(_mm256_madd_epi16(dl, sc_lo), _mm256_madd_epi16(dh, sc_hi)));
        }
    }
    /* each lane's d four times, then its dmin four times; the qwords
     * reordered to d of both rows (low half) and dmin of both (high) */
    const __m256i halves =
        _mm256_broadcastsi128_si256(_mm_set_epi8(3, 2, 3, 2, 3, 2, 3, 2, 1, 0, 1, 0, 1, 0, 1, 0));
    __m256i dd = _mm256_permute4x64_epi64(_mm256_shuffle_epi8(head, halves), 0xD8);
    __m256 d = _mm256_cvtph_ps(_mm256_castsi256_si128(dd)),
           dmin = _mm256_cvtph_ps(_mm256_extracti128_si256(dd, 1));
    __m256i mins = _mm256_shuffle_epi8(sm, byte_words_avx2(8, 1));
#pragma GCC unroll 4
    for (int k = 0; k < P; k++) {
        __m256i s = _mm256_madd_epi16(load32(a[k]->bsums), _mm256_set1_epi16(1));
        __m128i pairs = _mm_packs_epi32(_mm256_castsi256_si128(s), _mm256_extracti128_si256(s, 1));
        __m256i msum = _mm256_madd_epi16(mins, _mm256_broadcastsi128_si256(pairs));
        __m256 x = _mm256_set1_ps(a[k]->d);
        acc[k] = _mm256_fmadd_ps(_mm256_mul_ps(d, x), _mm256_cvtepi32_ps(isum[k]), acc[k]);
        acc[k] = _mm256_fnmadd_ps(_mm256_mul_ps(dmin, x), _mm256_cvtepi32_ps(msum), acc[k]);
    }
}

TARGET_AVX2 static void matmul_q4_k(float *out, const uint8_t *rows, size_t row_bytes, const void *act, int n,
                                    int count) {
    kq2_matmul(out, rows, row_bytes, act, n, count, sizeof(BlockQ4_K), q4_k_block2);
}

static float dot_q4_k(const void *row, const void *act, int n) {
    return dot_by_matmul(matmul_q4_k, row, act, n);
}

TARGET_AVX2 static void gemm_q4_k(float *out, size_t out_stride, const uint8_t *rows, size_t row_bytes,
                                  const void *act, size_t act_stride, int n, int count, int batch) {
    kq2_gemm(out, out_stride, rows, row_bytes, act, act_stride, n, count, batch, sizeof(BlockQ4_K),
             q4_k_block2);
}

const GgmlKernel ggml_q4_k_avx2 = {dot_q4_k, matmul_q4_k, gemm_q4_k};
