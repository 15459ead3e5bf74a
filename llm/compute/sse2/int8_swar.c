/* int8_swar.c - the int8 x int8 prefill gemm in general-purpose registers,
 * for the SSE2 set under QEMU TCG.
 *
 * Why: TCG turns every SSE arithmetic instruction into a helper call, while
 * a 64-bit imul or add is one host instruction, so there integer SIMD
 * within a register beats pmaddwd. Three positions' activations of one
 * column are packed into one 64-bit word, X = x0 + x1 * 2^21 + x2 * 2^42,
 * once per call; then per row and column `acc += w * X` (one imul, one add)
 * sums three positions at once, each in its own 21-bit lane. The lanes stay
 * exact: |x| <= 127 and |w| <= 128, so a span of 64 columns sums to less
 * than 2^20 in magnitude. Each group's exact sums are then scaled exactly as
 * the one-position kernels do (sum += (float)isum * (ws * xs), group by
 * group, four rows per SSE operation), so the outputs are their bits.
 * On real CPUs pmaddwd is faster; int8_sse2.c chooses by measurement. */
#include <emmintrin.h>
#include <stdint.h>

#include "llm/compute/sse2/int8_swar.h"
#include "llm/compute/target.h"

#define LANE_BITS 21
/* Columns summed in one lane before its exact sum is taken out. */
#define SPAN 64
/* Position triples per pass (15 positions: a prefill chunk, as 3 + 2 triples). */
#define TRIPLES 5
/* Columns packed at once: the packed words of a pass stay in L1. */
#define CHUNK INT8_SWAR_MAX_GROUP

/* One packed word of three activations (sign-extended, added as integers). */
static inline uint64_t pack3(int16_t x0, int16_t x1, int16_t x2) {
    return (uint64_t)(int64_t)x0 + ((uint64_t)(int64_t)x1 << LANE_BITS) +
           ((uint64_t)(int64_t)x2 << (2 * LANE_BITS));
}

/* Lane k's exact sum of an accumulator, written to sums[4 * k] (k < 3). */
static inline void unpack3(int32_t *sums, uint64_t acc, int add) {
    int64_t s0 = (int64_t)(acc << (64 - LANE_BITS)) >> (64 - LANE_BITS);
    uint64_t rest = (uint64_t)((int64_t)(acc - (uint64_t)s0) >> LANE_BITS);
    int64_t s1 = (int64_t)(rest << (64 - LANE_BITS)) >> (64 - LANE_BITS);
    int64_t s2 = (int64_t)(rest - (uint64_t)s1) >> LANE_BITS;
    if (add) {
        sums[0] += (int32_t)s0, sums[4] += (int32_t)s1, sums[8] += (int32_t)s2;
    } else {
        sums[0] = (int32_t)s0, sums[4] = (int32_t)s1, sums[8] = (int32_t)s2;
    }
}

/* Four rows (w0, rows n apart) against one packed triple over `len` columns
 * (a multiple of 16, at most SPAN); sums[4 * k + r] gets (or, with add, adds)
 * position k's sum of row r. */
static inline __attribute__((always_inline)) void rows4_span(int32_t *sums, const int8_t *w0, long n,
                                                             const uint64_t *x, int len, int add) {
    const int8_t *w1 = w0 + n, *w2 = w1 + n, *w3 = w2 + n;
    uint64_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
#pragma GCC unroll 4
    for (int j = 0; j < len; j += 2) {
        uint64_t x0 = x[j], x1 = x[j + 1];
        a0 += (uint64_t)(int64_t)w0[j] * x0;
        a1 += (uint64_t)(int64_t)w1[j] * x0;
        a2 += (uint64_t)(int64_t)w2[j] * x0;
        a3 += (uint64_t)(int64_t)w3[j] * x0;
        a0 += (uint64_t)(int64_t)w0[j + 1] * x1;
        a1 += (uint64_t)(int64_t)w1[j + 1] * x1;
        a2 += (uint64_t)(int64_t)w2[j + 1] * x1;
        a3 += (uint64_t)(int64_t)w3[j + 1] * x1;
    }
    unpack3(sums + 0, a0, add);
    unpack3(sums + 1, a1, add);
    unpack3(sums + 2, a2, add);
    unpack3(sums + 3, a3, add);
}

/* Two rows (w0, w0 + n) against T (2 or 3) packed triples x, x + CHUNK,
 * x + 2 * CHUNK over `len` columns: each weight byte loaded serves 3 * T
 * positions (rows4_span's serves three; under TCG a load costs more than the
 * imul it feeds). sums + 12 * u as rows4_span's sums of triple u, for rows
 * r0 and r0 + 1. */
static inline __attribute__((always_inline)) void rows2_triples_span(int32_t *sums, int r0, const int8_t *w0,
                                                                     long n, const uint64_t *x, int len,
                                                                     int add, const int T) {
    const int8_t *w1 = w0 + n;
    const uint64_t *y = x + CHUNK, *z = x + (T > 2 ? 2 * CHUNK : CHUNK);
    uint64_t a0 = 0, a1 = 0, a2 = 0, b0 = 0, b1 = 0, b2 = 0;
#pragma GCC unroll 2
    for (int j = 0; j < len; j++) {
        uint64_t wa = (uint64_t)(int64_t)w0[j], wb = (uint64_t)(int64_t)w1[j], xj = x[j], yj = y[j];
        a0 += wa * xj;
        b0 += wb * xj;
        a1 += wa * yj;
        b1 += wb * yj;
        if (T > 2) {
            uint64_t zj = z[j];
            a2 += wa * zj;
            b2 += wb * zj;
        }
    }
    unpack3(sums + r0, a0, add);
    unpack3(sums + r0 + 1, b0, add);
    unpack3(sums + 12 + r0, a1, add);
    unpack3(sums + 12 + r0 + 1, b1, add);
    if (T > 2) {
        unpack3(sums + 24 + r0, a2, add);
        unpack3(sums + 24 + r0 + 1, b2, add);
    }
}

