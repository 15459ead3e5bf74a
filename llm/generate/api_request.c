/* api_request.c - decoding the API's JSON bodies over libjsmn's tokens. */
#include "llm/generate/api_request.h"

/* The one translation unit with jsmn's code; strict mode refuses bare words
 * and non-string keys, parent links let the walk skip whole values. */
#define JSMN_STATIC
#define JSMN_STRICT
#define JSMN_PARENT_LINKS
#include <jsmn.h>

#include "lib/format.h"
#include "lib/stdlib.h"
#include "lib/string.h"
#include "lib/utf8.h"

struct walk {
    const char *js;
    const jsmntok_t *t;
    int count;
    char *arena_next;
    char *err;
    size_t err_size;
};

static int fail(struct walk *w, const char *fmt, const char *name) {
    snprintf(w->err, w->err_size, fmt, name);
    return -1;
}

/* The index after token i and everything inside it. */
static int skip(const struct walk *w, int i) {
    int end = w->t[i].end;
    int j = i + 1;
    while (j < w->count && w->t[j].start < end) j++;
    return j;
}

static int token_is(const struct walk *w, int i, const char *s) {
    size_t n = strlen(s);
    return (size_t)(w->t[i].end - w->t[i].start) == n && memcmp(w->js + w->t[i].start, s, n) == 0;
}

static int hex4(const char *s, uint32_t *out) {
    uint32_t v = 0;
    for (int i = 0; i < 4; i++) {
        char c = s[i];
        int d = c >= '0' && c <= '9'                 ? c - '0'
                : (c | 32) >= 'a' && (c | 32) <= 'f' ? (c | 32) - 'a' + 10
                                                     : -1;
        if (d < 0) return -1;
        v = v * 16 + (uint32_t)d;
    }
    *out = v;
    return 0;
}

/* Decodes string token i (escapes, surrogate pairs) into the arena; NULL
 * (reported) for a bad escape, a lone surrogate or a NUL character. */
static const char *decode_string(struct walk *w, int i, const char *name) {
    const char *s = w->js + w->t[i].start, *end = w->js + w->t[i].end;
    char *out = w->arena_next, *o = out;
    while (s < end) {
        if ((unsigned char)*s < 0x20) return fail(w, "%s: control byte inside a string", name), NULL;
        if (*s != '\\') {
            *o++ = *s++;
            continue;
        }
        if (++s >= end) return fail(w, "%s: bad escape in a string", name), NULL;
        char c = *s++;
        const char *simple = strchr("\"\\/bfnrt", c);
        if (c && simple) {
            static const char map[] = "\"\\/\b\f\n\r\t";
            *o++ = map[simple - "\"\\/bfnrt"];
            continue;
        }
        uint32_t cp;
        if (c != 'u' || end - s < 4 || hex4(s, &cp) != 0)
            return fail(w, "%s: bad escape in a string", name), NULL;
        s += 4;
        if (cp >= 0xD800 && cp < 0xDC00) {
            uint32_t lo;
            if (end - s < 6 || s[0] != '\\' || s[1] != 'u' || hex4(s + 2, &lo) != 0 || lo < 0xDC00 ||
                lo > 0xDFFF)
                return fail(w, "%s: unpaired surrogate in a string", name), NULL;
            s += 6;
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
        } else if (cp >= 0xDC00 && cp < 0xE000) {
            return fail(w, "%s: unpaired surrogate in a string", name), NULL;
        }
        if (cp == 0) return fail(w, "%s: NUL character in a string", name), NULL;
        o += utf8_encode(cp, o); /* never longer than the escape it replaces */
    }
    *o++ = '\0';
    w->arena_next = o;
    return out;
}

static const char *want_string(struct walk *w, int i, const char *name) {
    if (w->t[i].type != JSMN_STRING) return fail(w, "%s must be a string", name), NULL;
    return decode_string(w, i, name);
}

