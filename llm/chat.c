/* chat.c - chat templates and conversations that keep the KV cache. */
#include "llm/chat.h"

#include "lib/format.h"
#include "lib/stdlib.h"
#include "lib/string.h"

/* ------------------------------------------------------------ templates */

static const char *const template_names[] = {"none", "chatml", "llama3", "llama2", "zephyr"};

const char *chat_template_name(ChatTemplate t) {
    return (unsigned)t < sizeof template_names / sizeof template_names[0] ? template_names[t] : "unknown";
}

int chat_template_parse(const char *name, ChatTemplate *out) {
    for (unsigned i = 0; i < sizeof template_names / sizeof template_names[0]; i++) {
        if (strcmp(name, template_names[i]) == 0) {
            *out = (ChatTemplate)i;
            return 0;
        }
    }
    return -1;
}

static int has_token(const Tokenizer *tok, const char *piece) {
    return tokenizer_lookup(tok, piece, strlen(piece)) >= 0;
}

ChatTemplate chat_template_detect(const Tokenizer *tok) {
    const char *tmpl = tok->chat_template;
    if (tmpl) {
        if (strstr(tmpl, "<|im_start|>")) return CHAT_TEMPLATE_CHATML;
        if (strstr(tmpl, "<|start_header_id|>")) return CHAT_TEMPLATE_LLAMA3;
        if (strstr(tmpl, "<|user|>")) return CHAT_TEMPLATE_ZEPHYR;
        if (strstr(tmpl, "[INST]")) return CHAT_TEMPLATE_LLAMA2;
    }
    if (tok->kind == TOKENIZER_LLAMA2C) return CHAT_TEMPLATE_NONE;
    if (has_token(tok, "<|im_start|>")) return CHAT_TEMPLATE_CHATML;
    if (has_token(tok, "<|start_header_id|>")) return CHAT_TEMPLATE_LLAMA3;
    return CHAT_TEMPLATE_NONE;
}

/* A piece of a turn: template text (special tokens parsed), the user's or
 * system's text (never parsed), or a BOS token (text NULL). */
typedef struct {
    const char *text;
    int special;
} Segment;

#define MAX_SEGMENTS 10

/* The segments of one turn. `bos` says whether the turn starts with BOS
 * (decided by the caller for the first turn; Llama 2 repeats it per turn). */
static int turn_segments(ChatTemplate t, const char *system, const char *user, int first, int bos,
                         Segment *seg) {
    int n = 0;
    int with_system = first && system && *system;
    if (bos && (first || t == CHAT_TEMPLATE_LLAMA2)) seg[n++] = (Segment){NULL, 1};
    switch (t) {
    case CHAT_TEMPLATE_NONE:
        if (with_system) seg[n++] = (Segment){system, 0};
        seg[n++] = (Segment){user, 0};
        break;
    case CHAT_TEMPLATE_CHATML:
        if (with_system) {
            seg[n++] = (Segment){"<|im_start|>system\n", 1};
            seg[n++] = (Segment){system, 0};
            seg[n++] = (Segment){"<|im_end|>\n", 1};
        }
        seg[n++] = (Segment){"<|im_start|>user\n", 1};
        seg[n++] = (Segment){user, 0};
        seg[n++] = (Segment){"<|im_end|>\n<|im_start|>assistant\n", 1};
        break;
    case CHAT_TEMPLATE_LLAMA3:
        if (with_system) {
            seg[n++] = (Segment){"<|start_header_id|>system<|end_header_id|>\n\n", 1};
            seg[n++] = (Segment){system, 0};
            seg[n++] = (Segment){"<|eot_id|>", 1};
        }
        seg[n++] = (Segment){"<|start_header_id|>user<|end_header_id|>\n\n", 1};
        seg[n++] = (Segment){user, 0};
        seg[n++] = (Segment){"<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n", 1};
        break;
    case CHAT_TEMPLATE_LLAMA2:
        seg[n++] = (Segment){"[INST] ", 1};
        if (with_system) {
            seg[n++] = (Segment){"<<SYS>>\n", 1};
            seg[n++] = (Segment){system, 0};
            seg[n++] = (Segment){"\n<</SYS>>\n\n", 1};
        }
        seg[n++] = (Segment){user, 0};
        seg[n++] = (Segment){" [/INST]", 1};
        break;
    case CHAT_TEMPLATE_ZEPHYR:
        if (with_system) {
            seg[n++] = (Segment){"<|system|>\n", 1};
            seg[n++] = (Segment){system, 0};
            seg[n++] = (Segment){"</s>\n", 1};
        }
        seg[n++] = (Segment){"<|user|>\n", 1};
        seg[n++] = (Segment){user, 0};
        seg[n++] = (Segment){"</s>\n<|assistant|>\n", 1};
        break;
    }
    return n;
}

