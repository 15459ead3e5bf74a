/* ggml_sse2.h - internal: the SSE2 helpers of the ggml dot products
 * (*_sse2.c), including the four-rows-per-pass matmul loop. */
#ifndef LLM_SIMD_GGML_SSE2_H
#define LLM_SIMD_GGML_SSE2_H

#include "llm/compute/ggml_simd.h"

static inline __m128i load16(const void *p) {
    return _mm_loadu_si128((const __m128i *)p);
}

static inline float sse2_hsum_ps(__m128 v) {
    v = _mm_add_ps(v, _mm_movehl_ps(v, v));
    v = _mm_add_ss(v, _mm_shuffle_ps(v, v, 1));
    return _mm_cvtss_f32(v);
}

static inline int sse2_hsum_i32(__m128i v) {
    v = _mm_add_epi32(v, _mm_shuffle_epi32(v, _MM_SHUFFLE(1, 0, 3, 2)));
    v = _mm_add_epi32(v, _mm_shuffle_epi32(v, _MM_SHUFFLE(2, 3, 0, 1)));
    return _mm_cvtsi128_si32(v);
}

/* 16 signed bytes times 16 signed bytes: four int32 partial sums. */
static inline __m128i sse2_dot16(__m128i a, __m128i b) {
    __m128i zero = _mm_setzero_si128();
    __m128i sa = _mm_cmpgt_epi8(zero, a), sb = _mm_cmpgt_epi8(zero, b);
    __m128i lo = _mm_madd_epi16(_mm_unpacklo_epi8(a, sa), _mm_unpacklo_epi8(b, sb));
    __m128i hi = _mm_madd_epi16(_mm_unpackhi_epi8(a, sa), _mm_unpackhi_epi8(b, sb));
    return _mm_add_epi32(lo, hi);
}

/* 16 signed bytes a times 16 signed bytes b, each product times scale:
 * four int32 sums. |a*b| must fit int16 (|a| <= 63 here). */
static inline __m128i sse2_dot16_scaled(__m128i a, __m128i b, __m128i scale16) {
    __m128i zero = _mm_setzero_si128();
    __m128i sa = _mm_cmpgt_epi8(zero, a), sb = _mm_cmpgt_epi8(zero, b);
    __m128i plo = _mm_mullo_epi16(_mm_unpacklo_epi8(a, sa), _mm_unpacklo_epi8(b, sb));
    __m128i phi = _mm_mullo_epi16(_mm_unpackhi_epi8(a, sa), _mm_unpackhi_epi8(b, sb));
    return _mm_add_epi32(_mm_madd_epi16(plo, scale16), _mm_madd_epi16(phi, scale16));
}

/* The 32 4-bit values of a Q4_x/Q5_x block: low nibbles (values 0..15)
 * then high nibbles (16..31). */
static inline void sse2_nibbles(const uint8_t *qs, __m128i *lo, __m128i *hi) {
    const __m128i mask = _mm_set1_epi8(0x0f);
    __m128i raw = load16(qs);
    *lo = _mm_and_si128(raw, mask);
    *hi = _mm_and_si128(_mm_srli_epi16(raw, 4), mask);
}

/* Bit j of a 32-bit mask as 0x10 in byte j (lo: bytes 0..15, hi: 16..31):
 * the fifth bit of Q5_0/Q5_1 values. */
static inline void sse2_fifth_bits(const uint8_t qh[4], __m128i *lo, __m128i *hi) {
    uint32_t bits = (uint32_t)qh[0] | (uint32_t)qh[1] << 8 | (uint32_t)qh[2] << 16 | (uint32_t)qh[3] << 24;
    __m128i v = _mm_cvtsi32_si128((int)bits);
    v = _mm_unpacklo_epi8(v, v);  /* b0 b0 b1 b1 b2 b2 b3 b3 */
    v = _mm_unpacklo_epi16(v, v); /* b0 x4, b1 x4, b2 x4, b3 x4 */
    const __m128i select = _mm_set1_epi64x((long long)0x8040201008040201ull);
    const __m128i five = _mm_set1_epi8(0x10);
    __m128i l = _mm_unpacklo_epi32(v, v), h = _mm_unpackhi_epi32(v, v); /* b0 x8 b1 x8 / b2 x8 b3 x8 */
    *lo = _mm_and_si128(_mm_cmpeq_epi8(_mm_and_si128(l, select), select), five);
    *hi = _mm_and_si128(_mm_cmpeq_epi8(_mm_and_si128(h, select), select), five);
}

