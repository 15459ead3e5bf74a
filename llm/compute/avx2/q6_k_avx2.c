/* q6_k_avx2.c - Q6_K rows with Q8K activations, AVX2: two rows per
 * register (kquant_avx2.h). */
#include "llm/compute/avx2/kquant_avx2.h"

/* Two rows' values of one 16-value run of a half (32 bytes of ql at l,
 * 16 bytes of qh at h, row r in lane r), unsigned (q + 32): v[j] are the
 * values 32j + 16c.. of the half, with scale 2j + c. */
TARGET_AVX2 static inline void q6_k_values2(const uint8_t *l, const uint8_t *h, size_t rb, __m256i v[4]) {
    const __m256i m4 = _mm256_set1_epi8(0x0f), m30 = _mm256_set1_epi8(0x30);
    __m256i a = row_bytes2(l, rb), b = row_bytes2(l + 32, rb), hi = row_bytes2(h, rb);
    v[0] = _mm256_or_si256(_mm256_and_si256(a, m4), _mm256_and_si256(_mm256_slli_epi16(hi, 4), m30));
    v[1] = _mm256_or_si256(_mm256_and_si256(b, m4), _mm256_and_si256(_mm256_slli_epi16(hi, 2), m30));
    v[2] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(a, 4), m4), _mm256_and_si256(hi, m30));
    v[3] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(b, 4), m4),
                           _mm256_and_si256(_mm256_srli_epi16(hi, 2), m30));
}

/* pshufb indexes repeating each lane's int16 word s in all eight words. */
TARGET_AVX2 static inline __m256i word_all(int s) {
    return _mm256_set1_epi16((short)(0x0100 * (2 * s + 1) + 2 * s));
}

/* One block of two rows (q, rb apart) by P positions, lane r for row r:
 * acc += (d d_x) (sum_s sc_s (q + 32) . x_s - 32 sum_s sc_s sum(x_s)), the
 * offset through the activation sums (bsums); the values and scales are
 * decoded once for the P positions. */
TARGET_AVX2 STEP void q6_k_block2(__m256 acc[], const uint8_t *q, size_t rb, const BlockQ8K *const a[],
                                  int P) {
    /* the 16 signed scales as int16: 0-7 in sw[0], 8-15 in sw[1] */
    __m256i s8 = row_bytes2(q + __builtin_offsetof(BlockQ6_K, scales), rb), sw[2], isum[KQ2_POSITIONS];
    sw[0] = _mm256_srai_epi16(_mm256_unpacklo_epi8(s8, s8), 8);
    sw[1] = _mm256_srai_epi16(_mm256_unpackhi_epi8(s8, s8), 8);
#pragma GCC unroll 4
    for (int k = 0; k < P; k++) isum[k] = _mm256_setzero_si256();
#pragma GCC unroll 2
    for (int half = 0; half < 2; half++)
#pragma GCC unroll 2
        for (int c = 0; c < 2; c++) {
            __m256i v[4];
            q6_k_values2(q + 64 * half + 16 * c, q + __builtin_offsetof(BlockQ6_K, qh) + 32 * half + 16 * c,
                         rb, v);
#pragma GCC unroll 4
            for (int j = 0; j < 4; j++) {
                __m256i sc = _mm256_shuffle_epi8(sw[half], word_all(2 * j + c));
#pragma GCC unroll 4
                for (int k = 0; k < P; k++) {
                    __m256i x = bcast16_avx2(a[k]->qs + 128 * half + 32 * j + 16 * c);
                    isum[k] = _mm256_add_epi32(isum[k], _mm256_madd_epi16(_mm256_maddubs_epi16(v[j], x), sc));
                }
            }
        }
    /* d (bytes 208-209: word 7 of the 16 bytes from 194) four times per
     * row, both rows in the low half */
    __m256i tail = row_bytes2(q + __builtin_offsetof(BlockQ6_K, d) - 14, rb);
    __m256i dd = _mm256_permute4x64_epi64(_mm256_shuffle_epi8(tail, word_all(7)), 0x08);
    __m256 d = _mm256_cvtph_ps(_mm256_castsi256_si128(dd));
#pragma GCC unroll 4
    for (int k = 0; k < P; k++) {
        const int8_t *bsums = (const int8_t *)a[k]->bsums;
        __m256i off = _mm256_add_epi32(_mm256_madd_epi16(sw[0], bcast16_avx2(bsums)),
                                       _mm256_madd_epi16(sw[1], bcast16_avx2(bsums + 16)));
        __m256i total = _mm256_sub_epi32(isum[k], _mm256_slli_epi32(off, 5));
        acc[k] =
            _mm256_fmadd_ps(_mm256_mul_ps(d, _mm256_set1_ps(a[k]->d)), _mm256_cvtepi32_ps(total), acc[k]);
    }
}

TARGET_AVX2 static void matmul_q6_k(float *out, const uint8_t *rows, size_t row_bytes, const void *act, int n,
                                    int count) {
    kq2_matmul(out, rows, row_bytes, act, n, count, sizeof(BlockQ6_K), q6_k_block2);
}

static float dot_q6_k(const void *row, const void *act, int n) {
    return dot_by_matmul(matmul_q6_k, row, act, n);
}

TARGET_AVX2 static void gemm_q6_k(float *out, size_t out_stride, const uint8_t *rows, size_t row_bytes,
                                  const void *act, size_t act_stride, int n, int count, int batch) {
    kq2_gemm(out, out_stride, rows, row_bytes, act, act_stride, n, count, batch, sizeof(BlockQ6_K),
             q6_k_block2);
}

const GgmlKernel ggml_q6_k_avx2 = {dot_q6_k, matmul_q6_k, gemm_q6_k};