/* A JSON number (the whole primitive): 0, or -1 (reported). */
static int want_number(struct walk *w, int i, const char *name, double *out) {
    const char *s = w->js + w->t[i].start;
    int n = w->t[i].end - w->t[i].start;
    char text[64];
    if (w->t[i].type != JSMN_PRIMITIVE || n <= 0 || n >= (int)sizeof text ||
        !(s[0] == '-' || (s[0] >= '0' && s[0] <= '9')))
        return fail(w, "%s must be a number", name);
    memcpy(text, s, (size_t)n);
    text[n] = '\0';
    char *end;
    *out = strtod(text, &end);
    if (end != text + n || !(*out == *out)) return fail(w, "%s must be a number", name);
    return 0;
}

static int want_int(struct walk *w, int i, const char *name, long long lo, long long hi, long long *out) {
    double v;
    if (want_number(w, i, name, &v) != 0) return -1;
    if (!(v >= (double)lo && v <= (double)hi) ||
        v != (double)(long long)v) { /* range first: the cast needs it */
        char what[96];
        snprintf(what, sizeof what, "%s must be an integer from %lld to %lld", name, lo, hi);
        return fail(w, "%s", what);
    }
    *out = (long long)v;
    return 0;
}

static int want_float(struct walk *w, int i, const char *name, double lo, double hi, float *out) {
    double v;
    if (want_number(w, i, name, &v) != 0) return -1;
    if (v < lo || v > hi) {
        char what[96];
        snprintf(what, sizeof what, "%s must be from %g to %g", name, lo, hi);
        return fail(w, "%s", what);
    }
    *out = (float)v;
    return 0;
}

static int want_bool(struct walk *w, int i, const char *name, int *out) {
    if (w->t[i].type == JSMN_PRIMITIVE && token_is(w, i, "true")) {
        *out = 1;
        return 0;
    }
    if (w->t[i].type == JSMN_PRIMITIVE && token_is(w, i, "false")) {
        *out = 0;
        return 0;
    }
    return fail(w, "%s must be true or false", name);
}

static int is_null(const struct walk *w, int i) {
    return w->t[i].type == JSMN_PRIMITIVE && token_is(w, i, "null");
}

/* Where token i begins and ends in the text, quotes included. */
static int raw_start(const struct walk *w, int i) {
    return w->t[i].start - (w->t[i].type == JSMN_STRING);
}
static int raw_end(const struct walk *w, int i) {
    return w->t[i].end + (w->t[i].type == JSMN_STRING);
}

/* The text between two tokens is whitespace around exactly `sep` (or only
 * whitespace when sep is 0). */
static int gap_is(const struct walk *w, int from, int to, char sep) {
    int seen = 0;
    for (int p = from; p < to; p++) {
        char c = w->js[p];
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r') continue;
        if (c != sep || seen) return 0;
        seen = 1;
    }
    return seen == (sep != 0);
}

/* jsmn does not check separators ({"a":1,} and [1 2] pass): every member
 * of every object and array is checked here. */
static int check_separators(struct walk *w) {
    for (int i = 0; i < w->count; i++) {
        const jsmntok_t *t = &w->t[i];
        if (t->type != JSMN_OBJECT && t->type != JSMN_ARRAY) continue;
        int pos = t->start + 1, j = i + 1;
        for (int k = 0; k < t->size; k++) {
            if (!gap_is(w, pos, raw_start(w, j), k ? ',' : 0)) return -1;
            if (t->type == JSMN_OBJECT) {
                if (!gap_is(w, raw_end(w, j), raw_start(w, j + 1), ':')) return -1;
                j++;
            }
            pos = raw_end(w, j);
            j = skip(w, j);
        }
        if (!gap_is(w, pos, t->end - 1, 0)) return -1;
    }
    return 0;
}

/* Checks the structure jsmn leaves to us: every value a valid literal or
 * number, every object member a string key with one value. */