/* ---- four rows per pass (Q8_0, Q4_0) ----
 * The emulated machines this set is for run integer SIMD fast and float
 * SIMD slowly: the activations are widened to int16 once per block for the
 * four rows, and the four rows' block sums share one int->float
 * conversion, one scale multiply and one add. Rows past count repeat the
 * last one (computed and dropped). */

/* 16 signed bytes widened to int16: lo holds bytes 0-7, hi bytes 8-15. */
static inline void sse2_widen(__m128i v, __m128i *lo, __m128i *hi) {
    __m128i sign = _mm_cmpgt_epi8(_mm_setzero_si128(), v);
    *lo = _mm_unpacklo_epi8(v, sign);
    *hi = _mm_unpackhi_epi8(v, sign);
}

/* The 32 activations of a block as four vectors of eight int16. */
static inline void sse2_widen32(const int8_t *qs, __m128i x[4]) {
    sse2_widen(load16(qs), &x[0], &x[1]);
    sse2_widen(load16(qs + 16), &x[2], &x[3]);
}

/* Four int16 vectors of weights (values 0-7, 8-15, 16-23, 24-31) times the
 * widened activations: four int32 partial sums. */
static inline __m128i sse2_dot32_i16(__m128i w0, __m128i w1, __m128i w2, __m128i w3, const __m128i x[4]) {
    __m128i p0 = _mm_madd_epi16(w0, x[0]), p1 = _mm_madd_epi16(w1, x[1]);
    __m128i p2 = _mm_madd_epi16(w2, x[2]), p3 = _mm_madd_epi16(w3, x[3]);
    return _mm_add_epi32(_mm_add_epi32(p0, p1), _mm_add_epi32(p2, p3));
}

/* Lane r: the total of row r's four int32 partial sums. */
static inline __m128i sse2_row_totals(const __m128i s[4]) {
    __m128i a = _mm_add_epi32(_mm_unpacklo_epi32(s[0], s[1]), _mm_unpackhi_epi32(s[0], s[1]));
    __m128i b = _mm_add_epi32(_mm_unpacklo_epi32(s[2], s[3]), _mm_unpackhi_epi32(s[2], s[3]));
    return _mm_add_epi32(_mm_unpacklo_epi64(a, b), _mm_unpackhi_epi64(a, b));
}

/* The half scales at offset off of four rows, times the activation scale. */
static inline __m128 sse2_four_scales(const uint8_t *const w[4], size_t off, float ad) {
    uint16_t h[4];
    for (int r = 0; r < 4; r++) __builtin_memcpy(&h[r], w[r] + off, 2);
    return _mm_mul_ps(_mm_setr_ps(half_scale(h[0]), half_scale(h[1]), half_scale(h[2]), half_scale(h[3])),
                      _mm_set1_ps(ad));
}

/* A type's step: lane r = row r's integer block sum at offset off. */
typedef __m128i (*sse2_totals_fn)(const uint8_t *const w[4], size_t off, const BlockQ8A *a);

/* The rows four at a time: per block, the totals as floats times the four
 * rows' scales (inlined for each type: totals is a constant). */
static inline __attribute__((always_inline)) void sse2_matmul_rows(float *out, const uint8_t *rows,
                                                                   size_t row_bytes, const BlockQ8A *a, int n,
                                                                   int count, size_t block_bytes,
                                                                   sse2_totals_fn totals) {
    for (int i = 0; i < count; i += 4) {
        const uint8_t *w[4];
        for (int r = 0; r < 4; r++) w[r] = rows + (size_t)(i + r < count ? i + r : count - 1) * row_bytes;
        __m128 acc = _mm_setzero_ps();
        for (int b = 0; b < n / QK32; b++) {
            size_t off = (size_t)b * block_bytes;
            __m128 sums = _mm_cvtepi32_ps(totals(w, off, &a[b]));
            acc = _mm_add_ps(acc, _mm_mul_ps(sums, sse2_four_scales(w, off, a[b].d)));
        }
        float sums[4];
        _mm_storeu_ps(sums, acc);
        for (int r = 0; r < 4 && i + r < count; r++) out[i + r] = sums[r];
    }
}

/* ---- rows times positions (prefill), Q8_0 and Q4_0 ----
 * A type gives its weights as int16 (decode: one row's block, values 0-7,
 * 8-15, 16-23, 24-31) and the correction of the four totals (finish); its
 * totals step is the two together. The gemm decodes each block of four rows
 * once, with their half scales, and runs every position of a chunk over
 * them; each position's float arithmetic is sse2_matmul_rows' own, so its
 * outputs are the matmul's bits. */
typedef void (*sse2_decode_fn)(const uint8_t *block, __m128i v[4]);
typedef __m128i (*sse2_finish_fn)(__m128i totals, const BlockQ8A *a);

