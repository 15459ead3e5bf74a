/* q4_k_avx512.c - Q4_K rows with Q8K activations, AVX-512 VNNI: eight rows
 * per pass as two groups of four, one row per 128-bit lane, so the
 * per-block float work (scales, mins, accumulation) serves four rows in
 * one instruction, and a prefill tile decodes a block's nibbles and scales
 * once for four positions (measured against one row per register, two
 * positions: see the commit). */
#include "llm/compute/avx512/ggml_avx512.h"

/* k4_scales_mins for four rows at once: v holds each row's first 16 block
 * bytes (d, dmin, the 12 scale bytes: words w0, w1, w2 in dwords 1-3) in
 * its lane; each lane comes out as scales 0-7 in bytes 0-7, mins in 8-15. */
TARGET_AVX512_VNNI static inline __m512i k4_scales_mins4(__m512i v) {
    __m512i x = _mm512_shuffle_epi32(v, (_MM_PERM_ENUM)0xED); /* w0, w2, w1, w2 */
    __m512i y = _mm512_shuffle_epi32(v, (_MM_PERM_ENUM)0xA5); /* w0, w0, w1, w1 */
    const __m512i shift = _mm512_broadcast_i32x4(_mm_set_epi32(4, 0, 0, 0));
    const __m512i low = _mm512_broadcast_i32x4(_mm_set_epi32(0x0f0f0f0f, 0x3f3f3f3f, 0x0f0f0f0f, 0x3f3f3f3f));
    const __m512i top = _mm512_broadcast_i32x4(_mm_set_epi32(0x30303030, 0, 0x30303030, 0));
    /* scales/mins 4-7 take bits 6-7 of w0/w1 as their bits 4-5 */
    return _mm512_or_si512(_mm512_and_si512(_mm512_srlv_epi32(x, shift), low),
                           _mm512_and_si512(_mm512_srli_epi32(y, 2), top));
}

/* A position's mins-term activation sums: bsums of each
 * 32-value sub-block pair added, eight int16 per position. */
TARGET_AVX512_VNNI static inline __m128i pair_sums(const BlockQ8K *a) {
    __m256i s = _mm256_madd_epi16(load32(a->bsums), _mm256_set1_epi16(1));
    return _mm_packs_epi32(_mm256_castsi256_si128(s), _mm256_extracti128_si256(s, 1));
}

/* Four rows' nibbles of one 32-byte run of qs (sub-blocks 2m and 2m+1):
 * lo[0..1] the low nibbles of its two 16-byte halves, hi[0..1] the high. */
TARGET_AVX512_VNNI static inline void q4_k_nibbles(const uint8_t *qs, size_t rb, __m512i lo[2],
                                                   __m512i hi[2]) {
    const __m512i m4 = _mm512_set1_epi8(0x0f);
#pragma GCC unroll 2
    for (int h = 0; h < 2; h++) {
        __m512i r = row_bytes4(qs + 16 * h, rb);
        lo[h] = _mm512_and_si512(r, m4), hi[h] = _mm512_and_si512(_mm512_srli_epi16(r, 4), m4);
    }
}

/* One sub-block pair's products for four rows: each sub-block's from two
 * dpbusd (at most 8 * 15 * 127 per dword, so packing them to int16 is
 * exact), then one dpwssd applies both sub-blocks' scales. */
TARGET_AVX512_VNNI static inline __m512i q4_k_pair(__m512i isum, const __m512i lo[2], const __m512i hi[2],
                                                   const __m512i x[4], __m512i sc) {
    __m512i dl = _mm512_dpbusd_epi32(_mm512_dpbusd_epi32(_mm512_setzero_si512(), lo[0], x[0]), lo[1], x[1]);
    __m512i dh = _mm512_dpbusd_epi32(_mm512_dpbusd_epi32(_mm512_setzero_si512(), hi[0], x[2]), hi[1], x[3]);
    return _mm512_dpwssd_epi32(isum, _mm512_packs_epi32(dl, dh), sc);
}

/* The float step of four rows (block bytes at q, rb apart; their decoded
 * scales and mins sm) for one position, lane r for row r: acc += (d d_x)
 * isum - (dmin d_x) sum_j m_j sum_j(x), in llama.cpp's order (the
 * qwen3moe-Q4_K greedy continuation of test_gguf_arch2 flipped a token with
 * d_x applied last). */
