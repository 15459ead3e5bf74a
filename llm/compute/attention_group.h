/* attention_group.h - the loops every set's attention kernels share: a tile
 * of up to ATTEND_TILE queries (AttendQuery) over one key/value head, each
 * seeing its own number of cached positions, reads and converts each
 * cached row once for the whole tile. The queries are the query heads of a
 * grouped-query head at one position (attend_f16, attend_q8_0) or, in a
 * prefill batch, those heads at several positions (attend_*_tile). Each
 * set supplies its scoring and value steps; every query's arithmetic is
 * what it is alone, in the same order, so its bits do not depend on the
 * tile (tests/host/test_prefill_batch.c). */
#ifndef LLM_SIMD_ATTENTION_GROUP_H
#define LLM_SIMD_ATTENTION_GROUP_H

#include <xmmintrin.h>

#include "llm/tensor/ggml_types.h"
#include "llm/compute/kernel_sets.h"

/* Bytes past the cached row being read that the f16 kernels ask for: each
 * head's rows are sequential, yet the hardware prefetcher alone left
 * attention over 4097 positions of the 1B shape 25% slower (AVX-512, CPU
 * time of the kernels alone: 512-4096 bytes ahead tried, 1024 the best). */
#define KV_PREFETCH_AHEAD 1024

/* Asks for the cache lines KV_PREFETCH_AHEAD past [row, row + bytes). */
static inline __attribute__((always_inline)) void kv_prefetch(const void *row, size_t bytes) {
    for (size_t b = 0; b < bytes; b += 64)
        _mm_prefetch((const char *)row + KV_PREFETCH_AHEAD + b, _MM_HINT_T0);
}

/* The fewest and the most positions the tile's queries see: every query
 * uses the rows below `least`; the rows up to `most` are read. */
static inline void visible_range(const AttendQuery *qs, int NQ, int *least, int *most) {
    *least = *most = qs[0].n_pos;
    for (int i = 1; i < NQ; i++) {
        if (qs[i].n_pos < *least) *least = qs[i].n_pos;
        if (qs[i].n_pos > *most) *most = qs[i].n_pos;
    }
}

/* Whether query q uses cached row pos (rows below `least` every query does). */
static inline int query_sees(const AttendQuery *q, int pos, int least) {
    return pos < least || pos < q->n_pos;
}

/* Column t of a cached row of f16 (E = 2 bytes each) or f32 (E = 4) values. */
static inline float kv_value(const void *row, int t, const int E) {
    return E == 4 ? ((const float *)row)[t] : ggml_fp16_to_fp32(((const uint16_t *)row)[t]);
}

/* Scores of keys p .. p + count - 1 (count 1..4) of a cache of E-byte
 * values for NQ queries, scaled, into qs[i].att[p ..]: only the keys query
 * i sees are stored. */
typedef void scores_tile_fn(const AttendQuery *qs, const void *keys, size_t row_bytes, int p, int count,
                            int hs, float scale, int E, int NQ);
/* qs[i].out[c .. + lanes * W) = sum over the positions query i sees of
 * att_i[pos] * v_pos[c ..], in registers over every position. */
typedef void values_tile_fn(const AttendQuery *qs, const void *values, size_t row_bytes, int least, int most,
                            int c, int W, int E, int NQ);

/* A tile over a cache of f16 (E = 2) or f32 (E = 4) values: keys four or two at a time (fewer as NQ grows, so
 * NQ x keys accumulators fit in 16 registers), the softmax per query, the values W vectors of `lanes` columns
 * at a time, and the columns no vector covers one by one. Always inlined, so the steps are direct inlined
 * calls with NQ constant. */
static inline __attribute__((always_inline)) void
attend_rows_tiled(const AttendQuery *qs, const void *keys, const void *values, size_t row_bytes, int hs,
                  float scale, int lanes, scores_tile_fn *scores, values_tile_fn *weighted,
                  softmax_fn *softmax, const int E, const int NQ) {
    const int K = NQ <= 2 ? 4 : 2, W = NQ <= 2 ? 4 : 2;
    int least, most, p = 0;
    visible_range(qs, NQ, &least, &most);
    for (; p + K <= most; p += K) {
        kv_prefetch(kv_cache_row(keys, row_bytes, p), K * row_bytes);
        scores(qs, keys, row_bytes, p, K, hs, scale, E, NQ);
    }
    if (p < most) scores(qs, keys, row_bytes, p, most - p, hs, scale, E, NQ);
    for (int i = 0; i < NQ; i++) softmax(qs[i].att, qs[i].n_pos);
    int c = 0;
    for (; c + lanes * W <= hs; c += lanes * W) weighted(qs, values, row_bytes, least, most, c, W, E, NQ);
    for (; c + lanes <= hs; c += lanes) weighted(qs, values, row_bytes, least, most, c, 1, E, NQ);
    for (int i = 0; i < NQ; i++)
        for (int t = c; t < hs; t++) {
            float sum = 0.0f;
            for (int pos = 0; pos < qs[i].n_pos; pos++)
                sum += qs[i].att[pos] * kv_value(kv_cache_row(values, row_bytes, pos), t, E);
            qs[i].out[t] = sum;
        }
}

/* One tile of NQ queries (a constant where it is inlined). */
typedef void tile_fn(const AttendQuery *qs, const uint8_t *keys, const uint8_t *values, size_t row_bytes,
                     int hs, float scale, const int NQ);

/* The queries ATTEND_TILE at a time, then the rest; inlined with a
 * constant tile, so each case runs it with a constant NQ. */
_Static_assert(ATTEND_TILE == 4, "in_tiles has a case for each tile size 1..4");
static inline __attribute__((always_inline)) void in_tiles(tile_fn *tile, const AttendQuery *qs, int n,
                                                           const void *keys, const void *values,
                                                           size_t row_bytes, int hs, float scale) {
    for (; n > 0; qs += ATTEND_TILE, n -= ATTEND_TILE) switch (n < ATTEND_TILE ? n : ATTEND_TILE) {
        case 1:
            tile(qs, keys, values, row_bytes, hs, scale, 1);
            break;
        case 2:
            tile(qs, keys, values, row_bytes, hs, scale, 2);
            break;
        case 3:
            tile(qs, keys, values, row_bytes, hs, scale, 3);
            break;
        default:
            tile(qs, keys, values, row_bytes, hs, scale, 4);
            break;
        }
}

/* An attend_kv_fn's body: one position's n_q query heads as tiles. */
static inline __attribute__((always_inline)) void
heads_as_tiles(tile_fn *tile, float *out, float *att, int att_stride, const float *q, int n_q,
               const void *keys, const void *values, size_t row_bytes, int n_pos, int hs, float scale) {
    for (int first = 0; first < n_q; first += ATTEND_TILE) {
        AttendQuery qs[ATTEND_TILE];
        int n = n_q - first < ATTEND_TILE ? n_q - first : ATTEND_TILE;
        for (int i = 0; i < n; i++)
            qs[i] = (AttendQuery){q + (size_t)(first + i) * hs, out + (size_t)(first + i) * hs,
                                  att + (size_t)(first + i) * att_stride, n_pos};
        in_tiles(tile, qs, n, keys, values, row_bytes, hs, scale);
    }
}

#endif
