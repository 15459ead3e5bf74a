/* generate.c - llama2.c's generation loop over callbacks. */
#include "llm/generate/generate.h"
#include "llm/generate/decode_loop.h"

#include "lib/format.h"
#include "lib/stdlib.h"
#include "lib/string.h"

const char *stop_reason_name(StopReason r) {
    switch (r) {
    case STOP_STEPS:
        return "steps";
    case STOP_EOS:
        return "eos";
    case STOP_BOS:
        return "bos";
    case STOP_USER:
        return "user";
    case STOP_CONTEXT:
        return "context";
    case STOP_ERROR:
        return "error";
    }
    return "unknown";
}

void generate_stop_tokens(const Tokenizer *tok, int *ids, int max, int *count) {
    static const char *const end_of_turn[] = {"<|im_end|>",    "<|eot_id|>",      "<|end|>",
                                              "<|endoftext|>", "<|end_of_text|>", "<end_of_turn>"};
    int n = 0;
    if (tok->eos_id >= 0 && n < max) ids[n++] = tok->eos_id;
    if (tok->kind != TOKENIZER_LLAMA2C) {
        for (size_t i = 0; i < sizeof end_of_turn / sizeof end_of_turn[0] && n < max; i++) {
            int id = tokenizer_lookup(tok, end_of_turn[i], strlen(end_of_turn[i]));
            if (id < 0 || id == tok->eos_id) continue;
            if (tok->token_types && tok->token_types[id] != TOKEN_TYPE_CONTROL &&
                tok->token_types[id] != TOKEN_TYPE_USER_DEFINED)
                continue;
            ids[n++] = id;
        }
    }
    *count = n;
}

static int is_stop_token(const int *ids, int count, int token) {
    for (int i = 0; i < count; i++)
        if (ids[i] == token) return 1;
    return 0;
}

int generate_prefill(Model *t, const int *tokens, int n, int start_pos, const GenerateIO *io) {
    if (!io || !io->should_stop || !io->now_ns) return model_prefill(t, tokens, n, start_pos) ? -1 : n;
    /* The first piece is 2 positions (a slow or loaded machine may run
     * only a few a second); each later one is sized from the last one's own
     * time, in multiples of 8 positions from 16 on (the batches' sizes).
     * Every piece pays one pass over the weights however few its positions,
     * about what the 2-position first piece costs: the pieces' time target
     * is ten times that (so the pass stays near a tenth of the prefill),
     * within 1-5x GENERATE_PREFILL_PIECE_NS. With the 100 ms target alone a
     * loaded host ran a prompt in pieces of 1 position, at decode speed, and
     * a 1B model in pieces of 8, at half the speed of one batch (issue 24).
     * Never fewer than GENERATE_PREFILL_MIN_PIECE positions after the first
     * piece: where one position alone takes longer than the target (a 3B
     * model under QEMU: 5 s), pieces of 1 ran the prompt at decode speed. */
    int done = 0, piece = 2;
    uint64_t target = 0;
    while (done < n) {
        if (done > 0 && io->should_stop(io->ctx)) break; /* the caller polled before the first */
        int count = n - done < piece ? n - done : piece;
        uint64_t start = io->now_ns(io->ctx);
        if (model_prefill(t, tokens + done, count, start_pos + done) != 0) return -1;
        done += count;
        uint64_t took = io->now_ns(io->ctx) - start;
        if (!target) {
            target = 10 * took;
            if (target < GENERATE_PREFILL_PIECE_NS) target = GENERATE_PREFILL_PIECE_NS;
            if (target > 5 * GENERATE_PREFILL_PIECE_NS) target = 5 * GENERATE_PREFILL_PIECE_NS;
        }
        uint64_t next = took ? (uint64_t)count * target / took : 1024;
        piece = next < GENERATE_PREFILL_MIN_PIECE ? GENERATE_PREFILL_MIN_PIECE
                : next > 1024                     ? 1024
                : next >= 16                      ? (int)(next / 8 * 8)
                                                  : (int)next;
    }
    return done;
}

