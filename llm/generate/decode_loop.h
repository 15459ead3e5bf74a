/* decode_loop.h - the per-token loop generate() and chat_turn() share:
 * after the prompt's prefill, sample, check the stops, keep and stream the
 * token, feed it forward, poll for a stop, and again. */
#ifndef LLM_DECODE_LOOP_H
#define LLM_DECODE_LOOP_H

#include "llm/generate/generate.h"

typedef struct {
    /* What ends the answer: bos_id (when >= 0) with STOP_BOS, checked first,
     * then any of stop_ids with STOP_EOS. The stopping token is not kept. */
    const int *stop_ids;
    int stop_count;
    int bos_id;
    int max_new; /* answer tokens at most (0: no limit); reaching it stops with STOP_STEPS */
    int end;     /* a token sampled for this position or later is kept, not run: stops with at_end */
    StopReason at_end;
    /* Keeps and streams an answer token; prev is the token before it. */
    void (*keep)(void *ctx, int prev, int token);
    void *ctx;
    /* In: the positions the cache holds (the prefill's end); out: the same
     * after the loop (a token kept at the end is not run). */
    int pos;
    int last;              /* in: the prompt's last token; out: the last token kept */
    uint64_t *sampled_end; /* where not NULL: the clock after the first sample */
    uint64_t *kept_end;    /* where not NULL and still 0: the clock after the first kept token */
    int polled;            /* the caller polled just before: the first sample goes without */
} DecodeLoop;

/* Samples from logits (the prefill's), then runs until a stop: each kept
 * token counts in stats->generated_tokens, goes through sampler_accept and is
 * run at its position for the next logits; io->should_stop is polled before
 * each sample (but a first one the caller polled for). Returns why it stopped, or STOP_ERROR with a reason in
 * err. */
StopReason decode_loop(DecodeLoop *d, Model *t, Sampler *s, float *logits, const GenerateIO *io,
                       GenerateStats *stats, char *err, size_t err_size);

static inline uint64_t generate_clock(const GenerateIO *io) {
    return io && io->now_ns ? io->now_ns(io->ctx) : 0;
}

#endif