const char *chat_answer_suffix(ChatTemplate t) {
    switch (t) {
    case CHAT_TEMPLATE_CHATML:
        return "<|im_end|>\n";
    case CHAT_TEMPLATE_LLAMA3:
        return "<|eot_id|>";
    case CHAT_TEMPLATE_LLAMA2:
        return "</s>";
    case CHAT_TEMPLATE_ZEPHYR:
        return "</s>\n";
    default:
        return "";
    }
}

size_t chat_render_turn(ChatTemplate t, const char *system, const char *user, int first, char *out,
                        size_t out_size) {
    Segment seg[MAX_SEGMENTS];
    int n = turn_segments(t, system, user, first, 0, seg);
    size_t len = 0;
    if (out_size) out[0] = '\0';
    for (int i = 0; i < n; i++) {
        if (!seg[i].text) continue;
        size_t add = strlen(seg[i].text);
        if (out_size && len < out_size - 1) {
            size_t room = out_size - 1 - len;
            memcpy(out + len, seg[i].text, add < room ? add : room);
            out[len + (add < room ? add : room)] = '\0';
        }
        len += add;
    }
    return len < out_size ? len : (out_size ? out_size - 1 : 0);
}

/* ------------------------------------------------------------ conversation */

/* Whether the conversation starts with BOS. */
static int starts_with_bos(const Chat *c, const Tokenizer *tok) {
    if (tok->bos_id < 0) return 0;
    if (tok->kind == TOKENIZER_LLAMA2C) return 1;
    return tok->add_bos || c->template == CHAT_TEMPLATE_LLAMA3 || c->template == CHAT_TEMPLATE_LLAMA2;
}

/* Encodes segments into a fresh malloc'd array; returns the count or -1. */
static int encode_segments(const Tokenizer *tok, const Segment *seg, int n, int **out, char *err,
                           size_t err_size) {
    size_t capacity = 1;
    for (int i = 0; i < n; i++) capacity += seg[i].text ? tokenizer_max_tokens(strlen(seg[i].text)) : 1;
    int *ids = malloc(capacity * sizeof(int));
    if (!ids) {
        strlcpy(err, "out of memory for the turn's tokens", err_size);
        return -1;
    }
    size_t count = 0;
    for (int i = 0; i < n; i++) {
        if (!seg[i].text) {
            ids[count++] = tok->bos_id;
            continue;
        }
        if (!*seg[i].text) continue;
        int got = tokenizer_encode_ex(tok, seg[i].text, strlen(seg[i].text),
                                      seg[i].special ? TOKENIZE_PARSE_SPECIAL : 0, ids + count,
                                      capacity - count, err, err_size);
        if (got < 0) {
            free(ids);
            return -1;
        }
        count += (size_t)got;
    }
    *out = ids;
    return (int)count;
}

static int encode_turn(const Chat *c, const Tokenizer *tok, const char *user, int **out, char *err,
                       size_t err_size) {
    Segment seg[MAX_SEGMENTS];
    int first = c->turns == 0;
    int n = turn_segments(c->template, c->system, user, first, starts_with_bos(c, tok), seg);
    return encode_segments(tok, seg, n, out, err, err_size);
}

