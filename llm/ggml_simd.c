/* ggml_simd.c - SSE2 and AVX2 dot products of ggml weight rows with
 * quantised activations for the common types (F16, Q8_0, Q4_0, Q4_K,
 * Q6_K; ggml_simd_more.c has the rest); ggml_vec_dot_best picks them for
 * the active kernel set and falls back to the scalar reference otherwise. Integer sums are exact, so
 * these agree with the scalar versions up to float summation order. */
#include <immintrin.h>

#include "lib/string.h"
#include "llm/ggml_types.h"
#include "llm/ggml_simd_internal.h"
#include "llm/kernels.h"

/* ---------------------------------------------------------------- SSE2 */

/* Four rows per pass (the emulated machines this set is for run integer
 * SIMD fast and float SIMD slowly): the activations are widened to int16
 * once per block for the four rows, and the four rows' block sums share
 * one int->float conversion, one scale multiply and one add. Rows past
 * count repeat the last one (computed and dropped). */

/* Lane r: the total of row r's four int32 partial sums. */
static inline __m128i sse2_row_totals(__m128i s0, __m128i s1, __m128i s2, __m128i s3) {
    __m128i a = _mm_add_epi32(_mm_unpacklo_epi32(s0, s1), _mm_unpackhi_epi32(s0, s1));
    __m128i b = _mm_add_epi32(_mm_unpacklo_epi32(s2, s3), _mm_unpackhi_epi32(s2, s3));
    return _mm_add_epi32(_mm_unpacklo_epi64(a, b), _mm_unpackhi_epi64(a, b));
}

/* The half scales at offset off of four rows, times the activation scale. */
static inline __m128 sse2_four_scales(const uint8_t *const w[4], size_t off, float ad) {
    uint16_t h[4];
    for (int r = 0; r < 4; r++) __builtin_memcpy(&h[r], w[r] + off, 2);
    return _mm_mul_ps(_mm_setr_ps(half_scale(h[0]), half_scale(h[1]), half_scale(h[2]), half_scale(h[3])),
                      _mm_set1_ps(ad));
}

/* 16 signed bytes widened to int16: lo holds bytes 0-7, hi bytes 8-15. */
static inline void sse2_widen(__m128i v, __m128i *lo, __m128i *hi) {
    __m128i sign = _mm_cmpgt_epi8(_mm_setzero_si128(), v);
    *lo = _mm_unpacklo_epi8(v, sign);
    *hi = _mm_unpackhi_epi8(v, sign);
}

/* Q8_0: lane r = row r's block sum. The weight bytes go into the high
 * byte of each int16 (w * 256: no sign mask needed), and the totals, all
 * multiples of 256, are shifted back exactly. */
static inline __m128i sse2_q8_0_totals(const uint8_t *const w[4], size_t off, const BlockQ8A *a) {
    const __m128i zero = _mm_setzero_si128();
    __m128i x[4], s[4];
    sse2_widen(load16(a->qs), &x[0], &x[1]);
    sse2_widen(load16(a->qs + 16), &x[2], &x[3]);
    for (int r = 0; r < 4; r++) {
        __m128i v0 = load16(w[r] + off + 2), v1 = load16(w[r] + off + 18);
        __m128i p0 = _mm_madd_epi16(_mm_unpacklo_epi8(zero, v0), x[0]);
        __m128i p1 = _mm_madd_epi16(_mm_unpackhi_epi8(zero, v0), x[1]);
        __m128i p2 = _mm_madd_epi16(_mm_unpacklo_epi8(zero, v1), x[2]);
        __m128i p3 = _mm_madd_epi16(_mm_unpackhi_epi8(zero, v1), x[3]);
        s[r] = _mm_add_epi32(_mm_add_epi32(p0, p1), _mm_add_epi32(p2, p3));
    }
    return _mm_srai_epi32(sse2_row_totals(s[0], s[1], s[2], s[3]), 8);
}

/* Q4_0: the nibbles are unsigned (0..15), widened with zeros; the -8 comes
 * off the totals as 8 * sum(x) (the activations' exact integer sum). */
