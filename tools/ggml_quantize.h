/* ggml_quantize.h - quantising float rows to ggml blocks for the host tools
 * (gguf_convert): Q4_0 exactly as ggml's reference quantiser does (Q8_0 is
 * llm/tensor's ggml_quantize_row_q8_0; both give llama-quantize's bytes), Q4_K and Q6_K by a simpler direct
 * fit (no iterative search: slightly larger error than llama.cpp's). Header only, like file_util.h: every
 * tools/NAME.c is a program of its own. */
#ifndef TOOLS_GGML_QUANTIZE_H
#define TOOLS_GGML_QUANTIZE_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "llm/tensor/ggml_types.h"

static void quant_q4_0(BlockQ4_0 *out, const float *x, uint64_t n) {
    for (uint64_t b = 0; b < n / 32; b++, x += 32) {
        float amax = 0, max = 0;
        for (int j = 0; j < 32; j++)
            if (fabsf(x[j]) > amax) amax = fabsf(x[j]), max = x[j];
        float d = max / -8.0f, id = d ? 1.0f / d : 0.0f;
        out[b].d = ggml_fp32_to_fp16(d);
        for (int j = 0; j < 16; j++) {
            int lo = (int)(x[j] * id + 8.5f), hi = (int)(x[j + 16] * id + 8.5f);
            lo = lo > 15 ? 15 : lo < 0 ? 0 : lo;
            hi = hi > 15 ? 15 : hi < 0 ? 0 : hi;
            out[b].qs[j] = (uint8_t)(lo | hi << 4);
        }
    }
}

/* Q4_K: per 32 values an affine 4-bit grid (scale, min), the 8 scales and
 * mins stored as 6-bit multiples of the block's d and dmin. */
static void quant_q4_k(BlockQ4_K *out, const float *x, uint64_t n) {
    for (uint64_t b = 0; b < n / QK_K; b++, x += QK_K) {
        float scale[8], minv[8], max_scale = 0, max_min = 0;
        for (int j = 0; j < 8; j++) {
            float lo = 0, hi = 0;
            for (int l = 0; l < 32; l++) lo = fminf(lo, x[32 * j + l]), hi = fmaxf(hi, x[32 * j + l]);
            scale[j] = (hi - lo) / 15.0f;
            minv[j] = -lo;
            max_scale = fmaxf(max_scale, scale[j]);
            max_min = fmaxf(max_min, minv[j]);
        }
        uint16_t dh = ggml_fp32_to_fp16(max_scale / 63.0f), mh = ggml_fp32_to_fp16(max_min / 63.0f);
        float d = ggml_fp16_to_fp32(dh), dmin = ggml_fp16_to_fp32(mh);
        int sc[8], mn[8];
        for (int j = 0; j < 8; j++) {
            sc[j] = d ? (int)lroundf(scale[j] / d) : 0;
            mn[j] = dmin ? (int)lroundf(minv[j] / dmin) : 0;
            sc[j] = sc[j] > 63 ? 63 : sc[j];
            mn[j] = mn[j] > 63 ? 63 : mn[j];
        }
        out[b].d = dh;
        out[b].dmin = mh;
        for (int j = 0; j < 4; j++) {
            out[b].scales[j] = (uint8_t)(sc[j] | ((sc[j + 4] >> 4) << 6));
            out[b].scales[j + 4] = (uint8_t)(mn[j] | ((mn[j + 4] >> 4) << 6));
            out[b].scales[j + 8] = (uint8_t)((sc[j + 4] & 0xf) | ((mn[j + 4] & 0xf) << 4));
        }
        uint8_t q[QK_K];
        for (int j = 0; j < 8; j++) {
            float s = d * (float)sc[j], m = dmin * (float)mn[j];
            for (int l = 0; l < 32; l++) {
                int v = s ? (int)lroundf((x[32 * j + l] + m) / s) : 0;
                q[32 * j + l] = (uint8_t)(v > 15 ? 15 : v < 0 ? 0 : v);
            }
        }
        for (int c = 0; c < 4; c++)
            for (int l = 0; l < 32; l++)
                out[b].qs[32 * c + l] = (uint8_t)(q[64 * c + l] | q[64 * c + 32 + l] << 4);
    }
}

