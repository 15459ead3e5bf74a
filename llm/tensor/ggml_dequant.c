/* ggml_dequant.c - the block decoders (see ggml_blocks.h) and the
 * dequantisation of rows built on them. */
#include "lib/string.h"
#include "llm/tensor/ggml_blocks.h"

static inline float half(ggml_half h) {
    return ggml_fp16_to_fp32(h);
}

/* 32-value types: one scale/min for the whole block. */
void ggml_decode_block32(uint32_t type, const void *blk, int8_t *q, float *scale, float *minv) {
    switch (type) {
    case GGML_TYPE_Q4_0: {
        const BlockQ4_0 *b = blk;
        for (int j = 0; j < 16; j++) {
            q[j] = (int8_t)((b->qs[j] & 0xf) - 8);
            q[j + 16] = (int8_t)((b->qs[j] >> 4) - 8);
        }
        *scale = half(b->d), *minv = 0;
        break;
    }
    case GGML_TYPE_Q4_1: {
        const BlockQ4_1 *b = blk;
        for (int j = 0; j < 16; j++) {
            q[j] = (int8_t)(b->qs[j] & 0xf);
            q[j + 16] = (int8_t)(b->qs[j] >> 4);
        }
        *scale = half(b->d), *minv = -half(b->m);
        break;
    }
    case GGML_TYPE_Q5_0:
    case GGML_TYPE_Q5_1: {
        const uint8_t *qh, *qs;
        if (type == GGML_TYPE_Q5_0) {
            const BlockQ5_0 *b = blk;
            qh = b->qh, qs = b->qs, *scale = half(b->d), *minv = 0;
        } else {
            const BlockQ5_1 *b = blk;
            qh = b->qh, qs = b->qs, *scale = half(b->d), *minv = -half(b->m);
        }
        uint32_t high =
            (uint32_t)qh[0] | (uint32_t)qh[1] << 8 | (uint32_t)qh[2] << 16 | (uint32_t)qh[3] << 24;
        int offset = type == GGML_TYPE_Q5_0 ? 16 : 0;
        for (int j = 0; j < 16; j++) {
            int lo = (qs[j] & 0xf) | (((high >> j) & 1) << 4);
            int hi = (qs[j] >> 4) | (((high >> (j + 16)) & 1) << 4);
            q[j] = (int8_t)(lo - offset);
            q[j + 16] = (int8_t)(hi - offset);
        }
        break;
    }
    case GGML_TYPE_Q8_0: {
        const BlockQ8_0 *b = blk;
        memcpy(q, b->qs, 32);
        *scale = half(b->d), *minv = 0;
        break;
    }
    }
}

