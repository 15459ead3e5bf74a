/* ggml_simd_avx512.c - AVX-512 (BW, VL, VNNI) matmuls of ggml weight rows
 * with quantised activations for Q8_0, Q4_0, Q4_K and Q6_K: eight rows per
 * pass share the activation loads (measured 5-8% faster than four on the
 * 110M shape, 2 threads), addressed as one pointer and the row stride (an
 * array of row pointers spilled registers). Q4_0 holds four rows side by
 * side in one register and Q8_0 two (a lane group per row), so the
 * per-block scale work is shared too; the k-quants keep one accumulator per
 * row. Every lane's arithmetic depends only on its own row, so a row's
 * result is the same whichever rows it is grouped with (a short tail is
 * redone as the last eight rows).
 * Built with a target attribute (the file compiles with SSE2 baseline
 * flags); ggml_avx512_usable says whether the CPU and OS allow it. */
#include <immintrin.h>

#include "llm/ggml_types.h"
#include "llm/ggml_simd_internal.h"

/* Prefetch distance and level: 24 rows ahead into L2 measured faster than
 * 8, 12, 16 or 48 rows, or than L1 (Q8_0 +12%, Q4_0 +5% at 2 threads). */
#define AHEAD_ROWS 24
#define PREFETCH_HINT _MM_HINT_T1
#define AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni,avx2,fma,f16c")))

static void cpuid(uint32_t leaf, uint32_t sub, uint32_t r[4]) {
    __asm__ volatile("cpuid" : "=a"(r[0]), "=b"(r[1]), "=c"(r[2]), "=d"(r[3]) : "a"(leaf), "c"(sub));
}

/* AVX-512 F/BW/VL/VNNI in CPUID and opmask/ZMM state enabled in XCR0
 * (plain cpuid and xgetbv, so the kernel can ask too). */
static int avx512_vnni_usable(void) {
    uint32_t r[4];
    cpuid(0, 0, r);
    if (r[0] < 7) return 0;
    cpuid(1, 0, r);
    if (!((r[2] >> 27) & 1)) return 0; /* OSXSAVE: xgetbv allowed */
    uint32_t lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    if ((lo & 0xe6) != 0xe6) return 0; /* SSE, AVX, opmask, ZMM0-15 and ZMM16-31 state */
    cpuid(7, 0, r);
    int f = (r[1] >> 16) & 1, bw = (r[1] >> 30) & 1, vl = (r[1] >> 31) & 1, vnni = (r[2] >> 11) & 1;
    return f && bw && vl && vnni;
}

int ggml_avx512_usable(void) {
    static int usable = -1;
    if (usable < 0) usable = avx512_vnni_usable();
    return usable;
}

/* Sum of the four floats of 128-bit lane r. */
AVX512 static inline float lane_sum(__m512 v, int r) {
    __m128 h;
    switch (r) {
    case 0:
        h = _mm512_extractf32x4_ps(v, 0);
        break;
    case 1:
        h = _mm512_extractf32x4_ps(v, 1);
        break;
    case 2:
        h = _mm512_extractf32x4_ps(v, 2);
        break;
    default:
        h = _mm512_extractf32x4_ps(v, 3);
        break;
    }
    return sse2_hsum_ps(h);
}

AVX512 static inline float half_sum(__m512 v, int upper) {
    __m256 h =
        upper ? _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)) : _mm512_castps512_ps256(v);
    __m128 q = _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
    return sse2_hsum_ps(q);
}

/* Prefetch the rows AHEAD_ROWS on: a group of eight rows is one run of
 * 8 * row_bytes, and block b's share of it starts at 8 * b block bytes
 * (callers pass twice the block size: 4 * (2 * block) per block). Lines
 * are rounded up (some asked for twice, and the next share's start early),
 * which measured faster than asking for each line once. Prefetches past
 * the last row are harmless (never fault). */