/* Q6_K: per 16 values a symmetric 6-bit grid (q - 32) with an int8 scale,
 * the 16 scales multiples of the block's fp16 d. */
static void quant_q6_k(BlockQ6_K *out, const float *x, uint64_t n) {
    for (uint64_t b = 0; b < n / QK_K; b++, x += QK_K) {
        float scale[16], max_scale = 0;
        for (int s = 0; s < 16; s++) {
            float amax = 0, max = 0;
            for (int l = 0; l < 16; l++)
                if (fabsf(x[16 * s + l]) > amax) amax = fabsf(x[16 * s + l]), max = x[16 * s + l];
            scale[s] = max / -32.0f; /* the largest value lands on -32 */
            if (fabsf(scale[s]) > fabsf(max_scale)) max_scale = scale[s];
        }
        uint16_t dh = ggml_fp32_to_fp16(max_scale / -128.0f);
        float d = ggml_fp16_to_fp32(dh);
        uint8_t q[QK_K];
        for (int s = 0; s < 16; s++) {
            int sc = d ? (int)lroundf(scale[s] / d) : 0;
            sc = sc > 127 ? 127 : sc < -128 ? -128 : sc;
            out[b].scales[s] = (int8_t)sc;
            float step = d * (float)sc;
            for (int l = 0; l < 16; l++) {
                int v = step ? (int)lroundf(x[16 * s + l] / step) : 0;
                v = v > 31 ? 31 : v < -32 ? -32 : v;
                q[16 * s + l] = (uint8_t)(v + 32);
            }
        }
        out[b].d = dh;
        for (int h = 0; h < 2; h++) {
            uint8_t *ql = out[b].ql + 64 * h, *qh = out[b].qh + 32 * h;
            const uint8_t *y = q + 128 * h;
            for (int l = 0; l < 32; l++) {
                ql[l] = (uint8_t)((y[l] & 0xf) | (y[l + 64] & 0xf) << 4);
                ql[l + 32] = (uint8_t)((y[l + 32] & 0xf) | (y[l + 96] & 0xf) << 4);
                qh[l] = (uint8_t)((y[l] >> 4) | (y[l + 32] >> 4) << 2 | (y[l + 64] >> 4) << 4 |
                                  (y[l + 96] >> 4) << 6);
            }
        }
    }
}

/* x rounded to bfloat16 (the top half of its fp32 bits), to nearest even;
 * a NaN stays a quiet NaN. */
static inline uint16_t fp32_to_bf16(float x) {
    uint32_t bits;
    memcpy(&bits, &x, 4);
    if ((bits & 0x7fffffffu) > 0x7f800000u) return (uint16_t)(bits >> 16 | 0x40);
    return (uint16_t)((bits + 0x7fffu + (bits >> 16 & 1)) >> 16);
}

/* count values (a whole number of blocks) of x as `type` blocks at out;
 * F32 is copied, F16 and BF16 converted. Returns 0, or -1 for a type it cannot write. */
static inline int quantize_values(uint32_t type, void *out, const float *x, uint64_t count) {
    switch (type) {
    case GGML_TYPE_F32:
        for (uint64_t i = 0; i < count; i++) ((float *)out)[i] = x[i];
        return 0;
    case GGML_TYPE_F16:
        for (uint64_t i = 0; i < count; i++) ((uint16_t *)out)[i] = ggml_fp32_to_fp16(x[i]);
        return 0;
    case GGML_TYPE_BF16:
        for (uint64_t i = 0; i < count; i++) ((uint16_t *)out)[i] = fp32_to_bf16(x[i]);
        return 0;
    case GGML_TYPE_Q8_0:
        ggml_quantize_row_q8_0(out, x, count);
        return 0;
    case GGML_TYPE_Q4_0:
        quant_q4_0(out, x, count);
        return 0;
    case GGML_TYPE_Q4_K:
        quant_q4_k(out, x, count);
        return 0;
    case GGML_TYPE_Q6_K:
        quant_q6_k(out, x, count);
        return 0;
    default:
        return -1;
    }
}

#endif
