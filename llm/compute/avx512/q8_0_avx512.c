/* q8_0_avx512.c - Q8_0 rows with Q8A activations, AVX-512 VNNI, one row
 * per lane (lane_rows_avx512.h). The weights are the unsigned operand of
 * vpdpbusd, flipped (w ^ 0x80 = w + 128), so the correction is
 * -128 * sum(x), one number per activation block for every row. */
#include "llm/compute/avx512/lane_rows_avx512.h"

/* The row whose sum lane l holds after the matvec's shuffles, and the lane
 * that holds row r. */
static const int32_t row_of_lane[16] = {0, 2, 4, 6, 1, 3, 5, 7, 8, 10, 12, 14, 9, 11, 13, 15};
static const int32_t lane_of_row[16] = {0, 4, 1, 5, 2, 6, 3, 7, 8, 12, 9, 13, 10, 14, 11, 15};

/* Sixteen rows: pairs of rows in the halves of a register, eight lanes a
 * row, the correction in one lane of each; the lanes reduced by shuffles. */
TARGET_AVX512_VNNI static void q8_0_sixteen(float *out, const uint8_t *p, size_t rb, const void *act,
                                            int blocks, const uint8_t *ahead) {
    const BlockQ8A *a = act;
    const __m512i flip = _mm512_set1_epi8((char)0x80);
    const __m512i scale_offs =
        _mm512_mullo_epi32(_mm512_loadu_si512(row_of_lane), _mm512_set1_epi32((int)rb));
    __m512 acc = _mm512_setzero_ps();
    for (int b = 0; b < blocks; b++, p += sizeof(BlockQ8_0)) {
        prefetch_group(ahead, b, 4 * sizeof(BlockQ8_0));
        __m512i x = _mm512_broadcast_i64x4(load32(a[b].qs));
        __m512i bias = _mm512_maskz_set1_epi32(0x0101, -128 * a[b].qsum);
        __m512i v[8];
#pragma GCC unroll 8
        for (int i = 0; i < 8; i++) {
            const uint8_t *qs = p + 2 * i * rb + __builtin_offsetof(BlockQ8_0, qs);
            __m512i q = _mm512_inserti64x4(_mm512_castsi256_si512(load32(qs)), load32(qs + rb), 1);
            v[i] = _mm512_dpbusd_epi32(bias, _mm512_xor_si512(q, flip), x);
        }
        __m512i s =
            lane_sum_halves(lane_sum_pairs64(lane_sum_pairs32(v[0], v[1]), lane_sum_pairs32(v[2], v[3])),
                            lane_sum_pairs64(lane_sum_pairs32(v[4], v[5]), lane_sum_pairs32(v[6], v[7])));
        __m512 d = lane_scales(p, scale_offs);
        acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(s), _mm512_mul_ps(d, _mm512_set1_ps(a[b].d)), acc);
    }
    lane_store_rows(out, acc, _mm512_loadu_si512(lane_of_row));
}

/* Block b of sixteen rows, one per lane, flipped to unsigned. */
TARGET_AVX512_VNNI STEP void q8_0_lanes(LaneBlock *out, const uint8_t *rows, __m512i offs, int b) {
    const uint8_t *blk = rows + (size_t)b * sizeof(BlockQ8_0);
    const __m512i flip = _mm512_set1_epi8((char)0x80);
#pragma GCC unroll 8
    for (int c = 0; c < 8; c++)
        out->w[c] = _mm512_xor_si512(
            _mm512_i32gather_epi32(offs, blk + __builtin_offsetof(BlockQ8_0, qs) + 4 * c, 1), flip);
    out->d = lane_scales(blk, offs);
}

TARGET_AVX512_VNNI static void gemm_q8_0(float *out, size_t out_stride, const uint8_t *rows, size_t row_bytes,
                                         const void *act, size_t act_stride, int n, int count, int batch) {
    lane_gemm(q8_0_lanes, sizeof(BlockQ8_0), 128, out, out_stride, rows, row_bytes, act, act_stride, n / QK32,
              count, batch);
}

TARGET_AVX512_VNNI static void matmul_q8_0(float *out, const uint8_t *rows, size_t row_bytes, const void *act,
                                           int n, int count) {
    lane_matmul_rows(q8_0_sixteen, gemm_q8_0, out, rows, row_bytes, act, n, n / QK32, count);
}

static float dot_q8_0(const void *row, const void *act, int n) {
    return dot_by_matmul(matmul_q8_0, row, act, n);
}

const GgmlKernel ggml_q8_0_avx512 = {dot_q8_0, matmul_q8_0, gemm_q8_0};
