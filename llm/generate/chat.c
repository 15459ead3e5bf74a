/* chat.c - conversations that keep the KV cache (the templates are in
 * chat_template.c). */
#include "llm/generate/chat.h"
#include "llm/generate/chat_internal.h"
#include "llm/generate/decode_loop.h"

#include "lib/format.h"
#include "lib/stdlib.h"
#include "lib/string.h"

/* ------------------------------------------------------------ conversation */

/* The tokens of the turn for `user`; *gen_think_at gets the index where
 * the part of the generation prompt that history drops begins. */
static int encode_turn(const Chat *c, const Tokenizer *tok, const char *user, int **out, int *gen_think_at,
                       char *err, size_t err_size) {
    ChatParts p = {0};
    int first = c->turns == 0;
    if (chat_parts_turn(&p, c->template, &c->options, c->system, user, first,
                        chat_template_wants_bos(c->template, tok)) != 0) {
        strlcpy(err, "out of memory for the system prompt", err_size);
        return -1;
    }
    int n = chat_parts_encode_alloc(&p, tok, out, gen_think_at, err, err_size);
    chat_parts_destroy(&p);
    return n;
}

int chat_turn_tokens(const Chat *c, const Tokenizer *tok, const char *user, char *err, size_t err_size) {
    if (c->jinja) return chat_jinja_turn_tokens(c, tok, user, err, err_size);
    int *ids;
    int n = encode_turn(c, tok, user, &ids, NULL, err, err_size);
    if (n >= 0) free(ids);
    return n;
}

static void add_stop(Chat *c, int id) {
    if (id < 0 || c->stop_count == CHAT_MAX_STOP) return;
    for (int i = 0; i < c->stop_count; i++)
        if (c->stop_ids[i] == id) return;
    c->stop_ids[c->stop_count++] = id;
}

static int is_stop(const Chat *c, int id) {
    for (int i = 0; i < c->stop_count; i++)
        if (c->stop_ids[i] == id) return 1;
    return 0;
}

int chat_create(Chat *c, const Model *t, const Tokenizer *tok, ChatTemplate tmpl, const char *system,
                char *err, size_t err_size) {
    memset(c, 0, sizeof *c);
    c->template = tmpl;
    c->options = chat_default_options();
    c->capacity = t->config.seq_len;
    c->tokens = malloc((size_t)c->capacity * sizeof(int));
    c->turn_starts = malloc((size_t)c->capacity * sizeof(int));
    if (system && *system) {
        size_t len = strlen(system);
        c->system = malloc(len + 1);
        if (c->system) memcpy(c->system, system, len + 1);
    }
    if (!c->tokens || !c->turn_starts || (system && *system && !c->system)) {
        chat_destroy(c);
        strlcpy(err, "out of memory for the conversation", err_size);
        return -1;
    }
    /* Stop tokens: EOS, BOS (run.c's rule), and the vocabulary's end-of-turn tokens. */
    generate_stop_tokens(tok, c->stop_ids, CHAT_MAX_STOP, &c->stop_count);
    add_stop(c, tok->bos_id);
    const char *end_of_turn = tok->kind == TOKENIZER_LLAMA2C ? NULL : chat_template_end_of_turn(tmpl);
    if (end_of_turn) add_stop(c, tokenizer_lookup(tok, end_of_turn, strlen(end_of_turn)));
    c->think_open = tok->kind == TOKENIZER_LLAMA2C ? -1 : tokenizer_lookup(tok, "<think>", 7);
    c->think_close = tok->kind == TOKENIZER_LLAMA2C ? -1 : tokenizer_lookup(tok, "</think>", 8);

    const char *suffix = chat_answer_suffix(tmpl);
    if (*suffix) {
        ChatParts p = {.seg = {{SEG_TEMPLATE, suffix, strlen(suffix)}}, .n = 1};
        int *ids;
        int n = chat_parts_encode_alloc(&p, tok, &ids, NULL, err, err_size);
        if (n < 0 || n > (int)(sizeof c->suffix_ids / sizeof c->suffix_ids[0])) {
            if (n >= 0) free(ids), strlcpy(err, "the template's answer suffix is too long", err_size);
            chat_destroy(c);
            return -1;
        }
        memcpy(c->suffix_ids, ids, (size_t)n * sizeof(int));
        c->suffix_count = n;
        free(ids);
    }
    return 0;
}

