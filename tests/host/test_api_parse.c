/* test_api_parse.c - the API's pure parts: the incremental HTTP request
 * parser (every split of a request gives the same result, each limit its
 * status), the JSON request decoding over jsmn (fields, types, escapes,
 * malformed and truncated bodies) and the JSON writer's escaping (checked
 * by decoding its output again with the decoder). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "lib/http_request.h"
#include "lib/json_write.h"
#include "llm/generate/api_request.h"

static int feed_all(struct http_parser *p, const char *text, size_t len, size_t step) {
    int rc = HTTP_MORE;
    size_t at = 0;
    while (at < len && rc == HTTP_MORE) {
        size_t n = len - at < step ? len - at : step, used;
        rc = http_feed(p, text + at, n, &used);
        at += used;
    }
    return rc;
}

static void test_http_splits(void) {
    const char *req = "POST /v1/chat/completions?x=1 HTTP/1.1\r\nHost: a\r\nContent-Length: 11\r\n"
                      "Authorization: Bearer k3y\r\n\r\n{\"a\":\"b\"} \nGET /health HTTP/1.1\r\n\r\n";
    size_t len = strlen(req);
    int all_ok = 1;
    for (size_t step = 1; step <= len; step++) {
        struct http_parser *p = malloc(sizeof *p);
        http_parser_init(p);
        int rc = feed_all(p, req, len, step);
        if (rc != HTTP_DONE || strcmp(p->req.method, "POST") || strcmp(p->req.path, "/v1/chat/completions") ||
            p->req.body_len != 11 || memcmp(p->req.body, "{\"a\":\"b\"} \n", 11) ||
            strcmp(p->req.authorization, "Bearer k3y") || !p->req.keep_alive) {
            all_ok = 0;
            printf("# step %zu: rc %d method %s path %s\n", step, rc, p->req.method, p->req.path);
        }
        http_parser_reset(p);
        free(p);
    }
    check(all_ok, "http: one request fed in pieces of every size", "see above");

    struct http_parser *p = malloc(sizeof *p);
    http_parser_init(p);
    size_t used;
    int rc = http_feed(p, req, len, &used);
    check(rc == HTTP_DONE && used == len - strlen("GET /health HTTP/1.1\r\n\r\n"),
          "http: a pipelined request's bytes are left over", "rc %d used %zu", rc, used);
    const char *rest = req + used;
    http_parser_reset(p);
    rc = http_feed(p, rest, strlen(rest), &used);
    check(rc == HTTP_DONE && !strcmp(p->req.path, "/health") && p->req.body == NULL,
          "http: the next request parses after reset", "rc %d", rc);
    http_parser_reset(p);
    free(p);
}

static void expect_status(const char *name, const char *text, size_t len, int want) {
    struct http_parser *p = malloc(sizeof *p);
    http_parser_init(p);
    size_t used;
    int rc = http_feed(p, text, len, &used);
    check(rc == want, name, "got %d (%s), expected %d", rc, p->reason ? p->reason : "", want);
    http_parser_reset(p);
    free(p);
}

static void test_http_errors(void) {
#define S(x) x, sizeof(x) - 1
    expect_status("http: garbage request line is 400", S("HELLO\r\n\r\n"), 400);
    expect_status("http: HTTP/2 is 505", S("GET / HTTP/2.0\r\n\r\n"), 505);
    expect_status("http: POST without length is 411", S("POST /v1/completions HTTP/1.1\r\n\r\n"), 411);
    expect_status("http: chunked is 411", S("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"), 411);
    expect_status("http: bad Content-Length is 400", S("POST / HTTP/1.1\r\nContent-Length: 1x\r\n\r\n"), 400);
    expect_status("http: conflicting lengths are 400",
                  S("POST / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n"), 400);
    expect_status("http: a body over 1 MiB is 413", S("POST / HTTP/1.1\r\nContent-Length: 1048577\r\n\r\n"),
                  413);
    expect_status("http: a header without colon is 400", S("GET / HTTP/1.1\r\nNoColon\r\n\r\n"), 400);
    expect_status("http: NUL in the head is 400", S("GET /\0 HTTP/1.1\r\n\r\n"), 400);
    expect_status("http: a relative target is 400", S("GET health HTTP/1.1\r\n\r\n"), 400);
    expect_status("http: a short body waits for more", S("POST / HTTP/1.1\r\nContent-Length: 5\r\n\r\nab"),
                  HTTP_MORE);
#undef S
    char *big = malloc(HTTP_HEADER_MAX + 64);
    int n = snprintf(big, 64, "GET / HTTP/1.1\r\nX: ");
    memset(big + n, 'a', HTTP_HEADER_MAX);
    expect_status("http: headers over 8 KiB are 431", big, (size_t)n + HTTP_HEADER_MAX, 431);
    free(big);
    check(http_equal_secret("abc", 3, "abc", 3) && !http_equal_secret("abc", 3, "abd", 3) &&
              !http_equal_secret("abc", 3, "abcd", 4) && !http_equal_secret("", 0, "a", 1),
          "http: secret comparison", "wrong answer");
}

static int decode(enum api_kind kind, const char *body, struct api_request *r, char *err) {
    return api_request_decode(kind, body, strlen(body), r, err, 200);
}

static void expect_refused(const char *name, enum api_kind kind, const char *body, const char *reason) {
    struct api_request r;
    char err[200] = "";
    int rc = decode(kind, body, &r, err);
    check(rc == -1 && strstr(err, reason), name, "rc %d, err '%s', expected '%s'", rc, err, reason);
    api_request_free(&r);
}

static void test_decode(void) {
    struct api_request r;
    char err[200] = "";
    int rc =
        decode(API_CHAT,
               "{\"model\":\"m\\u00e9\",\"messages\":[{\"role\":\"system\",\"content\":\"be \\\"brief\\\"\"},"
               "{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"a\\n\"},{\"type\":\"text\","
               "\"text\":\"\\ud83d\\ude00\"}]}],\"max_tokens\":12,\"temperature\":0.5,\"top_p\":0.9,"
               "\"top_k\":40,\"min_p\":0.05,\"seed\":7,\"stop\":[\"x\",\"yy\"],\"stream\":true,\"n\":1,"
               "\"logit_bias\":{\"1\":2},\"tools\":null}",
               &r, err);
    check(rc == 0 && !strcmp(r.model, "m\xc3\xa9") && r.message_count == 2 &&
              !strcmp(r.messages[0].role, "system") && !strcmp(r.messages[0].content, "be \"brief\"") &&
              !strcmp(r.messages[1].content, "a\n\xf0\x9f\x98\x80") && r.max_tokens == 12 &&
              r.temperature == 0.5f && r.top_p == 0.9f && r.top_k == 40 && r.min_p == 0.05f && r.seed == 7 &&
              r.stop_count == 2 && !strcmp(r.stop[1], "yy") && r.stream == 1 &&
              r.has == (API_HAS_TEMPERATURE | API_HAS_TOP_P | API_HAS_TOP_K | API_HAS_MIN_P | API_HAS_SEED |
                        API_HAS_MAX_TOKENS),
          "decode: every chat field", "rc %d err '%s'", rc, err);
    api_request_free(&r);
    rc = decode(API_DETOKENIZE, "{\"tokens\":[1, 2,3]}", &r, err);
    check(rc == 0 && r.token_count == 3 && r.tokens[2] == 3, "decode: detokenize ids", "rc %d %s", rc, err);
    api_request_free(&r);
    rc = decode(API_ENVELOPE, "{\"method\":\"POST\",\"path\":\"/tokenize\",\"body\":{\"content\":\"hi\"}}",
                &r, err);
    check(rc == 0 && !strcmp(r.method, "POST") && r.body_len == 16 &&
              !memcmp(r.body, "{\"content\":\"hi\"}", 16),
          "decode: a serial envelope", "rc %d %s", rc, err);
    api_request_free(&r);

    expect_refused("decode: truncated JSON", API_COMPLETION, "{\"prompt\":\"abc", "ends too early");
    expect_refused("decode: not an object", API_COMPLETION, "[1,2]", "must be a JSON object");
    expect_refused("decode: bare word", API_COMPLETION, "{\"prompt\":hello}", "malformed JSON");
    expect_refused("decode: missing value", API_COMPLETION, "{\"prompt\":\"a\",\"stream\"}",
                   "malformed JSON");
    expect_refused("decode: trailing comma", API_COMPLETION, "{\"prompt\":\"a\",}", "malformed JSON");
    expect_refused("decode: trailing comma in an array", API_COMPLETION,
                   "{\"prompt\":\"a\",\"stop\":[\"x\",]}", "malformed JSON");
    expect_refused("decode: missing comma", API_COMPLETION, "{\"prompt\":\"a\" \"stream\":true}",
                   "malformed JSON");
    expect_refused("decode: missing comma in an array", API_DETOKENIZE, "{\"tokens\":[1 2]}",
                   "malformed JSON");
    expect_refused("decode: comma for colon", API_COMPLETION, "{\"prompt\",\"a\"}", "malformed JSON");
    expect_refused("decode: leading comma", API_COMPLETION, "{,\"prompt\":\"a\"}", "malformed JSON");
    expect_refused("decode: text after the object", API_COMPLETION, "{\"prompt\":\"a\"} {}",
                   "after the object");
    expect_refused("decode: prompt of the wrong type", API_COMPLETION, "{\"prompt\":5}",
                   "prompt must be a string");
    expect_refused("decode: max_tokens not an integer", API_COMPLETION,
                   "{\"prompt\":\"a\",\"max_tokens\":1.5}", "max_tokens must be an integer");
    expect_refused("decode: temperature as text", API_COMPLETION,
                   "{\"prompt\":\"a\",\"temperature\":\"hot\"}", "temperature must be a number");
    expect_refused("decode: top_p out of range", API_COMPLETION, "{\"prompt\":\"a\",\"top_p\":2}",
                   "top_p must be");
    expect_refused("decode: stream not a bool", API_COMPLETION, "{\"prompt\":\"a\",\"stream\":1}",
                   "true or false");
    expect_refused("decode: stop of the wrong type", API_COMPLETION, "{\"prompt\":\"a\",\"stop\":3}",
                   "stop must");
    expect_refused("decode: invalid UTF-8", API_COMPLETION, "{\"prompt\":\"\xff\"}", "not valid UTF-8");
    expect_refused("decode: lone surrogate", API_COMPLETION, "{\"prompt\":\"\\ud800x\"}",
                   "unpaired surrogate");
    expect_refused("decode: NUL escape", API_COMPLETION, "{\"prompt\":\"a\\u0000\"}", "NUL character");
    expect_refused("decode: bad escape", API_COMPLETION, "{\"prompt\":\"\\q\"}", "malformed JSON");
    expect_refused("decode: no prompt", API_COMPLETION, "{}", "prompt is missing");
    expect_refused("decode: no messages", API_CHAT, "{\"messages\":[]}", "messages is missing");
    expect_refused("decode: bad role", API_CHAT, "{\"messages\":[{\"role\":\"robot\",\"content\":\"a\"}]}",
                   "role must be");
    expect_refused("decode: negative token id", API_DETOKENIZE, "{\"tokens\":[-1]}", "tokens[] must be");
    expect_refused("decode: an empty body", API_COMPLETION, "", "must be a JSON object");
}

/* The writer's output decodes back to the input (through the decoder
 * above), with invalid bytes as U+FFFD, for every byte value. */
