/* q8_act_avx512.c - the activation quantisers (Q8A, Q8K) in AVX-512: the
 * scalar ones of ggml_act_quant.c, bit for bit: the same float products,
 * the same rounding (Q8A: halves away from zero, from the exact fraction;
 * Q8K: to nearest even, as the magic-number add does), and the same maxima
 * (exact, whatever the order; NaN ignored as there). */
#include "llm/compute/avx512/ggml_avx512.h"

TARGET_AVX512_VNNI void ggml_quantize_act_q8a_avx512(void *blocks, const float *x, int n) {
    BlockQ8A *out = blocks;
    const __m512 half = _mm512_set1_ps(0.5f), minus_half = _mm512_set1_ps(-0.5f);
    const __m512i one = _mm512_set1_epi32(1);
    for (int b = 0; b < n / QK32; b++, x += QK32) {
        __m512 x0 = _mm512_loadu_ps(x), x1 = _mm512_loadu_ps(x + 16);
        __m512 m = _mm512_max_ps(_mm512_abs_ps(x1), _mm512_max_ps(_mm512_abs_ps(x0), _mm512_setzero_ps()));
        float amax = _mm512_reduce_max_ps(m);
        float id, d = ggml_q8_0_scale(amax, &id);
        __m512i sum = _mm512_setzero_si512();
        for (int h = 0; h < 2; h++) {
            __m512 v = _mm512_mul_ps(h ? x1 : x0, _mm512_set1_ps(id));
            __m512i t = _mm512_cvttps_epi32(v);
            __m512 frac = _mm512_sub_ps(v, _mm512_cvtepi32_ps(t));
            t = _mm512_mask_add_epi32(t, _mm512_cmp_ps_mask(frac, half, _CMP_GE_OQ), t, one);
            t = _mm512_mask_sub_epi32(t, _mm512_cmp_ps_mask(frac, minus_half, _CMP_LE_OQ), t, one);
            _mm_storeu_si128((__m128i *)(out[b].qs + 16 * h), _mm512_cvtepi32_epi8(t));
            sum = _mm512_add_epi32(sum, t);
        }
        int total = _mm512_reduce_add_epi32(sum);
        out[b].qsum = total;
        out[b].d = ggml_fp16_to_fp32(ggml_fp32_to_fp16(d));
        out[b].s = ggml_fp16_to_fp32(ggml_fp32_to_fp16((float)total * d));
    }
}

TARGET_AVX512_VNNI void ggml_quantize_act_q8k_avx512(void *blocks, const float *x, int n) {
    BlockQ8K *out = blocks;
    const __m512i lim = _mm512_set1_epi32(127), neg_lim = _mm512_set1_epi32(-127);
    for (int b = 0; b < n / QK_K; b++, x += QK_K) {
        __m512 m = _mm512_setzero_ps();
        for (int j = 0; j < QK_K; j += 16) m = _mm512_max_ps(_mm512_abs_ps(_mm512_loadu_ps(x + j)), m);
        float amax = _mm512_reduce_max_ps(m);
        if (amax == 0.0f) {
            __builtin_memset(&out[b], 0, sizeof(out[b]));
            continue;
        }
        /* the first value of the largest magnitude, as the scalar loop keeps */
        float max = 0;
        for (int j = 0; j < QK_K; j += 16) {
            __mmask16 hit =
                _mm512_cmp_ps_mask(_mm512_abs_ps(_mm512_loadu_ps(x + j)), _mm512_set1_ps(amax), _CMP_EQ_OQ);
            if (hit) {
                max = x[j + __builtin_ctz(hit)];
                break;
            }
        }
        float iscale = -127.0f / max;
        for (int j = 0; j < QK_K; j += 16) {
            __m512i v = _mm512_cvtps_epi32(_mm512_mul_ps(_mm512_loadu_ps(x + j), _mm512_set1_ps(iscale)));
            v = _mm512_max_epi32(_mm512_min_epi32(v, lim), neg_lim);
            _mm_storeu_si128((__m128i *)(out[b].qs + j), _mm512_cvtepi32_epi8(v));
            out[b].bsums[j / 16] = (int16_t)_mm512_reduce_add_epi32(v);
        }
        out[b].d = 1.0f / iscale;
    }
}