#define PREFETCH_GROUP(ahead, b, BLOCK_BYTES)                                                                \
    for (size_t line = 0; line < 4 * (size_t)(BLOCK_BYTES); line += 64)                                      \
    _mm_prefetch((const char *)(ahead) + 4 * (size_t)(b) * (BLOCK_BYTES) + line, PREFETCH_HINT)

/* ---------------------------------------------------------------- Q4_0 */

static inline short load_i16(const uint8_t *p) {
    short v;
    __builtin_memcpy(&v, p, 2);
    return v;
}

/* The half scales at p of four rows rb apart, as floats: row r's in lanes
 * 4r..4r+3 (masked broadcasts straight from memory). */
AVX512 static inline __m512 row_scales4(const uint8_t *p, size_t rb) {
    __m256i h = _mm256_maskz_set1_epi16(0x000f, load_i16(p));
    h = _mm256_mask_set1_epi16(h, 0x00f0, load_i16(p + rb));
    h = _mm256_mask_set1_epi16(h, 0x0f00, load_i16(p + 2 * rb));
    h = _mm256_mask_set1_epi16(h, 0xf000, load_i16(p + 3 * rb));
    return _mm512_cvtph_ps(h);
}

/* The 16 bytes at p of four rows rb apart, row r in 128-bit lane r. */
AVX512 static inline __m512i row_bytes4(const uint8_t *p, size_t rb) {
    __m512i q = _mm512_castsi128_si512(load16(p));
    q = _mm512_inserti32x4(q, load16(p + rb), 1);
    q = _mm512_inserti32x4(q, load16(p + 2 * rb), 2);
    return _mm512_inserti32x4(q, load16(p + 3 * rb), 3);
}

/* One block of four Q4_0 rows (p, rb apart): lanes 4r..4r+3 are row r, its
 * low nibbles meeting x[0..15] and its high ones x[16..31] (both
 * broadcast). The nibbles are unsigned (0..15), so the -8 is 8 * sum(x),
 * shared: `bias` holds it in lane 0 of each row (the lanes are summed at the
 * end). acc += d_w * d_x * (q . x - 8 sum(x)). */
AVX512 static inline __m512 q4_0_four(const uint8_t *p, size_t rb, __m512i xlo, __m512i xhi, __m512i bias,
                                      __m512 dx, __m512 acc) {
    const __m512i m4 = _mm512_set1_epi8(0x0f);
    __m512i q = row_bytes4(p + 2, rb);
    __m512i s = _mm512_dpbusd_epi32(bias, _mm512_and_si512(q, m4), xlo);
    s = _mm512_dpbusd_epi32(s, _mm512_and_si512(_mm512_srli_epi16(q, 4), m4), xhi);
    return _mm512_fmadd_ps(_mm512_cvtepi32_ps(s), _mm512_mul_ps(row_scales4(p, rb), dx), acc);
}

/* Eight rows rb apart (rb 0: one row eight times) into out[0..7]. */
AVX512 static void q4_0_eight(float *out, const uint8_t *p, size_t rb, const BlockQ8A *a, int blocks,
                              const uint8_t *ahead) {
    __m512 acc0 = _mm512_setzero_ps(), acc1 = _mm512_setzero_ps();
    for (int b = 0; b < blocks; b++, p += sizeof(BlockQ4_0)) {
        PREFETCH_GROUP(ahead, b, 2 * sizeof(BlockQ4_0));
        __m512i xlo = _mm512_broadcast_i32x4(load16(a[b].qs));
        __m512i xhi = _mm512_broadcast_i32x4(load16(a[b].qs + 16));
        __m512i bias = _mm512_maskz_set1_epi32(0x1111, -8 * a[b].qsum);
        __m512 dx = _mm512_set1_ps(a[b].d);
        acc0 = q4_0_four(p, rb, xlo, xhi, bias, dx, acc0);
        acc1 = q4_0_four(p + 4 * rb, rb, xlo, xhi, bias, dx, acc1);
    }
    for (int r = 0; r < 4; r++) out[r] = lane_sum(acc0, r), out[4 + r] = lane_sum(acc1, r);
}

