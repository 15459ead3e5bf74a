/* q4_0_swar.c - the Q4_0 prefill gemm (rows times Q8A positions) in 64-bit
 * general-purpose registers, for the SSE2 set under QEMU TCG, where an SSE
 * arithmetic instruction is a helper call and an imul one host instruction
 * (see int8_swar.c). Four positions' activations of a column share one
 * word, X = x0 + x1 * 2^16 + x2 * 2^32 + x3 * 2^48, packed once per call;
 * the weights are decoded to nibble - 8 (-8..7) once per block of four rows
 * and chunk, so per row and column `acc += w * X` sums four positions, each
 * block in its own 16-bit lane: |sum| <= 32 * 8 * 127 = 32512 (Q8A values
 * are -127..127). That sum is the SSE2 kernels' total (nibble sum minus
 * 8 * qsum) exactly, and each position's float steps are theirs (acc +
 * (float)total * (d * a.d), four rows per SSE operation): the same bits. */
#include <emmintrin.h>

#include "llm/compute/ggml_simd.h"
#include "llm/compute/sse2/q4_0_swar.h"
#include "llm/compute/target.h"

#define LANE_BITS 16
/* Positions per pass: four per packed word. */
#define QUADS 16
/* Blocks packed at once (128 columns): a pass's words stay in L1. */
#define CHUNK_BLOCKS 4
#define CHUNK_COLUMNS (CHUNK_BLOCKS * QK32)

static inline uint64_t pack4(int8_t x0, int8_t x1, int8_t x2, int8_t x3) {
    return (uint64_t)(int64_t)x0 + ((uint64_t)(int64_t)x1 << LANE_BITS) +
           ((uint64_t)(int64_t)x2 << (2 * LANE_BITS)) + ((uint64_t)(int64_t)x3 << (3 * LANE_BITS));
}

/* Lane k's exact sum of an accumulator, to sums[4 * k] (k < 4). */
static inline void unpack4(int32_t *sums, uint64_t acc) {
    for (int k = 0; k < 4; k++) {
        int16_t s = (int16_t)acc;
        sums[4 * k] = s;
        acc = (uint64_t)((int64_t)(acc - (uint64_t)(int64_t)s) >> LANE_BITS);
    }
}

/* Four decoded rows (w[r * CHUNK_COLUMNS + j]) of one block against one
 * packed quad: sums[4 * k + r] = position k's block total of row r. */
static inline __attribute__((always_inline)) void rows4_block(int32_t *sums, const int8_t *w,
                                                              const uint64_t *x) {
    uint64_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
#pragma GCC unroll 8
    for (int j = 0; j < QK32; j++) {
        uint64_t xj = x[j];
        a0 += (uint64_t)(int64_t)w[j] * xj;
        a1 += (uint64_t)(int64_t)w[CHUNK_COLUMNS + j] * xj;
        a2 += (uint64_t)(int64_t)w[2 * CHUNK_COLUMNS + j] * xj;
        a3 += (uint64_t)(int64_t)w[3 * CHUNK_COLUMNS + j] * xj;
    }
    unpack4(sums + 0, a0);
    unpack4(sums + 1, a1);
    unpack4(sums + 2, a2);
    unpack4(sums + 3, a3);
}

/* One block's 32 values as nibble - 8: low nibbles are values 0-15. */
static inline void decode_block(int8_t *dst, const BlockQ4_0 *block) {
    const __m128i mask = _mm_set1_epi8(0x0f), eight = _mm_set1_epi8(8);
    __m128i raw = _mm_loadu_si128((const __m128i *)block->qs);
    _mm_storeu_si128((__m128i *)dst, _mm_sub_epi8(_mm_and_si128(raw, mask), eight));
    _mm_storeu_si128((__m128i *)(dst + 16), _mm_sub_epi8(_mm_and_si128(_mm_srli_epi16(raw, 4), mask), eight));
}

/* Where a pass's sums go: rows below count to out; the last block of four
 * rows, when count is not a multiple of four, also keeps all four lanes in
 * tail (positions from tail_p0), so the next chunk of columns goes on from
 * them. */
typedef struct {
    float *out;
    size_t stride;
    int count;
    __m128 *tail;
    int tail_p0;
} SwarOut;

/* Rows i..i+3's sums so far at position p (zero when `have` is 0). */
static inline __m128 swar_out_load(const SwarOut *o, int p, int i, int have) {
    if (!have) return _mm_setzero_ps();
    if (i + 4 <= o->count) return _mm_loadu_ps(o->out + (size_t)p * o->stride + i);
    return o->tail[p - o->tail_p0];
}