static inline __m128i sse2_q4_0_totals(const uint8_t *const w[4], size_t off, const BlockQ8A *a) {
    const __m128i mask = _mm_set1_epi8(0x0f), zero = _mm_setzero_si128();
    __m128i x[4], s[4];
    sse2_widen(load16(a->qs), &x[0], &x[1]);
    sse2_widen(load16(a->qs + 16), &x[2], &x[3]);
    for (int r = 0; r < 4; r++) {
        __m128i raw = load16(w[r] + off + 2);
        __m128i lo = _mm_and_si128(raw, mask), hi = _mm_and_si128(_mm_srli_epi16(raw, 4), mask);
        __m128i p0 = _mm_madd_epi16(_mm_unpacklo_epi8(lo, zero), x[0]);
        __m128i p1 = _mm_madd_epi16(_mm_unpackhi_epi8(lo, zero), x[1]);
        __m128i p2 = _mm_madd_epi16(_mm_unpacklo_epi8(hi, zero), x[2]);
        __m128i p3 = _mm_madd_epi16(_mm_unpackhi_epi8(hi, zero), x[3]);
        s[r] = _mm_add_epi32(_mm_add_epi32(p0, p1), _mm_add_epi32(p2, p3));
    }
    return _mm_sub_epi32(sse2_row_totals(s[0], s[1], s[2], s[3]), _mm_set1_epi32(8 * a->qsum));
}

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

/* Page-aligned: under QEMU's TCG a loop whose translated blocks lie on two
 * 4 KiB pages cannot jump between them directly, and these loops are what
 * a GGUF token spends its time in there (15M Q4_0: 43 -> 38 ms/token when
 * the function stopped straddling a page). */
#define HOT_LOOP __attribute__((aligned(4096)))

HOT_LOOP static void sse2_matmul_q8_0(float *out, const uint8_t *rows, size_t row_bytes, const void *act,
                                      int n, int count) {
    sse2_matmul_rows(out, rows, row_bytes, act, n, count, sizeof(BlockQ8_0), sse2_q8_0_totals);
}

HOT_LOOP static void sse2_matmul_q4_0(float *out, const uint8_t *rows, size_t row_bytes, const void *act,
                                      int n, int count) {
    sse2_matmul_rows(out, rows, row_bytes, act, n, count, sizeof(BlockQ4_0), sse2_q4_0_totals);
}

DOT_FROM_MATMUL(sse2_dot_q8_0, sse2_matmul_q8_0)
DOT_FROM_MATMUL(sse2_dot_q4_0, sse2_matmul_q4_0)

static float sse2_dot_q4_k(const void *row, const void *act, int n) {
    const BlockQ4_K *w = row;
    const BlockQ8K *a = act;
    const __m128i mask = _mm_set1_epi8(0x0f);
    float sum = 0;
    for (int b = 0; b < n / QK_K; b++) {
        uint32_t words[4];
        k4_scales_mins(w[b].scales, words);
        const uint8_t *sc = (const uint8_t *)words, *m = sc + 8;
        int isum = 0, msum = 0;
        const int8_t *x = a[b].qs;
        for (int j = 0; j < 4; j++) {
            const uint8_t *q = w[b].qs + 32 * j;
            __m128i r0 = load16(q), r1 = load16(q + 16);
            __m128i lo = _mm_add_epi32(sse2_dot16(_mm_and_si128(r0, mask), load16(x + 64 * j)),
                                       sse2_dot16(_mm_and_si128(r1, mask), load16(x + 64 * j + 16)));
            __m128i hi = _mm_add_epi32(
                sse2_dot16(_mm_and_si128(_mm_srli_epi16(r0, 4), mask), load16(x + 64 * j + 32)),
                sse2_dot16(_mm_and_si128(_mm_srli_epi16(r1, 4), mask), load16(x + 64 * j + 48)));
            isum += sc[2 * j] * sse2_hsum_i32(lo) + sc[2 * j + 1] * sse2_hsum_i32(hi);
        }
        for (int j = 0; j < 8; j++) msum += m[j] * (a[b].bsums[2 * j] + a[b].bsums[2 * j + 1]);
        sum += a[b].d * (half_scale(w[b].d) * (float)isum - half_scale(w[b].dmin) * (float)msum);
    }
    return sum;
}

/* The 6-bit values (0..63, unsigned) of one Q6_K half-block (128 values). */
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

