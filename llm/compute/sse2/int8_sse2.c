/* int8_sse2.c - SSE2 int8 matmuls: fp32 activations against int8 weights
 * (llama2.c version 2 checkpoints), and int8 x int8 (Q8 activations). */
#include <emmintrin.h>

#include "lib/string.h"
#include "llm/compute/int8_shape.h"
#include "llm/compute/sse2/int8_swar.h"
#include "llm/compute/kernel_sets.h"
#include "llm/compute/target.h"
#include "llm/compute/timed_choice.h"
#include "llm/compute/sse2/sse2_ops.h"

/* ---------------------------------------------------------------- int8 x int8
 * Under QEMU TCG every guest instruction costs about the same, so the inner
 * loop is kept short: per 16 weights and row, one load, two unpacks into the
 * HIGH byte of int16 lanes (w * 256: no shift needed to sign-extend) and two
 * pmaddwd + paddd. The 256 is folded into the group scale (exact). */

/* int32 lanes of sum_j w[j] * 256 * x[j] over one group. */
static inline __m128i sse2_group_dot(const int8_t *w, const int16_t *x, int gs) {
    const __m128i zero = _mm_setzero_si128();
    __m128i acc = zero;
    for (int j = 0; j < gs; j += 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(w + j));
        acc = _mm_add_epi32(
            acc, _mm_madd_epi16(_mm_unpacklo_epi8(zero, v), _mm_loadu_si128((const __m128i *)(x + j))));
        acc = _mm_add_epi32(
            acc, _mm_madd_epi16(_mm_unpackhi_epi8(zero, v), _mm_loadu_si128((const __m128i *)(x + j + 8))));
    }
    return acc;
}

/* (sum a0, sum a1, sum a2, sum a3) of int32 lanes: integer adds only. */
static inline __m128i sse2_hsum4_epi32(__m128i a0, __m128i a1, __m128i a2, __m128i a3) {
    __m128i s01 = _mm_add_epi32(_mm_unpacklo_epi32(a0, a1), _mm_unpackhi_epi32(a0, a1));
    __m128i s23 = _mm_add_epi32(_mm_unpacklo_epi32(a2, a3), _mm_unpackhi_epi32(a2, a3));
    return _mm_add_epi32(_mm_unpacklo_epi64(s01, s23), _mm_unpackhi_epi64(s01, s23));
}

/* Four rows against one token; ws0 = row 0's scales (rows are `groups`
 * apart). Each group's four integer sums are made exact (the lanes hold
 * multiples of 256: shifting first keeps a 1024-wide group inside int32),
 * then scaled and accumulated for the four rows at once: four float
 * operations per group instead of sixteen (float ops are what cost most
 * under QEMU TCG). Per row this is the scalar reference's arithmetic:
 * sum += (float)isum * (ws * xs), group by group. No software prefetch
 * (`ahead` unused): this set is the QEMU TCG baseline, where it only costs. */
