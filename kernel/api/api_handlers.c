/* api_handlers.c - the API's routes: which handler a request goes to, the
 * small ones (health, models, tokenize, detokenize) and the error answers. */
#include "kernel/api/api_internal.h"

#include "kernel/console/console.h"
#include "kernel/session/session.h"
#include "lib/json_write.h"
#include "lib/stdlib.h"
#include "lib/string.h"

static const char *error_type(int status) {
    switch (status) {
    case 401:
        return "authentication_error";
    case 404:
        return "not_found_error";
    case 503:
        return "unavailable_error";
    default:
        return status >= 500 ? "server_error" : "invalid_request_error";
    }
}

void api_send_error(struct api_reply *reply, int status, const char *message) {
    struct json_buf b = {0};
    json_rawz(&b, "{\"error\":{\"code\":");
    json_int(&b, status);
    json_rawz(&b, ",\"message\":");
    json_stringz(&b, message);
    json_rawz(&b, ",\"type\":");
    json_stringz(&b, error_type(status));
    json_rawz(&b, "}}");
    if (b.failed)
        reply->send(reply->ctx, status, "{\"error\":{\"code\":500}}", 22);
    else
        reply->send(reply->ctx, status, b.data, b.len);
    json_buf_free(&b);
}

static int send_json(struct api_reply *reply, struct json_buf *b) {
    if (b->failed) {
        api_send_error(reply, 500, "out of memory for the answer");
        return 500;
    }
    reply->send(reply->ctx, 200, b->data, b->len);
    return 200;
}

static int handle_models(struct session *s, struct api_reply *reply) {
    struct json_buf b = {0};
    json_rawz(&b, "{\"object\":\"list\",\"data\":[");
    if (s->model.loaded) {
        json_rawz(&b, "{\"id\":");
        json_stringz(&b, s->model.model_name);
        json_rawz(
            &b, ",\"object\":\"model\",\"created\":0,\"owned_by\":\"llm-kernel\",\"meta\":{\"n_ctx_train\":");
        json_int(&b, s->model.llm.model.config.seq_len);
        json_rawz(&b, ",\"n_vocab\":");
        json_int(&b, s->model.llm.model.config.vocab_size);
        json_rawz(&b, "}}");
    }
    json_rawz(&b, "]}");
    int status = send_json(reply, &b);
    json_buf_free(&b);
    return status;
}

static int handle_tokenize(struct session *s, const struct api_request *r, struct api_reply *reply) {
    const Tokenizer *tok = &s->model.llm.tokenizer;
    size_t len = strlen(r->prompt), cap = tokenizer_max_tokens(len);
    int *ids = malloc(cap * sizeof(int));
    char err[200];
    int n = ids ? tokenizer_encode_ex(tok, r->prompt, len, r->add_special ? TOKENIZE_ADD_BOS : 0, ids, cap,
                                      err, sizeof err)
                : -1;
    if (!ids) strlcpy(err, "out of memory for the tokens", sizeof err);
    if (n < 0) {
        free(ids);
        api_send_error(reply, 400, err);
        return 400;
    }
    struct json_buf b = {0};
    json_rawz(&b, "{\"tokens\":[");
    for (int i = 0; i < n; i++) {
        if (i) json_raw(&b, ",", 1);
        if (r->with_pieces) {
            size_t plen;
            const char *piece = tokenizer_decode(tok, i ? ids[i - 1] : -1, ids[i], &plen);
            json_rawz(&b, "{\"id\":");
            json_int(&b, ids[i]);
            json_rawz(&b, ",\"piece\":");
            json_string(&b, piece, plen);
            json_raw(&b, "}", 1);
        } else {
            json_int(&b, ids[i]);
        }
    }
    json_rawz(&b, "]}");
    free(ids);
    int status = send_json(reply, &b);
    json_buf_free(&b);
    return status;
}