static int fail(GenerateStats *stats, char *err, size_t err_size, const char *message) {
    if (err && err_size) strlcpy(err, message, err_size);
    stats->reason = STOP_ERROR;
    return -1;
}

/* The prompt's tokens (BOS first) into a new array *tokens; their count,
 * or -1 with the reason in message. */
static int encode_prompt(const Tokenizer *tok, const char *prompt, int seq_len, int **tokens, char *message,
                         size_t message_size) {
    size_t capacity = tokenizer_max_tokens(strlen(prompt));
    int *ids = malloc(capacity * sizeof(int));
    if (!ids) {
        strlcpy(message, "out of memory for the prompt tokens", message_size);
        return -1;
    }
    int count = tokenizer_encode(tok, prompt, 1, 0, ids, capacity, message, message_size);
    if (count < 1) {
        free(ids);
        if (count == 0) strlcpy(message, "expected at least 1 prompt token", message_size);
        return -1;
    }
    if (count > seq_len) {
        free(ids);
        snprintf(message, message_size, "prompt is %d tokens, the context is %d", count, seq_len);
        return -1;
    }
    *tokens = ids;
    return count;
}

/* The run's times (stops inside the prompt or before the first answer token count as at its end). */
static void finish_times(GenerateStats *stats, uint64_t start, uint64_t prefill_end, uint64_t first_end,
                         uint64_t end) {
    if (!prefill_end) prefill_end = end;
    if (!first_end) first_end = end;
    stats->total_ns = end - start;
    stats->prefill_ns = prefill_end - start;
    stats->decode_ns = end - prefill_end;
    stats->after_first_ns = end - first_end;
}

typedef struct {
    const Tokenizer *tok;
    const GenerateIO *io;
} Streamer;

/* Streams a token's piece as run.c prints it. */
static void stream_piece(void *ctx, int prev, int token) {
    const Streamer *st = ctx;
    size_t len;
    const char *piece = tokenizer_decode(st->tok, prev, token, &len);
    if (len && st->io && st->io->emit) st->io->emit(st->io->ctx, piece, len);
}

/* The prompt: its prefill, then its tokens forced and streamed one position
 * at a time as run.c does (their logits unused), polling before each, the
 * last one included. Returns the positions gone through (prompt_count - 1
 * with *reason STOP_STEPS where the answer follows), or -1 with a reason in
 * message. */
static int run_prompt(Model *t, Sampler *s, const int *prompt, int prompt_count, int steps,
                      const Streamer *st, StopReason *reason, int *stopped_in_prefill, uint64_t *first_end,
                      char *message, size_t message_size) {
    const GenerateIO *io = st->io;
    int prefill_count = prompt_count < steps ? prompt_count : steps;
    *reason = STOP_USER;
    int pos = 0;
    for (;; pos++) {
        if (io && io->should_stop && io->should_stop(io->ctx)) return pos;
        sampler_accept(s, prompt[pos]);
        if (pos == 0) {
            /* The prompt's positions run as one batched prefill; only the
             * logits after the last prompt token are ever sampled from. */
            int ran = generate_prefill(t, prompt, prefill_count, 0, io);
            if (ran < 0) {
                snprintf(message, message_size, "prefill of %d prompt tokens failed", prefill_count);
                return -1;
            }
            if (ran < prefill_count) {
                *stopped_in_prefill = ran;
                return pos;
            }
        }
        if (pos == prompt_count - 1) break; /* the answer's first token is sampled next */
        int next = prompt[pos + 1];
        if (next == st->tok->bos_id && st->tok->bos_id >= 0) {
            *reason = STOP_BOS; /* run.c's rule, inside the prompt too */
            return pos + 1;
        }
        stream_piece((void *)st, prompt[pos], next);
        if (io && io->on_token) io->on_token(io->ctx, next);
        if (pos == 0) *first_end = generate_clock(io);
        if (pos + 1 >= steps) {
            *reason = STOP_STEPS;
            return pos + 1;
        }
    }
    *reason = STOP_STEPS;
    return pos;
}

