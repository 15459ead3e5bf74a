/* attention_tile_avx512.c - AVX-512 attention over an f16, f32 or q8_0 KV cache
 * for a tile of up to four queries that share one key/value head: the
 * query heads of a grouped-query head (2-8 of them share it) and, in a
 * prefill batch, several positions (tests/host/test_prefill_batch.c: the
 * bits equal one position at a time). Each cached row is read and
 * converted once for the whole tile: at long contexts reading the cache is
 * most of the work.
 *
 * Every query's arithmetic is its own whatever the tile: a key's score is
 * one accumulator, 16 columns per step, summed by hsum4_ps's lane order
 * (keys past the cache are zero vectors in the other lanes, never read);
 * a value column accumulates position after position. Queries see their
 * own number of positions (a prefill position sees the batch's keys up to
 * its own), so a tile's shorter queries stop early. */
#include "llm/tensor/ggml_types.h"
#include "llm/compute/attention_group.h"
#include "llm/compute/avx512/avx512_ops.h"
#include "llm/compute/kernel_sets.h"

/* Up to 16 values (mask m) from column c of a cached row of f16 (E = 2
 * bytes each) or f32 (E = 4) values, as floats. */
TARGET_AVX512 static inline __m512 cols16(const uint8_t *row, int c, __mmask16 m, const int E) {
    return E == 4 ? _mm512_maskz_loadu_ps(m, (const float *)row + c)
                  : _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, (const uint16_t *)row + c));
}

TARGET_AVX512 static inline __m512 i8x16(const int8_t *p) {
    return _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i *)p)));
}

/* Mask of the first n lanes, none when n <= 0. */
static inline __mmask16 lanes_from(int n) {
    return n <= 0 ? (__mmask16)0 : first_lanes(n);
}

/* Lanes of keys p, p+1, ... a query that sees n_pos positions keeps. */
static inline __mmask8 keys_seen(int p, int n_pos) {
    return (__mmask8)(n_pos - p >= 4 ? 0xf : n_pos <= p ? 0 : (1u << (n_pos - p)) - 1);
}

/* Scores of keys p..p+3 (NQ x 4 accumulators in registers), scaled, into
 * each query's weights. */
TARGET_AVX512 static inline __attribute__((always_inline)) void
scores_rows(const AttendQuery *qs, const uint8_t *keys, size_t row_bytes, int most, int hs, float scale,
            const int E, const int NQ) {
    const int K = 4;
    const __m128 vscale = _mm_set1_ps(scale);
    for (int p = 0; p < most; p += K) {
        __m512 acc[ATTEND_TILE][4];
#pragma GCC unroll 4
        for (int i = 0; i < NQ; i++)
#pragma GCC unroll 4
            for (int r = 0; r < K; r++) acc[i][r] = _mm512_setzero_ps();
        const uint8_t *k = keys + (size_t)p * row_bytes;
        kv_prefetch(k, K * row_bytes);
        for (int c = 0; c < hs; c += 16) {
            __mmask16 m = first_lanes(hs - c);
            __m512 kr[4];
#pragma GCC unroll 4
            for (int r = 0; r < K; r++) kr[r] = cols16(k + (size_t)r * row_bytes, c, p + r < most ? m : 0, E);
#pragma GCC unroll 4
            for (int i = 0; i < NQ; i++) {
                __m512 qc = _mm512_maskz_loadu_ps(m, qs[i].q + c);
#pragma GCC unroll 4
                for (int r = 0; r < K; r++) acc[i][r] = _mm512_fmadd_ps(qc, kr[r], acc[i][r]);
            }
        }
#pragma GCC unroll 4
        for (int i = 0; i < NQ; i++) {
            /* An f32 cache's last n_pos % 4 keys of a query are summed
             * alone, as the f32 kernel before the tiles did: the llama.cpp
             * references' greedy continuations depend on those bits. */
            if (E == 4 && p + K > qs[i].n_pos) {
                for (int r = 0; r < K && p + r < qs[i].n_pos; r++)
                    qs[i].att[p + r] = _mm512_reduce_add_ps(acc[i][r]) * scale;
                continue;
            }
            _mm_mask_storeu_ps(qs[i].att + p, keys_seen(p, qs[i].n_pos),
                               _mm_mul_ps(hsum4_ps(acc[i][0], acc[i][1], acc[i][2], acc[i][3]), vscale));
        }
    }
}

