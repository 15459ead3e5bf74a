/* ggml_act_quant.c - activations quantised to int8 blocks for the integer
 * dot products: Q8A (32 values, ggml's Q8_0/Q8_1 rounding) and Q8K (256
 * values, ggml's Q8_K rounding). The SIMD quantisers (llm/compute/) give these
 * bytes exactly. */
#include "lib/math.h"
#include "lib/string.h"
#include "llm/tensor/ggml_types.h"

/* Round to nearest, ties to even, for |v| < 2^22. */
static inline int nearest_int(float v) {
    union {
        float f;
        int32_t i;
    } u = {v + 12582912.0f};
    return (u.i & 0x007fffff) - 0x00400000;
}

/* roundf (halves away from zero) for |v| < 2^23, inline: v minus its
 * truncation is exact, so the comparison decides like roundf does. */
static inline int round_away(float v) {
    if (!(fabsf(v) < 8388608.0f)) return 0; /* NaN (a model's non-finite weights): defined, not UB */
    int t = (int)v;
    float frac = v - (float)t;
    return t + (frac >= 0.5f) - (frac <= -0.5f);
}

static float ggml_quantize_q8_0_block(int8_t *qs, const float *x) {
    float amax = 0;
    for (int j = 0; j < QK32; j++) {
        float a = fabsf(x[j]);
        if (a > amax) amax = a;
    }
    float id, d = ggml_q8_0_scale(amax, &id);
    for (int j = 0; j < QK32; j++) qs[j] = (int8_t)round_away(x[j] * id);
    return d;
}

void ggml_quantize_row_q8_0(BlockQ8_0 *out, const float *x, size_t n) {
    for (size_t b = 0; b < n / QK32; b++, x += QK32)
        out[b].d = ggml_fp32_to_fp16(ggml_quantize_q8_0_block(out[b].qs, x));
}

void ggml_quantize_act_q8a(BlockQ8A *out, const float *x, int n) {
    for (int b = 0; b < n / QK32; b++, x += QK32) {
        float d = ggml_quantize_q8_0_block(out[b].qs, x);
        int sum = 0;
        for (int j = 0; j < QK32; j++) sum += out[b].qs[j];
        out[b].qsum = sum;
        /* The scale is held in half precision, as ggml's Q8_0/Q8_1 do. */
        out[b].d = ggml_fp16_to_fp32(ggml_fp32_to_fp16(d));
        out[b].s = ggml_fp16_to_fp32(ggml_fp32_to_fp16((float)sum * d));
    }
}

void ggml_quantize_act_q8k(BlockQ8K *out, const float *x, int n) {
    for (int b = 0; b < n / QK_K; b++, x += QK_K) {
        float amax = 0, max = 0;
        for (int j = 0; j < QK_K; j++) {
            float a = fabsf(x[j]);
            if (a > amax) amax = a, max = x[j];
        }
        if (amax == 0.0f) {
            memset(&out[b], 0, sizeof(out[b]));
            continue;
        }
        float iscale = -127.0f / max;
        for (int j = 0; j < QK_K; j++) {
            int v = nearest_int(iscale * x[j]);
            out[b].qs[j] = (int8_t)(v > 127 ? 127 : v < -127 ? -127 : v);
        }
        for (int s = 0; s < QK_K / 16; s++) {
            int sum = 0;
            for (int j = 0; j < 16; j++) sum += out[b].qs[16 * s + j];
            out[b].bsums[s] = (int16_t)sum;
        }
        out[b].d = 1.0f / iscale;
    }
}