static float sse2_dot_q6_k(const void *row, const void *act, int n) {
    const BlockQ6_K *w = row;
    const BlockQ8K *a = act;
    const __m128i bias = _mm_set1_epi8(32);
    float sum = 0;
    for (int b = 0; b < n / QK_K; b++) {
        int isum = 0;
        for (int half = 0; half < 2; half++) {
            __m128i v[8];
            q6_decode_half(w[b].ql + 64 * half, w[b].qh + 32 * half, v);
            const int8_t *x = a[b].qs + 128 * half;
            for (int s = 0; s < 8; s++) {
                __m128i d = sse2_dot16(_mm_sub_epi8(v[s], bias), load16(x + 16 * s));
                isum += w[b].scales[8 * half + s] * sse2_hsum_i32(d);
            }
        }
        sum += a[b].d * half_scale(w[b].d) * (float)isum;
    }
    return sum;
}

/* Four half floats (exact for normal and subnormal values) to floats. */
static inline __m128 sse2_half4(const uint16_t *h) {
    __m128i raw = _mm_loadl_epi64((const __m128i *)h);
    __m128i v = _mm_unpacklo_epi16(raw, _mm_setzero_si128());
    __m128i sign = _mm_slli_epi32(_mm_and_si128(v, _mm_set1_epi32(0x8000)), 16);
    __m128i mag = _mm_slli_epi32(_mm_and_si128(v, _mm_set1_epi32(0x7fff)), 13);
    __m128 f = _mm_mul_ps(_mm_castsi128_ps(mag), _mm_castsi128_ps(_mm_set1_epi32(0x77800000))); /* 2^112 */
    return _mm_or_ps(f, _mm_castsi128_ps(sign));
}

static float sse2_dot_f16(const void *row, const void *act, int n) {
    const uint16_t *w = row;
    const float *x = act;
    __m128 acc0 = _mm_setzero_ps(), acc1 = _mm_setzero_ps();
    int i = 0;
    for (; i + 8 <= n; i += 8) {
        acc0 = _mm_add_ps(acc0, _mm_mul_ps(sse2_half4(w + i), _mm_loadu_ps(x + i)));
        acc1 = _mm_add_ps(acc1, _mm_mul_ps(sse2_half4(w + i + 4), _mm_loadu_ps(x + i + 4)));
    }
    float lanes[4];
    _mm_storeu_ps(lanes, _mm_add_ps(acc0, acc1));
    float sum = lanes[0] + lanes[1] + lanes[2] + lanes[3];
    for (; i < n; i++) sum += ggml_fp16_to_fp32(w[i]) * x[i];
    return sum;
}

/* ---------------------------------------------------------------- AVX2 */

/* One block's contribution to a row's float accumulator (eight lanes,
 * summed once per row). The matmuls below run the same steps in the same
 * order for every row, whether it is computed alone or beside another, so
 * results do not depend on how rows are grouped or split over threads. */

AVX2 static inline __m256 q8_0_step(const BlockQ8_0 *w, const BlockQ8A *a, __m256 acc) {
    __m256 s = _mm256_cvtepi32_ps(avx2_dot32(load32(w->qs), load32(a->qs)));
    return _mm256_fmadd_ps(_mm256_set1_ps(half_scale(w->d) * a->d), s, acc);
}

/* Nibbles (0..15) times x, minus 8 * x: pairs stay within int16. */
AVX2 static inline __m256 q4_0_step(const BlockQ4_0 *w, const BlockQ8A *a, __m256 acc) {
    const __m256i mask = _mm256_set1_epi8(0x0f), eight = _mm256_set1_epi8(8);
    __m256i raw = _mm256_broadcastsi128_si256(load16(w->qs));
    __m256i q = _mm256_and_si256(_mm256_srlv_epi64(raw, _mm256_set_epi64x(4, 4, 0, 0)), mask);
    __m256i x = load32(a->qs);
    __m256i p = _mm256_sub_epi16(_mm256_maddubs_epi16(q, x), _mm256_maddubs_epi16(eight, x));
    __m256 s = _mm256_cvtepi32_ps(_mm256_madd_epi16(p, _mm256_set1_epi16(1)));
    return _mm256_fmadd_ps(_mm256_set1_ps(half_scale(w->d) * a->d), s, acc);
}

