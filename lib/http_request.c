/* http_request.c - the incremental HTTP/1.1 request parser (see http_request.h). */
#include "lib/http_request.h"

#include "lib/ctype.h"
#include "lib/stdlib.h"
#include "lib/string.h"

void http_parser_init(struct http_parser *p) {
    memset(p, 0, sizeof *p);
}

void http_parser_reset(struct http_parser *p) {
    free(p->req.body);
    http_parser_init(p);
}

static int fail(struct http_parser *p, int status, const char *reason) {
    p->status = status;
    p->reason = reason;
    return status;
}

static int name_is(const char *name, size_t len, const char *want) {
    if (strlen(want) != len) return 0;
    for (size_t i = 0; i < len; i++)
        if (tolower((unsigned char)name[i]) != want[i]) return 0;
    return 1;
}

static int has_token(const char *value, size_t len, const char *token) {
    size_t t = strlen(token);
    for (size_t i = 0; i + t <= len; i++)
        if (name_is(value + i, t, token)) return 1;
    return 0;
}

static int is_token_char(unsigned char c) {
    return c > 0x20 && c < 0x7f && !strchr("()<>@,;:\\\"/[]?={}", c);
}

/* "METHOD SP target SP HTTP/1.x" */
static int parse_request_line(struct http_parser *p, const char *line, size_t len) {
    struct http_request *r = &p->req;
    size_t i = 0;
    while (i < len && is_token_char((unsigned char)line[i])) i++;
    if (i == 0 || i >= len || line[i] != ' ') return fail(p, 400, "malformed request line");
    if (i > HTTP_METHOD_MAX) return fail(p, 501, "unknown method");
    memcpy(r->method, line, i);
    r->method[i] = '\0';
    size_t start = ++i;
    while (i < len && line[i] > 0x20 && line[i] < 0x7f) i++;
    if (i == start || i >= len || line[i] != ' ') return fail(p, 400, "malformed request target");
    if (line[start] != '/') return fail(p, 400, "the request target must be a path");
    size_t path_len = i - start;
    const char *query = memchr(line + start, '?', path_len);
    if (query) path_len = (size_t)(query - (line + start));
    if (path_len > HTTP_PATH_MAX) return fail(p, 414, "the request path is too long");
    memcpy(r->path, line + start, path_len);
    r->path[path_len] = '\0';
    i++;
    if (len - i != 8 || memcmp(line + i, "HTTP/1.", 7) != 0) {
        if (len - i >= 5 && memcmp(line + i, "HTTP/", 5) == 0) return fail(p, 505, "only HTTP/1.x is served");
        return fail(p, 400, "malformed HTTP version");
    }
    if (line[i + 7] == '1')
        r->keep_alive = 1;
    else if (line[i + 7] == '0')
        r->keep_alive = 0;
    else
        return fail(p, 505, "only HTTP/1.0 and 1.1 are served");
    return HTTP_MORE;
}

static int parse_header(struct http_parser *p, const char *line, size_t len, int *have_length) {
    struct http_request *r = &p->req;
    const char *colon = memchr(line, ':', len);
    if (!colon || colon == line) return fail(p, 400, "malformed header line");
    size_t name_len = (size_t)(colon - line);
    for (size_t i = 0; i < name_len; i++)
        if (!is_token_char((unsigned char)line[i])) return fail(p, 400, "malformed header name");
    const char *v = colon + 1, *end = line + len;
    while (v < end && (*v == ' ' || *v == '\t')) v++;
    while (end > v && (end[-1] == ' ' || end[-1] == '\t')) end--;
    size_t vlen = (size_t)(end - v);
    for (size_t i = 0; i < vlen; i++)
        if ((unsigned char)v[i] < 0x20 && v[i] != '\t') return fail(p, 400, "control byte in a header value");
    if (name_is(line, name_len, "content-length")) {
        if (vlen == 0 || vlen > 12) return fail(p, 400, "invalid Content-Length");
        size_t n = 0;
        for (size_t i = 0; i < vlen; i++) {
            if (v[i] < '0' || v[i] > '9') return fail(p, 400, "invalid Content-Length");
            n = n * 10 + (size_t)(v[i] - '0');
        }
        if (*have_length && n != p->content_length) return fail(p, 400, "conflicting Content-Length headers");
        if (n > HTTP_BODY_MAX) return fail(p, 413, "the body is larger than 1 MiB");
        p->content_length = n;
        *have_length = 1;
    } else if (name_is(line, name_len, "transfer-encoding")) {
        return fail(p, 411, "chunked bodies are not accepted: send Content-Length");
    } else if (name_is(line, name_len, "authorization")) {
        if (vlen > HTTP_AUTH_MAX) return fail(p, 431, "the Authorization header is too long");
        memcpy(r->authorization, v, vlen);
        r->authorization[vlen] = '\0';
        r->has_authorization = 1;
    } else if (name_is(line, name_len, "connection")) {
        if (has_token(v, vlen, "close")) r->keep_alive = 0;
        if (has_token(v, vlen, "keep-alive")) r->keep_alive = 1;
    }
    return HTTP_MORE;
}

