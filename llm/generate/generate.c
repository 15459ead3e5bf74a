/* generate.c - llama2.c's generation loop over callbacks. */
#include "llm/generate/generate.h"

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

static uint64_t clock_now(const GenerateIO *io) {
    return io && io->now_ns ? io->now_ns(io->ctx) : 0;
}

int generate_prefill(Model *t, const int *tokens, int n, int start_pos, const GenerateIO *io) {
    if (!io || !io->should_stop || !io->now_ns) return model_prefill(t, tokens, n, start_pos) ? -1 : n;
    /* The first piece is 2 positions (a slow or loaded machine may run
     * only a few a second); later ones are sized from the rate measured so
     * far, in multiples of 8 positions from 16 on (the batches' sizes). */
    int done = 0, piece = 2;
    uint64_t start = io->now_ns(io->ctx);
    while (done < n) {
        if (done > 0 && io->should_stop(io->ctx)) break; /* the caller polled before the first */
        int count = n - done < piece ? n - done : piece;
        if (model_prefill(t, tokens + done, count, start_pos + done) != 0) return -1;
        done += count;
        uint64_t spent = io->now_ns(io->ctx) - start;
        uint64_t next = spent ? (uint64_t)done * GENERATE_PREFILL_PIECE_NS / spent : 1024;
        piece = next < 1 ? 1 : next > 1024 ? 1024 : next >= 16 ? (int)(next / 8 * 8) : (int)next;
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

    int token = prompt_tokens[0];
    int pos = 0;
    int prefill_count = prompt_count < steps ? prompt_count : steps;
    StopReason reason = STOP_STEPS;
    int failed = 0;
    int stopped_in_prefill = -1; /* positions the prefill ran before Ctrl-C */
    uint64_t start = clock_now(io), first_end = 0, prefill_end = 0;
    if (io && io->on_token) io->on_token(io->ctx, token);

    while (pos < steps) {
        if (io && io->should_stop && io->should_stop(io->ctx)) {
            reason = STOP_USER;
            break;
        }
        sampler_accept(s, token);
        float *logits;
        if (pos < prefill_count) {
            /* The prompt's positions run as one batched prefill; only the
             * logits after the last prompt token are ever sampled from. */
            int ran = pos == 0 ? generate_prefill(t, prompt_tokens, prefill_count, 0, io) : prefill_count;
            if (ran < 0) {
                snprintf(message, sizeof message, "prefill of %d prompt tokens failed", prefill_count);
                failed = 1;
                break;
            }
            if (ran < prefill_count) {
                stopped_in_prefill = ran;
                reason = STOP_USER;
                break;
            }
            logits = model_logits(t);
        } else {
            logits = model_forward(t, token, pos);
        }
        if (!logits) {
            snprintf(message, sizeof message, "forward pass failed at position %d (token %d)", pos, token);
            failed = 1;
            break;
        }
        int next;
        if (pos < prompt_count - 1) {
            next = prompt_tokens[pos + 1]; /* still inside the prompt: force it */
        } else {
            next = sampler_sample(s, logits);
        }
        pos++;
        if (pos == prompt_count) prefill_end = clock_now(io);

        /* The answer ends at EOS (or an end-of-turn token); run.c's rule:
         * BOS delimits sequences (ids from the vocabulary: 1/2 for tokenizer.bin). */
        if (pos >= prompt_count && is_stop_token(stop_ids, stop_count, next)) {
            reason = STOP_EOS;
            break;
        }
        if (next == tok->bos_id && tok->bos_id >= 0) {
            reason = STOP_BOS;
            break;
        }
        if (pos >= prompt_count) stats->generated_tokens++;

        size_t len;
        const char *piece = tokenizer_decode(tok, token, next, &len);
        if (len && io && io->emit) io->emit(io->ctx, piece, len);
        if (io && io->on_token) io->on_token(io->ctx, next);
        token = next;
        if (pos == 1) first_end = clock_now(io);
    }
    free(prompt_tokens);

    uint64_t end = clock_now(io);
    if (stopped_in_prefill >= 0) pos = stats->prompt_tokens = stopped_in_prefill; /* what ran, no more */
    stats->positions = pos;
    finish_times(stats, start, prefill_end, first_end, end); /* a stop inside the prompt leaves both 0 */
    if (failed) return fail(stats, err, err_size, message);
    if (reason == STOP_STEPS && pos >= seq_len) reason = STOP_CONTEXT;
    stats->reason = reason;
    return 0;
}
