/* kernels_avx512.c - AVX-512 (F + BW) matmuls: fp32, batched fp32 and int8 x
 * int8, and attention (with quantised weights it is a tenth of a token's
 * time). The other kernels (norms, softmax) are a small share and reuse the
 * AVX2 versions. Each function carries its own
 * target attribute so this file builds with the SSE2 baseline flags; only
 * call these after checking CPUID (and, in the kernel, XCR0). */
#include <cpuid.h>
#include <immintrin.h>

#include "llm/kernels.h"
#include "llm/kernels_internal.h"

#define AVX512 __attribute__((target("avx512f,avx512bw,avx2,fma")))
#define AVX512_VNNI __attribute__((target("avx512f,avx512bw,avx512vnni,avx2,fma")))

/* The upper 256 bits of a float vector (AVX-512F only: no DQ needed). */
AVX512 static inline __m256 hi256_ps(__m512 v) {
    return _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1));
}

AVX512 static inline __m256 fold_ps(__m512 v) {
    return _mm256_add_ps(_mm512_castps512_ps256(v), hi256_ps(v));
}

/* Horizontal sums of four vectors, returned as one 4-lane vector. */
AVX512 static inline __m128 hsum4_ps(__m512 a0, __m512 a1, __m512 a2, __m512 a3) {
    __m256 s01 = _mm256_hadd_ps(fold_ps(a0), fold_ps(a1));
    __m256 s23 = _mm256_hadd_ps(fold_ps(a2), fold_ps(a3));
    __m256 s = _mm256_hadd_ps(s01, s23);
    return _mm_add_ps(_mm256_castps256_ps128(s), _mm256_extractf128_ps(s, 1));
}

/* ---------------------------------------------------------------- fp32
 * Four rows against one x, two chains of 16 per row; the tail (n % 16) goes
 * through masked loads, which never touch memory past the row. */
AVX512 static inline __m128 rows4(const float *r0, const float *x, int n) {
    const float *r1 = r0 + n, *r2 = r1 + n, *r3 = r2 + n;
    __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    __m512 b0 = a0, b1 = a0, b2 = a0, b3 = a0;
    int j = 0;
    for (; j + 32 <= n; j += 32) {
        __m512 x0 = _mm512_loadu_ps(x + j), x1 = _mm512_loadu_ps(x + j + 16);
        a0 = _mm512_fmadd_ps(_mm512_loadu_ps(r0 + j), x0, a0);
        a1 = _mm512_fmadd_ps(_mm512_loadu_ps(r1 + j), x0, a1);
        a2 = _mm512_fmadd_ps(_mm512_loadu_ps(r2 + j), x0, a2);
        a3 = _mm512_fmadd_ps(_mm512_loadu_ps(r3 + j), x0, a3);
        b0 = _mm512_fmadd_ps(_mm512_loadu_ps(r0 + j + 16), x1, b0);
        b1 = _mm512_fmadd_ps(_mm512_loadu_ps(r1 + j + 16), x1, b1);
        b2 = _mm512_fmadd_ps(_mm512_loadu_ps(r2 + j + 16), x1, b2);
        b3 = _mm512_fmadd_ps(_mm512_loadu_ps(r3 + j + 16), x1, b3);
    }
    for (; j < n; j += 16) {
        __mmask16 m = n - j >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (n - j)) - 1);
        __m512 x0 = _mm512_maskz_loadu_ps(m, x + j);
        a0 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, r0 + j), x0, a0);
        a1 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, r1 + j), x0, a1);
        a2 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, r2 + j), x0, a2);
        a3 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, r3 + j), x0, a3);
    }
    return hsum4_ps(_mm512_add_ps(a0, b0), _mm512_add_ps(a1, b1), _mm512_add_ps(a2, b2),
                    _mm512_add_ps(a3, b3));
}

AVX512 static inline float row1(const float *row, const float *x, int n) {
    __m512 acc = _mm512_setzero_ps();
    for (int j = 0; j < n; j += 16) {
        __mmask16 m = n - j >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (n - j)) - 1);
        acc = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, row + j), _mm512_maskz_loadu_ps(m, x + j), acc);
    }
    __m256 s = fold_ps(acc);
    __m128 h = _mm_add_ps(_mm256_castps256_ps128(s), _mm256_extractf128_ps(s, 1));
    h = _mm_add_ps(h, _mm_movehl_ps(h, h));
    h = _mm_add_ss(h, _mm_shuffle_ps(h, h, 1));
    return _mm_cvtss_f32(h);
}