void chat_destroy(Chat *c) {
    chat_forget_said(c);
    free(c->said);
    free(c->tokens);
    free(c->turn_starts);
    free(c->system);
    memset(c, 0, sizeof *c);
}

void chat_reset(Chat *c) {
    c->count = c->pos = c->turns = c->prefix_count = 0;
    c->thinking = c->after_think = 0;
    chat_forget_said(c);
}

int chat_slide(Chat *c, const Tokenizer *tok, int needed) {
    if (c->jinja) return chat_jinja_slide(c, tok, needed);
    if (c->turns == 0) return c->count + needed <= c->capacity ? 0 : -1;
    /* Turn 0 carries the BOS and the system part: keep its prefix. Where the
     * system part sits inside the first user turn (Gemma), the prefix ends
     * with it, so the first kept turn goes on after its own user header. */
    int keep_from = c->prefix_count;
    int dropped = 0;
    while (dropped < c->turns) {
        dropped++;
        if (dropped == c->turns) {
            /* Nothing kept: the next turn is a first turn again, system part and all. */
            if (needed > c->capacity) return -1;
            c->count = c->turns = c->pos = 0;
            return dropped;
        }
        int start = c->turn_starts[dropped] + c->fold_header;
        if (keep_from + (c->count - start) + needed <= c->capacity) {
            int rest = c->count - start;
            memmove(c->tokens + keep_from, c->tokens + start, (size_t)rest * sizeof(int));
            for (int i = dropped; i < c->turns; i++)
                c->turn_starts[i - dropped] = c->turn_starts[i] - start + keep_from;
            c->turns -= dropped;
            c->count = keep_from + rest;
            c->pos = 0; /* everything is prefilled again by the next turn */
            return dropped;
        }
    }
    return -1;
}

/* Streams a token's text unless it belongs to a hidden think block. */
static void emit_token(Chat *c, const Tokenizer *tok, const GenerateIO *io, int prev, int token) {
    if (c->hide_think && c->think_open >= 0) {
        if (token == c->think_open) {
            c->thinking = 1;
            return;
        }
        if (c->thinking) {
            if (token == c->think_close) c->thinking = 0, c->after_think = 1;
            return;
        }
    }
    size_t len;
    const char *piece = tokenizer_decode(tok, prev, token, &len);
    if (c->after_think) {
        while (len && piece[0] == '\n') piece++, len--;
        if (!len) return;
        c->after_think = 0;
    }
    if (len && io && io->emit) io->emit(io->ctx, piece, len);
}

typedef struct {
    Chat *c;
    const Tokenizer *tok;
    const GenerateIO *io;
} Keeper;

/* An answer token into the history, and streamed. */
static void keep_token(void *ctx, int prev, int token) {
    Keeper *k = ctx;
    k->c->tokens[k->c->count++] = token;
    emit_token(k->c, k->tok, k->io, prev, token);
}

/* The turn's prefix length when it is the first turn: the BOS and system
 * part, i.e. what a turn without them would not have. */
static int first_turn_prefix(Chat *c, const Tokenizer *tok, int full_count) {
    c->fold_header = 0;
    Chat probe = *c;
    probe.turns = 1; /* a later turn: no system part */
    char err[8];
    int later = chat_turn_tokens(&probe, tok, "", err, sizeof err);
    Chat first = *c;
    int first_empty = chat_turn_tokens(&first, tok, "", err, sizeof err);
    if (later < 0 || first_empty < 0 || first_empty < later) return 0;
    int prefix = first_empty - later;
    if (chat_template_folds_system(c->template) && c->system && *c->system) {
        /* The system part follows the user header, which both turns share:
         * the prefix runs to the end of the system part. */
        int *first_ids, *later_ids, bos = chat_template_wants_bos(c->template, tok);
        if (encode_turn(&first, tok, "", &first_ids, NULL, err, sizeof err) < 0) return 0;
        if (encode_turn(&probe, tok, "", &later_ids, NULL, err, sizeof err) < 0) {
            free(first_ids);
            return 0;
        }
        while (c->fold_header < later && first_ids[bos + c->fold_header] == later_ids[c->fold_header])
            c->fold_header++;
        free(first_ids);
        free(later_ids);
        prefix += c->fold_header;
    }
    return prefix < full_count ? prefix : 0;
}