/* out = sum_p att[p] * value_p, 64 columns per pass, positions in order. */
TARGET_AVX512 static inline __attribute__((always_inline)) void
values_rows(const AttendQuery *qs, const uint8_t *values, size_t row_bytes, int least, int most, int hs,
            const int E, const int NQ) {
    const int CW = 4;
    for (int c = 0; c < hs; c += 16 * CW) {
        __mmask16 m[4];
#pragma GCC unroll 4
        for (int w = 0; w < CW; w++) m[w] = lanes_from(hs - c - 16 * w);
        __m512 acc[ATTEND_TILE][4];
#pragma GCC unroll 4
        for (int i = 0; i < NQ; i++)
#pragma GCC unroll 4
            for (int w = 0; w < CW; w++) acc[i][w] = _mm512_setzero_ps();
        const uint8_t *row = values + (size_t)c * E;
        for (int pos = 0; pos < most; pos++, row += row_bytes) {
            kv_prefetch(row, 16 * CW * E);
            __m512 v[4];
#pragma GCC unroll 4
            for (int w = 0; w < CW; w++) v[w] = cols16(row, 16 * w, m[w], E);
#pragma GCC unroll 4
            for (int i = 0; i < NQ; i++) {
                if (pos >= least && pos >= qs[i].n_pos) continue;
                __m512 a = _mm512_set1_ps(qs[i].att[pos]);
#pragma GCC unroll 4
                for (int w = 0; w < CW; w++) acc[i][w] = _mm512_fmadd_ps(a, v[w], acc[i][w]);
            }
        }
#pragma GCC unroll 4
        for (int i = 0; i < NQ; i++)
#pragma GCC unroll 4
            for (int w = 0; w < CW; w++) _mm512_mask_storeu_ps(qs[i].out + c + 16 * w, m[w], acc[i][w]);
    }
}

/* A tile over a cache of E-byte floats (f16 or f32). */
TARGET_AVX512 static inline __attribute__((always_inline)) void
tile_rows(const AttendQuery *qs, const uint8_t *keys, const uint8_t *values, size_t row_bytes, int hs,
          float scale, const int E, const int NQ) {
    int least, most;
    visible_range(qs, NQ, &least, &most);
    scores_rows(qs, keys, row_bytes, most, hs, scale, E, NQ);
    for (int i = 0; i < NQ; i++) kernels_softmax_avx512(qs[i].att, qs[i].n_pos);
    values_rows(qs, values, row_bytes, least, most, hs, E, NQ);
}

/* tile_rows with the head size a constant for the common 64 and 128: the
 * column loops unroll and their masks fold away (the same arithmetic, the
 * same bits). */
TARGET_AVX512 static inline __attribute__((always_inline)) void
tile_rows_sized(const AttendQuery *qs, const uint8_t *keys, const uint8_t *values, size_t row_bytes, int hs,
                float scale, const int E, const int NQ) {
    if (hs == 64)
        tile_rows(qs, keys, values, row_bytes, 64, scale, E, NQ);
    else if (hs == 128)
        tile_rows(qs, keys, values, row_bytes, 128, scale, E, NQ);
    else
        tile_rows(qs, keys, values, row_bytes, hs, scale, E, NQ);
}

TARGET_AVX512 static inline __attribute__((always_inline)) void
tile_f16(const AttendQuery *qs, const uint8_t *keys, const uint8_t *values, size_t row_bytes, int hs,
         float scale, const int NQ) {
    tile_rows_sized(qs, keys, values, row_bytes, hs, scale, 2, NQ);
}

TARGET_AVX512 static inline __attribute__((always_inline)) void
tile_f32(const AttendQuery *qs, const uint8_t *keys, const uint8_t *values, size_t row_bytes, int hs,
         float scale, const int NQ) {
    tile_rows_sized(qs, keys, values, row_bytes, hs, scale, 4, NQ);
}

/* The q8_0 tile: one key at a time (NQ accumulators), then two blocks of
 * values per pass. */