AVX512 static void matmul_avx512(float *out, const float *x, const float *w, int n, int d) {
    int i = 0;
    /* (Software prefetch of the next block measured slower here: the fp32
     * stream is bandwidth-bound and the hardware prefetcher keeps up.) */
    for (; i + 4 <= d; i += 4) _mm_storeu_ps(out + i, rows4(w + (long)i * n, x, n));
    for (; i < d; i++) out[i] = row1(w + (long)i * n, x, n);
}

/* Row block outside, tokens inside: four weight rows stay in L1 for the
 * batch; each token's arithmetic is exactly matmul_avx512's. */
AVX512 static void matmul_batch_avx512(float *out, const float *x, int batch, const float *w, int n, int d) {
    int i = 0;
    for (; i + 4 <= d; i += 4)
        for (int b = 0; b < batch; b++)
            _mm_storeu_ps(out + (long)b * d + i, rows4(w + (long)i * n, x + (long)b * n, n));
    for (; i < d; i++)
        for (int b = 0; b < batch; b++) out[(long)b * d + i] = row1(w + (long)i * n, x + (long)b * n, n);
}

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
AVX512 static inline __m512i pair_sum(__m512i a, __m512i b) {
    return _mm512_add_epi32(_mm512_unpacklo_epi32(a, b), _mm512_unpackhi_epi32(a, b));
}
AVX512 static inline __m512i quad_sum(__m512i ab, __m512i cd) {
    return _mm512_add_epi32(_mm512_unpacklo_epi64(ab, cd), _mm512_unpackhi_epi64(ab, cd));
}

/* Eight 16-lane int32 vectors to their eight totals (row r in lane r). */
AVX512 static inline __m256i reduce8(const __m512i a[8]) {
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

AVX512 static inline __m512i madd32(const int8_t *w, __m512i x) {
    return _mm512_madd_epi16(_mm512_cvtepi8_epi16(_mm256_loadu_si256((const __m256i *)w)), x);
}

AVX512 static inline __m512i madd16(const int8_t *w, const int16_t *x) {
    __m256i p = _mm256_madd_epi16(_mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)w)),
                                  _mm256_loadu_si256((const __m256i *)x));
    return _mm512_inserti64x4(_mm512_setzero_si512(), p, 0);
}

/* Rows w[r] (r < 8; callers repeat a row to fill a short block) against one
 * token: lane r is row r's result. Row r's scales are at ws0 +
 * scale_index[r] (one per group). ACC(acc, w, x) adds the int16 products of
 * 32 weights and activations to acc: vpmaddwd + vpaddd, or one vpdpwssd
 * where AVX-512 VNNI exists (the same exact integer sums either way). */
#define Q8Q_ROWS8_BODY(ACC)                                                                                   \
    __m256 f = _mm256_setzero_ps();                                                                           \
    for (int g = 0, base = 0; base < n; g++, base += gs) {                                                    \
        __m512i a[8];                                                                                         \
        /* The next block's rows (8 * n contiguous bytes) a group's share at a                               \
         * time, so they are in cache when that block starts. */                                              \
        if (ahead)                                                                                            \
            for (int k = 0; k < 8 * gs; k += 64) _mm_prefetch((const char *)ahead + 8 * base + k, _MM_HINT_T0); \
        int j = base, end = base + gs;                                                                        \
        for (int r = 0; r < 8; r++) a[r] = _mm512_setzero_si512();                                            \
        for (; j + 32 <= end; j += 32) {                                                                      \
            __m512i xv = _mm512_loadu_si512((const void *)(x + j));                                           \
            _Pragma("GCC unroll 8") for (int r = 0; r < 8; r++) a[r] = ACC(a[r], w[r] + j, xv);               \
        }                                                                                                     \
        if (j < end) {                                                                                        \
            _Pragma("GCC unroll 8") for (int r = 0; r < 8; r++) a[r] = _mm512_add_epi32(a[r], madd16(w[r] + j, x + j)); \
        }                                                                                                     \
        __m256i isum = reduce8(a);                                                                            \
        __m256 scales = _mm256_mul_ps(_mm256_i32gather_ps(ws0 + g, scale_index, 4), _mm256_set1_ps(xs[g]));  \
        f = _mm256_add_ps(f, _mm256_mul_ps(_mm256_cvtepi32_ps(isum), scales));                                \
    }                                                                                                         \
    return f;

#define ACC_MADD(acc, w, xv) _mm512_add_epi32((acc), madd32((w), (xv)))
#define ACC_VNNI(acc, w, xv) \
    _mm512_dpwssd_epi32((acc), _mm512_cvtepi8_epi16(_mm256_loadu_si256((const __m256i *)(w))), (xv))

AVX512 static inline __m256 q8q_rows8(const int8_t *const w[8], const float *ws0, __m256i scale_index,
                                      const int16_t *x, const float *xs, int n, int gs, const int8_t *ahead) {
    Q8Q_ROWS8_BODY(ACC_MADD)
}