static inline void swar_out_store(SwarOut *o, int p, int i, __m128 f) {
    float *dst = o->out + (size_t)p * o->stride + i;
    if (i + 4 <= o->count) {
        _mm_storeu_ps(dst, f);
        return;
    }
    float lanes[4];
    _mm_storeu_ps(lanes, f);
    o->tail[p - o->tail_p0] = f;
    for (int r = 0; r < o->count - i; r++) dst[r] = lanes[r];
}

/* One pass: positions p0.. (npos <= 4 * QUADS), blocks b0.. (nb <= CHUNK_BLOCKS),
 * every block of four rows. */
TCG_NO_SLP static void swar_pass(SwarOut *o, const uint8_t *rows, size_t row_bytes, const uint8_t *act,
                                 size_t act_stride, int p0, int npos, int b0, int nb, int count) {
    uint64_t packed[QUADS][CHUNK_COLUMNS];
    __m128 ad[4 * QUADS][CHUNK_BLOCKS];
    int quads = (npos + 3) / 4;
    for (int k = 0; k < 4 * quads; k++)
        for (int b = 0; b < nb; b++)
            ad[k][b] = k < npos
                           ? _mm_set1_ps(((const BlockQ8A *)(act + (size_t)(p0 + k) * act_stride))[b0 + b].d)
                           : _mm_setzero_ps();
    for (int q = 0; q < quads; q++) {
        const BlockQ8A *a[4];
        for (int k = 0; k < 4; k++)
            a[k] =
                4 * q + k < npos ? (const BlockQ8A *)(act + (size_t)(p0 + 4 * q + k) * act_stride) + b0 : 0;
        for (int b = 0; b < nb; b++)
            for (int j = 0; j < QK32; j++)
                packed[q][b * QK32 + j] = pack4(a[0][b].qs[j], a[1] ? a[1][b].qs[j] : 0,
                                                a[2] ? a[2][b].qs[j] : 0, a[3] ? a[3][b].qs[j] : 0);
    }
    for (int i = 0; i < count; i += 4) {
        int8_t w[4 * CHUNK_COLUMNS];
        __m128 hs[CHUNK_BLOCKS];
        for (int b = 0; b < nb; b++) {
            float d[4];
            for (int r = 0; r < 4; r++) {
                const BlockQ4_0 *block =
                    (const BlockQ4_0 *)(rows + (size_t)(i + r < count ? i + r : count - 1) * row_bytes) + b0 +
                    b;
                decode_block(w + r * CHUNK_COLUMNS + b * QK32, block);
                d[r] = half_scale(block->d);
            }
            hs[b] = _mm_setr_ps(d[0], d[1], d[2], d[3]);
        }
        for (int q = 0; q < quads; q++) {
            int p = p0 + 4 * q, valid = npos - 4 * q < 4 ? npos - 4 * q : 4;
            __m128 f[4];
            for (int k = 0; k < 4; k++) f[k] = swar_out_load(o, p + k, i, k < valid && b0 > 0);
            for (int b = 0; b < nb; b++) {
                int32_t sums[16] __attribute__((aligned(16)));
                rows4_block(sums, w + b * QK32, packed[q] + b * QK32);
                for (int k = 0; k < 4; k++) {
                    __m128 total = _mm_cvtepi32_ps(_mm_load_si128((const __m128i *)(sums + 4 * k)));
                    f[k] = _mm_add_ps(f[k], _mm_mul_ps(total, _mm_mul_ps(hs[b], ad[4 * q + k][b])));
                }
            }
            for (int k = 0; k < valid; k++) swar_out_store(o, p + k, i, f[k]);
        }
    }
}

TCG_PAGE_ALIGNED
void q4_0_swar_gemm(float *out, size_t out_stride, const uint8_t *rows, size_t row_bytes, const void *act,
                    size_t act_stride, int n, int count, int batch) {
    __m128 tail[4 * QUADS];
    SwarOut o = {out, out_stride, count, tail, 0};
    for (int p0 = 0; p0 < batch; p0 += 4 * QUADS) {
        int npos = batch - p0 < 4 * QUADS ? batch - p0 : 4 * QUADS;
        o.tail_p0 = p0;
        for (int b0 = 0; b0 < n / QK32; b0 += CHUNK_BLOCKS) {
            int nb = n / QK32 - b0 < CHUNK_BLOCKS ? n / QK32 - b0 : CHUNK_BLOCKS;
            swar_pass(&o, rows, row_bytes, act, act_stride, p0, npos, b0, nb, count);
        }
    }
}