/* The head (request line and headers, each ended by CRLF or LF) is complete. */
static int parse_head(struct http_parser *p) {
    const char *s = p->head, *end = p->head + p->head_len;
    int have_length = 0, first = 1;
    while (s < end) {
        const char *nl = memchr(s, '\n', (size_t)(end - s));
        size_t len = (size_t)(nl - s);
        if (len && s[len - 1] == '\r') len--;
        if (len == 0) break; /* the blank line */
        if (memchr(s, '\0', len)) return fail(p, 400, "NUL byte in the request head");
        int rc = first ? parse_request_line(p, s, len) : parse_header(p, s, len, &have_length);
        if (rc != HTTP_MORE) return rc;
        first = 0;
        s = nl + 1;
    }
    if (!have_length && (strcmp(p->req.method, "POST") == 0 || strcmp(p->req.method, "PUT") == 0))
        return fail(p, 411, "a body needs a Content-Length header");
    if (p->content_length) {
        p->req.body = malloc(p->content_length + 1);
        if (!p->req.body) return fail(p, 503, "out of memory for the body");
    }
    p->in_body = 1;
    return HTTP_MORE;
}

/* Whether the head ends at the byte just added: "\n\n" or "\n\r\n". */
static int head_complete(const struct http_parser *p) {
    size_t n = p->head_len;
    if (n >= 2 && p->head[n - 1] == '\n' && p->head[n - 2] == '\n') return 1;
    return n >= 3 && p->head[n - 1] == '\n' && p->head[n - 2] == '\r' && p->head[n - 3] == '\n';
}

int http_feed(struct http_parser *p, const char *bytes, size_t n, size_t *used) {
    size_t i = 0;
    *used = 0;
    if (p->status != HTTP_MORE) return p->status;
    while (!p->in_body && i < n) {
        /* Blank lines before a request are skipped (RFC 9112 2.2). */
        if (p->head_len == 0 && (bytes[i] == '\r' || bytes[i] == '\n')) {
            i++;
            continue;
        }
        if (p->head_len == HTTP_HEADER_MAX) {
            *used = i;
            return fail(p, 431, "the request line and headers are larger than 8 KiB");
        }
        p->head[p->head_len++] = bytes[i++];
        if (head_complete(p)) {
            int rc = parse_head(p);
            if (rc != HTTP_MORE) {
                *used = i;
                return rc;
            }
        }
    }
    if (p->in_body) {
        size_t take = p->content_length - p->body_have;
        if (take > n - i) take = n - i;
        if (take) memcpy(p->req.body + p->body_have, bytes + i, take);
        p->body_have += take;
        i += take;
        if (p->body_have == p->content_length) {
            if (p->req.body) p->req.body[p->content_length] = '\0';
            p->req.body_len = p->content_length;
            p->status = HTTP_DONE;
        }
    }
    *used = i;
    return p->status;
}

const char *http_status_text(int status) {
    switch (status) {
    case 100:
        return "Continue";
    case 200:
        return "OK";
    case 400:
        return "Bad Request";
    case 401:
        return "Unauthorized";
    case 404:
        return "Not Found";
    case 405:
        return "Method Not Allowed";
    case 408:
        return "Request Timeout";
    case 411:
        return "Length Required";
    case 413:
        return "Content Too Large";
    case 414:
        return "URI Too Long";
    case 415:
        return "Unsupported Media Type";
    case 431:
        return "Request Header Fields Too Large";
    case 500:
        return "Internal Server Error";
    case 501:
        return "Not Implemented";
    case 503:
        return "Service Unavailable";
    case 505:
        return "HTTP Version Not Supported";
    }
    return "Error";
}

int http_equal_secret(const char *a, size_t a_len, const char *b, size_t b_len) {
    /* Every byte of a is compared against b (wrapping), whatever differs first. */
    unsigned diff = (unsigned)(a_len ^ b_len);
    for (size_t i = 0; i < a_len; i++)
        diff |= (unsigned char)a[i] ^ (unsigned char)(b_len ? b[i % b_len] : 0);
    return diff == 0;
}