TARGET_AVX512 static inline __attribute__((always_inline)) void
tile_q8_0(const AttendQuery *qs, const uint8_t *keys, const uint8_t *values, size_t row_bytes, int hs,
          float scale, const int NQ) {
    const int CB = 2, blocks = hs / QK32;
    int least, most;
    visible_range(qs, NQ, &least, &most);
    for (int p = 0; p < most; p++) {
        const BlockQ8_0 *k = (const BlockQ8_0 *)(keys + (size_t)p * row_bytes);
        __m512 acc[ATTEND_TILE];
#pragma GCC unroll 4
        for (int i = 0; i < NQ; i++) acc[i] = _mm512_setzero_ps();
        for (int b = 0; b < blocks; b++) {
            __m512 k0 = i8x16(k[b].qs), k1 = i8x16(k[b].qs + 16), d = _mm512_set1_ps(_cvtsh_ss(k[b].d));
#pragma GCC unroll 4
            for (int i = 0; i < NQ; i++) {
                const float *qb = qs[i].q + b * QK32;
                __m512 block = _mm512_mul_ps(_mm512_loadu_ps(qb), k0);
                block = _mm512_fmadd_ps(_mm512_loadu_ps(qb + 16), k1, block);
                acc[i] = _mm512_fmadd_ps(d, block, acc[i]);
            }
        }
#pragma GCC unroll 4
        for (int i = 0; i < NQ; i++)
            if (p < qs[i].n_pos) qs[i].att[p] = _mm512_reduce_add_ps(acc[i]) * scale;
    }
    for (int i = 0; i < NQ; i++) kernels_softmax_avx512(qs[i].att, qs[i].n_pos);
    for (int b = 0; b < blocks; b += CB) {
        int n_blocks = b + 1 < blocks ? CB : 1;
        __m512 acc[ATTEND_TILE][4];
#pragma GCC unroll 4
        for (int i = 0; i < NQ; i++)
#pragma GCC unroll 4
            for (int w = 0; w < 2 * CB; w++) acc[i][w] = _mm512_setzero_ps();
        for (int p = 0; p < most; p++) {
            const BlockQ8_0 *v = (const BlockQ8_0 *)(values + (size_t)p * row_bytes) + b;
            __m512 vv[4];
            float d[2];
#pragma GCC unroll 2
            for (int e = 0; e < CB; e++) {
                int at = e < n_blocks ? e : 0;
                vv[2 * e] = i8x16(v[at].qs), vv[2 * e + 1] = i8x16(v[at].qs + 16), d[e] = _cvtsh_ss(v[at].d);
            }
#pragma GCC unroll 4
            for (int i = 0; i < NQ; i++) {
                if (p >= least && p >= qs[i].n_pos) continue;
                float w = qs[i].att[p];
#pragma GCC unroll 2
                for (int e = 0; e < CB; e++) {
                    __m512 a = _mm512_set1_ps(w * d[e]);
                    acc[i][2 * e] = _mm512_fmadd_ps(a, vv[2 * e], acc[i][2 * e]);
                    acc[i][2 * e + 1] = _mm512_fmadd_ps(a, vv[2 * e + 1], acc[i][2 * e + 1]);
                }
            }
        }
#pragma GCC unroll 4
        for (int i = 0; i < NQ; i++)
            for (int w = 0; w < 2 * n_blocks; w++) _mm512_storeu_ps(qs[i].out + b * QK32 + 16 * w, acc[i][w]);
    }
}

TARGET_AVX512 void kernels_attend_f16_tile_avx512(const AttendQuery *qs, int n, const void *keys,
                                                  const void *values, size_t row_bytes, int hs, float scale) {
    in_tiles(tile_f16, qs, n, keys, values, row_bytes, hs, scale);
}

TARGET_AVX512 void kernels_attend_q8_0_tile_avx512(const AttendQuery *qs, int n, const void *keys,
                                                   const void *values, size_t row_bytes, int hs,
                                                   float scale) {
    in_tiles(tile_q8_0, qs, n, keys, values, row_bytes, hs, scale);
}

TARGET_AVX512 void kernels_attend_f16_avx512(float *out, float *att, int att_stride, const float *q, int n_q,
                                             const void *keys, const void *values, size_t row_bytes,
                                             int n_pos, int hs, float scale) {
    heads_as_tiles(tile_f16, out, att, att_stride, q, n_q, keys, values, row_bytes, n_pos, hs, scale);
}

TARGET_AVX512 void kernels_attend_q8_0_avx512(float *out, float *att, int att_stride, const float *q, int n_q,
                                              const void *keys, const void *values, size_t row_bytes,
                                              int n_pos, int hs, float scale) {
    heads_as_tiles(tile_q8_0, out, att, att_stride, q, n_q, keys, values, row_bytes, n_pos, hs, scale);
}

TARGET_AVX512 void kernels_attend_f32_avx512(float *out, float *att, int att_stride, const float *q, int n_q,
                                             const void *keys, const void *values, size_t row_bytes,
                                             int n_pos, int hs, float scale) {
    heads_as_tiles(tile_f32, out, att, att_stride, q, n_q, keys, values, row_bytes, n_pos, hs, scale);
}

TARGET_AVX512 void kernels_attend_f32_tile_avx512(const AttendQuery *qs, int n, const void *keys,
                                                  const void *values, size_t row_bytes, int hs, float scale) {
    in_tiles(tile_f32, qs, n, keys, values, row_bytes, hs, scale);
}
