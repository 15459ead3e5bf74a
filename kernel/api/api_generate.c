/* api_generate.c - /v1/completions and /v1/chat/completions: the request's
 * sampling over the console's settings, the session's generation loop with
 * the answer going to the client (whole, or streamed chunk by chunk), stop
 * strings, and the usage and timings figures llama-server reports. */
#include "kernel/api/api_internal.h"

#include "kernel/drivers/timer.h"
#include "kernel/session/session.h"
#include "lib/format.h"
#include "lib/json_write.h"
#include "lib/stdlib.h"
#include "lib/string.h"

struct generation {
    struct session *s;
    const struct api_request *r;
    struct api_reply *reply;
    int chat;
    char id[32];
    struct json_utf8_joiner joiner;
    struct json_buf held; /* text not yet sent: it may be the start of a stop string */
    struct json_buf text; /* the whole answer, when not streaming */
    struct json_buf chunk;
    int stopped_by_string, gone, chunks;
    /* A completion's prompt is echoed by generate() (llama2.c prints it):
     * pieces of the sequence's first prompt_count tokens are not the answer. */
    int prompt_count, tokens_seen;
};

static uint64_t now_ns(void *ctx) {
    return timer_ns();
}

/* The fields every chunk and answer open with. */
static void open_object(struct generation *g, struct json_buf *b, int chunk) {
    json_rawz(b, "{\"id\":");
    json_stringz(b, g->id);
    json_rawz(b, ",\"object\":");
    json_stringz(b, g->chat ? (chunk ? "chat.completion.chunk" : "chat.completion") : "text_completion");
    json_rawz(b, ",\"created\":0,\"model\":");
    json_stringz(b, *g->r->model ? g->r->model : g->s->model.model_name);
    json_rawz(b, ",\"choices\":[{\"index\":0,");
}

/* Sends text to the client now: a chunk when streaming, else kept. */
static void deliver(struct generation *g, const char *text, size_t len) {
    if (!len || g->gone) return;
    if (!g->r->stream) {
        json_raw(&g->text, text, len);
        return;
    }
    struct json_buf *b = &g->chunk;
    json_buf_reset(b);
    open_object(g, b, 1);
    if (g->chat) {
        json_rawz(b, g->chunks == 0 ? "\"delta\":{\"role\":\"assistant\",\"content\":"
                                    : "\"delta\":{\"content\":");
        json_string(b, text, len);
        json_rawz(b, "},\"finish_reason\":null}]}");
    } else {
        json_rawz(b, "\"text\":");
        json_string(b, text, len);
        json_rawz(b, ",\"logprobs\":null,\"finish_reason\":null}]}");
    }
    g->chunks++;
    if (b->failed || g->reply->event(g->reply->ctx, b->data, b->len) != 0) g->gone = 1;
}

/* The longest end of `held` that begins some stop string: it waits for
 * the next piece. */
static size_t stop_prefix_at_end(const struct generation *g) {
    size_t best = 0;
    for (int i = 0; i < g->r->stop_count; i++) {
        size_t n = strlen(g->r->stop[i]);
        for (size_t k = n - 1; k > best; k--)
            if (k <= g->held.len && memcmp(g->held.data + g->held.len - k, g->r->stop[i], k) == 0) {
                best = k;
                break;
            }
    }
    return best;
}

static void pass_on(struct generation *g, const char *text, size_t len) {
    if (g->stopped_by_string) return;
    json_raw(&g->held, text, len);
    if (g->held.failed) {
        g->gone = 1;
        return;
    }
    for (int i = 0; i < g->r->stop_count; i++) {
        char *at = strstr(g->held.data, g->r->stop[i]);
        if (at) {
            deliver(g, g->held.data, (size_t)(at - g->held.data));
            g->stopped_by_string = 1;
            return;
        }
    }
    size_t keep = stop_prefix_at_end(g);
    deliver(g, g->held.data, g->held.len - keep);
    memmove(g->held.data, g->held.data + g->held.len - keep, keep + 1);
    g->held.len = keep;
}

static void count_token(void *ctx, int token) {
    ((struct generation *)ctx)->tokens_seen++;
}

static void emit(void *ctx, const char *piece, size_t len) {
    struct generation *g = ctx;
    if (g->tokens_seen < g->prompt_count) return; /* emit comes before on_token for the same token */
    char *whole = malloc(len + 4);
    if (!whole) {
        g->gone = 1;
        return;
    }
    size_t n = json_utf8_join(&g->joiner, piece, len, whole);
    pass_on(g, whole, n);
    free(whole);
}