/* Rows in groups of eight; a short tail is done as the last eight rows
 * again (each row's result is the same in any group), or row by row when
 * there are fewer than eight in all. */
#define EIGHT_ROWS(EIGHT, out, rows, row_bytes, a, blocks, count)                                            \
    do {                                                                                                     \
        int i_ = 0;                                                                                          \
        for (; i_ + 8 <= (count); i_ += 8)                                                                   \
            EIGHT((out) + i_, (rows) + (size_t)i_ * (row_bytes), (row_bytes), (a), (blocks),                 \
                  (rows) + (size_t)(i_ + AHEAD_ROWS) * (row_bytes));                                         \
        if (i_ == (count)) break;                                                                            \
        if ((count) >= 8) {                                                                                  \
            float last_[8];                                                                                  \
            EIGHT(last_, (rows) + (size_t)((count)-8) * (row_bytes), (row_bytes), (a), (blocks), (rows));    \
            for (; i_ < (count); i_++) (out)[i_] = last_[i_ - ((count)-8)];                                  \
            break;                                                                                           \
        }                                                                                                    \
        for (; i_ < (count); i_++) {                                                                         \
            float one_[8];                                                                                   \
            EIGHT(one_, (rows) + (size_t)i_ * (row_bytes), 0, (a), (blocks), (rows));                        \
            (out)[i_] = one_[0];                                                                             \
        }                                                                                                    \
    } while (0)

AVX512 static void avx512_matmul_q4_0(float *out, const uint8_t *rows, size_t row_bytes, const void *act,
                                      int n, int count) {
    EIGHT_ROWS(q4_0_eight, out, rows, row_bytes, (const BlockQ8A *)act, n / QK32, count);
}

/* ---------------------------------------------------------------- Q8_0 */

/* The half scales at p of two rows rb apart as floats: the first row's in
 * lanes 0-7, the second's in 8-15. */
AVX512 static inline __m512 row_scales2(const uint8_t *p, size_t rb) {
    __m256i h = _mm256_maskz_set1_epi16(0x00ff, load_i16(p));
    return _mm512_cvtph_ps(_mm256_mask_set1_epi16(h, 0xff00, load_i16(p + rb)));
}

/* One block of two Q8_0 rows (p, rb apart) in the halves of one register.
 * VNNI takes unsigned times signed, so the activations come flipped:
 * (x + 128) . w - 128 * sum(w). */
AVX512 static inline __m512 q8_0_two(const uint8_t *p, size_t rb, __m512i xu, __m512 dx, __m512 acc) {
    const __m512i flip = _mm512_set1_epi8((char)0x80), zero = _mm512_setzero_si512();
    __m512i q = _mm512_inserti64x4(_mm512_castsi256_si512(load32(p + 2)), load32(p + rb + 2), 1);
    __m512i s = _mm512_sub_epi32(_mm512_dpbusd_epi32(zero, xu, q), _mm512_dpbusd_epi32(zero, flip, q));
    return _mm512_fmadd_ps(_mm512_cvtepi32_ps(s), _mm512_mul_ps(row_scales2(p, rb), dx), acc);
}

AVX512 static void q8_0_eight(float *out, const uint8_t *p, size_t rb, const BlockQ8A *a, int blocks,
                              const uint8_t *ahead) {
    const __m512i flip = _mm512_set1_epi8((char)0x80);
    __m512 acc[4] = {_mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps()};
    for (int b = 0; b < blocks; b++, p += sizeof(BlockQ8_0)) {
        PREFETCH_GROUP(ahead, b, 2 * sizeof(BlockQ8_0));
        __m512i xu = _mm512_xor_si512(_mm512_broadcast_i64x4(load32(a[b].qs)), flip);
        __m512 dx = _mm512_set1_ps(a[b].d);
        for (int k = 0; k < 4; k++) acc[k] = q8_0_two(p + 2 * k * rb, rb, xu, dx, acc[k]);
    }
    for (int k = 0; k < 4; k++) out[2 * k] = half_sum(acc[k], 0), out[2 * k + 1] = half_sum(acc[k], 1);
}

