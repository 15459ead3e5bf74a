/* http_request.h - an incremental HTTP/1.1 request parser for the API
 * server: bytes go in as they arrive (any split), out comes a complete
 * request (method, path, the headers the API uses, the body) or the 4xx/5xx
 * status that refuses it, with a reason. Limits: HTTP_HEADER_MAX bytes of
 * request line and headers, HTTP_BODY_MAX bytes of body (Content-Length
 * only: chunked bodies are refused with 411). Works on arbitrary bytes. */
#ifndef LIB_HTTP_REQUEST_H
#define LIB_HTTP_REQUEST_H

#include <stddef.h>

#define HTTP_HEADER_MAX 8192
#define HTTP_BODY_MAX (1024 * 1024)
#define HTTP_METHOD_MAX 8
#define HTTP_PATH_MAX 256
#define HTTP_AUTH_MAX 256

enum { HTTP_MORE = 0, HTTP_DONE = 1 }; /* http_feed's results; anything else is an HTTP error status */

struct http_request {
    char method[HTTP_METHOD_MAX + 1];
    char path[HTTP_PATH_MAX + 1]; /* without the query string */
    char authorization[HTTP_AUTH_MAX + 1];
    int has_authorization;
    int keep_alive; /* HTTP/1.1 unless "Connection: close"; 1.0 only with keep-alive */
    char *body;     /* malloc'd, NUL-terminated (the NUL is not part of body_len); NULL if none */
    size_t body_len;
};

struct http_parser {
    char head[HTTP_HEADER_MAX];
    size_t head_len;
    int in_body;
    size_t content_length, body_have;
    int status; /* HTTP_MORE, HTTP_DONE or the error status once set */
    const char *reason;
    struct http_request req;
};

void http_parser_init(struct http_parser *p);
/* Frees the body and readies the parser for the next request. */
void http_parser_reset(struct http_parser *p);
/* Feeds n bytes; *used gets how many were consumed (the rest belong to the
 * next request). Returns HTTP_MORE, HTTP_DONE (p->req is complete) or an
 * error status (400, 411, 413, 431, 501, 505) with p->reason; once done or
 * failed it consumes nothing until reset. */
int http_feed(struct http_parser *p, const char *bytes, size_t n, size_t *used);

/* The standard reason phrase of a status ("Not Found"). */
const char *http_status_text(int status);
/* 1 when a and b are equal (lengths included), in time that depends only
 * on the lengths: for API keys. */
int http_equal_secret(const char *a, size_t a_len, const char *b, size_t b_len);

#endif