/* 256-value k-quant types: scale/min per 16 values. */
void ggml_decode_block256(uint32_t type, const void *blk, int8_t *q, float scale[16], float minv[16]) {
    switch (type) {
    case GGML_TYPE_Q2_K: {
        const BlockQ2_K *b = blk;
        float d = half(b->d), dmin = half(b->dmin);
        int sc[16], m[16];
        q2_k_scales(b, sc, m);
        for (int n = 0; n < 2; n++) {
            const uint8_t *qs = b->qs + 32 * n;
            for (int j = 0; j < 4; j++)
                for (int l = 0; l < 32; l++) q[128 * n + 32 * j + l] = (int8_t)((qs[l] >> (2 * j)) & 3);
        }
        for (int s = 0; s < 16; s++) scale[s] = d * (float)sc[s], minv[s] = dmin * (float)m[s];
        break;
    }
    case GGML_TYPE_Q3_K: {
        const BlockQ3_K *b = blk;
        float d = half(b->d);
        int sc[16];
        q3_k_scales(b->scales, sc);
        for (int i = 0; i < 16; i++) scale[i] = d * (float)sc[i], minv[i] = 0;
        for (int n = 0; n < 2; n++) {
            const uint8_t *qs = b->qs + 32 * n;
            for (int j = 0; j < 4; j++) {
                int bit = 4 * n + j;
                for (int l = 0; l < 32; l++) {
                    int v = (qs[l] >> (2 * j)) & 3;
                    if (!((b->hmask[l] >> bit) & 1)) v -= 4;
                    q[128 * n + 32 * j + l] = (int8_t)v;
                }
            }
        }
        break;
    }
    case GGML_TYPE_Q4_K:
    case GGML_TYPE_Q5_K: {
        const uint8_t *scales, *qs, *qh = NULL;
        float d, dmin;
        if (type == GGML_TYPE_Q4_K) {
            const BlockQ4_K *b = blk;
            scales = b->scales, qs = b->qs, d = half(b->d), dmin = half(b->dmin);
        } else {
            const BlockQ5_K *b = blk;
            scales = b->scales, qs = b->qs, qh = b->qh, d = half(b->d), dmin = half(b->dmin);
        }
        for (int j = 0; j < 4; j++) {
            for (int l = 0; l < 32; l++) {
                int lo = qs[32 * j + l] & 0xf, hi = qs[32 * j + l] >> 4;
                if (qh) {
                    lo |= ((qh[l] >> (2 * j)) & 1) << 4;
                    hi |= ((qh[l] >> (2 * j + 1)) & 1) << 4;
                }
                q[64 * j + l] = (int8_t)lo;
                q[64 * j + 32 + l] = (int8_t)hi;
            }
        }
        uint32_t words[4];
        k4_scales_mins(scales, words);
        const uint8_t *sc = (const uint8_t *)words, *m = sc + 8;
        for (int j = 0; j < 8; j++) {
            scale[2 * j] = scale[2 * j + 1] = d * (float)sc[j];
            minv[2 * j] = minv[2 * j + 1] = dmin * (float)m[j];
        }
        break;
    }
    case GGML_TYPE_Q6_K: {
        const BlockQ6_K *b = blk;
        float d = half(b->d);
        for (int n = 0; n < 2; n++) {
            const uint8_t *ql = b->ql + 64 * n, *qh = b->qh + 32 * n;
            int8_t *y = q + 128 * n;
            for (int l = 0; l < 32; l++) {
                y[l] = (int8_t)(((ql[l] & 0xf) | (((qh[l] >> 0) & 3) << 4)) - 32);
                y[l + 32] = (int8_t)(((ql[l + 32] & 0xf) | (((qh[l] >> 2) & 3) << 4)) - 32);
                y[l + 64] = (int8_t)(((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32);
                y[l + 96] = (int8_t)(((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32);
            }
        }
        for (int s = 0; s < 16; s++) scale[s] = d * (float)b->scales[s], minv[s] = 0;
        break;
    }
    }
}

void ggml_dequantize_row(uint32_t type, const void *row, float *out, int n) {
    const uint8_t *p = row;
    const GgmlTypeInfo *ti = ggml_type_info(type);
    if (type == GGML_TYPE_F32) {
        memcpy(out, row, (size_t)n * 4);
        return;
    }
    if (type == GGML_TYPE_F16 || type == GGML_TYPE_BF16) {
        for (int i = 0; i < n; i++) {
            uint16_t h = (uint16_t)(p[2 * i] | p[2 * i + 1] << 8);
            out[i] = type == GGML_TYPE_F16 ? ggml_fp16_to_fp32(h) : ggml_bf16_to_fp32(h);
        }
        return;
    }
    int8_t q[QK_K];
    float scale[16], minv[16];
    for (int b = 0; b < n / (int)ti->block_elems; b++, p += ti->block_bytes) {
        if (ti->block_elems == QK32) {
            ggml_decode_block32(type, p, q, scale, minv);
            for (int j = 0; j < 32; j++) out[32 * b + j] = scale[0] * (float)q[j] - minv[0];
        } else {
            ggml_decode_block256(type, p, q, scale, minv);
            for (int j = 0; j < QK_K; j++) out[QK_K * b + j] = scale[j / 16] * (float)q[j] - minv[j / 16];
        }
    }
}
