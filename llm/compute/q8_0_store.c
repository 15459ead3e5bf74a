/* q8_0_store.c - the KV cache's q8_0 rows (see q8_0_store.h): the scalar
 * one is tensor/'s block quantiser; the SIMD ones take its scale
 * (ggml_q8_0_scale) and round the 32 values 4, 8 or 16 at a time. */
#include <immintrin.h>

#include "lib/math.h"
#include "llm/compute/q8_0_store.h"
#include "llm/compute/target.h"

/* The block's scale into b->d; returns the factor its values are multiplied by. */
static inline float block_scale(BlockQ8_0 *b, float amax) {
    float id;
    b->d = ggml_fp32_to_fp16(ggml_q8_0_scale(amax, &id));
    return id;
}

void q8_0_store_scalar(BlockQ8_0 *out, const float *x, int n) {
    ggml_quantize_row_q8_0(out, x, (size_t)n);
}

/* v rounded half away from zero: the truncation, then one step away from
 * zero when the exact remainder v - t reaches a half (|v| < 2^31). */
static inline __m128i sse2_round_away(__m128 v) {
    __m128i t = _mm_cvttps_epi32(v);
    __m128 rest = _mm_sub_ps(v, _mm_cvtepi32_ps(t));
    __m128i up = _mm_castps_si128(_mm_cmpge_ps(rest, _mm_set1_ps(0.5f)));
    __m128i down = _mm_castps_si128(_mm_cmple_ps(rest, _mm_set1_ps(-0.5f)));
    return _mm_add_epi32(_mm_sub_epi32(t, up), down); /* the masks are -1 */
}

void q8_0_store_sse2(BlockQ8_0 *out, const float *x, int n) {
    const __m128 magnitude = _mm_castsi128_ps(_mm_set1_epi32(0x7fffffff));
    for (int b = 0; b < n / QK32; b++, x += QK32) {
        __m128 m = _mm_setzero_ps();
        for (int j = 0; j < QK32; j += 4) m = _mm_max_ps(m, _mm_and_ps(_mm_loadu_ps(x + j), magnitude));
        m = _mm_max_ps(m, _mm_movehl_ps(m, m));
        m = _mm_max_ss(m, _mm_shuffle_ps(m, m, 1));
        __m128 id = _mm_set1_ps(block_scale(&out[b], _mm_cvtss_f32(m)));
        __m128i q[8];
        for (int w = 0; w < 8; w++) q[w] = sse2_round_away(_mm_mul_ps(_mm_loadu_ps(x + 4 * w), id));
        for (int h = 0; h < 2; h++) {
            __m128i lo = _mm_packs_epi32(q[4 * h], q[4 * h + 1]),
                    hi = _mm_packs_epi32(q[4 * h + 2], q[4 * h + 3]);
            _mm_storeu_si128((__m128i *)(out[b].qs + 16 * h), _mm_packs_epi16(lo, hi));
        }
    }
}

TARGET_AVX2 static inline __m256i avx2_round_away(__m256 v) {
    __m256i t = _mm256_cvttps_epi32(v);
    __m256 rest = _mm256_sub_ps(v, _mm256_cvtepi32_ps(t));
    __m256i up = _mm256_castps_si256(_mm256_cmp_ps(rest, _mm256_set1_ps(0.5f), _CMP_GE_OQ));
    __m256i down = _mm256_castps_si256(_mm256_cmp_ps(rest, _mm256_set1_ps(-0.5f), _CMP_LE_OQ));
    return _mm256_add_epi32(_mm256_sub_epi32(t, up), down);
}

TARGET_AVX2 void q8_0_store_avx2(BlockQ8_0 *out, const float *x, int n) {
    const __m256 magnitude = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
    /* The packs work within 128-bit halves: this puts the 4-byte groups back in
     * order. */
    const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
    for (int b = 0; b < n / QK32; b++, x += QK32) {
        __m256 m = _mm256_setzero_ps();
        for (int j = 0; j < QK32; j += 8)
            m = _mm256_max_ps(m, _mm256_and_ps(_mm256_loadu_ps(x + j), magnitude));
        __m128 h = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
        h = _mm_max_ps(h, _mm_movehl_ps(h, h));
        h = _mm_max_ss(h, _mm_shuffle_ps(h, h, 1));
        __m256 id = _mm256_set1_ps(block_scale(&out[b], _mm_cvtss_f32(h)));
        __m256i q[4];
        for (int w = 0; w < 4; w++) q[w] = avx2_round_away(_mm256_mul_ps(_mm256_loadu_ps(x + 8 * w), id));
        __m256i bytes = _mm256_packs_epi16(_mm256_packs_epi32(q[0], q[1]), _mm256_packs_epi32(q[2], q[3]));
        _mm256_storeu_si256((__m256i *)out[b].qs, _mm256_permutevar8x32_epi32(bytes, order));
    }
}

TARGET_AVX512 void q8_0_store_avx512(BlockQ8_0 *out, const float *x, int n) {
    const __m512i one = _mm512_set1_epi32(1);
    for (int b = 0; b < n / QK32; b++, x += QK32) {
        __m512 v0 = _mm512_loadu_ps(x), v1 = _mm512_loadu_ps(x + 16);
        float amax = _mm512_reduce_max_ps(_mm512_max_ps(_mm512_abs_ps(v0), _mm512_abs_ps(v1)));
        __m512 id = _mm512_set1_ps(block_scale(&out[b], amax));
        for (int h = 0; h < 2; h++) {
            __m512 v = _mm512_mul_ps(h ? v1 : v0, id);
            __m512i t = _mm512_cvttps_epi32(v);
            __m512 rest = _mm512_sub_ps(v, _mm512_cvtepi32_ps(t));
            t = _mm512_mask_add_epi32(t, _mm512_cmp_ps_mask(rest, _mm512_set1_ps(0.5f), _CMP_GE_OQ), t, one);
            t = _mm512_mask_sub_epi32(t, _mm512_cmp_ps_mask(rest, _mm512_set1_ps(-0.5f), _CMP_LE_OQ), t, one);
            _mm_storeu_si128((__m128i *)(out[b].qs + 16 * h), _mm512_cvtsepi32_epi8(t));
        }
    }
}