AVX2 static inline __m256 q4_k_step(const BlockQ4_K *w, const BlockQ8K *a, __m256 acc) {
    const __m256i mask = _mm256_set1_epi8(0x0f);
    uint32_t words[4];
    k4_scales_mins(w->scales, words);
    const uint8_t *sc = (const uint8_t *)words;
    __m256i isum = _mm256_setzero_si256();
    for (int j = 0; j < 4; j++) {
        __m256i r = load32(w->qs + 32 * j);
        __m256i lo = _mm256_maddubs_epi16(_mm256_and_si256(r, mask), load32(a->qs + 64 * j));
        __m256i hi = _mm256_maddubs_epi16(_mm256_and_si256(_mm256_srli_epi16(r, 4), mask),
                                          load32(a->qs + 64 * j + 32));
        isum = _mm256_add_epi32(isum, _mm256_madd_epi16(lo, _mm256_set1_epi16(sc[2 * j])));
        isum = _mm256_add_epi32(isum, _mm256_madd_epi16(hi, _mm256_set1_epi16(sc[2 * j + 1])));
    }
    /* mins: min j times the sum of x over its 32 values (two bsums) */
    __m128i m8 = _mm_loadl_epi64((const __m128i *)(words + 2));
    __m256i mins = _mm256_cvtepu8_epi16(_mm_unpacklo_epi8(m8, m8));
    __m256i msum = _mm256_madd_epi16(load32(a->bsums), mins);
    acc = _mm256_fmadd_ps(_mm256_set1_ps(a->d * half_scale(w->d)), _mm256_cvtepi32_ps(isum), acc);
    return _mm256_fnmadd_ps(_mm256_set1_ps(a->d * half_scale(w->dmin)), _mm256_cvtepi32_ps(msum), acc);
}

/* Q6_K: values 0..63 (q + 32) times x, per-16 signed scales, minus
 * 32 * scale * sum(x) through the bsums. */
AVX2 static inline __m256 q6_k_step(const BlockQ6_K *w, const BlockQ8K *a, __m256 acc) {
    const __m256i m4 = _mm256_set1_epi8(0x0f), m30 = _mm256_set1_epi8(0x30);
    const __m256i scales16 = _mm256_cvtepi8_epi16(load16(w->scales));
    __m256i isum = _mm256_setzero_si256();
    for (int half = 0; half < 2; half++) {
        __m256i l0 = load32(w->ql + 64 * half), l1 = load32(w->ql + 64 * half + 32);
        __m256i h = load32(w->qh + 32 * half);
        __m256i q[4];
        q[0] = _mm256_or_si256(_mm256_and_si256(l0, m4), _mm256_and_si256(_mm256_slli_epi16(h, 4), m30));
        q[1] = _mm256_or_si256(_mm256_and_si256(l1, m4), _mm256_and_si256(_mm256_slli_epi16(h, 2), m30));
        q[2] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l0, 4), m4), _mm256_and_si256(h, m30));
        q[3] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l1, 4), m4),
                               _mm256_and_si256(_mm256_srli_epi16(h, 2), m30));
        /* this half's eight scales as int16 in both lanes; group k takes
         * scale 2k in the low lane and 2k+1 in the high one */
        __m256i sc = _mm256_broadcastsi128_si256(half ? _mm256_extracti128_si256(scales16, 1)
                                                      : _mm256_castsi256_si128(scales16));
        for (int k = 0; k < 4; k++) {
            __m256i p = _mm256_maddubs_epi16(q[k], load32(a->qs + 128 * half + 32 * k));
            __m256i pick = _mm256_set_m128i(_mm_set1_epi16((short)(0x0100 * (4 * k + 3) + 4 * k + 2)),
                                            _mm_set1_epi16((short)(0x0100 * (4 * k + 1) + 4 * k)));
            isum = _mm256_add_epi32(isum, _mm256_madd_epi16(p, _mm256_shuffle_epi8(sc, pick)));
        }
    }
    __m256i bias = _mm256_madd_epi16(load32(a->bsums), scales16);
    isum = _mm256_sub_epi32(isum, _mm256_slli_epi32(bias, 5));
    return _mm256_fmadd_ps(_mm256_set1_ps(a->d * half_scale(w->d)), _mm256_cvtepi32_ps(isum), acc);
}