int chat_turn_tokens(const Chat *c, const Tokenizer *tok, const char *user, char *err, size_t err_size) {
    int *ids;
    int n = encode_turn(c, tok, user, &ids, err, err_size);
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

int chat_create(Chat *c, const Transformer *t, const Tokenizer *tok, ChatTemplate tmpl, const char *system,
                char *err, size_t err_size) {
    memset(c, 0, sizeof *c);
    c->template = tmpl;
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
    c->think_open = tok->kind == TOKENIZER_LLAMA2C ? -1 : tokenizer_lookup(tok, "<think>", 7);
    c->think_close = tok->kind == TOKENIZER_LLAMA2C ? -1 : tokenizer_lookup(tok, "</think>", 8);

    const char *suffix = chat_answer_suffix(tmpl);
    if (*suffix) {
        Segment seg = {suffix, 1};
        int *ids;
        int n = encode_segments(tok, &seg, 1, &ids, err, err_size);
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
    free(c->tokens);
    free(c->turn_starts);
    free(c->system);
    memset(c, 0, sizeof *c);
}

void chat_reset(Chat *c) {
    c->count = c->pos = c->turns = c->prefix_count = 0;
    c->thinking = c->after_think = 0;
}

int chat_slide(Chat *c, int needed) {
    if (c->turns == 0) return c->count + needed <= c->capacity ? 0 : -1;
    /* Turn 0 carries the BOS and the system part: keep its prefix. */
    int keep_from = c->prefix_count;
    int dropped = 0;
    while (dropped < c->turns) {
        int start = dropped + 1 < c->turns ? c->turn_starts[dropped + 1] : c->count;
        dropped++;
        if (keep_from + (c->count - start) + needed <= c->capacity) {
            int rest = c->count - start;
            memmove(c->tokens + keep_from, c->tokens + start, (size_t)rest * sizeof(int));
            for (int i = dropped; i < c->turns; i++)
                c->turn_starts[i - dropped] = c->turn_starts[i] - start + keep_from;
            c->turns -= dropped;
            c->count = keep_from + rest;
            if (c->turns == 0) c->count = keep_from;
            c->pos = 0; /* everything is prefilled again by the next turn */
            return dropped;
        }
    }
    return -1;
}

static uint64_t clock_now(const GenerateIO *io) {
    return io && io->now_ns ? io->now_ns(io->ctx) : 0;
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

/* The turn's prefix length when it is the first turn: the BOS and system
 * part, i.e. what a turn without them would not have. */
static int first_turn_prefix(Chat *c, const Tokenizer *tok, int full_count) {
    Chat probe = *c;
    probe.turns = 1; /* a later turn: no system part */
    char err[8];
    int later = chat_turn_tokens(&probe, tok, "", err, sizeof err);
    Chat first = *c;
    int first_empty = chat_turn_tokens(&first, tok, "", err, sizeof err);
    if (later < 0 || first_empty < 0 || first_empty < later) return 0;
    int prefix = first_empty - later;
    return prefix < full_count ? prefix : 0;
}

int chat_turn(Chat *c, Transformer *t, const Tokenizer *tok, Sampler *s, const char *user, int max_new,
              const GenerateIO *io, GenerateStats *stats, char *err, size_t err_size) {
    memset(stats, 0, sizeof *stats);
    if (!user) user = "";
    int *turn;
    int n = encode_turn(c, tok, user, &turn, err, err_size);
    if (n < 0) {
        stats->reason = STOP_ERROR;
        return -1;
    }
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
    c->count += n;
    c->thinking = c->after_think = 0;

    uint64_t start = clock_now(io);
    int prefill = c->count - c->pos;
    stats->prompt_tokens = prefill;
    for (int i = c->pos; i < c->count; i++) sampler_accept(s, c->tokens[i]);
    if (transformer_prefill(t, c->tokens + c->pos, prefill, c->pos) != 0) {
        snprintf(err, err_size, "prefill of %d tokens at position %d failed", prefill, c->pos);
        stats->reason = STOP_ERROR;
        c->pos = 0; /* the cache is suspect: re-prefill everything next time */
        return -1;
    }
    c->pos = c->count;
    uint64_t prefill_end = clock_now(io), first_end = 0;
    float *logits = t->state.logits;
    int limit = c->capacity - c->suffix_count;
    StopReason reason = STOP_STEPS;
    int prev = c->tokens[c->count - 1];
    for (;;) {
        if (io && io->should_stop && io->should_stop(io->ctx)) {
            reason = STOP_USER;
            break;
        }
        int next = sampler_sample(s, logits);
        if (is_stop(c, next)) {
            reason = next == tok->bos_id && next != tok->eos_id ? STOP_BOS : STOP_EOS;
            break;
        }
        c->tokens[c->count++] = next;
        stats->generated_tokens++;
        sampler_accept(s, next);
        emit_token(c, tok, io, prev, next);
        if (io && io->on_token) io->on_token(io->ctx, next);
        prev = next;
        if (max_new > 0 && stats->generated_tokens >= max_new) break;
        if (c->count >= limit) {
            reason = STOP_CONTEXT;
            break;
        }
        logits = transformer_forward(t, next, c->count - 1);
        if (!logits) {
            snprintf(err, err_size, "forward pass failed at position %d", c->count - 1);
            stats->reason = STOP_ERROR;
            return -1;
        }
        c->pos = c->count;
        if (!first_end) first_end = clock_now(io);
    }
    /* Close the answer the way the template expects (room was reserved). */
    memcpy(c->tokens + c->count, c->suffix_ids, (size_t)c->suffix_count * sizeof(int));
    c->count += c->suffix_count;

    uint64_t end = clock_now(io);
    stats->positions = prefill + stats->generated_tokens; /* so positions - prompt_tokens = answer tokens */
    stats->total_ns = end - start;
    stats->prefill_ns = prefill_end - start;
    stats->decode_ns = end - prefill_end;
    stats->after_first_ns = end - (first_end ? first_end : end);
    stats->reason = reason;
    return 0;
}