static int check_values(struct walk *w) {
    for (int i = 0; i < w->count; i++) {
        const jsmntok_t *t = &w->t[i];
        if (t->type == JSMN_PRIMITIVE) {
            double v;
            if (!token_is(w, i, "true") && !token_is(w, i, "false") && !token_is(w, i, "null") &&
                want_number(w, i, "a value", &v) != 0)
                return fail(w, "%s", "malformed JSON: invalid literal");
        }
        if (t->type == JSMN_OBJECT) {
            for (int j = i + 1, k = 0; k < t->size; k++, j = skip(w, j + 1))
                if (w->t[j].type != JSMN_STRING || w->t[j].size != 1)
                    return fail(w, "%s", "malformed JSON: an object member without a value");
        }
    }
    if (check_separators(w) != 0) return fail(w, "%s", "malformed JSON: a missing or extra ',' or ':'");
    return 0;
}

static int decode_stop(struct walk *w, int i, struct api_request *r) {
    r->stop_count = 0; /* a repeated key: the last one counts */
    if (is_null(w, i)) return 0;
    if (w->t[i].type == JSMN_STRING) {
        const char *s = decode_string(w, i, "stop");
        if (!s) return -1;
        if (*s) r->stop[r->stop_count++] = s;
        return 0;
    }
    if (w->t[i].type != JSMN_ARRAY) return fail(w, "%s must be a string or an array of strings", "stop");
    if (w->t[i].size > API_MAX_STOP) return fail(w, "%s: at most 4 strings", "stop");
    for (int j = i + 1, k = 0; k < w->t[i].size; k++, j = skip(w, j)) {
        const char *s = want_string(w, j, "stop[]");
        if (!s) return -1;
        if (*s) r->stop[r->stop_count++] = s;
    }
    return 0;
}

/* A message's content: a string, or an array of {"type":"text","text":...}
 * parts, joined. */
static const char *decode_content(struct walk *w, int i) {
    if (w->t[i].type == JSMN_STRING) return decode_string(w, i, "content");
    if (w->t[i].type != JSMN_ARRAY)
        return fail(w, "%s must be a string or an array of text parts", "content"), NULL;
    char *joined = w->arena_next;
    *joined = '\0';
    char *tail = joined;
    for (int j = i + 1, k = 0; k < w->t[i].size; k++, j = skip(w, j)) {
        if (w->t[j].type != JSMN_OBJECT) return fail(w, "%s: each part must be an object", "content"), NULL;
        const char *text = NULL;
        for (int m = j + 1, n = 0; n < w->t[j].size; n++, m = skip(w, m + 1)) {
            if (token_is(w, m, "text")) {
                w->arena_next = tail;
                text = want_string(w, m + 1, "content[].text");
                if (!text) return NULL;
                tail = w->arena_next - 1; /* the next part overwrites this NUL */
            } else if (token_is(w, m, "type") &&
                       !(w->t[m + 1].type == JSMN_STRING && token_is(w, m + 1, "text"))) {
                return fail(w, "%s: only text parts are accepted", "content"), NULL;
            }
        }
        if (!text) return fail(w, "%s: a part without text", "content"), NULL;
    }
    w->arena_next = tail + 1;
    return joined;
}

static int decode_messages(struct walk *w, int i, struct api_request *r) {
    if (w->t[i].type != JSMN_ARRAY) return fail(w, "%s must be an array", "messages");
    if (w->t[i].size > API_MAX_MESSAGES) return fail(w, "%s: at most 64 messages", "messages");
    r->message_count = 0; /* a repeated key: the last one counts */
    memset(r->messages, 0, sizeof r->messages);
    for (int j = i + 1, k = 0; k < w->t[i].size; k++, j = skip(w, j)) {
        if (w->t[j].type != JSMN_OBJECT) return fail(w, "%s: each message must be an object", "messages");
        struct api_message *m = &r->messages[r->message_count++];
        for (int f = j + 1, n = 0; n < w->t[j].size; n++, f = skip(w, f + 1)) {
            if (token_is(w, f, "role")) {
                if (!(m->role = want_string(w, f + 1, "role"))) return -1;
                if (strcmp(m->role, "system") && strcmp(m->role, "user") && strcmp(m->role, "assistant") &&
                    strcmp(m->role, "developer"))
                    return fail(w, "%s must be system, user or assistant", "role");
                if (!strcmp(m->role, "developer")) m->role = "system"; /* OpenAI's newer name for it */
            } else if (token_is(w, f, "content")) {
                if (!is_null(w, f + 1) && !(m->content = decode_content(w, f + 1))) return -1;
            }
        }
        if (!m->role) return fail(w, "%s: a message without a role", "messages");
        if (!m->content) m->content = "";
    }
    return 0;
}

