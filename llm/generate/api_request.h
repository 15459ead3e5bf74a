/* api_request.h - the JSON bodies of the OpenAI-compatible API (the
 * llama-server field names) decoded into one struct, with every way a body
 * can be wrong (malformed or truncated JSON, invalid UTF-8, a field of the
 * wrong type or out of range) turned into a one-line reason for a 400.
 * Parsing is libjsmn's (Debian libjsmn-dev); this file only walks its
 * tokens, decodes string escapes and checks types. Unknown fields are
 * ignored, as OpenAI clients send many. */
#ifndef LLM_API_REQUEST_H
#define LLM_API_REQUEST_H

#include <stddef.h>
#include <stdint.h>

#define API_MAX_MESSAGES 64
#define API_MAX_STOP 4
#define API_MAX_JSON_TOKENS 8192 /* tokens jsmn may produce for one body */
#define API_MAX_DETOKENIZE 65536

enum api_kind { API_COMPLETION, API_CHAT, API_TOKENIZE, API_DETOKENIZE, API_ENVELOPE };

/* Which optional fields the body gave (sampling ones override the console's settings). */
enum {
    API_HAS_TEMPERATURE = 1 << 0,
    API_HAS_TOP_P = 1 << 1,
    API_HAS_TOP_K = 1 << 2,
    API_HAS_MIN_P = 1 << 3,
    API_HAS_SEED = 1 << 4,
    API_HAS_MAX_TOKENS = 1 << 5,
};

struct api_message {
    const char *role; /* "system", "user", "assistant" */
    const char *content;
};

struct api_request {
    char *arena; /* every decoded string lives here (malloc'd, freed by api_request_free) */
    int *tokens; /* detokenize's ids (malloc'd) */
    int token_count;
    const char *model;  /* "" when absent; echoed */
    const char *prompt; /* completion's prompt, tokenize's content */
    struct api_message messages[API_MAX_MESSAGES];
    int message_count;
    unsigned has; /* API_HAS_* */
    int max_tokens, top_k;
    float temperature, top_p, min_p;
    uint64_t seed;
    const char *stop[API_MAX_STOP];
    int stop_count;
    int stream;
    int add_special, with_pieces; /* tokenize */
    /* API_ENVELOPE (a serial JSON line): method, path and the raw body. */
    const char *method, *path;
    const char *body;
    size_t body_len;
};

/* Decodes body (len bytes, need not be NUL-terminated) as a request of
 * `kind`. Returns 0, or -1 with a reason in err (r is then empty). Either
 * way api_request_free releases r. */
int api_request_decode(enum api_kind kind, const char *body, size_t len, struct api_request *r, char *err,
                       size_t err_size);
void api_request_free(struct api_request *r);

#endif