AVX2 static inline float avx2_hsum(__m256 acc) {
    __m128 h = _mm_add_ps(_mm256_castps256_ps128(acc), _mm256_extractf128_ps(acc, 1));
    h = _mm_add_ps(h, _mm_movehl_ps(h, h));
    h = _mm_add_ss(h, _mm_shuffle_ps(h, h, 1));
    return _mm_cvtss_f32(h);
}

/* out[i] = row i . act for count consecutive rows: two rows per pass share
 * the activation loads, and the pair after next is prefetched (the weights
 * stream from memory once per token, too fast for the hardware prefetcher
 * alone). Prefetches past the last row are harmless. */
#define AVX2_MATMUL(NAME, WBLOCK, ABLOCK, ELEMS, STEP)                                                       \
    AVX2 static void NAME(float *out, const uint8_t *rows, size_t row_bytes, const void *act, int n,         \
                          int count) {                                                                       \
        const ABLOCK *a = act;                                                                               \
        int blocks = n / (ELEMS), i = 0;                                                                     \
        for (; i + 2 <= count; i += 2) {                                                                     \
            const WBLOCK *w0 = (const WBLOCK *)(rows + (size_t)i * row_bytes);                               \
            const WBLOCK *w1 = (const WBLOCK *)(rows + (size_t)(i + 1) * row_bytes);                         \
            const char *ahead = (const char *)w0 + 4 * row_bytes;                                            \
            __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();                                   \
            for (int b = 0; b < blocks; b++) {                                                               \
                for (size_t line = 0; line < sizeof(WBLOCK); line += 64) {                                   \
                    _mm_prefetch(ahead + b * sizeof(WBLOCK) + line, _MM_HINT_T0);                            \
                    _mm_prefetch(ahead + row_bytes + b * sizeof(WBLOCK) + line, _MM_HINT_T0);                \
                }                                                                                            \
                acc0 = STEP(&w0[b], &a[b], acc0);                                                            \
                acc1 = STEP(&w1[b], &a[b], acc1);                                                            \
            }                                                                                                \
            out[i] = avx2_hsum(acc0);                                                                        \
            out[i + 1] = avx2_hsum(acc1);                                                                    \
        }                                                                                                    \
        for (; i < count; i++) {                                                                             \
            const WBLOCK *w0 = (const WBLOCK *)(rows + (size_t)i * row_bytes);                               \
            __m256 acc0 = _mm256_setzero_ps();                                                               \
            for (int b = 0; b < blocks; b++) acc0 = STEP(&w0[b], &a[b], acc0);                               \
            out[i] = avx2_hsum(acc0);                                                                        \
        }                                                                                                    \
    }

AVX2_MATMUL(avx2_matmul_q8_0, BlockQ8_0, BlockQ8A, QK32, q8_0_step)
AVX2_MATMUL(avx2_matmul_q4_0, BlockQ4_0, BlockQ8A, QK32, q4_0_step)
AVX2_MATMUL(avx2_matmul_q4_k, BlockQ4_K, BlockQ8K, QK_K, q4_k_step)
AVX2_MATMUL(avx2_matmul_q6_k, BlockQ6_K, BlockQ8K, QK_K, q6_k_step)

DOT_FROM_MATMUL(avx2_dot_q8_0, avx2_matmul_q8_0)
DOT_FROM_MATMUL(avx2_dot_q4_0, avx2_matmul_q4_0)
DOT_FROM_MATMUL(avx2_dot_q4_k, avx2_matmul_q4_k)
DOT_FROM_MATMUL(avx2_dot_q6_k, avx2_matmul_q6_k)

