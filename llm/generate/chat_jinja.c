/* chat_jinja.c - a conversation driven by the GGUF's own chat template
 * (chat_jinja_encode.c): each turn renders everything said so far, and the
 * tokens the KV cache already holds in common with it are not prefilled
 * again. Where the template rewrites history (Qwen3 drops earlier think
 * blocks), the common prefix is shorter and the rest is prefilled. */
#include "lib/format.h"
#include "lib/stdlib.h"
#include "lib/string.h"
#include "llm/generate/chat.h"
#include "llm/generate/chat_internal.h"

static const char probe_system[] = "You are a helpful assistant.";
static const char *const probe_turns[] = {"Hello!", "Hi. How can I help?", "Name a colour."};

int chat_template_check_jinja(const Tokenizer *tok, ChatTemplate t, char *why, size_t why_size) {
    size_t used = strlen(why);
    if (!tok->chat_template || tok->kind == TOKENIZER_LLAMA2C) return -1;
    ChatOptions o = chat_default_options();
    int *ids, n;
    char err[240];
    n = chat_jinja_encode(tok, tok->chat_template, &o, probe_system, probe_turns, 3, &ids, err, sizeof err);
    if (n < 0) {
        snprintf(why + used, why_size - used, "; refused by the Jinja engine (%s): %s used", err,
                 chat_template_name(t));
        return -1;
    }
    free(ids);
    snprintf(why, why_size, "the GGUF's tokenizer.chat_template through the Jinja engine");
    return 0;
}

void chat_use_jinja(Chat *c, const char *tmpl) {
    c->jinja = tmpl;
    c->suffix_count = 0; /* the next rendering closes each answer */
}

void chat_forget_said(Chat *c) {
    for (int i = 0; i < c->said_count; i++) free(c->said[i]);
    c->said_count = 0;
}

/* Keeps a copy of text (len bytes) as the next message. */
static int say(Chat *c, const char *text, size_t len) {
    if (c->said_count == c->said_capacity) {
        int cap = c->said_capacity ? 2 * c->said_capacity : 16;
        char **grown = realloc(c->said, (size_t)cap * sizeof *grown);
        if (!grown) return -1;
        c->said = grown, c->said_capacity = cap;
    }
    char *copy = malloc(len + 1);
    if (!copy) return -1;
    memcpy(copy, text, len);
    copy[len] = '\0';
    c->said[c->said_count++] = copy;
    return 0;
}

/* The whole conversation with `user` as its next message, as token ids. */
static int encode_with(const Chat *c, const Tokenizer *tok, const char *user, int **ids, char *err,
                       size_t err_size) {
    const char **messages = malloc((size_t)(c->said_count + 1) * sizeof *messages);
    if (!messages) {
        strlcpy(err, "out of memory for the conversation", err_size);
        return -1;
    }
    for (int i = 0; i < c->said_count; i++) messages[i] = c->said[i];
    messages[c->said_count] = user;
    int n = chat_jinja_encode(tok, c->jinja, &c->options, c->system, messages, c->said_count + 1, ids, err,
                              err_size);
    free(messages);
    return n;
}

static int common_prefix(const Chat *c, const int *ids, int n) {
    int i = 0;
    while (i < n && i < c->count && ids[i] == c->tokens[i]) i++;
    return i;
}

int chat_jinja_turn_tokens(const Chat *c, const Tokenizer *tok, const char *user, char *err,
                           size_t err_size) {
    int *ids;
    int n = encode_with(c, tok, user, &ids, err, err_size);
    if (n < 0) return -1;
    int added = n - common_prefix(c, ids, n);
    free(ids);
    return added;
}

int chat_jinja_begin(Chat *c, const Tokenizer *tok, const char *user, char *err, size_t err_size) {
    int *ids;
    int n = encode_with(c, tok, user, &ids, err, err_size);
    if (n < 0) return -1;
    if (n == 0) {
        strlcpy(err, "the chat template rendered nothing", err_size);
        free(ids);
        return -1;
    }
    if (n + 1 > c->capacity) {
        snprintf(err, err_size, "this turn needs %d more tokens than the context of %d has left (%d used)",
                 n + 1 - c->capacity, c->capacity, c->count);
        free(ids);
        return CHAT_NO_ROOM;
    }
    if (say(c, user, strlen(user)) != 0) {
        strlcpy(err, "out of memory for the conversation", err_size);
        free(ids);
        return -1;
    }
    int keep = common_prefix(c, ids, n);
    memcpy(c->tokens + keep, ids + keep, (size_t)(n - keep) * sizeof(int));
    free(ids);
    c->count = n;
    if (c->pos > keep) c->pos = keep;
    if (c->pos == n) c->pos = n - 1; /* the last token is run again: its logits start the answer */
    c->answer_start = n;
    c->turns++;
    return 0;
}

void chat_jinja_take_back(Chat *c) {
    if (c->said_count > 0) free(c->said[--c->said_count]);
}

int chat_jinja_end(Chat *c, const Tokenizer *tok, char *err, size_t err_size) {
    size_t cap = 1, len = 0;
    for (int i = c->answer_start; i < c->count; i++) {
        size_t piece;
        tokenizer_decode(tok, c->tokens[i - 1], c->tokens[i], &piece);
        cap += piece;
    }
    char *text = malloc(cap);
    if (!text) {
        strlcpy(err, "out of memory for the answer", err_size);
        return -1;
    }
    for (int i = c->answer_start; i < c->count; i++) {
        size_t piece;
        const char *s = tokenizer_decode(tok, c->tokens[i - 1], c->tokens[i], &piece);
        memcpy(text + len, s, piece);
        len += piece;
    }
    int rc = say(c, text, len);
    free(text);
    if (rc != 0) strlcpy(err, "out of memory for the answer", err_size);
    return rc;
}

int chat_jinja_slide(Chat *c, const Tokenizer *tok, int needed) {
    int dropped = 0;
    while (c->said_count >= 2) {
        /* the oldest user message and its answer */
        free(c->said[0]);
        free(c->said[1]);
        memmove(c->said, c->said + 2, (size_t)(c->said_count - 2) * sizeof *c->said);
        c->said_count -= 2;
        dropped++;
        int *ids;
        char err[8];
        int n = encode_with(c, tok, "", &ids, err, sizeof err);
        if (n < 0) return -1;
        free(ids);
        if (n + needed <= c->capacity) break;
    }
    c->turns -= dropped;
    if (c->turns < 0) c->turns = 0;
    return dropped || needed <= c->capacity ? dropped : -1;
}
