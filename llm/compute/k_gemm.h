/* k_gemm.h - internal: the prefill gemm of the k-quant dots that sum one
 * float per block (k_row_dot: Q2_K, Q3_K and Q5_K in SSE2 and AVX2, Q4_K
 * and Q6_K in SSE2), on ggml_gemm_chunked.h's loop. A block is decoded
 * once (SSE2 code, for both sets) into the forms both steps read: for
 * SSE2 its 256 weights as int16, each already times its sub-block's scale
 * (and offset: q, not the stored unsigned value), so a position costs one
 * int16 multiply-add per value; for AVX2 the unsigned values as bytes and
 * the scales spread to the lanes of maddubs' pair sums, so it costs one
 * maddubs per 32 values. Integer sums are exact and the float of a block
 * is the dot's own expression, so every output is the dot's bits. */
#ifndef LLM_SIMD_K_GEMM_H
#define LLM_SIMD_K_GEMM_H

#include "llm/compute/ggml_gemm_chunked.h"
#include "llm/compute/sse2/ggml_sse2.h"

typedef struct {
    int16_t w[QK_K];          /* SSE2: scale * q, |.| <= 128 * 32 */
    uint8_t u[QK_K];          /* AVX2: the unsigned values (q + offset, 0..63) */
    int16_t scale8[QK_K / 2]; /* AVX2: sub-block s's scale in lanes 8s..8s+7 */
    /* Per 16 values, times that sub-block's bsum: the mins of the types
     * with mins; for the others (AVX2) offset * scale, taken off the sum. */
    int16_t mins[16];
    float d, dmin; /* half_scale of the block's d and dmin */
} KDecoded;

_Static_assert(sizeof(KDecoded) <= CHUNKED_DECODED_BYTES, "a decoded k-quant block fits the buffer");

/* Sub-block s: 16 unsigned values u, whose q is u - offset, and its
 * scale, in both forms. */
static inline void k_store16(KDecoded *d, int s, __m128i u, int offset, int scale) {
    const __m128i zero = _mm_setzero_si128(), off = _mm_set1_epi16((short)offset);
    const __m128i sc = _mm_set1_epi16((short)scale);
    int16_t *w = d->w + 16 * s;
    _mm_storeu_si128((__m128i *)w, _mm_mullo_epi16(_mm_sub_epi16(_mm_unpacklo_epi8(u, zero), off), sc));
    _mm_storeu_si128((__m128i *)(w + 8), _mm_mullo_epi16(_mm_sub_epi16(_mm_unpackhi_epi8(u, zero), off), sc));
    _mm_storeu_si128((__m128i *)(d->u + 16 * s), u);
    _mm_storeu_si128((__m128i *)(d->scale8 + 8 * s), sc);
    if (offset) d->mins[s] = (int16_t)(offset * scale);
}

/* Bits `shift`.. of each byte of r, `bits` wide. */
static inline __m128i k_bits(__m128i r, int shift, int bits) {
    return _mm_and_si128(_mm_srli_epi16(r, shift), _mm_set1_epi8((char)((1 << bits) - 1)));
}

/* Values 128 * half + 32 * j + 16 * k (k = 0, 1) of a Q2_K/Q3_K block sit
 * in bits 2j of qs[32 * half + 16 * k + i]: sub-block 8 * half + 2j + k. */
STEP void q2_k_decode(const uint8_t *block, uint8_t *out) {
    const BlockQ2_K *b = (const BlockQ2_K *)block;
    KDecoded *d = (KDecoded *)out;
    for (int half = 0; half < 2; half++)
        for (int k = 0; k < 2; k++) {
            __m128i r = load16(b->qs + 32 * half + 16 * k);
            for (int j = 0; j < 4; j++) {
                int s = 8 * half + 2 * j + k;
                k_store16(d, s, k_bits(r, 2 * j, 2), 0, b->scales[s] & 0xf);
                d->mins[s] = (int16_t)(b->scales[s] >> 4);
            }
        }
    d->d = half_scale(b->d), d->dmin = half_scale(b->dmin);
}