static int handle_detokenize(struct session *s, const struct api_request *r, struct api_reply *reply) {
    const Tokenizer *tok = &s->model.llm.tokenizer;
    for (int i = 0; i < r->token_count; i++)
        if (r->tokens[i] >= tok->vocab_size) {
            api_send_error(reply, 400, "tokens: an id is not in the vocabulary");
            return 400;
        }
    struct json_buf text = {0}, b = {0};
    json_raw(&text, "", 0);
    for (int i = 0; i < r->token_count; i++) {
        size_t plen;
        const char *piece = tokenizer_decode(tok, i ? r->tokens[i - 1] : -1, r->tokens[i], &plen);
        json_raw(&text, piece, plen);
    }
    json_rawz(&b, "{\"content\":");
    json_string(&b, text.data ? text.data : "", text.len);
    json_raw(&b, "}", 1);
    if (text.failed) b.failed = 1;
    int status = send_json(reply, &b);
    json_buf_free(&text);
    json_buf_free(&b);
    return status;
}

struct route {
    const char *path;
    const char *method;
    int kind; /* enum api_kind, or -1 for a route without a body */
};

static const struct route routes[] = {
    {"/health", "GET", -1},
    {"/v1/health", "GET", -1},
    {"/v1/models", "GET", -1},
    {"/models", "GET", -1},
    {"/v1/completions", "POST", API_COMPLETION},
    {"/completions", "POST", API_COMPLETION},
    {"/v1/chat/completions", "POST", API_CHAT},
    {"/chat/completions", "POST", API_CHAT},
    {"/tokenize", "POST", API_TOKENIZE},
    {"/detokenize", "POST", API_DETOKENIZE},
};

static int route_request(struct session *s, const char *method, const char *path, const char *body,
                         size_t len, struct api_reply *reply, struct api_result *result) {
    const struct route *route = NULL;
    for (size_t i = 0; i < sizeof routes / sizeof routes[0]; i++)
        if (strcmp(routes[i].path, path) == 0) route = &routes[i];
    if (!route) {
        api_send_error(reply, 404, "no such route (see GET /v1/models, POST /v1/chat/completions)");
        return 404;
    }
    if (strcmp(route->method, method) != 0) {
        api_send_error(reply, 405,
                       strcmp(route->method, "GET") == 0 ? "this route takes GET" : "this route takes POST");
        return 405;
    }
    if (strcmp(path, "/health") == 0 || strcmp(path, "/v1/health") == 0) {
        reply->send(reply->ctx, 200, "{\"status\":\"ok\"}", 15);
        return 200;
    }
    if (route->kind < 0) return handle_models(s, reply);
    if (!s->model.loaded) {
        api_send_error(reply, 503, "no model loaded");
        return 503;
    }
    struct api_request r;
    char err[200];
    if (api_request_decode((enum api_kind)route->kind, body, len, &r, err, sizeof err) != 0) {
        api_send_error(reply, 400, err);
        return 400;
    }
    int status;
    if (route->kind == API_TOKENIZE)
        status = handle_tokenize(s, &r, reply);
    else if (route->kind == API_DETOKENIZE)
        status = handle_detokenize(s, &r, reply);
    else
        status = api_generate(s, (enum api_kind)route->kind, &r, reply, result);
    api_request_free(&r);
    return status;
}

/* A client's text on the console: printable ASCII only, at most 80 bytes. */
static void printable(const char *in, char *out, size_t size) {
    size_t n = 0;
    for (; in[n] && n + 1 < size && n < 80; n++) out[n] = in[n] > 0x20 && in[n] < 0x7f ? in[n] : '?';
    out[n] = '\0';
}

int api_handle(struct session *s, const char *method, const char *path, const char *body, size_t len,
               struct api_reply *reply) {
    struct api_result result = {0};
    int status = route_request(s, method, path, body, len, reply, &result);
    char shown_method[16], shown_path[88];
    printable(method, shown_method, sizeof shown_method);
    printable(path, shown_path, sizeof shown_path);
    if (result.tokens)
        kprintf("api: %s %s %d, %d tokens, %.1f tok/s\n", shown_method, shown_path, status, result.tokens,
                result.tokens_per_second);
    else
        kprintf("api: %s %s %d\n", shown_method, shown_path, status);
    return status;
}
