/* generate.h - the generation loop of llama2.c's run.c: encode the prompt
 * with BOS, force the prompt tokens, sample the rest, stream the decoded
 * pieces. Output, cancellation and the clock come in through callbacks so
 * the same loop runs in the kernel and on the host. */
#ifndef LLM_GENERATE_H
#define LLM_GENERATE_H

#include <stddef.h>
#include <stdint.h>

#include "llm/generate/sampler.h"
#include "llm/tokenizer/tokenizer.h"
#include "llm/model/model.h"

typedef struct {
    /* Text exactly as run.c prints it (called only with len > 0). */
    void (*emit)(void *ctx, const char *text, size_t len);
    /* Polled once per position; non-zero stops with STOP_USER. May be NULL. */
    int (*should_stop)(void *ctx);
    /* Monotonic nanoseconds, for the statistics. May be NULL (times stay 0). */
    uint64_t (*now_ns)(void *ctx);
    /* Every token of the sequence: BOS, the prompt, then each accepted
     * sampled token (not the stopping BOS/EOS). May be NULL. */
    void (*on_token)(void *ctx, int token);
    void *ctx;
} GenerateIO;

/* model_prefill of tokens[0, n) at start_pos in pieces of about ten
 * times the first 2 positions' time, within 1-5x GENERATE_PREFILL_PIECE_NS
 * (timed with io->now_ns) and never under GENERATE_PREFILL_MIN_PIECE
 * positions after the first, io->should_stop
 * polled between them (the caller polls before), so a long prompt can be stopped: the pieces fill the
 * KV cache exactly as one call would. Without should_stop or now_ns, one
 * call. Returns the positions run (n, or fewer when stopped), or -1 when
 * model_prefill refused the arguments. */
#define GENERATE_PREFILL_PIECE_NS 100000000ull
#define GENERATE_PREFILL_MIN_PIECE 8
int generate_prefill(Model *t, const int *tokens, int n, int start_pos, const GenerateIO *io);

typedef enum { STOP_STEPS, STOP_EOS, STOP_BOS, STOP_USER, STOP_CONTEXT, STOP_ERROR } StopReason;

typedef struct {
    int prompt_tokens;    /* including BOS; those run when stopped inside the prefill */
    int generated_tokens; /* sampled and emitted */
    int positions;        /* forward passes run (llama2.c's final pos) */
    uint64_t prefill_ns;  /* forward passes over the prompt (and the first sample) */
    uint64_t decode_ns;   /* everything after that */
    uint64_t total_ns;
    /* From the end of the first position to the end: llama2.c reports
     * (positions - 1) / this as "achieved tok/s". */
    uint64_t after_first_ns;
    StopReason reason;
} GenerateStats;

/* Runs up to `steps` positions (<= 0 or more than the context: the context
 * length). Returns 0 (stats->reason says why it stopped) or -1 with a
 * one-line reason in err (stats->reason = STOP_ERROR). */
int generate(Model *t, const Tokenizer *tok, Sampler *s, const char *prompt, int steps, const GenerateIO *io,
             GenerateStats *stats, char *err, size_t err_size);

const char *stop_reason_name(StopReason r);

/* The tokens that end an answer: the vocabulary's EOS and, for GGUF
 * vocabularies, its end-of-turn control tokens (<|im_end|>, <|eot_id|>,
 * <|end|>, <|endoftext|>, <|end_of_text|>). Writes at most max ids; *count
 * gets how many. (BOS also stops generate(), by llama2.c's rule.) */
void generate_stop_tokens(const Tokenizer *tok, int *ids, int max, int *count);

#endif