AVX512 static void avx512_matmul_q8_0(float *out, const uint8_t *rows, size_t row_bytes, const void *act,
                                      int n, int count) {
    EIGHT_ROWS(q8_0_eight, out, rows, row_bytes, (const BlockQ8A *)act, n / QK32, count);
}

/* ---------------------------------------------------------------- Q4_K */

/* Activations of a Q8K block rearranged to meet the weights: register k
 * holds x[lo + 32k'..] in its low 256 bits and the 32 values `gap` further
 * on in its high ones. Q4_K (bytes 0-63 of qs: low nibbles are values 0-31
 * and 64-95, high nibbles 32-63 and 96-127; bytes 64-127 likewise + 128)
 * uses starts 0, 32, 128, 160 with gap 64; Q6_K (group k of both halves)
 * starts 0, 32, 64, 96 with gap 128. */
AVX512 static inline void k_act(const int8_t *qs, const int start[4], int gap, __m512i x[4]) {
    for (int k = 0; k < 4; k++)
        x[k] =
            _mm512_inserti64x4(_mm512_castsi256_si512(load32(qs + start[k])), load32(qs + start[k] + gap), 1);
}

/* int16 index vectors picking scale s0 for words 0-15 and s1 for 16-31. */
AVX512 static inline __m512i pick2(int s0, int s1) {
    return _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_set1_epi16((short)s0)),
                              _mm256_set1_epi16((short)s1), 1);
}

AVX512 static inline __m512 q4_k_block(const BlockQ4_K *w, const BlockQ8K *a, const __m512i x[4],
                                       const __m512i pick[4], __m512 acc) {
    const __m512i m4 = _mm512_set1_epi8(0x0f);
    uint32_t words[4];
    k4_scales_mins(w->scales, words);
    __m512i sc16 = _mm512_castsi128_si512(_mm_cvtepu8_epi16(_mm_loadl_epi64((const __m128i *)words)));
    __m512i isum = _mm512_setzero_si512();
    for (int h = 0; h < 2; h++) {
        __m512i z = _mm512_loadu_si512((const void *)(w->qs + 64 * h));
        __m512i lo = _mm512_maddubs_epi16(_mm512_and_si512(z, m4), x[2 * h]);
        __m512i hi = _mm512_maddubs_epi16(_mm512_and_si512(_mm512_srli_epi16(z, 4), m4), x[2 * h + 1]);
        isum = _mm512_dpwssd_epi32(isum, lo, _mm512_permutexvar_epi16(pick[2 * h], sc16));
        isum = _mm512_dpwssd_epi32(isum, hi, _mm512_permutexvar_epi16(pick[2 * h + 1], sc16));
    }
    __m128i m8 = _mm_loadl_epi64((const __m128i *)(words + 2));
    __m256i mins = _mm256_cvtepu8_epi16(_mm_unpacklo_epi8(m8, m8));
    __m256i msum = _mm256_madd_epi16(load32(a->bsums), mins);
    /* d and dmin side by side, converted by F16C (exact, subnormals too) */
    uint32_t halves;
    __builtin_memcpy(&halves, &w->d, 4);
    __m128 dd = _mm_mul_ps(_mm_cvtph_ps(_mm_cvtsi32_si128((int)halves)), _mm_set1_ps(a->d));
    acc = _mm512_fmadd_ps(_mm512_broadcastss_ps(dd), _mm512_cvtepi32_ps(isum), acc);
    return _mm512_fnmadd_ps(_mm512_broadcastss_ps(_mm_movehdup_ps(dd)),
                            _mm512_cvtepi32_ps(_mm512_zextsi256_si512(msum)), acc);
}

