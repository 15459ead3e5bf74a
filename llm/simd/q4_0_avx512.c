/* q4_0_avx512.c - Q4_0 rows with Q8A activations, AVX-512 VNNI: eight
 * rows per pass (ggml_avx512.h), four side by side in one register, so the
 * per-block scale work is shared too. */
#include "llm/simd/ggml_avx512.h"

/* The half scales at p of four rows rb apart, as floats: row r's in lanes
 * 4r..4r+3 (masked broadcasts straight from memory). */
TARGET_AVX512_VNNI static inline __m512 row_scales4(const uint8_t *p, size_t rb) {
    __m256i h = _mm256_maskz_set1_epi16(0x000f, load_i16(p));
    h = _mm256_mask_set1_epi16(h, 0x00f0, load_i16(p + rb));
    h = _mm256_mask_set1_epi16(h, 0x0f00, load_i16(p + 2 * rb));
    h = _mm256_mask_set1_epi16(h, 0xf000, load_i16(p + 3 * rb));
    return _mm512_cvtph_ps(h);
}

/* One block of four Q4_0 rows (p, rb apart): lanes 4r..4r+3 are row r, its
 * low nibbles meeting x[0..15] and its high ones x[16..31] (both
 * broadcast). The nibbles are unsigned (0..15), so the -8 is 8 * sum(x),
 * shared: `bias` holds it in lane 0 of each row (the lanes are summed at the
 * end). acc += d_w * d_x * (q . x - 8 sum(x)). */
TARGET_AVX512_VNNI static inline __m512 q4_0_four(const uint8_t *p, size_t rb, __m512i xlo, __m512i xhi,
                                                  __m512i bias, __m512 dx, __m512 acc) {
    const __m512i m4 = _mm512_set1_epi8(0x0f);
    __m512i q = row_bytes4(p + __builtin_offsetof(BlockQ4_0, qs), rb);
    __m512i s = _mm512_dpbusd_epi32(bias, _mm512_and_si512(q, m4), xlo);
    s = _mm512_dpbusd_epi32(s, _mm512_and_si512(_mm512_srli_epi16(q, 4), m4), xhi);
    return _mm512_fmadd_ps(_mm512_cvtepi32_ps(s), _mm512_mul_ps(row_scales4(p, rb), dx), acc);
}

TARGET_AVX512_VNNI static void q4_0_eight(float *out, const uint8_t *p, size_t rb, const void *act,
                                          int blocks, const uint8_t *ahead) {
    const BlockQ8A *a = act;
    __m512 acc0 = _mm512_setzero_ps(), acc1 = _mm512_setzero_ps();
    for (int b = 0; b < blocks; b++, p += sizeof(BlockQ4_0)) {
        prefetch_group(ahead, b, 2 * sizeof(BlockQ4_0));
        __m512i xlo = _mm512_broadcast_i32x4(load16(a[b].qs));
        __m512i xhi = _mm512_broadcast_i32x4(load16(a[b].qs + 16));
        __m512i bias = _mm512_maskz_set1_epi32(0x1111, -8 * a[b].qsum);
        __m512 dx = _mm512_set1_ps(a[b].d);
        acc0 = q4_0_four(p, rb, xlo, xhi, bias, dx, acc0);
        acc1 = q4_0_four(p + 4 * rb, rb, xlo, xhi, bias, dx, acc1);
    }
    for (int r = 0; r < 4; r++) out[r] = lane_sum(acc0, r), out[4 + r] = lane_sum(acc1, r);
}

TARGET_AVX512_VNNI static void matmul_q4_0(float *out, const uint8_t *rows, size_t row_bytes, const void *act,
                                           int n, int count) {
    avx512_matmul_rows(q4_0_eight, out, rows, row_bytes, act, n / QK32, count);
}

static float dot_q4_0(const void *row, const void *act, int n) {
    return dot_by_matmul(matmul_q4_0, row, act, n);
}

/* Eight rows by P positions: each group of four rows' nibbles and scales
 * once per block, q4_0_four's arithmetic for every position. */
TARGET_AVX512_VNNI static inline __attribute__((always_inline)) void
q4_0_tile(float *res, const uint8_t *p, size_t rb, const uint8_t *act, size_t act_stride, int blocks, int P) {
    const __m512i m4 = _mm512_set1_epi8(0x0f);
    __m512 acc[AVX512_GEMM_POSITIONS][2];
    for (int k = 0; k < P; k++) acc[k][0] = acc[k][1] = _mm512_setzero_ps();
    for (int b = 0; b < blocks; b++, p += sizeof(BlockQ4_0)) {
        __m512i lo[2], hi[2];
        __m512 scales[2];
        for (int g = 0; g < 2; g++) {
            __m512i q = row_bytes4(p + 4 * g * rb + __builtin_offsetof(BlockQ4_0, qs), rb);
            lo[g] = _mm512_and_si512(q, m4);
            hi[g] = _mm512_and_si512(_mm512_srli_epi16(q, 4), m4);
            scales[g] = row_scales4(p + 4 * g * rb, rb);
        }
        for (int k = 0; k < P; k++) {
            const BlockQ8A *a = (const BlockQ8A *)(act + (size_t)k * act_stride) + b;
            __m512i xlo = _mm512_broadcast_i32x4(load16(a->qs));
            __m512i xhi = _mm512_broadcast_i32x4(load16(a->qs + 16));
            __m512i bias = _mm512_maskz_set1_epi32(0x1111, -8 * a->qsum);
            __m512 dx = _mm512_set1_ps(a->d);
            for (int g = 0; g < 2; g++) {
                __m512i s = _mm512_dpbusd_epi32(_mm512_dpbusd_epi32(bias, lo[g], xlo), hi[g], xhi);
                acc[k][g] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(s), _mm512_mul_ps(scales[g], dx), acc[k][g]);
            }
        }
    }
    for (int k = 0; k < P; k++)
        for (int r = 0; r < 4; r++)
            res[k * 8 + r] = lane_sum(acc[k][0], r), res[k * 8 + 4 + r] = lane_sum(acc[k][1], r);
}

TARGET_AVX512_VNNI static void gemm_q4_0(float *out, size_t out_stride, const uint8_t *rows, size_t row_bytes,
                                         const void *act, size_t act_stride, int n, int count, int batch) {
    avx512_gemm_rows(q4_0_tile, 4, out, out_stride, rows, row_bytes, act, act_stride, n / QK32, count, batch);
}

const GgmlKernel ggml_q4_0_avx512 = {dot_q4_0, matmul_q4_0, gemm_q4_0};
