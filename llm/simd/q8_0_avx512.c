/* q8_0_avx512.c - Q8_0 rows with Q8A activations, AVX-512 VNNI: eight
 * rows per pass (ggml_avx512.h), two side by side in one register (a lane
 * group per row), so the per-block scale work is shared too. */
#include "llm/simd/ggml_avx512.h"

/* The half scales at p of two rows rb apart as floats: the first row's in
 * lanes 0-7, the second's in 8-15. */
TARGET_AVX512_VNNI static inline __m512 row_scales2(const uint8_t *p, size_t rb) {
    __m256i h = _mm256_maskz_set1_epi16(0x00ff, load_i16(p));
    return _mm512_cvtph_ps(_mm256_mask_set1_epi16(h, 0xff00, load_i16(p + rb)));
}

/* Sum of the eight floats of the lower (upper 0) or upper 256 bits. */
TARGET_AVX512_VNNI static inline float half_sum(__m512 v, int upper) {
    __m256 h =
        upper ? _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)) : _mm512_castps512_ps256(v);
    __m128 q = _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
    return sse2_hsum_ps(q);
}

/* One block of two Q8_0 rows (p, rb apart) in the halves of one register.
 * VNNI takes unsigned times signed, so the activations come flipped:
 * (x + 128) . w - 128 * sum(w). */
TARGET_AVX512_VNNI static inline __m512 q8_0_two(const uint8_t *p, size_t rb, __m512i xu, __m512 dx,
                                                 __m512 acc) {
    const __m512i flip = _mm512_set1_epi8((char)0x80), zero = _mm512_setzero_si512();
    const uint8_t *qs = p + __builtin_offsetof(BlockQ8_0, qs);
    __m512i q = _mm512_inserti64x4(_mm512_castsi256_si512(load32(qs)), load32(qs + rb), 1);
    __m512i s = _mm512_sub_epi32(_mm512_dpbusd_epi32(zero, xu, q), _mm512_dpbusd_epi32(zero, flip, q));
    return _mm512_fmadd_ps(_mm512_cvtepi32_ps(s), _mm512_mul_ps(row_scales2(p, rb), dx), acc);
}

TARGET_AVX512_VNNI static void q8_0_eight(float *out, const uint8_t *p, size_t rb, const void *act,
                                          int blocks, const uint8_t *ahead) {
    const BlockQ8A *a = act;
    const __m512i flip = _mm512_set1_epi8((char)0x80);
    __m512 acc[4] = {_mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps()};
    for (int b = 0; b < blocks; b++, p += sizeof(BlockQ8_0)) {
        prefetch_group(ahead, b, 2 * sizeof(BlockQ8_0));
        __m512i xu = _mm512_xor_si512(_mm512_broadcast_i64x4(load32(a[b].qs)), flip);
        __m512 dx = _mm512_set1_ps(a[b].d);
        for (int k = 0; k < 4; k++) acc[k] = q8_0_two(p + 2 * k * rb, rb, xu, dx, acc[k]);
    }
    for (int k = 0; k < 4; k++) out[2 * k] = half_sum(acc[k], 0), out[2 * k + 1] = half_sum(acc[k], 1);
}

TARGET_AVX512_VNNI static void matmul_q8_0(float *out, const uint8_t *rows, size_t row_bytes, const void *act,
                                           int n, int count) {
    avx512_matmul_rows(q8_0_eight, out, rows, row_bytes, act, n / QK32, count);
}

static float dot_q8_0(const void *row, const void *act, int n) {
    return dot_by_matmul(matmul_q8_0, row, act, n);
}

/* Eight rows by P positions: each pair of rows' bytes, weight sums and
 * scales once per block, q8_0_two's arithmetic for every position. */
TARGET_AVX512_VNNI static inline __attribute__((always_inline)) void
q8_0_tile(float *res, const uint8_t *p, size_t rb, const uint8_t *act, size_t act_stride, int blocks, int P) {
    const __m512i flip = _mm512_set1_epi8((char)0x80), zero = _mm512_setzero_si512();
    __m512 acc[AVX512_GEMM_POSITIONS][4];
    for (int k = 0; k < P; k++)
        for (int g = 0; g < 4; g++) acc[k][g] = _mm512_setzero_ps();
    for (int b = 0; b < blocks; b++, p += sizeof(BlockQ8_0)) {
        __m512i q[4], wsum[4];
        __m512 scales[4];
        for (int g = 0; g < 4; g++) {
            const uint8_t *qs = p + 2 * g * rb + __builtin_offsetof(BlockQ8_0, qs);
            q[g] = _mm512_inserti64x4(_mm512_castsi256_si512(load32(qs)), load32(qs + rb), 1);
            wsum[g] = _mm512_dpbusd_epi32(zero, flip, q[g]);
            scales[g] = row_scales2(p + 2 * g * rb, rb);
        }
        for (int k = 0; k < P; k++) {
            const BlockQ8A *a = (const BlockQ8A *)(act + (size_t)k * act_stride) + b;
            __m512i xu = _mm512_xor_si512(_mm512_broadcast_i64x4(load32(a->qs)), flip);
            __m512 dx = _mm512_set1_ps(a->d);
            for (int g = 0; g < 4; g++) {
                __m512i s = _mm512_sub_epi32(_mm512_dpbusd_epi32(zero, xu, q[g]), wsum[g]);
                acc[k][g] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(s), _mm512_mul_ps(scales[g], dx), acc[k][g]);
            }
        }
    }
    for (int k = 0; k < P; k++)
        for (int g = 0; g < 4; g++)
            res[k * 8 + 2 * g] = half_sum(acc[k][g], 0), res[k * 8 + 2 * g + 1] = half_sum(acc[k][g], 1);
}

TARGET_AVX512_VNNI static void gemm_q8_0(float *out, size_t out_stride, const uint8_t *rows, size_t row_bytes,
                                         const void *act, size_t act_stride, int n, int count, int batch) {
    avx512_gemm_rows(q8_0_tile, 4, out, out_stride, rows, row_bytes, act, act_stride, n / QK32, count, batch);
}

const GgmlKernel ggml_q8_0_avx512 = {dot_q8_0, matmul_q8_0, gemm_q8_0};
