/* quant.c - group quantisation of activations and weights. Plain SSE2 (the
 * x86_64 baseline) so every kernel set sees the same quantised inputs. */
#include "llm/tensor/quant.h"

#include <emmintrin.h>

#include "lib/math.h"

int quant_group_supported(int group_size) {
    return group_size >= QUANT_GROUP_STEP && group_size % QUANT_GROUP_STEP == 0 &&
           group_size <= QUANT_MAX_GROUP;
}

static inline float group_absmax(const float *x, int n) {
    const __m128 sign = _mm_set1_ps(-0.0f);
    __m128 vmax = _mm_setzero_ps();
    int j = 0;
    for (; j + 4 <= n; j += 4) vmax = _mm_max_ps(vmax, _mm_andnot_ps(sign, _mm_loadu_ps(x + j)));
    vmax = _mm_max_ps(vmax, _mm_movehl_ps(vmax, vmax));
    vmax = _mm_max_ss(vmax, _mm_shuffle_ps(vmax, vmax, 1));
    float max = _mm_cvtss_f32(vmax);
    for (; j < n; j++) max = fabsf(x[j]) > max ? fabsf(x[j]) : max;
    return max;
}

void quant_activations(int16_t *q, float *scales, const float *x, int n, int group_size) {
    for (int g = 0; g * group_size < n; g++) {
        const float *xg = x + (long)g * group_size;
        int16_t *qg = q + (long)g * group_size;
        float max = group_absmax(xg, group_size);
        float inv = max > 0.0f ? 127.0f / max : 0.0f;
        scales[g] = max / 127.0f;
        __m128 iv = _mm_set1_ps(inv);
        int j = 0;
        /* cvtps2dq rounds to nearest even (default MXCSR); |x * inv| <= 127
         * up to rounding, so packs never saturates past 127. */
        for (; j + 8 <= group_size; j += 8) {
            __m128i lo = _mm_cvtps_epi32(_mm_mul_ps(_mm_loadu_ps(xg + j), iv));
            __m128i hi = _mm_cvtps_epi32(_mm_mul_ps(_mm_loadu_ps(xg + j + 4), iv));
            _mm_storeu_si128((__m128i *)(qg + j), _mm_packs_epi32(lo, hi));
        }
        for (; j < group_size; j++) qg[j] = (int16_t)_mm_cvtss_si32(_mm_set_ss(xg[j] * inv));
    }
}

/* round-half-away(v) as (int8_t)(int)roundf(v), four at a time: |v|
 * truncated, plus one when the dropped fraction (exact: |v| < 2^23 here, and
 * NaN gives 0 like the scalar cast) is at least one half. */
static inline __m128i round_half_away_i8(__m128 v) {
    const __m128 sign = _mm_set1_ps(-0.0f);
    __m128 a = _mm_andnot_ps(sign, v);
    __m128i t = _mm_cvttps_epi32(a);
    __m128 frac = _mm_sub_ps(a, _mm_cvtepi32_ps(t));
    t = _mm_sub_epi32(t, _mm_castps_si128(_mm_cmpge_ps(frac, _mm_set1_ps(0.5f))));
    __m128i neg = _mm_srai_epi32(_mm_castps_si128(v), 31);
    t = _mm_sub_epi32(_mm_xor_si128(t, neg), neg);
    return _mm_srai_epi32(_mm_slli_epi32(t, 24), 24); /* the int8_t cast: low byte, sign-extended */
}

void quant_weights(int8_t *q, float *scales, const float *w, size_t count, int group_size) {
    for (size_t g = 0; g * (size_t)group_size < count; g++) {
        const float *wg = w + g * group_size;
        int8_t *qg = q + g * group_size;
        float max = group_absmax(wg, group_size);
        float scale = max / 127.0f;
        scales[g] = scale;
        if (!(scale > 0.0f)) {
            for (int j = 0; j < group_size; j++) qg[j] = 0;
            continue;
        }
        /* divps divides exactly like the scalar w / scale. */
        __m128 sv = _mm_set1_ps(scale);
        int j = 0;
        for (; j + 8 <= group_size; j += 8) {
            __m128i lo = round_half_away_i8(_mm_div_ps(_mm_loadu_ps(wg + j), sv));
            __m128i hi = round_half_away_i8(_mm_div_ps(_mm_loadu_ps(wg + j + 4), sv));
            __m128i b = _mm_packs_epi16(_mm_packs_epi32(lo, hi), _mm_setzero_si128());
            _mm_storel_epi64((__m128i *)(qg + j), b);
        }
        for (; j < group_size; j++) qg[j] = (int8_t)(int)roundf(wg[j] / scale);
    }
}