static inline __m128 sse2_q8q_rows4(const int8_t *w0, const float *ws0, const int16_t *x, const float *xs,
                                    int n, int gs, const int8_t *ahead) {
    const __m128i zero = _mm_setzero_si128();
    const int8_t *w1 = w0 + n, *w2 = w1 + n, *w3 = w2 + n;
    int groups = n / gs;
    const float *ws1 = ws0 + groups, *ws2 = ws1 + groups, *ws3 = ws2 + groups;
    __m128 f = _mm_setzero_ps();
    for (int g = 0, base = 0; g < groups; g++, base += gs) {
        __m128i a0 = zero, a1 = zero, a2 = zero, a3 = zero;
        for (int j = base; j < base + gs; j += 16) {
            __m128i xl = _mm_loadu_si128((const __m128i *)(x + j));
            __m128i xh = _mm_loadu_si128((const __m128i *)(x + j + 8));
            __m128i v0 = _mm_loadu_si128((const __m128i *)(w0 + j));
            __m128i v1 = _mm_loadu_si128((const __m128i *)(w1 + j));
            a0 = _mm_add_epi32(a0, _mm_madd_epi16(_mm_unpacklo_epi8(zero, v0), xl));
            a1 = _mm_add_epi32(a1, _mm_madd_epi16(_mm_unpacklo_epi8(zero, v1), xl));
            a0 = _mm_add_epi32(a0, _mm_madd_epi16(_mm_unpackhi_epi8(zero, v0), xh));
            a1 = _mm_add_epi32(a1, _mm_madd_epi16(_mm_unpackhi_epi8(zero, v1), xh));
            __m128i v2 = _mm_loadu_si128((const __m128i *)(w2 + j));
            __m128i v3 = _mm_loadu_si128((const __m128i *)(w3 + j));
            a2 = _mm_add_epi32(a2, _mm_madd_epi16(_mm_unpacklo_epi8(zero, v2), xl));
            a3 = _mm_add_epi32(a3, _mm_madd_epi16(_mm_unpacklo_epi8(zero, v3), xl));
            a2 = _mm_add_epi32(a2, _mm_madd_epi16(_mm_unpackhi_epi8(zero, v2), xh));
            a3 = _mm_add_epi32(a3, _mm_madd_epi16(_mm_unpackhi_epi8(zero, v3), xh));
        }
        __m128i isum = sse2_hsum4_epi32(_mm_srai_epi32(a0, 8), _mm_srai_epi32(a1, 8), _mm_srai_epi32(a2, 8),
                                        _mm_srai_epi32(a3, 8));
        __m128 scales = _mm_mul_ps(_mm_set_ps(ws3[g], ws2[g], ws1[g], ws0[g]), _mm_set1_ps(xs[g]));
        f = _mm_add_ps(f, _mm_mul_ps(_mm_cvtepi32_ps(isum), scales));
    }
    return f;
}

/* One row, the same per-group arithmetic as sse2_q8q_rows4. */
static inline float sse2_q8q_row1(const int8_t *w, const float *ws, const int16_t *x, const float *xs, int n,
                                  int gs) {
    float sum = 0.0f;
    for (int g = 0, base = 0; base < n; g++, base += gs) {
        __m128i a = _mm_srai_epi32(sse2_group_dot(w + base, x + base, gs), 8);
        a = _mm_add_epi32(a, _mm_shuffle_epi32(a, _MM_SHUFFLE(1, 0, 3, 2)));
        a = _mm_add_epi32(a, _mm_shuffle_epi32(a, _MM_SHUFFLE(2, 3, 0, 1)));
        sum += (float)_mm_cvtsi128_si32(a) * (ws[g] * xs[g]);
    }
    return sum;
}

/* ---------------------------------------------------------------- prefill
 * Several positions: each group of four rows is sign-extended to int16 once
 * and kept in L1, so a position's step is one activation load and four
 * pmaddwd + paddd per eight values (decode also loads and widens every
 * weight). Per position the float arithmetic is sse2_q8q_rows4's (each
 * group's exact integer sums, times ws * xs, added group by group), so the
 * outputs are the single-position bits. */

/* Widest group widened at once (a wider one takes the per-position path). */
#define SSE2_GEMM_MAX_GROUP 256
_Static_assert(SSE2_GEMM_MAX_GROUP <= INT8_SWAR_MAX_GROUP, "the SWAR gemm takes every group this one does");
/* Positions per pass: their float accumulators stay in L1. */
#define SSE2_GEMM_POSITIONS 64

/* Four rows' group (gs values from w0, rows n apart) as int16: wide[4 * k + r]
 * holds row r's values 8k..8k+7. */
static inline void sse2_widen_rows4(__m128i *wide, const int8_t *w0, int n, int gs) {
    const __m128i zero = _mm_setzero_si128();
    for (int r = 0; r < 4; r++)
        for (int j = 0; j < gs; j += 16) {
            __m128i v = _mm_loadu_si128((const __m128i *)(w0 + (long)r * n + j));
            __m128i sign = _mm_cmpgt_epi8(zero, v);
            wide[4 * (j / 8) + r] = _mm_unpacklo_epi8(v, sign);
            wide[4 * (j / 8 + 1) + r] = _mm_unpackhi_epi8(v, sign);
        }
}