/* Lane r = row r's integer block sum at offset off (a type's totals step). */
static inline __attribute__((always_inline)) __m128i sse2_decoded_totals(const uint8_t *const w[4],
                                                                         size_t off, const BlockQ8A *a,
                                                                         sse2_decode_fn decode,
                                                                         sse2_finish_fn finish) {
    __m128i x[4], s[4];
    sse2_widen32(a->qs, x);
    for (int r = 0; r < 4; r++) {
        __m128i v[4];
        decode(w[r] + off, v);
        s[r] = sse2_dot32_i16(v[0], v[1], v[2], v[3], x);
    }
    return finish(sse2_row_totals(s), a);
}

/* Positions per chunk: their accumulators (one register each) stay in L1. */
#define SSE2_GEMM_CHUNK 64

static inline __attribute__((always_inline)) void
sse2_gemm_rows(float *out, size_t out_stride, const uint8_t *rows, size_t row_bytes, const void *act,
               size_t act_stride, int n, int count, int batch, size_t block_bytes, sse2_decode_fn decode,
               sse2_finish_fn finish) {
    __m128 acc[SSE2_GEMM_CHUNK];
    for (int i = 0; i < count; i += 4) {
        const uint8_t *w[4];
        for (int r = 0; r < 4; r++) w[r] = rows + (size_t)(i + r < count ? i + r : count - 1) * row_bytes;
        for (int p0 = 0; p0 < batch; p0 += SSE2_GEMM_CHUNK) {
            int chunk = batch - p0 < SSE2_GEMM_CHUNK ? batch - p0 : SSE2_GEMM_CHUNK;
            const uint8_t *a0 = (const uint8_t *)act + (size_t)p0 * act_stride;
            for (int p = 0; p < chunk; p++) acc[p] = _mm_setzero_ps();
            for (int b = 0; b < n / QK32; b++) {
                size_t off = (size_t)b * block_bytes;
                __m128i v[4][4];
                uint16_t h[4];
                for (int r = 0; r < 4; r++) {
                    decode(w[r] + off, v[r]);
                    __builtin_memcpy(&h[r], w[r] + off, 2);
                }
                __m128 hs =
                    _mm_setr_ps(half_scale(h[0]), half_scale(h[1]), half_scale(h[2]), half_scale(h[3]));
                for (int p = 0; p < chunk; p++) {
                    const BlockQ8A *a = (const BlockQ8A *)(a0 + (size_t)p * act_stride) + b;
                    __m128i x[4], s[4];
                    sse2_widen32(a->qs, x);
                    for (int r = 0; r < 4; r++) s[r] = sse2_dot32_i16(v[r][0], v[r][1], v[r][2], v[r][3], x);
                    __m128 sums = _mm_cvtepi32_ps(finish(sse2_row_totals(s), a));
                    acc[p] = _mm_add_ps(acc[p], _mm_mul_ps(sums, _mm_mul_ps(hs, _mm_set1_ps(a->d))));
                }
            }
            for (int p = 0; p < chunk; p++) {
                float sums[4];
                _mm_storeu_ps(sums, acc[p]);
                for (int r = 0; r < 4 && i + r < count; r++)
                    out[(size_t)(p0 + p) * out_stride + i + r] = sums[r];
            }
        }
    }
}

/* ---- Q4_1, Q5_0, Q5_1: d (and m) halves, Q5's 32 fifth bits, 16 bytes of
 * nibbles ---- */

/* The block's 32 values before any offset (0..15, or 0..31 with the fifth
 * bit): values 0-15 in lo, 16-31 in hi. */
static inline void q4q5_values(const uint8_t *p, int has_min, int has_fifth, __m128i *lo, __m128i *hi) {
    sse2_nibbles(p + 2 + 2 * has_min + 4 * has_fifth, lo, hi);
    if (has_fifth) {
        __m128i flo, fhi;
        sse2_fifth_bits(p + 2 + 2 * has_min, &flo, &fhi);
        *lo = _mm_or_si128(*lo, flo);
        *hi = _mm_or_si128(*hi, fhi);
    }
}

/* The block's scale times the activations' (d * a.d); for the types with a
 * min, m * a.s is added to *min_sum. */
static inline float q4q5_scale(const uint8_t *p, int has_min, const BlockQ8A *a, float *min_sum) {
    uint16_t d, m = 0;
    __builtin_memcpy(&d, p, 2);
    if (has_min) __builtin_memcpy(&m, p + 2, 2), *min_sum += half_scale(m) * a->s;
    return half_scale(d) * a->d;
}

#endif