static int is_newlines(const Tokenizer *tok, int token) {
    size_t len;
    const char *piece = tokenizer_decode(tok, -1, token, &len);
    if (!len) return 0;
    for (size_t i = 0; i < len; i++)
        if (piece[i] != '\n') return 0;
    return 1;
}

/* Qwen3 writes an earlier answer without its think block: the empty block
 * of the generation prompt (answer_start..gen_start) goes, and when the
 * model wrote a block of its own, everything up to its last </think> and
 * the newlines after it. The KV cache keeps its positions up to the cut; the
 * next turn prefills the rest again. */
static void drop_think_block(Chat *c, const Tokenizer *tok, int gen_start) {
    int end = c->count - c->suffix_count, cut_end = gen_start;
    for (int i = gen_start; i < end; i++)
        if (c->tokens[i] == c->think_close) cut_end = i + 1;
    if (cut_end > gen_start)
        while (cut_end < end && is_newlines(tok, c->tokens[cut_end])) cut_end++;
    int removed = cut_end - c->answer_start;
    if (removed <= 0) return;
    memmove(c->tokens + c->answer_start, c->tokens + cut_end, (size_t)(c->count - cut_end) * sizeof(int));
    c->count -= removed;
    if (c->pos > c->answer_start) c->pos = c->answer_start;
}

/* Ctrl-C inside the prefill: the turn is taken back, as if never typed;
 * the cache keeps the positions that ran before the turn. */
static int stopped_in_prefill(Chat *c, int ran, int turn_start, uint64_t start, const GenerateIO *io,
                              GenerateStats *stats) {
    if (c->jinja) {
        /* The rendering's first pos + ran tokens are in the cache; the next
         * rendering, without this message, keeps what it shares with them. */
        c->pos += ran;
        c->count = c->pos;
        chat_jinja_take_back(c);
    } else {
        c->pos = c->pos + ran < turn_start ? c->pos + ran : turn_start;
        c->count = turn_start;
    }
    c->turns--;
    uint64_t end = generate_clock(io);
    stats->prompt_tokens = stats->positions = ran;
    stats->total_ns = stats->prefill_ns = end - start;
    stats->reason = STOP_USER;
    return 0;
}

/* A built-in template's turn appended to the history (*n its tokens):
 * 0, -1 or CHAT_NO_ROOM with a reason. */
static int prepare_turn(Chat *c, const Tokenizer *tok, const char *user, int *n_out, char *err,
                        size_t err_size) {
    int *turn, gen_think_at;
    int n = encode_turn(c, tok, user, &turn, &gen_think_at, err, err_size);
    if (n < 0) return -1;
    /* Room for the turn, one answer token and the suffix that closes it. */
    int needed = n + 1 + c->suffix_count;
    if (c->count + needed > c->capacity) {
        snprintf(err, err_size, "this turn needs %d more tokens than the context of %d has left (%d used)",
                 c->count + needed - c->capacity, c->capacity, c->count);
        free(turn);
        return CHAT_NO_ROOM;
    }
    int turn_start = c->count;
    if (c->turns == 0) c->prefix_count = first_turn_prefix(c, tok, n);
    memcpy(c->tokens + c->count, turn, (size_t)n * sizeof(int));
    free(turn);
    c->turn_starts[c->turns++] = turn_start;
    c->answer_start = turn_start + gen_think_at;
    c->count += n;
    *n_out = n;
    return 0;
}