AVX2 static float avx2_dot_f16(const void *row, const void *act, int n) {
    const uint16_t *w = row;
    const float *x = act;
    __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
    int i = 0;
    for (; i + 16 <= n; i += 16) {
        acc0 = _mm256_fmadd_ps(_mm256_cvtph_ps(load16(w + i)), _mm256_loadu_ps(x + i), acc0);
        acc1 = _mm256_fmadd_ps(_mm256_cvtph_ps(load16(w + i + 8)), _mm256_loadu_ps(x + i + 8), acc1);
    }
    __m256 acc = _mm256_add_ps(acc0, acc1);
    __m128 h = _mm_add_ps(_mm256_castps256_ps128(acc), _mm256_extractf128_ps(acc, 1));
    h = _mm_add_ps(h, _mm_movehl_ps(h, h));
    h = _mm_add_ss(h, _mm_shuffle_ps(h, h, 1));
    float sum = _mm_cvtss_f32(h);
    for (; i < n; i++) sum += ggml_fp16_to_fp32(w[i]) * x[i];
    return sum;
}

/* CPUID.1:ECX.F16C[bit 29]; the AVX2 F16 dot needs it (the kernel only
 * checks AVX2 and FMA before selecting the AVX2 set). */
static int cpu_has_f16c(void) {
    uint32_t a = 1, b, c = 0, d;
    __asm__ volatile("cpuid" : "+a"(a), "=b"(b), "+c"(c), "=d"(d));
    return (c >> 29) & 1;
}

ggml_vec_dot_fn ggml_vec_dot_simd(uint32_t type, int avx2) {
    static int f16c = -1;
    if (avx2 >= 2) {
        ggml_vec_dot_fn fn = ggml_vec_dot_avx512(type);
        if (fn) return fn;
    }
    switch (type) {
    case GGML_TYPE_F16:
        if (avx2 && f16c < 0) f16c = cpu_has_f16c();
        return avx2 && f16c ? avx2_dot_f16 : sse2_dot_f16;
    case GGML_TYPE_Q8_0:
        return avx2 ? avx2_dot_q8_0 : sse2_dot_q8_0;
    case GGML_TYPE_Q4_0:
        return avx2 ? avx2_dot_q4_0 : sse2_dot_q4_0;
    case GGML_TYPE_Q4_K:
        return avx2 ? avx2_dot_q4_k : sse2_dot_q4_k;
    case GGML_TYPE_Q6_K:
        return avx2 ? avx2_dot_q6_k : sse2_dot_q6_k;
    default:
        return ggml_vec_dot_simd_more(type, avx2);
    }
}

ggml_matmul_fn ggml_matmul_simd(uint32_t type, int avx2) {
    if (!avx2)
        return type == GGML_TYPE_Q8_0 ? sse2_matmul_q8_0 : type == GGML_TYPE_Q4_0 ? sse2_matmul_q4_0 : NULL;
    if (avx2 >= 2) {
        ggml_matmul_fn fn = ggml_matmul_avx512(type);
        if (fn) return fn;
    }
    switch (type) {
    case GGML_TYPE_Q8_0:
        return avx2_matmul_q8_0;
    case GGML_TYPE_Q4_0:
        return avx2_matmul_q4_0;
    case GGML_TYPE_Q4_K:
        return avx2_matmul_q4_k;
    case GGML_TYPE_Q6_K:
        return avx2_matmul_q6_k;
    default:
        return NULL;
    }
}

ggml_matmul_fn ggml_matmul_best(uint32_t type) {
    int level = kernels_level();
    return level >= KERNELS_SSE2 ? ggml_matmul_simd(type, level >= KERNELS_AVX512 ? 2 : level) : NULL;
}

static void scalar_quantize_act_q8a(void *out, const float *x, int n) {
    ggml_quantize_act_q8a(out, x, n);
}

static void scalar_quantize_act_q8k(void *out, const float *x, int n) {
    ggml_quantize_act_q8k(out, x, n);
}

ggml_act_quantize_fn ggml_act_quantizer_best(int act) {
    ggml_act_quantize_fn fn = kernels_level() >= KERNELS_AVX512 ? ggml_act_quantizer_avx512(act) : NULL;
    if (fn) return fn;
    return act == ACT_Q8K ? scalar_quantize_act_q8k : scalar_quantize_act_q8a;
}

ggml_vec_dot_fn ggml_vec_dot_best(uint32_t type) {
    if (kernels == &kernels_scalar) return ggml_vec_dot_scalar(type);
    int level = kernels_level();
    ggml_vec_dot_fn fn = ggml_vec_dot_simd(type, level >= KERNELS_AVX512 ? 2 : level >= KERNELS_AVX2);
    return fn ? fn : ggml_vec_dot_scalar(type);
}
