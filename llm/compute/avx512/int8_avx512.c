/* int8_avx512.c - AVX-512 (F + BW, VNNI where present) int8 x int8 matmul. */
#include "llm/compute/cpu_features.h"
#include "llm/compute/avx512/avx512_ops.h"
#include "llm/compute/kernel_sets.h"

/* ---------------------------------------------------------------- int8 x int8
 * Eight rows per block. vpmovsxbw widens 32 weights straight from memory,
 * vpmaddwd multiplies them with 32 int16 activations into 16 int32 lanes.
 * After each group the eight rows' lanes are reduced together (a transpose
 * tree: 15 shuffles and adds for eight rows instead of eight separate
 * horizontal sums), giving one exact int32 per row; the eight rows' scales
 * come in with one gather. Then sum += (float)isum * (ws * xs) per group,
 * in group order and without FMA: the scalar reference's arithmetic, so the
 * results are bit-identical to it (and to the SSE2/AVX2 sets). */

/* Lanes of a (16 x int32) summed in pairs with b's: per 128-bit block
 * (a0+a1, b0+b1, a2+a3, b2+b3) -> after two levels, per 128-bit block one
 * partial sum for each of four rows. */
TARGET_AVX512 static inline __m512i pair_sum(__m512i a, __m512i b) {
    return _mm512_add_epi32(_mm512_unpacklo_epi32(a, b), _mm512_unpackhi_epi32(a, b));
}
TARGET_AVX512 static inline __m512i quad_sum(__m512i ab, __m512i cd) {
    return _mm512_add_epi32(_mm512_unpacklo_epi64(ab, cd), _mm512_unpackhi_epi64(ab, cd));
}

/* Eight 16-lane int32 vectors to their eight totals (row r in lane r). */
TARGET_AVX512 static inline __m256i reduce8(const __m512i a[8]) {
    /* Per 128-bit block k: lo = (r0, r1, r2, r3) partials, hi = (r4 .. r7). */
    __m512i lo = quad_sum(pair_sum(a[0], a[1]), pair_sum(a[2], a[3]));
    __m512i hi = quad_sum(pair_sum(a[4], a[5]), pair_sum(a[6], a[7]));
    /* Blocks (lo0, lo2, hi0, hi2) + (lo1, lo3, hi1, hi3) = (lo01, lo23, hi01, hi23). */
    __m512i s = _mm512_add_epi32(_mm512_shuffle_i32x4(lo, hi, _MM_SHUFFLE(2, 0, 2, 0)),
                                 _mm512_shuffle_i32x4(lo, hi, _MM_SHUFFLE(3, 1, 3, 1)));
    /* Reordered to (lo01, hi01, lo23, hi23): add the halves. */
    s = _mm512_shuffle_i32x4(s, s, _MM_SHUFFLE(3, 1, 2, 0));
    return _mm256_add_epi32(_mm512_castsi512_si256(s), _mm512_extracti64x4_epi64(s, 1));
}

TARGET_AVX512 static inline __m512i madd32(const int8_t *w, __m512i x) {
    return _mm512_madd_epi16(_mm512_cvtepi8_epi16(_mm256_loadu_si256((const __m256i *)w)), x);
}

TARGET_AVX512 static inline __m512i madd16(const int8_t *w, const int16_t *x) {
    __m256i p = _mm256_madd_epi16(_mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)w)),
                                  _mm256_loadu_si256((const __m256i *)x));
    return _mm512_inserti64x4(_mm512_setzero_si512(), p, 0);
}

/* A group step: a[r] += the int32 sums of row r's int16 products with x
 * over the group [j, end) (gs % 16 == 0). */
typedef void group8_fn(__m512i a[8], const int8_t *const w[8], const int16_t *x, int j, int end);

/* The last 16 columns of a group (gs % 32 == 16). */
TARGET_AVX512 static inline void group8_tail(__m512i a[8], const int8_t *const w[8], const int16_t *x, int j,
                                             int end) {
    if (j < end) {
#pragma GCC unroll 8
        for (int r = 0; r < 8; r++) a[r] = _mm512_add_epi32(a[r], madd16(w[r] + j, x + j));
    }
}

/* 32 columns a step with vpmaddwd + vpaddd. */
TARGET_AVX512 static inline void group8_madd(__m512i a[8], const int8_t *const w[8], const int16_t *x, int j,
                                             int end) {
    for (; j + 32 <= end; j += 32) {
        __m512i xv = _mm512_loadu_si512((const void *)(x + j));
#pragma GCC unroll 8
        for (int r = 0; r < 8; r++) a[r] = _mm512_add_epi32(a[r], madd32(w[r] + j, xv));
    }
    group8_tail(a, w, x, j, end);
}