int generate(Model *t, const Tokenizer *tok, Sampler *s, const char *prompt, int steps, const GenerateIO *io,
             GenerateStats *stats, char *err, size_t err_size) {
    char message[160];
    memset(stats, 0, sizeof *stats);
    if (!prompt) prompt = "";
    const int seq_len = t->config.seq_len;
    const int vocab_size = t->config.vocab_size;
    if (tok->vocab_size != vocab_size) {
        snprintf(message, sizeof message, "the tokenizer has %d tokens, the model %d", tok->vocab_size,
                 vocab_size);
        return fail(stats, err, err_size, message);
    }
    if (s->vocab_size != vocab_size) {
        snprintf(message, sizeof message, "the sampler is for %d tokens, the model has %d", s->vocab_size,
                 vocab_size);
        return fail(stats, err, err_size, message);
    }
    if (steps <= 0 || steps > seq_len) steps = seq_len;

    /* Everything the loop needs is prepared here: no allocation or parsing inside it. */
    int *prompt_tokens;
    int prompt_count = encode_prompt(tok, prompt, seq_len, &prompt_tokens, message, sizeof message);
    if (prompt_count < 0) return fail(stats, err, err_size, message);
    stats->prompt_tokens = prompt_count;
    int stop_ids[8], stop_count;
    generate_stop_tokens(tok, stop_ids, 8, &stop_count);

    StopReason reason;
    int stopped_in_prefill = -1; /* positions the prefill ran before Ctrl-C */
    uint64_t start = generate_clock(io), first_end = 0, prefill_end = 0;
    if (io && io->on_token) io->on_token(io->ctx, prompt_tokens[0]);
    Streamer streamer = {tok, io};
    int pos = run_prompt(t, s, prompt_tokens, prompt_count, steps, &streamer, &reason, &stopped_in_prefill,
                         &first_end, message, sizeof message);
    int failed = pos < 0;
    if (failed) pos = 0;
    if (pos == prompt_count - 1 && reason == STOP_STEPS && prompt_count <= steps) {
        /* The answer. A BOS among the stop tokens stops as one of them. */
        DecodeLoop d = {.stop_ids = stop_ids,
                        .stop_count = stop_count,
                        .bos_id = is_stop_token(stop_ids, stop_count, tok->bos_id) ? -1 : tok->bos_id,
                        .end = steps,
                        .at_end = STOP_STEPS,
                        .keep = stream_piece,
                        .ctx = &streamer,
                        .pos = prompt_count,
                        .last = prompt_tokens[prompt_count - 1],
                        .sampled_end = &prefill_end,
                        .kept_end = &first_end,
                        .polled = 1};
        reason = decode_loop(&d, t, s, model_logits(t), io, stats, message, sizeof message);
        failed = reason == STOP_ERROR;
        /* llama2.c's final pos: one a sample (a stopping one too), or where the forward pass failed. */
        int stopped_by_token = reason == STOP_EOS || reason == STOP_BOS;
        pos = failed ? d.pos : prompt_count - 1 + stats->generated_tokens + stopped_by_token;
    }
    free(prompt_tokens);

    uint64_t end = generate_clock(io);
    if (stopped_in_prefill >= 0) pos = stats->prompt_tokens = stopped_in_prefill; /* what ran, no more */
    stats->positions = pos;
    finish_times(stats, start, prefill_end, first_end, end); /* a stop inside the prompt leaves both 0 */
    if (failed) return fail(stats, err, err_size, message);
    if (reason == STOP_STEPS && pos >= seq_len) reason = STOP_CONTEXT;
    stats->reason = reason;
    return 0;
}
