/* q4_1_q5_sse2.c - Q4_1, Q5_0 and Q5_1 rows with Q8A activations, SSE2:
 * one loop, values q (nibbles, plus the fifth bit, minus an offset),
 * dot = d * a.d * sum(q x) + m * a.s. */
#include "llm/compute/ggml_gemm_chunked.h"
#include "llm/compute/sse2/ggml_sse2.h"

static inline float dot_q4q5(const uint8_t *p, const BlockQ8A *a, int n, int stride, int has_min,
                             int has_fifth) {
    const __m128i sixteen = _mm_set1_epi8(16);
    __m128 acc = _mm_setzero_ps();
    float min_sum = 0;
    for (int b = 0; b < n / QK32; b++, p += stride) {
        __m128i lo, hi;
        q4q5_values(p, has_min, has_fifth, &lo, &hi);
        if (has_fifth && !has_min) lo = _mm_sub_epi8(lo, sixteen), hi = _mm_sub_epi8(hi, sixteen);
        __m128i s = _mm_add_epi32(sse2_dot16(lo, load16(a[b].qs)), sse2_dot16(hi, load16(a[b].qs + 16)));
        float scale = q4q5_scale(p, has_min, &a[b], &min_sum);
        acc = _mm_add_ps(acc, _mm_mul_ps(_mm_set1_ps(scale), _mm_cvtepi32_ps(s)));
    }
    return sse2_hsum_ps(acc) + min_sum;
}

static float dot_q4_1(const void *row, const void *act, int n) {
    return dot_q4q5(row, act, n, sizeof(BlockQ4_1), 1, 0);
}
static float dot_q5_0(const void *row, const void *act, int n) {
    return dot_q4q5(row, act, n, sizeof(BlockQ5_0), 0, 1);
}
static float dot_q5_1(const void *row, const void *act, int n) {
    return dot_q4q5(row, act, n, sizeof(BlockQ5_1), 1, 1);
}

/* ---- prefill (ggml_gemm_chunked.h): a block decoded once as int16, its
 * products summed lane for lane as sse2_dot16 sums them ---- */
typedef struct {
    __m128i w[4]; /* values 0-7, 8-15, 16-23, 24-31 */
    float d, m;   /* half_scale of d and m */
} Q4Q5Decoded;

/* The dot's vector accumulator and min sum, per row and position. */
typedef struct {
    __m128 acc;
    float min_sum;
} Q4Q5State;

static inline __attribute__((always_inline)) void q4q5_decode(const uint8_t *p, uint8_t *out, int has_min,
                                                              int has_fifth) {
    Q4Q5Decoded *d = (Q4Q5Decoded *)out;
    __m128i lo, hi;
    uint16_t dh, mh = 0;
    q4q5_values(p, has_min, has_fifth, &lo, &hi);
    if (has_fifth && !has_min)
        lo = _mm_sub_epi8(lo, _mm_set1_epi8(16)), hi = _mm_sub_epi8(hi, _mm_set1_epi8(16));
    sse2_widen(lo, &d->w[0], &d->w[1]);
    sse2_widen(hi, &d->w[2], &d->w[3]);
    __builtin_memcpy(&dh, p, 2);
    if (has_min) __builtin_memcpy(&mh, p + 2, 2);
    d->d = half_scale(dh), d->m = half_scale(mh);
}

/* Four rows: the activations widened once. */
static inline __attribute__((always_inline)) void q4q5_step(const uint8_t *decoded, const void *act,
                                                            uint8_t *state, int has_min) {
    const BlockQ8A *a = act;
    __m128i x[4];
    sse2_widen32(a->qs, x);
    for (int r = 0; r < 4; r++) {
        const Q4Q5Decoded *d = (const Q4Q5Decoded *)(decoded + (size_t)r * CHUNKED_DECODED_BYTES);
        Q4Q5State *st = (Q4Q5State *)state + r;
        __m128i s = sse2_dot32_i16(d->w[0], d->w[1], d->w[2], d->w[3], x);
        st->acc = _mm_add_ps(st->acc, _mm_mul_ps(_mm_set1_ps(d->d * a->d), _mm_cvtepi32_ps(s)));
        if (has_min) st->min_sum += d->m * a->s;
    }
}

static float q4q5_finish(const uint8_t *state) {
    const Q4Q5State *st = (const Q4Q5State *)state;
    return sse2_hsum_ps(st->acc) + st->min_sum;
}

STEP void q4_1_decode(const uint8_t *p, uint8_t *out) {
    q4q5_decode(p, out, 1, 0);
}
STEP void q5_0_decode(const uint8_t *p, uint8_t *out) {
    q4q5_decode(p, out, 0, 1);
}
STEP void q5_1_decode(const uint8_t *p, uint8_t *out) {
    q4q5_decode(p, out, 1, 1);
}
STEP void q4q5_step_min(const uint8_t *decoded, const void *act, uint8_t *state) {
    q4q5_step(decoded, act, state, 1);
}
STEP void q4q5_step_no_min(const uint8_t *decoded, const void *act, uint8_t *state) {
    q4q5_step(decoded, act, state, 0);
}

TCG_PAGE_ALIGNED static void gemm_q4_1(float *out, size_t out_stride, const uint8_t *rows, size_t row_bytes,
                                       const void *act, size_t act_stride, int n, int count, int batch) {
    chunked_gemm_rows(out, out_stride, rows, row_bytes, act, act_stride, n, count, batch, QK32,
                      sizeof(BlockQ4_1), sizeof(BlockQ8A), 4, sizeof(Q4Q5State), q4_1_decode, q4q5_step_min,
                      q4q5_finish);
}

TCG_PAGE_ALIGNED static void gemm_q5_0(float *out, size_t out_stride, const uint8_t *rows, size_t row_bytes,
                                       const void *act, size_t act_stride, int n, int count, int batch) {
    chunked_gemm_rows(out, out_stride, rows, row_bytes, act, act_stride, n, count, batch, QK32,
                      sizeof(BlockQ5_0), sizeof(BlockQ8A), 4, sizeof(Q4Q5State), q5_0_decode,
                      q4q5_step_no_min, q4q5_finish);
}

TCG_PAGE_ALIGNED static void gemm_q5_1(float *out, size_t out_stride, const uint8_t *rows, size_t row_bytes,
                                       const void *act, size_t act_stride, int n, int count, int batch) {
    chunked_gemm_rows(out, out_stride, rows, row_bytes, act, act_stride, n, count, batch, QK32,
                      sizeof(BlockQ5_1), sizeof(BlockQ8A), 4, sizeof(Q4Q5State), q5_1_decode, q4q5_step_min,
                      q4q5_finish);
}

const GgmlKernel ggml_q4_1_sse2 = {dot_q4_1, NULL, gemm_q4_1};
const GgmlKernel ggml_q5_0_sse2 = {dot_q5_0, NULL, gemm_q5_0};
const GgmlKernel ggml_q5_1_sse2 = {dot_q5_1, NULL, gemm_q5_1};