/* The same sums with one vpdpwssd a step (AVX-512 VNNI): exact either way. */
TARGET_AVX512_VNNI static inline void group8_vnni(__m512i a[8], const int8_t *const w[8], const int16_t *x,
                                                  int j, int end) {
    for (; j + 32 <= end; j += 32) {
        __m512i xv = _mm512_loadu_si512((const void *)(x + j));
#pragma GCC unroll 8
        for (int r = 0; r < 8; r++)
            a[r] = _mm512_dpwssd_epi32(
                a[r], _mm512_cvtepi8_epi16(_mm256_loadu_si256((const __m256i *)(w[r] + j))), xv);
    }
    group8_tail(a, w, x, j, end);
}

/* Rows w[r] (r < 8; a short block repeats a row) against one token x
 * (scales xs): lane r is row r's result. Row r's scales are at ws0 +
 * scale_index[r], one per group; `ahead` is the next block, prefetched as
 * this one goes, or NULL. Group by group with `step`; always inlined, so the
 * step is a direct inlined call in each caller. */
TARGET_AVX512 static inline __attribute__((always_inline)) __m256
q8q_rows8(const int8_t *const w[8], const float *ws0, __m256i scale_index, const int16_t *x, const float *xs,
          int n, int gs, const int8_t *ahead, group8_fn *step) {
    __m256 f = _mm256_setzero_ps();
    for (int g = 0, base = 0; base < n; g++, base += gs) {
        /* The next block's rows (8 * n contiguous bytes) a group's share at a
         * time, so they are in cache when that block starts. */
        if (ahead)
            for (int k = 0; k < 8 * gs; k += 64)
                _mm_prefetch((const char *)ahead + 8 * base + k, _MM_HINT_T0);
        __m512i a[8];
#pragma GCC unroll 8
        for (int r = 0; r < 8; r++) a[r] = _mm512_setzero_si512();
        step(a, w, x, base, base + gs);
        __m256i isum = reduce8(a);
        __m256 scales = _mm256_mul_ps(_mm256_i32gather_ps(ws0 + g, scale_index, 4), _mm256_set1_ps(xs[g]));
        f = _mm256_add_ps(f, _mm256_mul_ps(_mm256_cvtepi32_ps(isum), scales));
    }
    return f;
}

TARGET_AVX512_VNNI static __m256 q8q_rows8_vnni(const int8_t *const w[8], const float *ws0,
                                                __m256i scale_index, const int16_t *x, const float *xs, int n,
                                                int gs, const int8_t *ahead) {
    return q8q_rows8(w, ws0, scale_index, x, xs, n, gs, ahead, group8_vnni);
}

TARGET_AVX512 void kernels_matmul_q8q_avx512(float *out, const int16_t *xq, const float *xs, int batch,
                                             const int8_t *wq, const float *ws, int n, int d, int gs) {
    bool vnni = cpu_features()->avx512vnni;
    int groups = n / gs;
    for (int i = 0; i < d; i += 8) {
        int rows = d - i < 8 ? d - i : 8;
        const int8_t *w[8];
        int index[8];
        for (int r = 0; r < 8; r++) {
            int row = r < rows ? r : 0; /* a short block repeats its first row */
            w[r] = wq + (long)(i + row) * n;
            index[r] = row * groups;
        }
        __m256i scale_index = _mm256_loadu_si256((const __m256i *)index);
        const float *ws0 = ws + (long)i * groups;
        /* Prefetching the next block pays for a single token (decode: 10 GB/s
         * instead of 7 on one core); a batch rereads the block from L1 anyway.
         * Two blocks ahead measured no better. */
        const int8_t *ahead = batch == 1 && i + 16 <= d ? wq + (long)(i + 8) * n : 0;
        for (int b = 0; b < batch; b++) {
            const int16_t *x = xq + (long)b * n;
            const float *xsb = xs + (long)b * groups;
            __m256 f = vnni ? q8q_rows8_vnni(w, ws0, scale_index, x, xsb, n, gs, ahead)
                            : q8q_rows8(w, ws0, scale_index, x, xsb, n, gs, ahead, group8_madd);
            if (rows == 8) {
                _mm256_storeu_ps(out + (long)b * d + i, f);
            } else {
                float t[8];
                _mm256_storeu_ps(t, f);
                for (int r = 0; r < rows; r++) out[(long)b * d + i + r] = t[r];
            }
        }
    }
}