/* ---------------------------------------------------------------- Q6_K */

/* Group k of both halves: values 32k.. of half 0 in the low 256 bits and
 * of half 1 in the high ones, unsigned (q + 32); per-16 signed scales. */
AVX512 static inline __m512 q6_k_block(const BlockQ6_K *w, const BlockQ8K *a, const __m512i x[4],
                                       const __m512i pick[4], __m512 acc) {
    const __m512i m4 = _mm512_set1_epi8(0x0f), m30 = _mm512_set1_epi8(0x30);
    __m512i l0 = _mm512_inserti64x4(_mm512_castsi256_si512(load32(w->ql)), load32(w->ql + 64), 1);
    __m512i l1 = _mm512_inserti64x4(_mm512_castsi256_si512(load32(w->ql + 32)), load32(w->ql + 96), 1);
    __m512i h = _mm512_loadu_si512((const void *)w->qh);
    __m512i q[4];
    q[0] = _mm512_or_si512(_mm512_and_si512(l0, m4), _mm512_and_si512(_mm512_slli_epi16(h, 4), m30));
    q[1] = _mm512_or_si512(_mm512_and_si512(l1, m4), _mm512_and_si512(_mm512_slli_epi16(h, 2), m30));
    q[2] = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi16(l0, 4), m4), _mm512_and_si512(h, m30));
    q[3] = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi16(l1, 4), m4),
                           _mm512_and_si512(_mm512_srli_epi16(h, 2), m30));
    __m256i scales16 = _mm256_cvtepi8_epi16(load16(w->scales));
    __m512i sc = _mm512_castsi256_si512(scales16);
    __m512i isum = _mm512_setzero_si512();
    for (int k = 0; k < 4; k++)
        isum = _mm512_dpwssd_epi32(isum, _mm512_maddubs_epi16(q[k], x[k]),
                                   _mm512_permutexvar_epi16(pick[k], sc));
    __m256i bias = _mm256_slli_epi32(_mm256_madd_epi16(load32(a->bsums), scales16), 5);
    isum = _mm512_sub_epi32(isum, _mm512_zextsi256_si512(bias));
    __m128 d = _mm_mul_ss(_mm_cvtph_ps(_mm_cvtsi32_si128(w->d)), _mm_set_ss(a->d));
    return _mm512_fmadd_ps(_mm512_broadcastss_ps(d), _mm512_cvtepi32_ps(isum), acc);
}

/* Q6_K group k: words 0-7 scale 2k, 8-15 scale 2k+1 (half 0), 16-23 scale
 * 8+2k, 24-31 scale 9+2k (half 1). */
AVX512 static inline __m512i pick_q6(int k) {
    __m128i a = _mm_set1_epi16((short)(2 * k)), b = _mm_set1_epi16((short)(2 * k + 1));
    __m128i c = _mm_set1_epi16((short)(8 + 2 * k)), d = _mm_set1_epi16((short)(9 + 2 * k));
    __m256i lo = _mm256_set_m128i(b, a), hi = _mm256_set_m128i(d, c);
    return _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1);
}

