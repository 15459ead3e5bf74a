/* q4_0_avx512.c - Q4_0 rows with Q8A activations, AVX-512 VNNI, one row
 * per lane (lane_rows_avx512.h). The nibbles are unsigned (0..15), so the
 * -8 is a correction of -8 * sum(x), one number per activation block. */
#include "llm/compute/avx512/lane_rows_avx512.h"

/* After the matvec's shuffles lane l holds row 4 * (l % 4) + l / 4 (a 4x4
 * transpose: the same table maps rows to lanes). */
static const int32_t row_of_lane[16] = {0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15};

/* row_bytes4 (ggml_avx512.h): the 16 bytes at p of four rows rb apart, row r in 128-bit lane r. */

/* Sixteen rows: four rows a register (a 128-bit lane each: low nibbles
 * meet x[0..15], high ones x[16..31], both broadcast), the correction in
 * one lane of each row; the lanes reduced by shuffles. */
TARGET_AVX512_VNNI static void q4_0_sixteen(float *out, const uint8_t *p, size_t rb, const void *act,
                                            int blocks, const uint8_t *ahead) {
    const BlockQ8A *a = act;
    const __m512i m4 = _mm512_set1_epi8(0x0f);
    const __m512i order = _mm512_loadu_si512(row_of_lane);
    const __m512i scale_offs = _mm512_mullo_epi32(order, _mm512_set1_epi32((int)rb));
    __m512 acc = _mm512_setzero_ps();
    for (int b = 0; b < blocks; b++, p += sizeof(BlockQ4_0)) {
        prefetch_group(ahead, b, 4 * sizeof(BlockQ4_0));
        __m512i xlo = _mm512_broadcast_i32x4(load16(a[b].qs));
        __m512i xhi = _mm512_broadcast_i32x4(load16(a[b].qs + 16));
        __m512i bias = _mm512_maskz_set1_epi32(0x1111, -8 * a[b].qsum);
        __m512i v[4];
#pragma GCC unroll 4
        for (int g = 0; g < 4; g++) {
            __m512i q = row_bytes4(p + 4 * g * rb + __builtin_offsetof(BlockQ4_0, qs), rb);
            __m512i s = _mm512_dpbusd_epi32(bias, _mm512_and_si512(q, m4), xlo);
            v[g] = _mm512_dpbusd_epi32(s, _mm512_and_si512(_mm512_srli_epi16(q, 4), m4), xhi);
        }
        __m512i s = lane_sum_pairs64(lane_sum_pairs32(v[0], v[1]), lane_sum_pairs32(v[2], v[3]));
        __m512 d = lane_scales(p, scale_offs);
        acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(s), _mm512_mul_ps(d, _mm512_set1_ps(a[b].d)), acc);
    }
    lane_store_rows(out, acc, order);
}

/* Block b of sixteen rows, one per lane: the nibbles of bytes 4j..4j+3,
 * low (values 4j..) and high (values 16 + 4j..), as unsigned bytes. */
TARGET_AVX512_VNNI STEP void q4_0_lanes(LaneBlock *out, const uint8_t *rows, __m512i offs, int b) {
    const uint8_t *blk = rows + (size_t)b * sizeof(BlockQ4_0);
    const __m512i m4 = _mm512_set1_epi8(0x0f);
#pragma GCC unroll 4
    for (int j = 0; j < 4; j++) {
        __m512i q = _mm512_i32gather_epi32(offs, blk + __builtin_offsetof(BlockQ4_0, qs) + 4 * j, 1);
        out->w[j] = _mm512_and_si512(q, m4);
        out->w[4 + j] = _mm512_and_si512(_mm512_srli_epi32(q, 4), m4);
    }
    out->d = lane_scales(blk, offs);
}

TARGET_AVX512_VNNI static void gemm_q4_0(float *out, size_t out_stride, const uint8_t *rows, size_t row_bytes,
                                         const void *act, size_t act_stride, int n, int count, int batch) {
    lane_gemm(q4_0_lanes, sizeof(BlockQ4_0), 8, out, out_stride, rows, row_bytes, act, act_stride, n / QK32,
              count, batch);
}

TARGET_AVX512_VNNI static void matmul_q4_0(float *out, const uint8_t *rows, size_t row_bytes, const void *act,
                                           int n, int count) {
    lane_matmul_rows(q4_0_sixteen, gemm_q4_0, out, rows, row_bytes, act, n, n / QK32, count);
}

static float dot_q4_0(const void *row, const void *act, int n) {
    return dot_by_matmul(matmul_q4_0, row, act, n);
}

const GgmlKernel ggml_q4_0_avx512 = {dot_q4_0, matmul_q4_0, gemm_q4_0};