TARGET_AVX512_VNNI static inline __m512 q4_k_scale(__m512 acc, const uint8_t *q, size_t rb, __m512i sm,
                                                   __m512i isum, __m128i bsp, float dx) {
    /* d in every dword of its row's lane (words 0-15), dmin likewise (16-31) */
    const __m512i halves = _mm512_set_epi16(25, 25, 25, 25, 17, 17, 17, 17, 9, 9, 9, 9, 1, 1, 1, 1, 24, 24,
                                            24, 24, 16, 16, 16, 16, 8, 8, 8, 8, 0, 0, 0, 0);
    __m512i dd = _mm512_permutexvar_epi16(halves, row_bytes4(q, rb));
    __m512 d = _mm512_cvtph_ps(_mm512_castsi512_si256(dd));
    __m512 dmin = _mm512_cvtph_ps(_mm512_extracti64x4_epi64(dd, 1));
    __m512i msum = _mm512_madd_epi16(_mm512_shuffle_epi8(sm, byte_words(8, 1)), _mm512_broadcast_i32x4(bsp));
    __m512 x = _mm512_set1_ps(dx);
    acc = _mm512_fmadd_ps(_mm512_mul_ps(d, x), _mm512_cvtepi32_ps(isum), acc);
    return _mm512_fnmadd_ps(_mm512_mul_ps(dmin, x), _mm512_cvtepi32_ps(msum), acc);
}

/* One block of four rows (q, rb apart) by P positions: each sub-block
 * pair's nibbles and scales decoded once for the P positions. */
TARGET_AVX512_VNNI static inline __attribute__((always_inline)) void
q4_k_block4(__m512 acc[], const uint8_t *q, size_t rb, const BlockQ8K *const a[], int P) {
    __m512i sm = k4_scales_mins4(row_bytes4(q, rb)), isum[AVX512_GEMM_POSITIONS];
#pragma GCC unroll 8
    for (int k = 0; k < P; k++) isum[k] = _mm512_setzero_si512();
#pragma GCC unroll 4
    for (int m = 0; m < 4; m++) {
        __m512i lo[2], hi[2];
        q4_k_nibbles(q + __builtin_offsetof(BlockQ4_K, qs) + 32 * m, rb, lo, hi);
        /* words 0-3 scale 2m (the low nibbles' sub-block), 4-7 scale 2m+1 */
        __m512i sc = _mm512_shuffle_epi8(sm, byte_words(2 * m, 4));
#pragma GCC unroll 8
        for (int k = 0; k < P; k++) {
            __m512i x[4];
#pragma GCC unroll 4
            for (int i = 0; i < 4; i++) x[i] = bcast16(a[k]->qs + 64 * m + 16 * i);
            isum[k] = q4_k_pair(isum[k], lo, hi, x, sc);
        }
    }
#pragma GCC unroll 8
    for (int k = 0; k < P; k++) acc[k] = q4_k_scale(acc[k], q, rb, sm, isum[k], pair_sums(a[k]), a[k]->d);
}

TARGET_AVX512_VNNI static void q4_k_eight(float *out, const uint8_t *p, size_t rb, const void *act,
                                          int blocks, const uint8_t *ahead) {
    kq_rows(out, p, rb, act, 0, blocks, 1, ahead, sizeof(BlockQ4_K), q4_k_block4);
}

TARGET_AVX512_VNNI static void matmul_q4_k(float *out, const uint8_t *rows, size_t row_bytes, const void *act,
                                           int n, int count) {
    avx512_matmul_rows(q4_k_eight, out, rows, row_bytes, act, n / QK_K, count);
}

static float dot_q4_k(const void *row, const void *act, int n) {
    return dot_by_matmul(matmul_q4_k, row, act, n);
}

TARGET_AVX512_VNNI static inline __attribute__((always_inline)) void
q4_k_tile(float *res, const uint8_t *p, size_t rb, const uint8_t *act, size_t act_stride, int blocks, int P) {
    kq_rows(res, p, rb, act, act_stride, blocks, P, NULL, sizeof(BlockQ4_K), q4_k_block4);
}

TARGET_AVX512_VNNI static void gemm_q4_k(float *out, size_t out_stride, const uint8_t *rows, size_t row_bytes,
                                         const void *act, size_t act_stride, int n, int count, int batch) {
    avx512_gemm_rows(q4_k_tile, 8, out, out_stride, rows, row_bytes, act, act_stride, n / QK_K, count, batch);
}

const GgmlKernel ggml_q4_k_avx512 = {dot_q4_k, matmul_q4_k, gemm_q4_k};
