/* ggml_blocks.h - internal: how a quantised block is read, shared by the
 * dequantiser, the scalar reference dots and the SIMD dots (llm/compute/), so
 * they cannot disagree about a layout. Every block type decodes to integer
 * values q plus, per 16 (or 32) values, a float scale and a float min:
 * value = scale * q - min. */
#ifndef LLM_GGML_BLOCKS_H
#define LLM_GGML_BLOCKS_H

#include <stdint.h>

#include "llm/tensor/ggml_types.h"

/* Half to float for block scales, inlined (exact for normal and subnormal
 * values; inf/nan come out as large finite values, never in a sane file).
 * No float arithmetic on subnormals: small k-quant scales (dmin often) are
 * half subnormals, and a multiply with a subnormal operand costs a
 * microcode assist of ~100 cycles on Intel cores. */
static inline float half_scale(uint16_t h) {
    uint32_t mag = h & 0x7fff;
    union {
        uint32_t u;
        float f;
    } v;
    if (mag < 0x400) {
        v.f = (float)(int)mag * 5.9604644775390625e-08f; /* 2^-24, an exact integer conversion */
    } else {
        v.u = (mag << 13) + (112u << 23); /* rebias the exponent 15 -> 127 */
    }
    v.u |= (uint32_t)(h & 0x8000) << 16;
    return v.f;
}

/* The one decoder of the 6-bit scales and mins of a Q4_K/Q5_K block (one
 * pair per 32 values), as 16 bytes: scales 0-7 in bytes 0-7, mins 0-7 in
 * bytes 8-15. Values 0-3 are the low 6 bits of bytes 0-3 (scales) and 4-7
 * (mins); values 4-7 the nibbles of bytes 8-11 plus the top 2 bits of
 * bytes 0-7. Four words, so SIMD code can load them as a vector. */
static inline void k4_scales_mins(const uint8_t s[K_SCALE_SIZE], uint32_t out[4]) {
    uint32_t w0, w1, w2;
    __builtin_memcpy(&w0, s, 4), __builtin_memcpy(&w1, s + 4, 4), __builtin_memcpy(&w2, s + 8, 4);
    out[0] = w0 & 0x3f3f3f3f;
    out[1] = (w2 & 0x0f0f0f0f) | (((w0 >> 6) & 0x03030303) << 4);
    out[2] = w1 & 0x3f3f3f3f;
    out[3] = ((w2 >> 4) & 0x0f0f0f0f) | (((w1 >> 6) & 0x03030303) << 4);
}

/* The signed 6-bit scales of a Q3_K block (one per 16 values): the low 4
 * bits from the nibbles of bytes 0-7, the high 2 bits from bytes 8-11. */
static inline void q3_k_scales(const uint8_t s[K_SCALE_SIZE], int sc[16]) {
    for (int i = 0; i < 16; i++) {
        int lo = i < 8 ? (s[i] & 0xf) : (s[i - 8] >> 4);
        int hi = (s[8 + (i % 4)] >> (2 * (i / 4))) & 3;
        sc[i] = (lo | (hi << 4)) - 32;
    }
}

/* The 4-bit scales and mins of a Q2_K block (one pair per 16 values). */
static inline void q2_k_scales(const BlockQ2_K *b, int sc[16], int m[16]) {
    for (int s = 0; s < 16; s++) sc[s] = b->scales[s] & 0xf, m[s] = b->scales[s] >> 4;
}

/* A 32-value block (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0): q[32], one scale, one
 * min (ggml_dequant.c). */
void ggml_decode_block32(uint32_t type, const void *blk, int8_t *q, float *scale, float *minv);
/* A 256-value k-quant block: q[256], a scale and a min per 16 values. */
void ggml_decode_block256(uint32_t type, const void *blk, int8_t *q, float scale[16], float minv[16]);

#endif
