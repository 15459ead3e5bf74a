/* vec_avx512.c - AVX-512 softmax, for the attention kernels: at long
 * contexts the scores' softmax is a sixth of attention's arithmetic, and
 * 16 lanes halve its exp against the AVX2 one. */
#include "llm/compute/avx2/avx2_ops.h"
#include "llm/compute/avx512/avx512_ops.h"
#include "llm/compute/kernel_sets.h"

/* e^x for sixteen floats: avx2_exp's range reduction and degree-7 Taylor
 * polynomial (vec_avx2.c), so each lane gets the same bits as there; 0
 * below -87.33 (-inf included), clamped above 88. */
TARGET_AVX512 static inline __m512 avx512_exp(__m512 x) {
    const __m512 lowest = _mm512_set1_ps(-87.33f);
    __mmask16 underflow = _mm512_cmp_ps_mask(x, lowest, _CMP_LT_OQ);
    x = _mm512_min_ps(_mm512_max_ps(x, lowest), _mm512_set1_ps(88.0f));
    __m512i k = _mm512_cvtps_epi32(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504f)));
    __m512 kf = _mm512_cvtepi32_ps(k);
    __m512 r = _mm512_fnmadd_ps(kf, _mm512_set1_ps(0.693359375f), x);
    r = _mm512_fmadd_ps(kf, _mm512_set1_ps(2.12194440e-4f), r);
    __m512 p = _mm512_set1_ps(1.0f / 5040.0f);
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 720.0f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 120.0f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 24.0f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 6.0f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0.5f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
    __m512 two_k = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_add_epi32(k, _mm512_set1_epi32(127)), 23));
    return _mm512_maskz_mul_ps((__mmask16)~underflow, p, two_k);
}

/* kernels_softmax_avx2's result bit for bit, twice as wide: the same exp
 * per lane, and the sum kept in its eight lanes, each adding its elements
 * in the same order (a greedy near-tie can turn on the last bit). */
TARGET_AVX512 void kernels_softmax_avx512(float *x, int n) {
    __m512 m16 = _mm512_set1_ps(x[0]);
    for (int j = 0; j < n; j += 16)
        m16 = _mm512_mask_max_ps(m16, first_lanes(n - j), m16,
                                 _mm512_maskz_loadu_ps(first_lanes(n - j), x + j));
    __m512 max = _mm512_set1_ps(_mm512_reduce_max_ps(m16));
    __m256 sums = _mm256_setzero_ps();
    for (int j = 0; j < n; j += 16) {
        __mmask16 m = first_lanes(n - j);
        __m512 e = _mm512_maskz_mov_ps(m, avx512_exp(_mm512_sub_ps(_mm512_maskz_loadu_ps(m, x + j), max)));
        _mm512_mask_storeu_ps(x + j, m, e);
        sums = _mm256_add_ps(sums, _mm512_castps512_ps256(e));
        if (n - j > 8) sums = _mm256_add_ps(sums, hi256_ps(e));
    }
    __m512 inv = _mm512_set1_ps(1.0f / avx2_hsum(sums));
    for (int j = 0; j < n; j += 16) {
        __mmask16 m = first_lanes(n - j);
        _mm512_mask_storeu_ps(x + j, m, _mm512_mul_ps(_mm512_maskz_loadu_ps(m, x + j), inv));
    }
}
