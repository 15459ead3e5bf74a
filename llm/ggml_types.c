/* ggml_types.c - type table, half/bfloat conversion, block decoding,
 * dequantisation and the scalar reference dot products. Every block type is
 * decoded the same way: integer values q plus, per 16 (or 32) values, a
 * float scale and a float min, value = scale * q - min. The dot products
 * use the same decoding against int8 activations, so dequantisation and
 * matmul cannot disagree about the layout. */
#include "llm/ggml_types.h"

#include "lib/math.h"
#include "lib/string.h"

static const GgmlTypeInfo type_table[GGML_TYPE_LIMIT] = {
    [GGML_TYPE_F32] = {"F32", 1, 4, 1, ACT_F32},       [GGML_TYPE_F16] = {"F16", 1, 2, 1, ACT_F32},
    [GGML_TYPE_BF16] = {"BF16", 1, 2, 1, ACT_F32},     [GGML_TYPE_Q4_0] = {"Q4_0", 32, 18, 1, ACT_Q8A},
    [GGML_TYPE_Q4_1] = {"Q4_1", 32, 20, 1, ACT_Q8A},   [GGML_TYPE_Q5_0] = {"Q5_0", 32, 22, 1, ACT_Q8A},
    [GGML_TYPE_Q5_1] = {"Q5_1", 32, 24, 1, ACT_Q8A},   [GGML_TYPE_Q8_0] = {"Q8_0", 32, 34, 1, ACT_Q8A},
    [GGML_TYPE_Q8_1] = {"Q8_1", 32, 36, 0, ACT_Q8A},   [GGML_TYPE_Q2_K] = {"Q2_K", 256, 84, 1, ACT_Q8K},
    [GGML_TYPE_Q3_K] = {"Q3_K", 256, 110, 1, ACT_Q8K}, [GGML_TYPE_Q4_K] = {"Q4_K", 256, 144, 1, ACT_Q8K},
    [GGML_TYPE_Q5_K] = {"Q5_K", 256, 176, 1, ACT_Q8K}, [GGML_TYPE_Q6_K] = {"Q6_K", 256, 210, 1, ACT_Q8K},
    [GGML_TYPE_Q8_K] = {"Q8_K", 256, 292, 0, ACT_Q8K}, [GGML_TYPE_I8] = {"I8", 1, 1, 0, ACT_F32},
    [GGML_TYPE_I16] = {"I16", 1, 2, 0, ACT_F32},       [GGML_TYPE_I32] = {"I32", 1, 4, 0, ACT_F32},
    [GGML_TYPE_I64] = {"I64", 1, 8, 0, ACT_F32},       [GGML_TYPE_F64] = {"F64", 1, 8, 0, ACT_F32},
};

const GgmlTypeInfo *ggml_type_info(uint32_t type) {
    if (type >= GGML_TYPE_LIMIT || !type_table[type].name) return NULL;
    return &type_table[type];
}

const char *ggml_type_name(uint32_t type) {
    const GgmlTypeInfo *ti = ggml_type_info(type);
    return ti ? ti->name : "unknown";
}

uint64_t ggml_row_bytes(uint32_t type, uint64_t n) {
    const GgmlTypeInfo *ti = ggml_type_info(type);
    if (!ti || n % ti->block_elems) return 0;
    return n / ti->block_elems * ti->block_bytes;
}

float ggml_fp16_to_fp32(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000) << 16, exp = (h >> 10) & 0x1f, mant = h & 0x3ff, bits;
    if (exp == 0x1f) {
        bits = sign | 0x7f800000u | (mant << 13);
    } else if (exp == 0) {
        /* Zero or subnormal: mant * 2^-24 is exact in float. */
        float v = (float)mant * (1.0f / 16777216.0f);
        return sign ? -v : v;
    } else {
        bits = sign | ((exp + 112) << 23) | (mant << 13);
    }
    union {
        uint32_t u;
        float f;
    } v = {bits};
    return v.f;
}

uint16_t ggml_fp32_to_fp16(float f) {
    uint32_t x;
    memcpy(&x, &f, 4);
    uint32_t sign = (x >> 16) & 0x8000, abs = x & 0x7fffffffu;
    if (abs >= 0x7f800000u) return (uint16_t)(sign | 0x7c00 | (abs > 0x7f800000u ? 0x200 : 0));
    if (abs >= 0x477ff000u) return (uint16_t)(sign | 0x7c00); /* rounds to infinity */
    if (abs < 0x38800000u) {
        /* Subnormal half: round mant * 2^24 to nearest even. */
        float a;
        memcpy(&a, &abs, 4);
        float scaled = a * 16777216.0f;
        uint32_t q = (uint32_t)scaled;
        float rem = scaled - (float)q;
        if (rem > 0.5f || (rem == 0.5f && (q & 1))) q++;
        return (uint16_t)(sign | q);
    }
    uint32_t mant = abs & 0x7fffff, exp = (abs >> 23) - 112;
    uint32_t h = (exp << 10) | (mant >> 13), rest = mant & 0x1fff;
    if (rest > 0x1000 || (rest == 0x1000 && (h & 1))) h++;
    return (uint16_t)(sign | h);
}