#define KQ_MATMUL(NAME, WBLOCK, BLOCKFN, S0, S1, S2, S3, GAP, PICKS)                                         \
    AVX512 static void NAME##_eight(float *out, const uint8_t *p, size_t rb, const BlockQ8K *a, int blocks,  \
                                    const uint8_t *ahead) {                                                  \
        static const int start[4] = {S0, S1, S2, S3};                                                        \
        __m512i pick[4];                                                                                     \
        PICKS;                                                                                               \
        __m512 acc[8];                                                                                       \
        for (int r = 0; r < 8; r++) acc[r] = _mm512_setzero_ps();                                            \
        for (int b = 0; b < blocks; b++, p += sizeof(WBLOCK)) {                                              \
            __m512i x[4];                                                                                    \
            k_act(a[b].qs, start, GAP, x);                                                                   \
            PREFETCH_GROUP(ahead, b, 2 * sizeof(WBLOCK));                                                    \
            for (int r = 0; r < 8; r++)                                                                      \
                acc[r] = BLOCKFN((const WBLOCK *)(p + r * rb), &a[b], x, pick, acc[r]);                      \
        }                                                                                                    \
        for (int r = 0; r < 8; r++) out[r] = _mm512_reduce_add_ps(acc[r]);                                   \
    }                                                                                                        \
    AVX512 static void NAME(float *out, const uint8_t *rows, size_t row_bytes, const void *act, int n,       \
                            int count) {                                                                     \
        EIGHT_ROWS(NAME##_eight, out, rows, row_bytes, (const BlockQ8K *)act, n / QK_K, count);              \
    }

/* Q4_K: register h of the low nibbles holds scales 4h (words 0-15) and
 * 4h+2; of the high nibbles 4h+1 and 4h+3. */
AVX512 static inline void picks_q4_k(__m512i pick[4]) {
    for (int h = 0; h < 2; h++) {
        pick[2 * h] = pick2(4 * h, 4 * h + 2);
        pick[2 * h + 1] = pick2(4 * h + 1, 4 * h + 3);
    }
}

AVX512 static inline void picks_q6_k(__m512i pick[4]) {
    for (int k = 0; k < 4; k++) pick[k] = pick_q6(k);
}

KQ_MATMUL(avx512_matmul_q4_k, BlockQ4_K, q4_k_block, 0, 32, 128, 160, 64, picks_q4_k(pick))
KQ_MATMUL(avx512_matmul_q6_k, BlockQ6_K, q6_k_block, 0, 32, 64, 96, 128, picks_q6_k(pick))

/* ---------------------------------------------------------------- activations
 * The scalar quantisers of ggml_types.c, bit for bit: the same float
 * products, the same rounding (Q8A: halves away from zero, from the exact
 * fraction; Q8K: to nearest even, as the magic-number add does), and the
 * same maxima (exact, whatever the order; NaN ignored as there). */

AVX512 static void avx512_quantize_act_q8a(void *blocks, const float *x, int n) {
    BlockQ8A *out = blocks;
    const __m512 half = _mm512_set1_ps(0.5f), minus_half = _mm512_set1_ps(-0.5f);
    const __m512i one = _mm512_set1_epi32(1);
    for (int b = 0; b < n / QK32; b++, x += QK32) {
        __m512 x0 = _mm512_loadu_ps(x), x1 = _mm512_loadu_ps(x + 16);
        __m512 m = _mm512_max_ps(_mm512_abs_ps(x1), _mm512_max_ps(_mm512_abs_ps(x0), _mm512_setzero_ps()));
        float amax = _mm512_reduce_max_ps(m);
        float d = amax / 127.0f, id = d != 0.0f ? 1.0f / d : 0.0f;
        __m512i sum = _mm512_setzero_si512();
        for (int h = 0; h < 2; h++) {
            __m512 v = _mm512_mul_ps(h ? x1 : x0, _mm512_set1_ps(id));
            __m512i t = _mm512_cvttps_epi32(v);
            __m512 frac = _mm512_sub_ps(v, _mm512_cvtepi32_ps(t));
            t = _mm512_mask_add_epi32(t, _mm512_cmp_ps_mask(frac, half, _CMP_GE_OQ), t, one);
            t = _mm512_mask_sub_epi32(t, _mm512_cmp_ps_mask(frac, minus_half, _CMP_LE_OQ), t, one);
            _mm_storeu_si128((__m128i *)(out[b].qs + 16 * h), _mm512_cvtepi32_epi8(t));
            sum = _mm512_add_epi32(sum, t);
        }
        int total = _mm512_reduce_add_epi32(sum);
        out[b].qsum = total;
        out[b].d = ggml_fp16_to_fp32(ggml_fp32_to_fp16(d));
        out[b].s = ggml_fp16_to_fp32(ggml_fp32_to_fp16((float)total * d));
    }
}

AVX512 static void avx512_quantize_act_q8k(void *blocks, const float *x, int n) {
    BlockQ8K *out = blocks;
    const __m512i lim = _mm512_set1_epi32(127), neg_lim = _mm512_set1_epi32(-127);
    for (int b = 0; b < n / QK_K; b++, x += QK_K) {
        __m512 m = _mm512_setzero_ps();
        for (int j = 0; j < QK_K; j += 16) m = _mm512_max_ps(_mm512_abs_ps(_mm512_loadu_ps(x + j)), m);
        float amax = _mm512_reduce_max_ps(m);
        if (amax == 0.0f) {
            __builtin_memset(&out[b], 0, sizeof(out[b]));
            continue;
        }
        /* the first value of the largest magnitude, as the scalar loop keeps */
        float max = 0;
        for (int j = 0; j < QK_K; j += 16) {
            __mmask16 hit = _mm512_cmp_ps_mask(_mm512_abs_ps(_mm512_loadu_ps(x + j)), _mm512_set1_ps(amax),
                                               _CMP_EQ_OQ);
            if (hit) {
                max = x[j + __builtin_ctz(hit)];
                break;
            }
        }
        float iscale = -127.0f / max;
        for (int j = 0; j < QK_K; j += 16) {
            __m512i v = _mm512_cvtps_epi32(_mm512_mul_ps(_mm512_loadu_ps(x + j), _mm512_set1_ps(iscale)));
            v = _mm512_max_epi32(_mm512_min_epi32(v, lim), neg_lim);
            _mm_storeu_si128((__m128i *)(out[b].qs + j), _mm512_cvtepi32_epi8(v));
            out[b].bsums[j / 16] = (int16_t)_mm512_reduce_add_epi32(v);
        }
        out[b].d = 1.0f / iscale;
    }
}

ggml_act_quantize_fn ggml_act_quantizer_avx512(int act) {
    if (!ggml_avx512_usable()) return NULL;
    return act == ACT_Q8A ? avx512_quantize_act_q8a : act == ACT_Q8K ? avx512_quantize_act_q8k : NULL;
}

DOT_FROM_MATMUL(avx512_dot_q8_0, avx512_matmul_q8_0)
DOT_FROM_MATMUL(avx512_dot_q4_0, avx512_matmul_q4_0)
DOT_FROM_MATMUL(avx512_dot_q4_k, avx512_matmul_q4_k)
DOT_FROM_MATMUL(avx512_dot_q6_k, avx512_matmul_q6_k)

ggml_matmul_fn ggml_matmul_avx512(uint32_t type) {
    if (!ggml_avx512_usable()) return NULL;
    switch (type) {
    case GGML_TYPE_Q8_0:
        return avx512_matmul_q8_0;
    case GGML_TYPE_Q4_0:
        return avx512_matmul_q4_0;
    case GGML_TYPE_Q4_K:
        return avx512_matmul_q4_k;
    case GGML_TYPE_Q6_K:
        return avx512_matmul_q6_k;
    default:
        return NULL;
    }
}

ggml_vec_dot_fn ggml_vec_dot_avx512(uint32_t type) {
    if (!ggml_avx512_usable()) return NULL;
    switch (type) {
    case GGML_TYPE_Q8_0:
        return avx512_dot_q8_0;
    case GGML_TYPE_Q4_0:
        return avx512_dot_q4_0;
    case GGML_TYPE_Q4_K:
        return avx512_dot_q4_k;
    case GGML_TYPE_Q6_K:
        return avx512_dot_q6_k;
    default:
        return NULL;
    }
}