/* Lane r = row r's exact integer sum over one group of one position. */
static inline __m128i sse2_wide_rows4_dot(const __m128i *wide, const int16_t *x, int gs) {
    __m128i a0 = _mm_setzero_si128(), a1 = a0, a2 = a0, a3 = a0;
    for (int k = 0; k < gs / 8; k++, wide += 4) {
        __m128i xk = _mm_loadu_si128((const __m128i *)(x + 8 * k));
        a0 = _mm_add_epi32(a0, _mm_madd_epi16(xk, wide[0]));
        a1 = _mm_add_epi32(a1, _mm_madd_epi16(xk, wide[1]));
        a2 = _mm_add_epi32(a2, _mm_madd_epi16(xk, wide[2]));
        a3 = _mm_add_epi32(a3, _mm_madd_epi16(xk, wide[3]));
    }
    return sse2_hsum4_epi32(a0, a1, a2, a3);
}

/* Rows i..i+3 (d >= i + 4) for positions p0..p0+count-1. */
static void sse2_q8q_gemm_rows4(float *out, const int16_t *xq, const float *xs, int p0, int count,
                                const int8_t *wq, const float *ws, int n, int d, int gs, int i) {
    __m128i wide[SSE2_GEMM_MAX_GROUP / 2];
    __m128 f[SSE2_GEMM_POSITIONS];
    int groups = n / gs;
    const float *ws0 = ws + (long)i * groups;
    for (int p = 0; p < count; p++) f[p] = _mm_setzero_ps();
    for (int g = 0; g < groups; g++) {
        sse2_widen_rows4(wide, wq + (long)i * n + (long)g * gs, n, gs);
        __m128 wscale = _mm_setr_ps(ws0[g], ws0[groups + g], ws0[2 * groups + g], ws0[3 * groups + g]);
        for (int p = 0; p < count; p++) {
            long at = (long)(p0 + p);
            __m128i isum = sse2_wide_rows4_dot(wide, xq + at * n + (long)g * gs, gs);
            __m128 scales = _mm_mul_ps(wscale, _mm_set1_ps(xs[at * groups + g]));
            f[p] = _mm_add_ps(f[p], _mm_mul_ps(_mm_cvtepi32_ps(isum), scales));
        }
    }
    for (int p = 0; p < count; p++) _mm_storeu_ps(out + (long)(p0 + p) * d + i, f[p]);
}

/* The prefill gemm: pmaddwd above, or int8_swar.c's in general-purpose
 * registers, which is ~2x slower on a CPU and ~1.7x faster under QEMU TCG
 * (SSE arithmetic there is a helper call per instruction): chosen by
 * timing the first calls of each. */
static TimedChoice sse2_gemm_choice = TIMED_CHOICE_INIT;

int kernels_sse2_q8q_gemm_chosen(void) {
    int forced = kernels_sse2_gemm_forced();
    return forced >= 0 ? forced : sse2_gemm_choice.chosen;
}

static void sse2_q8q_gemm_pmaddwd(float *out, const int16_t *xq, const float *xs, int batch, const int8_t *wq,
                                  const float *ws, int n, int d, int rows4, int gs) {
    for (int i = 0; i < rows4; i += 4)
        for (int p0 = 0; p0 < batch; p0 += SSE2_GEMM_POSITIONS) {
            int count = batch - p0 < SSE2_GEMM_POSITIONS ? batch - p0 : SSE2_GEMM_POSITIONS;
            sse2_q8q_gemm_rows4(out, xq, xs, p0, count, wq, ws, n, d, gs, i);
        }
}

