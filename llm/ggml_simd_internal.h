/* ggml_simd_internal.h - inline helpers shared by the SSE2/AVX2 ggml dot
 * products (ggml_simd.c: common types; ggml_simd_more.c: the others). */
#ifndef LLM_GGML_SIMD_INTERNAL_H
#define LLM_GGML_SIMD_INTERNAL_H

#include <immintrin.h>
#include <stdint.h>

#include "llm/ggml_blocks.h"

#define AVX2 __attribute__((target("avx2,fma,f16c")))

static inline float sse2_hsum_ps(__m128 v) {
    v = _mm_add_ps(v, _mm_movehl_ps(v, v));
    v = _mm_add_ss(v, _mm_shuffle_ps(v, v, 1));
    return _mm_cvtss_f32(v);
}

/* 16 signed bytes times 16 signed bytes: four int32 partial sums. */
static inline __m128i sse2_dot16(__m128i a, __m128i b) {
    __m128i zero = _mm_setzero_si128();
    __m128i sa = _mm_cmpgt_epi8(zero, a), sb = _mm_cmpgt_epi8(zero, b);
    __m128i lo = _mm_madd_epi16(_mm_unpacklo_epi8(a, sa), _mm_unpacklo_epi8(b, sb));
    __m128i hi = _mm_madd_epi16(_mm_unpackhi_epi8(a, sa), _mm_unpackhi_epi8(b, sb));
    return _mm_add_epi32(lo, hi);
}

static inline int sse2_hsum_i32(__m128i v) {
    v = _mm_add_epi32(v, _mm_shuffle_epi32(v, _MM_SHUFFLE(1, 0, 3, 2)));
    v = _mm_add_epi32(v, _mm_shuffle_epi32(v, _MM_SHUFFLE(2, 3, 0, 1)));
    return _mm_cvtsi128_si32(v);
}

static inline __m128i load16(const void *p) {
    return _mm_loadu_si128((const __m128i *)p);
}

/* 32 signed bytes (a) times 32 signed bytes (b, never -128): eight int32 sums,
 * lanes 0-3 from bytes 0-15 and lanes 4-7 from bytes 16-31. */
AVX2 static inline __m256i avx2_dot32(__m256i a, __m256i b) {
    __m256i p = _mm256_maddubs_epi16(_mm256_sign_epi8(a, a), _mm256_sign_epi8(b, a));
    return _mm256_madd_epi16(p, _mm256_set1_epi16(1));
}

/* Unsigned bytes (0..63) times signed bytes. */
AVX2 static inline __m256i avx2_dot32_u(__m256i u, __m256i b) {
    return _mm256_madd_epi16(_mm256_maddubs_epi16(u, b), _mm256_set1_epi16(1));
}

AVX2 static inline int avx2_hsum_i32(__m256i v) {
    return sse2_hsum_i32(_mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1)));
}

AVX2 static inline __m256i load32(const void *p) {
    return _mm256_loadu_si256((const __m256i *)p);
}

/* NAME: the dot product of one row, run through the multi-row MATMUL so a
 * row's dot and its matmul row are the same number. (No target attribute
 * needed: it only calls MATMUL.) */
#define DOT_FROM_MATMUL(NAME, MATMUL)                                                                        \
    static float NAME(const void *row, const void *act, int n) {                                             \
        float out;                                                                                           \
        MATMUL(&out, row, 0, act, n, 1);                                                                     \
        return out;                                                                                          \
    }

/* AVX-512 F/BW/VL/VNNI usable (CPUID and XCR0); ggml_simd_avx512.c. */
int ggml_avx512_usable(void);
/* The AVX-512 Q8_0/Q4_0/Q4_K/Q6_K kernels; NULL for other types or when
 * the CPU lacks them. */
ggml_matmul_fn ggml_matmul_avx512(uint32_t type);
ggml_vec_dot_fn ggml_vec_dot_avx512(uint32_t type);
ggml_act_quantize_fn ggml_act_quantizer_avx512(int act);

/* The rarer types' SIMD dots (ggml_simd_more.c); NULL for other types. */
ggml_vec_dot_fn ggml_vec_dot_simd_more(uint32_t type, int avx2);

#endif