/* Q3_K: the two low bits plus 4 * the hmask bit (4 * half + j) is q + 4. */
STEP void q3_k_decode(const uint8_t *block, uint8_t *out) {
    const BlockQ3_K *b = (const BlockQ3_K *)block;
    KDecoded *d = (KDecoded *)out;
    int sc[16];
    q3_k_scales(b->scales, sc);
    for (int half = 0; half < 2; half++)
        for (int k = 0; k < 2; k++) {
            __m128i r = load16(b->qs + 32 * half + 16 * k), hm = load16(b->hmask + 16 * k);
            for (int j = 0; j < 4; j++) {
                int s = 8 * half + 2 * j + k;
                __m128i u = _mm_or_si128(k_bits(r, 2 * j, 2), _mm_slli_epi16(k_bits(hm, 4 * half + j, 1), 2));
                k_store16(d, s, u, 4, sc[s]);
            }
        }
    d->d = half_scale(b->d), d->dmin = 0;
}

/* Q4_K and Q5_K (fifth: qh, else NULL): values 64j..64j+31 are the low
 * nibbles of qs[32j..32j+31] with scale and min 2j, the next 32 the high
 * nibbles with 2j+1; the fifth bit of the low ones is bit 2j of qh[i],
 * of the high ones bit 2j+1. */
static inline __attribute__((always_inline)) void k4_decode(const uint8_t *qs, const uint8_t *qh,
                                                            const uint8_t scales[K_SCALE_SIZE], KDecoded *d) {
    uint32_t words[4];
    k4_scales_mins(scales, words);
    const uint8_t *sc = (const uint8_t *)words, *m = sc + 8;
    for (int j = 0; j < 4; j++)
        for (int k = 0; k < 2; k++) {
            __m128i r = load16(qs + 32 * j + 16 * k);
            __m128i lo = k_bits(r, 0, 4), hi = k_bits(r, 4, 4);
            if (qh) {
                __m128i h = load16(qh + 16 * k);
                lo = _mm_or_si128(lo, _mm_slli_epi16(k_bits(h, 2 * j, 1), 4));
                hi = _mm_or_si128(hi, _mm_slli_epi16(k_bits(h, 2 * j + 1, 1), 4));
            }
            k_store16(d, 4 * j + k, lo, 0, sc[2 * j]);
            k_store16(d, 4 * j + 2 + k, hi, 0, sc[2 * j + 1]);
            d->mins[4 * j + k] = m[2 * j], d->mins[4 * j + 2 + k] = m[2 * j + 1];
        }
}

STEP void q4_k_decode(const uint8_t *block, uint8_t *out) {
    const BlockQ4_K *b = (const BlockQ4_K *)block;
    KDecoded *d = (KDecoded *)out;
    k4_decode(b->qs, NULL, b->scales, d);
    d->d = half_scale(b->d), d->dmin = half_scale(b->dmin);
}

STEP void q5_k_decode(const uint8_t *block, uint8_t *out) {
    const BlockQ5_K *b = (const BlockQ5_K *)block;
    KDecoded *d = (KDecoded *)out;
    k4_decode(b->qs, b->qh, b->scales, d);
    d->d = half_scale(b->d), d->dmin = half_scale(b->dmin);
}

/* The 6-bit values (0..63, unsigned) of one Q6_K half-block (128 values),
 * in order: out[s] holds values 16s..16s+15. */
static inline void q6_decode_half(const uint8_t *ql, const uint8_t *qh, __m128i out[8]) {
    const __m128i m4 = _mm_set1_epi8(0x0f), m30 = _mm_set1_epi8(0x30);
    for (int k = 0; k < 2; k++) {
        __m128i l0 = load16(ql + 16 * k), l1 = load16(ql + 32 + 16 * k), h = load16(qh + 16 * k);
        out[0 + k] = _mm_or_si128(_mm_and_si128(l0, m4), _mm_and_si128(_mm_slli_epi16(h, 4), m30));
        out[2 + k] = _mm_or_si128(_mm_and_si128(l1, m4), _mm_and_si128(_mm_slli_epi16(h, 2), m30));
        out[4 + k] = _mm_or_si128(_mm_and_si128(_mm_srli_epi16(l0, 4), m4), _mm_and_si128(h, m30));
        out[6 + k] =
            _mm_or_si128(_mm_and_si128(_mm_srli_epi16(l1, 4), m4), _mm_and_si128(_mm_srli_epi16(h, 2), m30));
    }
}