static int should_stop(void *ctx) {
    struct generation *g = ctx;
    if (!g->gone && g->reply->gone && g->reply->gone(g->reply->ctx)) g->gone = 1;
    return g->gone || g->stopped_by_string;
}

/* llama-server's four figures of one phase: prompt_n, prompt_ms, ... */
static void write_phase(struct json_buf *b, const char *phase, int n, uint64_t ns, int first) {
    char key[32];
    double ms = (double)ns / 1e6;
    snprintf(key, sizeof key, "%s_n", phase);
    json_key(b, key, first);
    json_int(b, n);
    snprintf(key, sizeof key, "%s_ms", phase);
    json_key(b, key, 0);
    json_double(b, ms, 3);
    snprintf(key, sizeof key, "%s_per_token_ms", phase);
    json_key(b, key, 0);
    json_double(b, n ? ms / n : 0, 3);
    snprintf(key, sizeof key, "%s_per_second", phase);
    json_key(b, key, 0);
    json_double(b, ms > 0 ? n * 1000.0 / ms : 0, 3);
}

static void write_usage_and_timings(struct json_buf *b, const GenerateStats *st) {
    json_rawz(b, "\"usage\":{\"prompt_tokens\":");
    json_int(b, st->prompt_tokens);
    json_rawz(b, ",\"completion_tokens\":");
    json_int(b, st->generated_tokens);
    json_rawz(b, ",\"total_tokens\":");
    json_int(b, st->prompt_tokens + st->generated_tokens);
    json_rawz(b, "},\"timings\":{");
    write_phase(b, "prompt", st->prompt_tokens, st->prefill_ns, 1);
    write_phase(b, "predicted", st->generated_tokens, st->decode_ns, 0);
    json_raw(b, "}", 1);
}

/* The last chunk (finish_reason, usage, timings) or the whole answer. */
static int finish(struct generation *g, const GenerateStats *st, const char *finish_reason) {
    struct json_buf *b = &g->chunk;
    json_buf_reset(b);
    open_object(g, b, g->r->stream);
    if (g->r->stream)
        json_rawz(b, g->chat ? "\"delta\":{}," : "\"text\":\"\",\"logprobs\":null,");
    else if (g->chat) {
        json_rawz(b, "\"message\":{\"role\":\"assistant\",\"content\":");
        json_string(b, g->text.data ? g->text.data : "", g->text.len);
        json_rawz(b, "},");
    } else {
        json_rawz(b, "\"text\":");
        json_string(b, g->text.data ? g->text.data : "", g->text.len);
        json_rawz(b, ",\"logprobs\":null,");
    }
    json_rawz(b, "\"finish_reason\":");
    json_stringz(b, finish_reason);
    json_rawz(b, "}],");
    write_usage_and_timings(b, st);
    json_raw(b, "}", 1);
    if (b->failed || g->text.failed) {
        if (!g->r->stream) api_send_error(g->reply, 500, "out of memory for the answer");
        return 500;
    }
    if (!g->r->stream) {
        g->reply->send(g->reply->ctx, 200, b->data, b->len);
        return 200;
    }
    if (g->reply->event(g->reply->ctx, b->data, b->len) == 0) g->reply->end(g->reply->ctx);
    return 200;
}

static int make_sampler(struct session *s, const struct api_request *r, Sampler *sampler, char *err,
                        size_t n) {
    SamplerConfig sc = session_sampler_config(s);
    if (r->has & API_HAS_TEMPERATURE) sc.temperature = r->temperature;
    if (r->has & API_HAS_TOP_P) sc.topp = r->top_p;
    if (r->has & API_HAS_TOP_K) sc.top_k = r->top_k;
    if (r->has & API_HAS_MIN_P) sc.min_p = r->min_p;
    if ((r->has & API_HAS_SEED) && r->seed) sc.seed = r->seed;
    return sampler_create(sampler, s->model.llm.model.config.vocab_size, &sc, err, n);
}

/* Prompt tokens of a completion (BOS included, as generate() counts them); -1 (err) when it cannot be
 * encoded. */
static int prompt_tokens(const struct session *s, const char *prompt, char *err, size_t n) {
    size_t len = strlen(prompt), cap = tokenizer_max_tokens(len);
    int *ids = malloc(cap * sizeof(int));
    if (!ids) {
        strlcpy(err, "out of memory for the prompt", n);
        return -1;
    }
    int count = tokenizer_encode(&s->model.llm.tokenizer, prompt, 1, 0, ids, cap, err, n);
    free(ids);
    return count;
}