float ggml_bf16_to_fp32(uint16_t h) {
    union {
        uint32_t u;
        float f;
    } v = {(uint32_t)h << 16};
    return v.f;
}

static inline float half(ggml_half h) {
    return ggml_fp16_to_fp32(h);
}

/* ---- block decoding: q[] integers, per-sub-block scale and min ---- */

/* 32-value types: one scale/min for the whole block. */
static void decode_block32(uint32_t type, const void *blk, int8_t *q, float *scale, float *minv) {
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

/* 6-bit scale and min j of a Q4_K/Q5_K block. */
static void scale_min_k4(int j, const uint8_t *s, int *sc, int *m) {
    if (j < 4) {
        *sc = s[j] & 63;
        *m = s[j + 4] & 63;
    } else {
        *sc = (s[j + 4] & 0xf) | ((s[j - 4] >> 6) << 4);
        *m = (s[j + 4] >> 4) | ((s[j] >> 6) << 4);
    }
}

/* 256-value k-quant types: scale/min per 16 values. */
static void decode_block256(uint32_t type, const void *blk, int8_t *q, float *scale, float *minv) {
    switch (type) {
    case GGML_TYPE_Q2_K: {
        const BlockQ2_K *b = blk;
        float d = half(b->d), dmin = half(b->dmin);
        for (int n = 0; n < 2; n++) {
            const uint8_t *qs = b->qs + 32 * n;
            for (int j = 0; j < 4; j++)
                for (int l = 0; l < 32; l++) q[128 * n + 32 * j + l] = (int8_t)((qs[l] >> (2 * j)) & 3);
        }
        for (int s = 0; s < 16; s++) {
            scale[s] = d * (float)(b->scales[s] & 0xf);
            minv[s] = dmin * (float)(b->scales[s] >> 4);
        }
        break;
    }
    case GGML_TYPE_Q3_K: {
        const BlockQ3_K *b = blk;
        float d = half(b->d);
        const uint8_t *s = b->scales;
        for (int i = 0; i < 16; i++) {
            /* Low 4 bits from s[0..7] nibbles, high 2 bits from s[8..11]. */
            int lo = i < 8 ? (s[i] & 0xf) : (s[i - 8] >> 4);
            int hi = (s[8 + (i % 4)] >> (2 * (i / 4))) & 3;
            scale[i] = d * (float)((lo | (hi << 4)) - 32);
            minv[i] = 0;
        }
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
        for (int j = 0; j < 8; j++) {
            int sc, m;
            scale_min_k4(j, scales, &sc, &m);
            scale[2 * j] = scale[2 * j + 1] = d * (float)sc;
            minv[2 * j] = minv[2 * j + 1] = dmin * (float)m;
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
            decode_block32(type, p, q, scale, minv);
            for (int j = 0; j < 32; j++) out[32 * b + j] = scale[0] * (float)q[j] - minv[0];
        } else {
            decode_block256(type, p, q, scale, minv);
            for (int j = 0; j < QK_K; j++) out[QK_K * b + j] = scale[j / 16] * (float)q[j] - minv[j / 16];
        }
    }
}

/* ---- activation quantisation ---- */

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
    int t = (int)v;
    float frac = v - (float)t;
    return t + (frac >= 0.5f) - (frac <= -0.5f);
}

void ggml_quantize_act_q8a(BlockQ8A *out, const float *x, int n) {
    for (int b = 0; b < n / QK32; b++, x += QK32) {
        float amax = 0;
        for (int j = 0; j < QK32; j++) {
            float a = fabsf(x[j]);
            if (a > amax) amax = a;
        }
        /* The scale is held in half precision, as ggml's Q8_0/Q8_1 do. */
        float d = amax / 127.0f, id = d != 0.0f ? 1.0f / d : 0.0f;
        int sum = 0;
        for (int j = 0; j < QK32; j++) {
            int v = round_away(x[j] * id);
            out[b].qs[j] = (int8_t)v;
            sum += v;
        }
        out[b].qsum = sum;
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

/* ---- scalar dot products ---- */

static float dot_f32(const void *row, const void *act, int n) {
    const float *w = row, *x = act;
    float sum = 0;
    for (int i = 0; i < n; i++) sum += w[i] * x[i];
    return sum;
}

static float dot_f16(const void *row, const void *act, int n) {
    const uint8_t *p = row;
    const float *x = act;
    float sum = 0;
    for (int i = 0; i < n; i++) sum += ggml_fp16_to_fp32((uint16_t)(p[2 * i] | p[2 * i + 1] << 8)) * x[i];
    return sum;
}

static float dot_bf16(const void *row, const void *act, int n) {
    const uint8_t *p = row;
    const float *x = act;
    float sum = 0;
    for (int i = 0; i < n; i++) sum += ggml_bf16_to_fp32((uint16_t)(p[2 * i] | p[2 * i + 1] << 8)) * x[i];
    return sum;
}

#define DOT32(NAME, TYPE, SIZE)                                                                              \
    static float NAME(const void *row, const void *act, int n) {                                             \
        const uint8_t *p = row;                                                                              \
        const BlockQ8A *a = act;                                                                             \
        int8_t q[QK32];                                                                                      \
        float scale, minv, sum = 0;                                                                          \
        for (int b = 0; b < n / QK32; b++, p += SIZE) {                                                      \
            decode_block32(TYPE, p, q, &scale, &minv);                                                       \
            int isum = 0;                                                                                    \
            for (int j = 0; j < QK32; j++) isum += q[j] * a[b].qs[j];                                        \
            sum += scale * a[b].d * (float)isum - minv * a[b].s;                                             \
        }                                                                                                    \
        return sum;                                                                                          \
    }
DOT32(dot_q4_0, GGML_TYPE_Q4_0, 18)
DOT32(dot_q4_1, GGML_TYPE_Q4_1, 20)
DOT32(dot_q5_0, GGML_TYPE_Q5_0, 22)
DOT32(dot_q5_1, GGML_TYPE_Q5_1, 24)
DOT32(dot_q8_0, GGML_TYPE_Q8_0, 34)

#define DOTK(NAME, TYPE, SIZE)                                                                               \
    static float NAME(const void *row, const void *act, int n) {                                             \
        const uint8_t *p = row;                                                                              \
        const BlockQ8K *a = act;                                                                             \
        int8_t q[QK_K];                                                                                      \
        float scale[16], minv[16], sum = 0;                                                                  \
        for (int b = 0; b < n / QK_K; b++, p += SIZE) {                                                      \
            decode_block256(TYPE, p, q, scale, minv);                                                        \
            float block = 0;                                                                                 \
            for (int s = 0; s < 16; s++) {                                                                   \
                int isum = 0;                                                                                \
                for (int j = 0; j < 16; j++) isum += q[16 * s + j] * a[b].qs[16 * s + j];                    \
                block += scale[s] * (float)isum - minv[s] * (float)a[b].bsums[s];                            \
            }                                                                                                \
            sum += a[b].d * block;                                                                           \
        }                                                                                                    \
        return sum;                                                                                          \
    }
DOTK(dot_q2_k, GGML_TYPE_Q2_K, 84)
DOTK(dot_q3_k, GGML_TYPE_Q3_K, 110)
DOTK(dot_q4_k, GGML_TYPE_Q4_K, 144)
DOTK(dot_q5_k, GGML_TYPE_Q5_K, 176)
DOTK(dot_q6_k, GGML_TYPE_Q6_K, 210)

ggml_vec_dot_fn ggml_vec_dot_scalar(uint32_t type) {
    switch (type) {
    case GGML_TYPE_F32:
        return dot_f32;
    case GGML_TYPE_F16:
        return dot_f16;
    case GGML_TYPE_BF16:
        return dot_bf16;
    case GGML_TYPE_Q4_0:
        return dot_q4_0;
    case GGML_TYPE_Q4_1:
        return dot_q4_1;
    case GGML_TYPE_Q5_0:
        return dot_q5_0;
    case GGML_TYPE_Q5_1:
        return dot_q5_1;
    case GGML_TYPE_Q8_0:
        return dot_q8_0;
    case GGML_TYPE_Q2_K:
        return dot_q2_k;
    case GGML_TYPE_Q3_K:
        return dot_q3_k;
    case GGML_TYPE_Q4_K:
        return dot_q4_k;
    case GGML_TYPE_Q5_K:
        return dot_q5_k;
    case GGML_TYPE_Q6_K:
        return dot_q6_k;
    default:
        return NULL;
    }
}