STEP void q6_k_decode(const uint8_t *block, uint8_t *out) {
    const BlockQ6_K *b = (const BlockQ6_K *)block;
    KDecoded *d = (KDecoded *)out;
    for (int half = 0; half < 2; half++) {
        __m128i v[8];
        q6_decode_half(b->ql + 64 * half, b->qh + 32 * half, v);
        for (int s = 0; s < 8; s++) k_store16(d, 8 * half + s, v[s], 32, b->scales[8 * half + s]);
    }
    d->d = half_scale(b->d), d->dmin = 0;
}

/* The dot's float for one block from its integer sums: k_block_sum's
 * expression for the types with mins, ad * d * isum for the others. */
static inline float k_decoded_sum(const KDecoded *d, float ad, int isum, int msum, int has_mins) {
    return has_mins ? ad * (d->d * (float)isum - d->dmin * (float)msum) : ad * d->d * (float)isum;
}

/* SSE2: the activations widened once, then R rows' sums (state: a float
 * per row). */
static inline __attribute__((always_inline)) void k_step_sse2(const uint8_t *decoded, const void *act,
                                                              uint8_t *state, int R, int has_mins) {
    const BlockQ8K *a = act;
    __m128i x[32];
    for (int g = 0; g < 16; g++) sse2_widen(load16(a->qs + 16 * g), &x[2 * g], &x[2 * g + 1]);
    for (int r = 0; r < R; r++) {
        const KDecoded *d = (const KDecoded *)(decoded + (size_t)r * CHUNKED_DECODED_BYTES);
        __m128i s = _mm_setzero_si128();
        for (int g = 0; g < 32; g++) s = _mm_add_epi32(s, _mm_madd_epi16(load16(d->w + 8 * g), x[g]));
        int msum = 0;
        if (has_mins)
            msum = sse2_hsum_i32(_mm_add_epi32(_mm_madd_epi16(load16(d->mins), load16(a->bsums)),
                                               _mm_madd_epi16(load16(d->mins + 8), load16(a->bsums + 8))));
        float *acc = (float *)(state + (size_t)r * sizeof(float));
        *acc += k_decoded_sum(d, a->d, sse2_hsum_i32(s), msum, has_mins);
    }
}

/* AVX2: the same sums from the unsigned values, 32 per maddubs (pairs
 * within int16: 63 * 127 * 2), the offsets taken off through the bsums. */
TARGET_AVX2 static inline __attribute__((always_inline)) void
k_step_avx2(const uint8_t *decoded, const void *act, uint8_t *state, int R, int has_mins) {
    const BlockQ8K *a = act;
    __m256i x[8];
    for (int g = 0; g < 8; g++) x[g] = _mm256_loadu_si256((const __m256i *)(a->qs + 32 * g));
    const __m256i bsums = _mm256_loadu_si256((const __m256i *)a->bsums);
    for (int r = 0; r < R; r++) {
        const KDecoded *d = (const KDecoded *)(decoded + (size_t)r * CHUNKED_DECODED_BYTES);
        __m256i s = _mm256_setzero_si256();
        for (int g = 0; g < 8; g++) {
            __m256i p = _mm256_maddubs_epi16(_mm256_loadu_si256((const __m256i *)(d->u + 32 * g)), x[g]);
            s = _mm256_add_epi32(
                s, _mm256_madd_epi16(p, _mm256_loadu_si256((const __m256i *)(d->scale8 + 16 * g))));
        }
        __m256i m = _mm256_madd_epi16(_mm256_loadu_si256((const __m256i *)d->mins), bsums);
        int csum = sse2_hsum_i32(_mm_add_epi32(_mm256_castsi256_si128(m), _mm256_extracti128_si256(m, 1)));
        int isum = sse2_hsum_i32(_mm_add_epi32(_mm256_castsi256_si128(s), _mm256_extracti128_si256(s, 1)));
        float *acc = (float *)(state + (size_t)r * sizeof(float));
        *acc += has_mins ? k_decoded_sum(d, a->d, isum, csum, 1) : k_decoded_sum(d, a->d, isum - csum, 0, 0);
    }
}

static inline float k_finish(const uint8_t *state) {
    return *(const float *)state;
}

#endif