TCG_PAGE_ALIGNED
void kernels_matmul_q8q_sse2(float *out, const int16_t *xq, const float *xs, int batch, const int8_t *wq,
                             const float *ws, int n, int d, int gs) {
    if (batch < 2 || gs > SSE2_GEMM_MAX_GROUP) {
        int8_matmul_q8q_rows(out, xq, xs, batch, wq, ws, n, d, gs, false, sse2_q8q_rows4, sse2_q8q_row1);
        return;
    }
    int rows4 = d & ~3, groups = n / gs, timed;
    if (rows4 > 0) {
        int gemm = timed_choice_pick(&sse2_gemm_choice, kernels_sse2_gemm_forced(), &timed);
        uint64_t start = timed ? timed_choice_ticks() : 0;
        if (gemm == KERNELS_GEMM_SWAR) {
            /* A lone last position would take a whole word of three: the
             * one-position kernel costs less (tools/tcg_cost.py). */
            int lone = batch % 3 == 1;
            long b = batch - lone;
            int8_swar_gemm_rows4(out, xq, xs, (int)b, wq, ws, n, d, rows4, gs);
            if (lone) /* the one-position path above, so its code stays inlined there only */
                kernels_matmul_q8q_sse2(out + b * d, xq + b * n, xs + b * groups, 1, wq, ws, n, rows4, gs);
        } else
            sse2_q8q_gemm_pmaddwd(out, xq, xs, batch, wq, ws, n, d, rows4, gs);
        if (timed)
            timed_choice_record(&sse2_gemm_choice, gemm, timed_choice_ticks() - start,
                                (double)batch * n * rows4);
    }
    for (int i = rows4; i < d; i++)
        for (int b = 0; b < batch; b++)
            out[(long)b * d + i] = sse2_q8q_row1(wq + (long)i * n, ws + (long)i * groups, xq + (long)b * n,
                                                 xs + (long)b * groups, n, gs);
}

/* Sign-extends four int8 values held in the low 32 bits of v to floats. */
static inline __m128 sse2_i8x4_to_ps(__m128i v) {
    __m128i w16 = _mm_unpacklo_epi8(v, v);      /* each byte doubled: b b */
    __m128i w32 = _mm_unpacklo_epi16(w16, w16); /* b b b b per lane */
    return _mm_cvtepi32_ps(_mm_srai_epi32(w32, 24));
}

/* sum_j q[j] * x[j] for one run of weights that share a scale. */
static inline float sse2_dot_q8(const int8_t *q, const float *x, int len) {
    __m128 acc0 = _mm_setzero_ps(), acc1 = acc0;
    int j = 0;
    for (; j + 16 <= len; j += 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(q + j));
        __m128i lo = _mm_unpacklo_epi8(v, v), hi = _mm_unpackhi_epi8(v, v);
        __m128 f0 = _mm_cvtepi32_ps(_mm_srai_epi32(_mm_unpacklo_epi16(lo, lo), 24));
        __m128 f1 = _mm_cvtepi32_ps(_mm_srai_epi32(_mm_unpackhi_epi16(lo, lo), 24));
        __m128 f2 = _mm_cvtepi32_ps(_mm_srai_epi32(_mm_unpacklo_epi16(hi, hi), 24));
        __m128 f3 = _mm_cvtepi32_ps(_mm_srai_epi32(_mm_unpackhi_epi16(hi, hi), 24));
        acc0 = _mm_add_ps(acc0, _mm_mul_ps(f0, _mm_loadu_ps(x + j)));
        acc1 = _mm_add_ps(acc1, _mm_mul_ps(f1, _mm_loadu_ps(x + j + 4)));
        acc0 = _mm_add_ps(acc0, _mm_mul_ps(f2, _mm_loadu_ps(x + j + 8)));
        acc1 = _mm_add_ps(acc1, _mm_mul_ps(f3, _mm_loadu_ps(x + j + 12)));
    }
    for (; j + 4 <= len; j += 4) {
        int32_t packed;
        memcpy(&packed, q + j, 4);
        acc0 = _mm_add_ps(acc0, _mm_mul_ps(sse2_i8x4_to_ps(_mm_cvtsi32_si128(packed)), _mm_loadu_ps(x + j)));
    }
    float sum = sse2_hsum(_mm_add_ps(acc0, acc1));
    for (; j < len; j++) sum += (float)q[j] * x[j];
    return sum;
}

void kernels_matmul_q8_sse2(float *out, const float *x, const int8_t *q, const float *s, int n, int d,
                            int group_size) {
    int8_matmul_by_runs(out, x, q, s, n, d, group_size, sse2_dot_q8);
}