/* Four rows against T (1..3) packed triples from x (CHUNK apart): sums[u]
 * as rows4_span's for triple u. */
static inline __attribute__((always_inline)) void rows4_triples(int32_t sums[3][12], const int8_t *w0, long n,
                                                                const uint64_t *x, int len, int add, int T) {
    if (T == 1) {
        rows4_span(sums[0], w0, n, x, len, add);
    } else if (T == 2) {
        rows2_triples_span(&sums[0][0], 0, w0, n, x, len, add, 2);
        rows2_triples_span(&sums[0][0], 2, w0 + 2 * n, n, x, len, add, 2);
    } else {
        rows2_triples_span(&sums[0][0], 0, w0, n, x, len, add, 3);
        rows2_triples_span(&sums[0][0], 2, w0 + 2 * n, n, x, len, add, 3);
    }
}

/* One pass: positions p0.. (npos <= 3 * TRIPLES), columns c0.. (ncols, whole
 * groups), every block of four rows below rows4. out holds the sums of the
 * groups before c0 (c0 > 0) and gets those up to c0 + ncols. */
TCG_NO_SLP static void swar_pass(float *out, const int16_t *xq, const float *xs, int p0, int npos,
                                 const int8_t *wq, const float *ws, int n, int d, int rows4, int gs, int c0,
                                 int ncols) {
    uint64_t packed[TRIPLES][CHUNK];
    __m128 xsplat[3 * TRIPLES][CHUNK / 16];
    int groups = n / gs, g0 = c0 / gs, ng = ncols / gs, triples = (npos + 2) / 3;
    for (int t = 0; t < triples; t++) {
        const int16_t *x0 = xq + (long)(p0 + 3 * t) * n + c0;
        const int16_t *x1 = 3 * t + 1 < npos ? x0 + n : 0, *x2 = 3 * t + 2 < npos ? x0 + 2L * n : 0;
        for (int c = 0; c < ncols; c++) packed[t][c] = pack3(x0[c], x1 ? x1[c] : 0, x2 ? x2[c] : 0);
    }
    for (int k = 0; k < 3 * triples; k++)
        for (int g = 0; g < ng; g++)
            xsplat[k][g] = k < npos ? _mm_set1_ps(xs[(long)(p0 + k) * groups + g0 + g]) : _mm_setzero_ps();
    for (int i = 0; i < rows4; i += 4) {
        const float *ws0 = ws + (long)i * groups + g0;
        const int8_t *w = wq + (long)i * n + c0;
        __m128 wscale[CHUNK / 16];
        for (int g = 0; g < ng; g++)
            wscale[g] = _mm_setr_ps(ws0[g], ws0[groups + g], ws0[2 * groups + g], ws0[3 * groups + g]);
        for (int t = 0, together; t < triples; t += together) {
            together = triples - t >= 3 ? 3 : triples - t;
            __m128 f[3][3];
            int32_t sums[3][12] __attribute__((aligned(16)));
            for (int u = 0; u < together; u++)
                for (int k = 0; k < 3; k++)
                    f[u][k] = c0 > 0 && 3 * (t + u) + k < npos
                                  ? _mm_loadu_ps(out + (long)(p0 + 3 * (t + u) + k) * d + i)
                                  : _mm_setzero_ps();
            for (int g = 0; g < ng; g++) {
                const uint64_t *x = packed[t] + g * gs;
                if (gs <= SPAN) {
                    rows4_triples(sums, w + g * gs, n, x, gs, 0, together);
                } else {
                    for (int s = 0; s < gs; s += SPAN)
                        rows4_triples(sums, w + g * gs + s, n, x + s, gs - s < SPAN ? gs - s : SPAN, s > 0,
                                      together);
                }
                for (int u = 0; u < together; u++)
                    for (int k = 0; k < 3; k++) {
                        __m128 scales = _mm_mul_ps(wscale[g], xsplat[3 * (t + u) + k][g]);
                        __m128 isum = _mm_cvtepi32_ps(_mm_loadu_si128((const __m128i *)(sums[u] + 4 * k)));
                        f[u][k] = _mm_add_ps(f[u][k], _mm_mul_ps(isum, scales));
                    }
            }
            for (int u = 0; u < together; u++)
                for (int k = 0; k < 3 && 3 * (t + u) + k < npos; k++)
                    _mm_storeu_ps(out + (long)(p0 + 3 * (t + u) + k) * d + i, f[u][k]);
        }
    }
}

TCG_PAGE_ALIGNED
void int8_swar_gemm_rows4(float *out, const int16_t *xq, const float *xs, int batch, const int8_t *wq,
                          const float *ws, int n, int d, int rows4, int gs) {
    int chunk = CHUNK / gs * gs;
    for (int p0 = 0; p0 < batch; p0 += 3 * TRIPLES) {
        int npos = batch - p0 < 3 * TRIPLES ? batch - p0 : 3 * TRIPLES;
        for (int c0 = 0; c0 < n; c0 += chunk)
            swar_pass(out, xq, xs, p0, npos, wq, ws, n, d, rows4, gs, c0, n - c0 < chunk ? n - c0 : chunk);
    }
}