static void test_writer(void) {
    char text[300];
    size_t n = 0;
    for (int c = 1; c < 256; c++) text[n++] = (char)c;
    memcpy(text + n, "\xe2\x82\xac\xf0\x9f\x98\x80", 7);
    n += 7;
    struct json_buf b = {0};
    json_rawz(&b, "{\"prompt\":");
    json_string(&b, text, n);
    json_raw(&b, "}", 1);
    struct api_request r;
    char err[200] = "";
    int rc = api_request_decode(API_COMPLETION, b.data, b.len, &r, err, sizeof err);
    char want[600];
    size_t w = 0;
    for (int c = 1; c < 128; c++) want[w++] = (char)c;
    for (int c = 128; c < 256; c++) w += (size_t)sprintf(want + w, "\xef\xbf\xbd");
    memcpy(want + w, "\xe2\x82\xac\xf0\x9f\x98\x80", 8);
    check(rc == 0 && !strcmp(r.prompt, want), "writer: every byte escaped, decodes back", "rc %d err %s", rc,
          err);
    api_request_free(&r);
    json_buf_free(&b);

    /* A character split over pieces comes out whole, once. */
    const char *pieces[] = {"a\xe2", "\x82",
                            "\xac"
                            "b\xf0\x9f",
                            "\x98\x80", "\xe2"};
    struct json_utf8_joiner j = {0};
    char out[64], joined[64];
    size_t len = 0;
    for (int i = 0; i < 4; i++) {
        size_t k = json_utf8_join(&j, pieces[i], strlen(pieces[i]), out);
        memcpy(joined + len, out, k);
        len += k;
        if (i == 0) check(k == 1, "joiner: holds a split character", "passed %zu bytes", k);
    }
    size_t k = json_utf8_join(&j, pieces[4], 1, out);
    k += json_utf8_flush(&j, out + k);
    check(len == 9 &&
              !memcmp(joined,
                      "a\xe2\x82\xac"
                      "b\xf0\x9f\x98\x80",
                      9) &&
              k == 1,
          "joiner: characters across pieces", "len %zu", len);
}

int main(void) {
    test_http_splits();
    test_http_errors();
    test_decode();
    test_writer();
    return failures ? 1 : 0;
}