int chat_turn(Chat *c, Model *t, const Tokenizer *tok, Sampler *s, const char *user, int max_new,
              const GenerateIO *io, GenerateStats *stats, char *err, size_t err_size) {
    memset(stats, 0, sizeof *stats);
    if (!user) user = "";
    int turn_start = c->count, n = 0;
    if (c->jinja) {
        int rc = chat_jinja_begin(c, tok, user, err, err_size);
        if (rc != 0) {
            stats->reason = STOP_ERROR;
            return rc;
        }
    } else {
        int prepared = prepare_turn(c, tok, user, &n, err, err_size);
        if (prepared != 0) {
            stats->reason = STOP_ERROR;
            return prepared;
        }
    }
    c->thinking = c->after_think = 0;

    uint64_t start = generate_clock(io);
    int prefill = c->count - c->pos;
    stats->prompt_tokens = prefill;
    for (int i = c->pos; i < c->count; i++) sampler_accept(s, c->tokens[i]);
    int ran = generate_prefill(t, c->tokens + c->pos, prefill, c->pos, io);
    if (ran < 0) {
        snprintf(err, err_size, "prefill of %d tokens at position %d failed", prefill, c->pos);
        stats->reason = STOP_ERROR;
        c->pos = 0; /* the cache is suspect: re-prefill everything next time */
        return -1;
    }
    if (ran < prefill) return stopped_in_prefill(c, ran, turn_start, start, io, stats);
    c->pos = c->count;
    uint64_t prefill_end = generate_clock(io), first_end = 0;
    Keeper keeper = {c, tok, io};
    DecodeLoop d = {.stop_ids = c->stop_ids,
                    .stop_count = c->stop_count,
                    .bos_id = is_stop(c, tok->bos_id) && tok->bos_id != tok->eos_id ? tok->bos_id : -1,
                    .max_new = max_new,
                    .end = c->capacity - c->suffix_count - 1, /* room for the suffix that closes the answer */
                    .at_end = STOP_CONTEXT,
                    .keep = keep_token,
                    .ctx = &keeper,
                    .pos = c->pos,
                    .last = c->tokens[c->count - 1],
                    .kept_end = &first_end};
    StopReason reason = decode_loop(&d, t, s, model_logits(t), io, stats, err, err_size);
    if (reason == STOP_ERROR) {
        stats->reason = STOP_ERROR;
        return -1;
    }
    c->pos = d.pos;
    /* Every token of the history goes through the sampler's record, the last one kept too. */
    if (reason == STOP_STEPS || reason == STOP_CONTEXT) sampler_accept(s, d.last);
    if (c->jinja) {
        /* the next turn's rendering closes the answer */
        if (chat_jinja_end(c, tok, err, err_size) != 0) {
            stats->reason = STOP_ERROR;
            return -1;
        }
    } else {
        /* Close the answer the way the template expects (room was reserved). */
        memcpy(c->tokens + c->count, c->suffix_ids, (size_t)c->suffix_count * sizeof(int));
        c->count += c->suffix_count;
        if (chat_template_drops_think(c->template)) drop_think_block(c, tok, turn_start + n);
    }

    uint64_t end = generate_clock(io);
    stats->positions = prefill + stats->generated_tokens; /* so positions - prompt_tokens = answer tokens */
    stats->total_ns = end - start;
    stats->prefill_ns = prefill_end - start;
    stats->decode_ns = end - prefill_end;
    stats->after_first_ns = end - (first_end ? first_end : end);
    stats->reason = reason;
    return 0;
}

int chat_add_answered_turn(Chat *c, const Tokenizer *tok, const char *user, const char *answer, char *err,
                           size_t err_size) {
    int *turn, gen_think_at;
    int n = encode_turn(c, tok, user ? user : "", &turn, &gen_think_at, err, err_size);
    if (n < 0) return -1;
    if (!answer) answer = "";
    size_t answer_len = strlen(answer);
    size_t cap = tokenizer_max_tokens(answer_len);
    int *ids = malloc(cap * sizeof(int));
    int m = ids ? tokenizer_encode_ex(tok, answer, answer_len, 0, ids, cap, err, err_size) : -1;
    if (!ids) strlcpy(err, "out of memory for an earlier answer", err_size);
    if (m < 0 || c->count + n + m + c->suffix_count + 1 > c->capacity) {
        if (m >= 0) snprintf(err, err_size, "the conversation is longer than the context of %d", c->capacity);
        free(turn);
        free(ids);
        return m < 0 ? -1 : CHAT_NO_ROOM;
    }
    int turn_start = c->count;
    if (c->turns == 0) c->prefix_count = first_turn_prefix(c, tok, n);
    memcpy(c->tokens + c->count, turn, (size_t)n * sizeof(int));
    c->turn_starts[c->turns++] = turn_start;
    c->answer_start = turn_start + gen_think_at;
    c->count += n;
    memcpy(c->tokens + c->count, ids, (size_t)m * sizeof(int));
    c->count += m;
    memcpy(c->tokens + c->count, c->suffix_ids, (size_t)c->suffix_count * sizeof(int));
    c->count += c->suffix_count;
    if (chat_template_drops_think(c->template)) drop_think_block(c, tok, turn_start + n);
    free(turn);
    free(ids);
    return 0;
}