/* Runs the session's generation for the request; 0, -1 (err) or CHAT_NO_ROOM. */
static int run(struct generation *g, Sampler *sampler, GenerateStats *st, char *err, size_t n) {
    GenerateIO io = {emit, should_stop, now_ns, count_token, g};
    const struct api_request *r = g->r;
    int max_new = r->has & API_HAS_MAX_TOKENS ? r->max_tokens : 0;
    if (!g->chat) {
        g->prompt_count = prompt_tokens(g->s, r->prompt, err, n);
        if (g->prompt_count < 0) return -1;
        int seq_len = g->s->model.llm.model.config.seq_len;
        /* generate() samples one token after each of its `steps` positions
         * from the prompt's last on: N new tokens take prompt + N - 1 positions. */
        if (max_new && g->prompt_count + max_new - 1 > seq_len) {
            snprintf(err, n, "the prompt (%d tokens) and max_tokens (%d) do not fit the context of %d",
                     g->prompt_count, max_new, seq_len);
            return -1;
        }
        return session_complete(g->s, sampler, r->prompt, max_new ? g->prompt_count + max_new - 1 : 0, &io,
                                st, err, n);
    }
    const char *system = NULL, *turns[API_MAX_MESSAGES];
    int count = 0;
    for (int i = 0; i < r->message_count; i++) {
        const struct api_message *m = &r->messages[i];
        if (strcmp(m->role, "system") == 0) {
            if (count > 0 || system) {
                strlcpy(err, "messages: one system message, first", n);
                return -1;
            }
            system = m->content;
            continue;
        }
        if ((strcmp(m->role, "user") == 0) != (count % 2 == 0)) {
            strlcpy(err, "messages: user and assistant must take turns, the user first and last", n);
            return -1;
        }
        turns[count++] = m->content;
    }
    if (count % 2 == 0) {
        strlcpy(err, "messages: the last message must be the user's", n);
        return -1;
    }
    return session_chat_once(g->s, sampler, system, turns, count, max_new, &io, st, err, n);
}

int api_generate(struct session *s, enum api_kind kind, const struct api_request *r, struct api_reply *reply,
                 struct api_result *result) {
    static unsigned next_id;
    int seq_len = s->model.llm.model.config.seq_len;
    if ((r->has & API_HAS_MAX_TOKENS) && (r->max_tokens < 1 || r->max_tokens >= seq_len)) {
        char why[120];
        snprintf(why, sizeof why, "max_tokens must be from 1 to %d (the context is %d)", seq_len - 1,
                 seq_len);
        api_send_error(reply, 400, why);
        return 400;
    }
    struct generation g = {.s = s, .r = r, .reply = reply, .chat = kind == API_CHAT};
    snprintf(g.id, sizeof g.id, "%s-%u", g.chat ? "chatcmpl" : "cmpl", ++next_id);
    char err[200];
    Sampler sampler;
    if (make_sampler(s, r, &sampler, err, sizeof err) != 0) {
        api_send_error(reply, 400, err);
        return 400;
    }
    session_use_workers(0);
    GenerateStats st;
    int rc = run(&g, &sampler, &st, err, sizeof err);
    sampler_destroy(&sampler);
    int status;
    if (rc != 0 && g.chunks == 0) {
        status = rc == CHAT_NO_ROOM || strstr(err, "context") ? 400 : 500;
        if (rc == -1 && (strstr(err, "messages") || strstr(err, "prompt is"))) status = 400;
        api_send_error(reply, status, err);
    } else if (rc != 0) {
        status = 500; /* the stream has begun: it ends without [DONE] */
    } else {
        char tail[8];
        size_t n = json_utf8_flush(&g.joiner, tail);
        if (n) pass_on(&g, tail, n);
        if (!g.stopped_by_string && g.held.len) deliver(&g, g.held.data, g.held.len);
        const char *reason =
            g.stopped_by_string || st.reason == STOP_EOS || st.reason == STOP_BOS ? "stop" : "length";
        status = g.gone ? 499 : finish(&g, &st, reason);
        result->tokens = st.generated_tokens;
        result->tokens_per_second = st.decode_ns ? st.generated_tokens * 1e9 / (double)st.decode_ns : 0;
    }
    json_buf_free(&g.held);
    json_buf_free(&g.text);
    json_buf_free(&g.chunk);
    return status;
}