AVX512_VNNI static inline __m256 q8q_rows8_vnni(const int8_t *const w[8], const float *ws0, __m256i scale_index,
                                                const int16_t *x, const float *xs, int n, int gs,
                                                const int8_t *ahead) {
    Q8Q_ROWS8_BODY(ACC_VNNI)
}

/* CPUID leaf 7: ECX bit 11. The OS state is the same ZMM state AVX-512F
 * needs, which the caller has already checked before choosing this set. */
static int cpu_has_avx512_vnni(void) {
    unsigned a, b, c, d;
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return 0;
    return (c >> 11) & 1;
}

AVX512 static void matmul_q8q_avx512(float *out, const int16_t *xq, const float *xs, int batch,
                                     const int8_t *wq, const float *ws, int n, int d, int gs) {
    static int vnni = -1; /* racing workers all compute the same answer */
    if (vnni < 0) vnni = cpu_has_avx512_vnni();
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
            __m256 f = vnni ? q8q_rows8_vnni(w, ws0, scale_index, xq + (long)b * n, xs + (long)b * groups, n,
                                             gs, ahead)
                            : q8q_rows8(w, ws0, scale_index, xq + (long)b * n, xs + (long)b * groups, n, gs, ahead);
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

/* ---------------------------------------------------------------- attention */

/* Mask of the first n (<= 16) lanes. */
static inline __mmask16 first_lanes(int n) {
    return n >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << n) - 1);
}

/* q . k for four keys `stride` apart, 16 columns per step (masked tail). */
AVX512 static inline __m128 scores4(const float *q, const float *k, long stride, int hs) {
    __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    for (int c = 0; c < hs; c += 16) {
        __mmask16 m = first_lanes(hs - c);
        __m512 qc = _mm512_maskz_loadu_ps(m, q + c);
        a0 = _mm512_fmadd_ps(qc, _mm512_maskz_loadu_ps(m, k + c), a0);
        a1 = _mm512_fmadd_ps(qc, _mm512_maskz_loadu_ps(m, k + stride + c), a1);
        a2 = _mm512_fmadd_ps(qc, _mm512_maskz_loadu_ps(m, k + 2 * stride + c), a2);
        a3 = _mm512_fmadd_ps(qc, _mm512_maskz_loadu_ps(m, k + 3 * stride + c), a3);
    }
    return hsum4_ps(a0, a1, a2, a3);
}

/* One head: scores four keys at a time, the softmax, then the values
 * weighted in one pass per 64 columns (four registers per position). */
AVX512 static void attend_avx512(float *out, float *att, const float *q, const float *keys, const float *values,
                                 int stride, int n_pos, int hs, float scale) {
    int p = 0;
    for (; p + 4 <= n_pos; p += 4)
        _mm_storeu_ps(att + p, _mm_mul_ps(scores4(q, keys + (long)p * stride, stride, hs), _mm_set1_ps(scale)));
    for (; p < n_pos; p++) {
        __m512 a = _mm512_setzero_ps();
        for (int c = 0; c < hs; c += 16) {
            __mmask16 m = first_lanes(hs - c);
            a = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, q + c),
                                _mm512_maskz_loadu_ps(m, keys + (long)p * stride + c), a);
        }
        att[p] = _mm512_reduce_add_ps(a) * scale;
    }
    kernels_softmax_avx2(att, n_pos);
    for (int c = 0; c < hs; c += 64) {
        __mmask16 m[4];
        for (int w = 0; w < 4; w++) m[w] = c + 16 * w < hs ? first_lanes(hs - c - 16 * w) : 0;
        __m512 acc[4] = {_mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps()};
        const float *v = values + c;
        for (int pos = 0; pos < n_pos; pos++, v += stride) {
            __m512 a = _mm512_set1_ps(att[pos]);
            for (int w = 0; w < 4; w++)
                acc[w] = _mm512_fmadd_ps(a, _mm512_maskz_loadu_ps(m[w], v + 16 * w), acc[w]);
        }
        for (int w = 0; w < 4; w++) _mm512_mask_storeu_ps(out + c + 16 * w, m[w], acc[w]);
    }
}

const KernelSet kernels_avx512 = {
    .name = "avx512",
    .matmul = matmul_avx512,
    .matmul_q8 = kernels_matmul_q8_avx2,
    .matmul_batch = matmul_batch_avx512,
    .matmul_q8q = matmul_q8q_avx512,
    .dot = kernels_dot_avx2,
    .axpy = kernels_axpy_avx2,
    .rmsnorm = kernels_rmsnorm_avx2,
    .softmax = kernels_softmax_avx2,
    .swiglu = kernels_swiglu_avx2,
    .add = kernels_add_avx2,
    .attend = attend_avx512,
};
