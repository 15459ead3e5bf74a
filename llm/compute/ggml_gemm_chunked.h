/* ggml_gemm_chunked.h - internal: the prefill gemm of the types whose
 * single-row dot keeps its own per-row state (Q4_1, Q5_0, Q5_1 and the
 * k-quants other than the AVX2/AVX-512 Q4_K and Q6_K): R rows' blocks are
 * decoded once into a buffer and every position of a chunk runs the dot's
 * own per-block step over them, each (row, position) on its own state, so
 * every output is that dot's bits. A type gives its decode (one row's
 * block), its step (R decoded blocks, one position's activation block, R
 * states) and its finish (a state to the row's sum). */
#ifndef LLM_SIMD_GGML_GEMM_CHUNKED_H
#define LLM_SIMD_GGML_GEMM_CHUNKED_H

#include "llm/compute/ggml_simd.h"

#define CHUNKED_MAX_ROWS 4
/* Bytes of one decoded block (k_gemm.h's KDecoded is the largest) and of
 * all the states of a chunk: the stack stays small enough for the
 * kernel's 64 KiB worker stacks. */
#define CHUNKED_DECODED_BYTES 1088
#define CHUNKED_STATE_BYTES 8192
#define CHUNKED_MAX_POSITIONS 64

typedef void (*chunked_decode_fn)(const uint8_t *block, uint8_t *decoded);
/* decoded: R blocks CHUNKED_DECODED_BYTES apart; state: R states
 * state_bytes apart. */
typedef void (*chunked_step_fn)(const uint8_t *decoded, const void *act, uint8_t *state);
typedef float (*chunked_finish_fn)(const uint8_t *state);

/* out[p * out_stride + i] = row i . position p for i < count, p < batch:
 * R rows at a time (rows past count repeat the last one, computed and
 * dropped), positions in chunks whose states fit CHUNKED_STATE_BYTES.
 * Inlined for each type: the functions and sizes are constants. A state of
 * zero bytes is the step's starting state. */
static inline __attribute__((always_inline)) void
chunked_gemm_rows(float *out, size_t out_stride, const uint8_t *rows, size_t row_bytes, const void *act,
                  size_t act_stride, int n, int count, int batch, int elems, size_t block_bytes,
                  size_t act_bytes, int R, size_t state_bytes, chunked_decode_fn decode, chunked_step_fn step,
                  chunked_finish_fn finish) {
    _Alignas(64) uint8_t decoded[CHUNKED_MAX_ROWS * CHUNKED_DECODED_BYTES];
    _Alignas(64) uint8_t state[CHUNKED_STATE_BYTES];
    const size_t per_position = (size_t)R * state_bytes;
    const int most = CHUNKED_STATE_BYTES / per_position < CHUNKED_MAX_POSITIONS
                         ? (int)(CHUNKED_STATE_BYTES / per_position)
                         : CHUNKED_MAX_POSITIONS;
    for (int i = 0; i < count; i += R) {
        const uint8_t *w[CHUNKED_MAX_ROWS];
        for (int r = 0; r < R; r++) w[r] = rows + (size_t)(i + r < count ? i + r : count - 1) * row_bytes;
        for (int p0 = 0; p0 < batch; p0 += most) {
            int chunk = batch - p0 < most ? batch - p0 : most;
            const uint8_t *a0 = (const uint8_t *)act + (size_t)p0 * act_stride;
            __builtin_memset(state, 0, (size_t)chunk * per_position);
            for (int b = 0; b < n / elems; b++) {
                for (int r = 0; r < R; r++)
                    decode(w[r] + (size_t)b * block_bytes, decoded + (size_t)r * CHUNKED_DECODED_BYTES);
                for (int p = 0; p < chunk; p++)
                    step(decoded, a0 + (size_t)p * act_stride + (size_t)b * act_bytes,
                         state + (size_t)p * per_position);
            }
            for (int p = 0; p < chunk; p++)
                for (int r = 0; r < R && i + r < count; r++)
                    out[(size_t)(p0 + p) * out_stride + i + r] =
                        finish(state + (size_t)p * per_position + (size_t)r * state_bytes);
        }
    }
}

#endif