static int decode_tokens(struct walk *w, int i, struct api_request *r) {
    if (w->t[i].type != JSMN_ARRAY) return fail(w, "%s must be an array of token ids", "tokens");
    int n = w->t[i].size;
    if (n > API_MAX_DETOKENIZE) return fail(w, "%s: too many", "tokens");
    free(r->tokens); /* a repeated key: the last one counts */
    r->token_count = 0;
    r->tokens = malloc((size_t)(n ? n : 1) * sizeof(int));
    if (!r->tokens) return fail(w, "%s: out of memory", "tokens");
    for (int j = i + 1, k = 0; k < n; k++, j = skip(w, j)) {
        long long id;
        if (want_int(w, j, "tokens[]", 0, 0x7fffffff, &id) != 0) return -1;
        r->tokens[r->token_count++] = (int)id;
    }
    return 0;
}

/* One member "key": value of the top-level object. */
static int decode_field(struct walk *w, int key, struct api_request *r, enum api_kind kind) {
    int v = key + 1;
    long long n;
    if (kind == API_ENVELOPE) {
        if (token_is(w, key, "method")) return (r->method = want_string(w, v, "method")) ? 0 : -1;
        if (token_is(w, key, "path")) return (r->path = want_string(w, v, "path")) ? 0 : -1;
        if (token_is(w, key, "body")) {
            if (w->t[v].type != JSMN_OBJECT) return fail(w, "%s must be an object", "body");
            r->body = w->js + w->t[v].start;
            r->body_len = (size_t)(w->t[v].end - w->t[v].start);
        }
        return 0;
    }
    if (token_is(w, key, "model")) return (r->model = want_string(w, v, "model")) ? 0 : -1;
    if (kind == API_TOKENIZE) {
        if (token_is(w, key, "content")) return (r->prompt = want_string(w, v, "content")) ? 0 : -1;
        if (token_is(w, key, "add_special")) return want_bool(w, v, "add_special", &r->add_special);
        if (token_is(w, key, "with_pieces")) return want_bool(w, v, "with_pieces", &r->with_pieces);
        return 0;
    }
    if (kind == API_DETOKENIZE) return token_is(w, key, "tokens") ? decode_tokens(w, v, r) : 0;
    if (kind == API_COMPLETION && token_is(w, key, "prompt"))
        return (r->prompt = want_string(w, v, "prompt")) ? 0 : -1;
    if (kind == API_CHAT && token_is(w, key, "messages")) return decode_messages(w, v, r);
    if (is_null(w, v)) return 0; /* an optional field given as null: its default */
    if (token_is(w, key, "max_tokens") || token_is(w, key, "n_predict") ||
        token_is(w, key, "max_completion_tokens")) {
        if (want_int(w, v, "max_tokens", -1, 0x7fffffff, &n) != 0) return -1;
        r->max_tokens = (int)n;
        if (n >= 0) r->has |= API_HAS_MAX_TOKENS;
        return 0;
    }
    if (token_is(w, key, "temperature")) {
        r->has |= API_HAS_TEMPERATURE;
        return want_float(w, v, "temperature", 0, 100, &r->temperature);
    }
    if (token_is(w, key, "top_p")) {
        r->has |= API_HAS_TOP_P;
        return want_float(w, v, "top_p", 0, 1, &r->top_p);
    }
    if (token_is(w, key, "min_p")) {
        r->has |= API_HAS_MIN_P;
        return want_float(w, v, "min_p", 0, 1, &r->min_p);
    }
    if (token_is(w, key, "top_k")) {
        r->has |= API_HAS_TOP_K;
        if (want_int(w, v, "top_k", 0, 0x7fffffff, &n) != 0) return -1;
        r->top_k = (int)n;
        return 0;
    }
    if (token_is(w, key, "seed")) {
        if (want_int(w, v, "seed", -1, 9007199254740991LL /* 2^53 - 1: exact in a double */, &n) != 0)
            return -1;
        if (n >= 0) r->has |= API_HAS_SEED; /* -1: llama-server's "random" */
        r->seed = (uint64_t)n;
        return 0;
    }
    if (token_is(w, key, "stop")) return decode_stop(w, v, r);
    if (token_is(w, key, "stream")) return want_bool(w, v, "stream", &r->stream);
    return 0;
}

