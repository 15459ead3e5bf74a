/* q6_k_avx512.c - Q6_K rows with Q8K activations, AVX-512 VNNI: eight rows
 * per pass as two groups of four, one row per 128-bit lane (ggml_avx512.h,
 * kq_rows). */
#include "llm/compute/avx512/ggml_avx512.h"

/* Four rows' values of one 16-value run of a half (32 bytes of ql at l,
 * 16 bytes of qh at h, row r in lane r), unsigned (q + 32): v[j] are the
 * values 32j + 16c.. of the half, with scale 2j + c. */
TARGET_AVX512_VNNI static inline void q6_k_values(const uint8_t *l, const uint8_t *h, size_t rb,
                                                  __m512i v[4]) {
    const __m512i m4 = _mm512_set1_epi8(0x0f), m30 = _mm512_set1_epi8(0x30);
    __m512i a = row_bytes4(l, rb), b = row_bytes4(l + 32, rb), hi = row_bytes4(h, rb);
    v[0] = _mm512_or_si512(_mm512_and_si512(a, m4), _mm512_and_si512(_mm512_slli_epi16(hi, 4), m30));
    v[1] = _mm512_or_si512(_mm512_and_si512(b, m4), _mm512_and_si512(_mm512_slli_epi16(hi, 2), m30));
    v[2] = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi16(a, 4), m4), _mm512_and_si512(hi, m30));
    v[3] = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi16(b, 4), m4),
                           _mm512_and_si512(_mm512_srli_epi16(hi, 2), m30));
}

/* pshufb indexes repeating int16 word s in words 0-3 and word t in 4-7. */
TARGET_AVX512_VNNI static inline __m512i word_pair(int s, int t) {
    uint64_t lo = 0x0001000100010001ull * (uint64_t)(0x0100 * (2 * s + 1) + 2 * s);
    uint64_t hi = 0x0001000100010001ull * (uint64_t)(0x0100 * (2 * t + 1) + 2 * t);
    return _mm512_broadcast_i32x4(_mm_set_epi64x((long long)hi, (long long)lo));
}

/* Two 16-value runs' products for four rows: one dpbusd each (at most
 * 4 * 63 * 127 per dword, so packing them to int16 is exact), then one
 * dpwssd applies both runs' scales (sc: words 0-3 the first's, 4-7 the
 * second's). */
TARGET_AVX512_VNNI static inline __m512i q6_k_pair(__m512i isum, __m512i v0, __m512i x0, __m512i v1,
                                                   __m512i x1, __m512i sc) {
    __m512i d0 = _mm512_dpbusd_epi32(_mm512_setzero_si512(), v0, x0);
    __m512i d1 = _mm512_dpbusd_epi32(_mm512_setzero_si512(), v1, x1);
    return _mm512_dpwssd_epi32(isum, _mm512_packs_epi32(d0, d1), sc);
}

/* One block of four rows (q, rb apart) by P positions: acc += d_x * d *
 * (sum_s sc_s (q + 32) . x_s - 32 sum_s sc_s sum(x_s)), the offset through
 * the activation sums (bsums). */
TARGET_AVX512_VNNI static inline __attribute__((always_inline)) void
q6_k_block4(__m512 acc[], const uint8_t *q, size_t rb, const BlockQ8K *const a[], int P) {
    /* the 16 signed scales as int16: 0-7 in sw[0], 8-15 in sw[1] */
    __m512i s8 = row_bytes4(q + __builtin_offsetof(BlockQ6_K, scales), rb), sw[2],
            isum[AVX512_GEMM_POSITIONS];
    sw[0] = _mm512_srai_epi16(_mm512_unpacklo_epi8(s8, s8), 8);
    sw[1] = _mm512_srai_epi16(_mm512_unpackhi_epi8(s8, s8), 8);
#pragma GCC unroll 8
    for (int k = 0; k < P; k++) isum[k] = _mm512_setzero_si512();
#pragma GCC unroll 2
    for (int half = 0; half < 2; half++)
#pragma GCC unroll 2
        for (int c = 0; c < 2; c++) {
            __m512i v[4];
            q6_k_values(q + 64 * half + 16 * c, q + __builtin_offsetof(BlockQ6_K, qh) + 32 * half + 16 * c,
                        rb, v);
            __m512i sc01 = _mm512_shuffle_epi8(sw[half], word_pair(c, 2 + c));
            __m512i sc23 = _mm512_shuffle_epi8(sw[half], word_pair(4 + c, 6 + c));
#pragma GCC unroll 8
            for (int k = 0; k < P; k++) {
                const int8_t *x = a[k]->qs + 128 * half + 16 * c;
                isum[k] = q6_k_pair(isum[k], v[0], bcast16(x), v[1], bcast16(x + 32), sc01);
                isum[k] = q6_k_pair(isum[k], v[2], bcast16(x + 64), v[3], bcast16(x + 96), sc23);
            }
        }
    /* d in every dword of its row's lane: bytes 194-209 hold d in word 7 */
    const __m512i dpick = _mm512_set_epi16(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 31, 31, 31, 31, 23,
                                           23, 23, 23, 15, 15, 15, 15, 7, 7, 7, 7);
    __m512i tail = row_bytes4(q + __builtin_offsetof(BlockQ6_K, d) - 14, rb);
    __m512 d = _mm512_cvtph_ps(_mm512_castsi512_si256(_mm512_permutexvar_epi16(dpick, tail)));
#pragma GCC unroll 8
    for (int k = 0; k < P; k++) {
        const int8_t *bsums = (const int8_t *)a[k]->bsums;
        __m512i off = _mm512_add_epi32(_mm512_madd_epi16(sw[0], bcast16(bsums)),
                                       _mm512_madd_epi16(sw[1], bcast16(bsums + 16)));
        __m512i total = _mm512_sub_epi32(isum[k], _mm512_slli_epi32(off, 5));
        acc[k] =
            _mm512_fmadd_ps(_mm512_cvtepi32_ps(total), _mm512_mul_ps(d, _mm512_set1_ps(a[k]->d)), acc[k]);
    }
}

TARGET_AVX512_VNNI static void q6_k_eight(float *out, const uint8_t *p, size_t rb, const void *act,
                                          int blocks, const uint8_t *ahead) {
    kq_rows(out, p, rb, act, 0, blocks, 1, ahead, sizeof(BlockQ6_K), q6_k_block4);
}

TARGET_AVX512_VNNI static void matmul_q6_k(float *out, const uint8_t *rows, size_t row_bytes, const void *act,
                                           int n, int count) {
    avx512_matmul_rows(q6_k_eight, out, rows, row_bytes, act, n / QK_K, count);
}

static float dot_q6_k(const void *row, const void *act, int n) {
    return dot_by_matmul(matmul_q6_k, row, act, n);
}

TARGET_AVX512_VNNI static inline __attribute__((always_inline)) void
q6_k_tile(float *res, const uint8_t *p, size_t rb, const uint8_t *act, size_t act_stride, int blocks, int P) {
    kq_rows(res, p, rb, act, act_stride, blocks, P, NULL, sizeof(BlockQ6_K), q6_k_block4);
}

TARGET_AVX512_VNNI static void gemm_q6_k(float *out, size_t out_stride, const uint8_t *rows, size_t row_bytes,
                                         const void *act, size_t act_stride, int n, int count, int batch) {
    avx512_gemm_rows(q6_k_tile, 8, out, out_stride, rows, row_bytes, act, act_stride, n / QK_K, count, batch);
}

const GgmlKernel ggml_q6_k_avx512 = {dot_q6_k, matmul_q6_k, gemm_q6_k};
