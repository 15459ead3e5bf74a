/* fuzz_api_request.c - the API's request paths over arbitrary bytes: the
 * HTTP parser (fed in pieces of a size the first byte picks, pipelined
 * requests included), the JSON decoding of every body kind, and the JSON
 * writer, whose output for any bytes must decode again. */
#include <stdint.h>

#include "lib/http_request.h"
#include "lib/json_write.h"
#include "llm/generate/api_request.h"
#include "tests/fuzz/fuzz_common.h"

static void decode_every_kind(const char *body, size_t len) {
    for (int kind = API_COMPLETION; kind <= API_ENVELOPE; kind++) {
        struct api_request r;
        char err[200];
        int rc = api_request_decode((enum api_kind)kind, body, len, &r, err, sizeof err);
        if (rc != 0) {
            fuzz_check_reason(err, sizeof err);
            FUZZ_ASSERT(r.arena == NULL && r.tokens == NULL, "a refused request keeps memory");
        } else if (kind == API_CHAT) {
            FUZZ_ASSERT(r.message_count > 0 && r.message_count <= API_MAX_MESSAGES, "message count");
            for (int i = 0; i < r.message_count; i++)
                FUZZ_ASSERT(r.messages[i].role && r.messages[i].content, "a message without role or content");
        } else if (kind == API_COMPLETION || kind == API_TOKENIZE) {
            FUZZ_ASSERT(r.prompt != NULL, "no prompt");
        } else if (kind == API_ENVELOPE && r.body) {
            FUZZ_ASSERT(r.body >= body && r.body + r.body_len <= body + len,
                        "envelope body outside the line");
        }
        FUZZ_ASSERT(r.stop_count <= API_MAX_STOP, "stop count");
        api_request_free(&r);
    }
}

static void http(const uint8_t *data, size_t size, size_t step) {
    struct http_parser *p = malloc(sizeof *p);
    http_parser_init(p);
    size_t at = 0;
    int requests = 0;
    while (at < size && requests < 16) {
        size_t n = size - at < step ? size - at : step, used;
        int rc = http_feed(p, (const char *)data + at, n, &used);
        FUZZ_ASSERT(used <= n, "consumed more than fed");
        at += used;
        if (rc == HTTP_MORE) {
            FUZZ_ASSERT(used == n, "waiting for more with bytes left");
            continue;
        }
        if (rc == HTTP_DONE) {
            FUZZ_ASSERT(p->req.path[0] == '/', "path without /");
            FUZZ_ASSERT(p->req.body_len <= HTTP_BODY_MAX, "body over the limit");
            if (p->req.body) decode_every_kind(p->req.body, p->req.body_len);
        } else {
            FUZZ_ASSERT(rc >= 400 && rc < 600 && p->reason && *p->reason, "error without status or reason");
            break; /* the server closes the connection after an error */
        }
        http_parser_reset(p);
        requests++;
    }
    http_parser_reset(p);
    free(p);
}

static void writer_round_trip(const char *text, size_t len) {
    struct json_buf b = {0};
    json_rawz(&b, "{\"prompt\":");
    struct json_utf8_joiner j = {0};
    char *out = malloc(len + 8);
    json_raw(&b, "\"", 1);
    /* In pieces of 3 bytes, as tokens come. */
    for (size_t at = 0; at < len; at += 3) {
        size_t n = len - at < 3 ? len - at : 3;
        size_t k = json_utf8_join(&j, text + at, n, out);
        FUZZ_ASSERT(k <= n + 4, "joiner wrote too much");
        json_string_body(&b, out, k);
    }
    json_string_body(&b, out, json_utf8_flush(&j, out));
    json_rawz(&b, "\"}");
    free(out);
    FUZZ_ASSERT(!b.failed, "writer failed");
    struct api_request r;
    char err[200];
    int rc = api_request_decode(API_COMPLETION, b.data, b.len, &r, err, sizeof err);
    /* Escaped NULs are refused by design; anything else must decode. */
    FUZZ_ASSERT(rc == 0 || memchr(text, '\0', len), "the writer's JSON does not decode");
    api_request_free(&r);
    json_buf_free(&b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    size_t step = data[0] ? data[0] : size;
    const char *text = (const char *)data + 1;
    size_t len = size - 1;
    http(data + 1, len, step);
    char *copy = malloc(len ? len : 1); /* exactly len bytes: ASan sees any read past the end */
    memcpy(copy, text, len);
    decode_every_kind(copy, len);
    writer_round_trip(copy, len);
    free(copy);
    return 0;
}
