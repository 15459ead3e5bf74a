/* chat_jinja_encode.c - a conversation's token ids from the GGUF's own chat
 * template (llm/jinja), with the template's text and the messages' text told
 * apart: the template is rendered twice, once with the real messages and once
 * with each content replaced by a placeholder of private-use code points. The
 * placeholder rendering is the template's own text; the real rendering must
 * be that text with each placeholder replaced by its message's content (as
 * is, or as the template trims or cuts it). The content's bytes are then
 * plain spans for the tokenizer: control-token text typed in a message stays
 * text, so a user cannot forge a turn. */
#include "lib/format.h"
#include "lib/stdlib.h"
#include "lib/string.h"
#include "llm/generate/chat_internal.h"
#include "llm/jinja/jinja.h"

/* U+F0000 <index> U+F0001: code points of a private-use plane that the
 * placeholder rendering holds only where a placeholder was put. */
static const char mark_open[] = "\xF3\xB0\x80\x80", mark_close[] = "\xF3\xB0\x80\x81";
#define MARK_LEN 4

typedef struct {
    const char *role, *content;
} Message;

static int is_space(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

/* {"messages": [...], "add_generation_prompt": true, "bos_token": .., "eos_token": .., ...}; with
 * placeholders, message j's content is mark_open j mark_close. malloc'd. */
static char *build_context(const Tokenizer *tok, const ChatOptions *o, const Message *m, int count,
                           int placeholders, size_t *len) {
    size_t cap = 512;
    for (int j = 0; j < count; j++) cap += 6 * strlen(m[j].content) + 64;
    for (int k = 0; k < 2; k++) {
        int id = k ? tok->eos_id : tok->bos_id;
        if (id >= 0 && id < tok->vocab_size) cap += 6 * strlen(tok->pieces[id]) + 32;
    }
    char *ctx = malloc(cap);
    if (!ctx) return NULL;
    size_t at = (size_t)snprintf(ctx, cap, "{\"messages\": [");
    for (int j = 0; j < count; j++) {
        at += (size_t)snprintf(ctx + at, cap - at, "%s{\"role\": \"%s\", \"content\": ", j ? ", " : "",
                               m[j].role);
        if (placeholders)
            at += (size_t)snprintf(ctx + at, cap - at, "\"%s%d%s\"}", mark_open, j, mark_close);
        else
            at += jinja_json_quote(m[j].content, strlen(m[j].content), ctx + at, cap - at),
                at += (size_t)snprintf(ctx + at, cap - at, "}");
    }
    at += (size_t)snprintf(ctx + at, cap - at, "], \"add_generation_prompt\": true%s",
                           o->enable_thinking ? "" : ", \"enable_thinking\": false");
    const char *names[2] = {"bos_token", "eos_token"};
    for (int k = 0; k < 2; k++) {
        int id = k ? tok->eos_id : tok->bos_id;
        if (id < 0 || id >= tok->vocab_size) continue;
        at += (size_t)snprintf(ctx + at, cap - at, ", \"%s\": ", names[k]);
        at += jinja_json_quote(tok->pieces[id], strlen(tok->pieces[id]), ctx + at, cap - at);
    }
    at += (size_t)snprintf(ctx + at, cap - at, "}");
    *len = at;
    return ctx;
}

static int render(const char *tmpl, const char *ctx, size_t ctx_len, char **out, size_t *out_len, char *err,
                  size_t err_size) {
    JinjaLimits limits = jinja_default_limits();
    return jinja_render(tmpl, strlen(tmpl), ctx, ctx_len, &limits, out, out_len, err, err_size);
}

/* The forms a template writes a content in, most literal first: as is,
 * trimmed, what follows the last </think> (Qwen3's history), with leading
 * newlines or white space dropped, what follows the last </think> as is. */
#define FORMS 7
static void content_form(const char *c, int form, size_t *start, size_t *len) {
    size_t s = 0, e = strlen(c);
    if (form == 2 || form == 3 || form == 6) {
        const char *at = c, *after = NULL;
        while ((at = strstr(at, "</think>"))) after = at += 8;
        if (after) s = (size_t)(after - c);
        while (form != 6 && s < e && c[s] == '\n') s++;
    }
    if (form == 1 || form == 3 || form == 5)
        while (s < e && is_space(c[s])) s++;
    if (form == 1 || form == 3)
        while (e > s && is_space(c[e - 1])) e--;
    if (form == 4)
        while (s < e && c[s] == '\n') s++;
    *start = s, *len = e - s;
}

/* The placeholder at p (mark_open digits mark_close): its message index, and
 * *end past it; -1 when it is not a whole one. */
static int placeholder_at(const char *p, const char *end, int count, const char **after) {
    if (end - p < 2 * MARK_LEN + 1 || memcmp(p, mark_open, MARK_LEN) != 0) return -1;
    p += MARK_LEN;
    int j = 0, digits = 0;
    while (p < end && *p >= '0' && *p <= '9' && digits < 6) j = j * 10 + (*p++ - '0'), digits++;
    if (!digits || j >= count || end - p < MARK_LEN || memcmp(p, mark_close, MARK_LEN) != 0) return -1;
    *after = p + MARK_LEN;
    return j;
}

/* Next mark (either kind) in [p, end), or end. */
static const char *next_mark(const char *p, const char *end) {
    for (; end - p >= MARK_LEN; p++)
        if (memcmp(p, mark_open, MARK_LEN - 1) == 0 && ((unsigned char)p[3] & 0xFE) == 0x80) return p;
    return end;
}

/* Aligns the real rendering with the placeholder one: every byte of the
 * placeholder rendering outside placeholders must stand in the real one at
 * its place, each placeholder's place holds a form of its content. Writes
 * the content spans (at most max); returns their count, or -1 with a reason. */
static int align(const Message *m, int count, const char *ph, size_t ph_len, const char *real,
                 size_t real_len, TokenizerSpan *spans, int max, char *err, size_t err_size) {
    const char *p = ph, *end = ph + ph_len;
    size_t r = 0;
    int n = 0;
    while (p < end) {
        const char *mark = next_mark(p, end);
        size_t text = (size_t)(mark - p);
        if (text > real_len - r || memcmp(real + r, p, text) != 0) {
            snprintf(err, err_size, "its text around the messages depends on their content (at byte %zu)", r);
            return -1;
        }
        r += text, p = mark;
        if (p == end) break;
        const char *after;
        int j = placeholder_at(p, end, count, &after);
        if (j < 0 || n == max) {
            snprintf(err, err_size, "it takes a message's content apart (at byte %zu)", r);
            return -1;
        }
        /* The template text up to the next placeholder must follow the content. */
        const char *next = next_mark(after, end);
        size_t follow = (size_t)(next - after);
        int found = 0;
        for (int form = 0; form < FORMS && !found; form++) {
            size_t s, len;
            content_form(m[j].content, form, &s, &len);
            if (len > real_len - r || memcmp(real + r, m[j].content + s, len) != 0) continue;
            if (follow > real_len - r - len || memcmp(real + r + len, after, follow) != 0) continue;
            if (next == end && r + len + follow != real_len) continue;
            if (len) spans[n++] = (TokenizerSpan){r, r + len};
            r += len;
            found = 1;
        }
        if (!found) {
            snprintf(err, err_size, "it changes the content of message %d (%s) in a way not known here", j,
                     m[j].role);
            return -1;
        }
        p = after;
    }
    if (r != real_len) {
        snprintf(err, err_size, "its text around the messages depends on their content (at byte %zu)", r);
        return -1;
    }
    return n;
}

int chat_jinja_encode(const Tokenizer *tok, const char *tmpl, const ChatOptions *o, const char *system,
                      const char *const *messages, int count, int **out, char *err, size_t err_size) {
    int total = count + (system && *system ? 1 : 0), rc = -1, n = 0;
    Message *m = malloc((size_t)(total + 1) * sizeof *m);
    TokenizerSpan *spans = malloc((size_t)(4 * total + 4) * sizeof *spans);
    char *ph_ctx = NULL, *real_ctx = NULL, *ph = NULL, *real = NULL, why[200];
    int *ids = NULL;
    size_t ph_ctx_len = 0, real_ctx_len = 0, ph_len = 0, real_len = 0;
    if (!m || !spans) goto oom;
    if (system && *system) m[n++] = (Message){"system", system};
    for (int i = 0; i < count; i++) m[n++] = (Message){i % 2 ? "assistant" : "user", messages[i]};
    ph_ctx = build_context(tok, o, m, n, 1, &ph_ctx_len);
    real_ctx = build_context(tok, o, m, n, 0, &real_ctx_len);
    if (!ph_ctx || !real_ctx) goto oom;
    if (render(tmpl, real_ctx, real_ctx_len, &real, &real_len, why, sizeof why) != 0 ||
        render(tmpl, ph_ctx, ph_ctx_len, &ph, &ph_len, why, sizeof why) != 0) {
        snprintf(err, err_size, "the Jinja engine refused the template: %s", why);
        goto done;
    }
    int span_count = align(m, n, ph, ph_len, real, real_len, spans, 4 * total + 4, why, sizeof why);
    if (span_count < 0) {
        snprintf(err, err_size, "the template's text cannot be told from the messages': %s", why);
        goto done;
    }
    size_t cap = tokenizer_max_tokens(real_len) + 1;
    ids = malloc(cap * sizeof(int));
    if (!ids) goto oom;
    /* llama.cpp's add_special: BOS when the vocabulary asks for it and the template did not write it. */
    int bos = tok->add_bos && tok->bos_id >= 0 &&
              !(real_len && strncmp(real, tok->pieces[tok->bos_id], strlen(tok->pieces[tok->bos_id])) == 0);
    if (bos) ids[0] = tok->bos_id;
    TokenizerSpans plain = {spans, span_count};
    int got =
        tokenizer_encode_spans(tok, real, real_len, 0, &plain, ids + bos, cap - (size_t)bos, err, err_size);
    if (got < 0) goto done;
    *out = ids, ids = NULL;
    rc = got + bos;
    goto done;
oom:
    strlcpy(err, "out of memory for the chat template", err_size);
done:
    free(m);
    free(spans);
    free(ph_ctx);
    free(real_ctx);
    free(ph);
    free(real);
    free(ids);
    return rc;
}