static int decode(struct walk *w, const char *body, size_t len, struct api_request *r, enum api_kind kind) {
    if (len > 0x7fffffff) return fail(w, "%s", "the body is too large");
    if (memchr(body, '\0', len)) return fail(w, "%s", "NUL byte in the body");
    if (!utf8_valid(body, len)) return fail(w, "%s", "the body is not valid UTF-8");
    jsmn_parser p;
    jsmn_init(&p);
    int count = jsmn_parse(&p, body, len, NULL, 0);
    if (count == JSMN_ERROR_PART) return fail(w, "%s", "malformed JSON: the body ends too early");
    if (count < 0) return fail(w, "%s", "malformed JSON");
    if (count == 0) return fail(w, "%s", "the body must be a JSON object");
    if (count > API_MAX_JSON_TOKENS) return fail(w, "%s", "the JSON body has too many values");
    jsmntok_t *t = malloc((size_t)count * sizeof *t);
    r->arena = malloc(len + 1);
    if (!t || !r->arena) {
        free(t);
        return fail(w, "%s", "out of memory for the body");
    }
    w->js = body;
    w->t = t;
    w->arena_next = r->arena;
    jsmn_init(&p);
    int rc = -1;
    w->count = jsmn_parse(&p, body, len, t, (unsigned)count);
    size_t end = w->count > 0 ? (size_t)t[0].end : 0;
    while (end < len && (body[end] == ' ' || body[end] == '\t' || body[end] == '\n' || body[end] == '\r'))
        end++;
    if (w->count == JSMN_ERROR_PART)
        fail(w, "%s", "malformed JSON: the body ends too early");
    else if (w->count <= 0)
        fail(w, "%s", "malformed JSON");
    else if (t[0].type != JSMN_OBJECT)
        fail(w, "%s", "the body must be a JSON object");
    else if (end != len || skip(w, 0) != w->count)
        fail(w, "%s", "malformed JSON: text after the object");
    else if (check_values(w) == 0) {
        rc = 0;
        for (int key = 1, k = 0; rc == 0 && k < t[0].size; k++, key = skip(w, key + 1))
            rc = decode_field(w, key, r, kind);
    }
    free(t);
    return rc;
}

int api_request_decode(enum api_kind kind, const char *body, size_t len, struct api_request *r, char *err,
                       size_t err_size) {
    memset(r, 0, sizeof *r);
    r->model = "";
    r->max_tokens = -1;
    r->add_special = kind == API_TOKENIZE ? 0 : 1;
    struct walk w = {.err = err, .err_size = err_size};
    int rc = decode(&w, body ? body : "", body ? len : 0, r, kind);
    if (rc == 0 && kind == API_COMPLETION && !r->prompt) rc = fail(&w, "%s", "prompt is missing");
    if (rc == 0 && kind == API_TOKENIZE && !r->prompt) rc = fail(&w, "%s", "content is missing");
    if (rc == 0 && kind == API_DETOKENIZE && !r->tokens) rc = fail(&w, "%s", "tokens is missing");
    if (rc == 0 && kind == API_CHAT && r->message_count == 0)
        rc = fail(&w, "%s", "messages is missing or empty");
    if (rc == 0 && kind == API_ENVELOPE && (!r->method || !r->path))
        rc = fail(&w, "%s", "a request line needs method and path");
    if (rc != 0) {
        api_request_free(r);
        r->model = "";
    }
    return rc;
}

void api_request_free(struct api_request *r) {
    free(r->arena);
    free(r->tokens);
    memset(r, 0, sizeof *r);
}
