/* api_http.c - the API over HTTP/1.1: a TCP service (kernel/net) on port
 * 8080 whose receive() only feeds each connection's parser
 * (lib/http_request.c) and queues complete requests; api_poll, called from
 * the shell while it waits for a key, answers them one at a time through
 * api_handle. Between tokens the generation polls the network, so new
 * requests queue (or get 503 once the queue is full) and a client that
 * hangs up stops its generation at once. boot.cfg api_key=KEY requires
 * "Authorization: Bearer KEY" (401 otherwise). */
#include "kernel/api/api.h"

#include "kernel/console/console.h"
#include "kernel/drivers/timer.h"
#include "kernel/net/net_service.h"
#include "lib/format.h"
#include "lib/http_request.h"
#include "lib/stdlib.h"
#include "lib/string.h"

#define API_HTTP_PORT 8080
#define API_HTTP_CONNECTIONS 8
#define API_QUEUE_MAX 4 /* requests waiting for the one generation */
#define API_PENDING_MAX 65536
/* A request must arrive whole this long after its first byte (a body shorter
 * than its Content-Length, a client that stalls): 408 then. */
#define API_REQUEST_TIMEOUT_NS                                                                               \
    (20ull * 1000000000ull) /* bytes of a pipelined next request held while one is answered */

struct http_conn {
    struct http_conn *next_open; /* every open connection, for the request time-out */
    struct http_conn *next_queued;
    uint64_t request_start_ns; /* the first byte of a request not yet complete; 0: none */
    struct byte_stream *stream;
    struct http_parser parser;
    int queued; /* a complete request (or a refusal) waits in the queue */
    int busy;   /* being answered: close() must not free it */
    int gone;   /* the transport closed it */
    int refuse; /* answer this status at once instead (parse error, full queue, 401) */
    const char *refuse_reason;
    int streaming; /* the answer is a stream: the connection closes after it */
    int closing;   /* net_close was called: whatever else arrives is dropped */
    char *pending; /* bytes that arrived while a request was queued */
    size_t pending_len;
};

static char api_key[256];
static size_t api_key_len;
static struct http_conn *open_conns;
static struct http_conn *queue_head;
static int queue_length;
static int serving;

static void enqueue(struct http_conn *c) {
    c->queued = 1;
    c->request_start_ns = 0;
    c->next_queued = NULL;
    struct http_conn **p = &queue_head;
    while (*p) p = &(*p)->next_queued;
    *p = c;
    queue_length++;
}

static void dequeue(struct http_conn *c) {
    for (struct http_conn **p = &queue_head; *p; p = &(*p)->next_queued)
        if (*p == c) {
            *p = c->next_queued;
            queue_length--;
            break;
        }
    c->queued = 0;
}

/* A request is complete or refused: into the queue (or a 503 once it is full). */
static void request_ready(struct http_conn *c, int status) {
    if (status != HTTP_DONE) {
        c->refuse = status;
        c->refuse_reason = c->parser.reason;
    } else if (queue_length >= API_QUEUE_MAX) {
        c->refuse = 503;
        c->refuse_reason = "the server is busy: the request queue is full, try again later";
    } else if (api_key_len) {
        const char *auth = c->parser.req.authorization;
        size_t len = strlen(auth);
        int bearer = c->parser.req.has_authorization && len > 7 && strncmp(auth, "Bearer ", 7) == 0;
        if (!bearer || !http_equal_secret(auth + 7, len - 7, api_key, api_key_len)) {
            c->refuse = 401;
            c->refuse_reason = "a valid API key is needed: Authorization: Bearer KEY";
        }
    }
    enqueue(c);
}

static void feed(struct http_conn *c, const char *bytes, size_t n) {
    if (c->closing) return;
    if (n && !c->queued && !c->request_start_ns) c->request_start_ns = timer_ns();
    while (n > 0 && !c->queued) {
        size_t used;
        int rc = http_feed(&c->parser, bytes, n, &used);
        bytes += used;
        n -= used;
        if (rc != HTTP_MORE) request_ready(c, rc);
    }
    if (n == 0) return;
    if (c->refuse || c->pending_len + n > API_PENDING_MAX)
        return; /* the connection closes after this answer */
    char *p = realloc(c->pending, c->pending_len + n);
    if (!p) return;
    memcpy(p + c->pending_len, bytes, n);
    c->pending = p;
    c->pending_len += n;
}

static void *http_open(struct byte_stream *stream) {
    struct http_conn *c = malloc(sizeof *c);
    if (!c) return NULL;
    memset(c, 0, sizeof *c);
    c->stream = stream;
    http_parser_init(&c->parser);
    c->next_open = open_conns;
    open_conns = c;
    return c;
}

static void http_receive(void *conn, const void *bytes, size_t n) {
    feed(conn, bytes, n);
}

static void free_conn(struct http_conn *c) {
    if (c->queued) dequeue(c);
    for (struct http_conn **p = &open_conns; *p; p = &(*p)->next_open)
        if (*p == c) {
            *p = c->next_open;
            break;
        }
    http_parser_reset(&c->parser);
    free(c->pending);
    free(c);
}

static void http_close(void *conn) {
    struct http_conn *c = conn;
    c->gone = 1;
    if (!c->busy) free_conn(c);
}

static const struct net_service api_service = {"api",     API_HTTP_PORT, API_HTTP_CONNECTIONS,
                                               http_open, http_receive,  http_close};

/* ------------------------------------------------------------ answers */

/* `more`: the message goes on (its parts leave as one TCP segment). */
static int write_part(struct http_conn *c, const char *s, size_t n, bool more) {
    if (c->gone) return -1;
    return c->stream->write(c->stream->ctx, s, n, more);
}

static void http_send(void *ctx, int status, const char *json, size_t len) {
    struct http_conn *c = ctx;
    char head[256];
    int keep = c->parser.req.keep_alive && !c->refuse;
    int n = snprintf(head, sizeof head,
                     "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\nContent-Length: %zu\r\n"
                     "Connection: %s\r\n%s\r\n",
                     status, http_status_text(status), len, keep ? "keep-alive" : "close",
                     status == 401 ? "WWW-Authenticate: Bearer\r\n" : "");
    if (write_part(c, head, (size_t)n, true) == 0) write_part(c, json, len, false);
}

static int http_event(void *ctx, const char *json, size_t len) {
    struct http_conn *c = ctx;
    if (!c->streaming) {
        c->streaming = 1;
        static const char head[] =
            "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n"
            "Connection: close\r\n\r\n";
        if (write_part(c, head, sizeof head - 1, true) != 0) return -1;
    }
    /* One TCP segment (one frame, one virtqueue kick) per chunk, with no
     * copy of the JSON: Nagle is off, so each part sent alone was a segment. */
    if (write_part(c, "data: ", 6, true) != 0 || write_part(c, json, len, true) != 0) return -1;
    return write_part(c, "\n\n", 2, false);
}

static void http_end(void *ctx) {
    write_part(ctx, "data: [DONE]\n\n", 14, false);
}

static void answer_refusals(void);

/* Requests that did not arrive whole in time are refused with 408. */
static void refuse_slow_requests(void) {
    uint64_t now = timer_ns();
    for (struct http_conn *c = open_conns; c; c = c->next_open)
        if (c->request_start_ns && !c->queued && !c->busy && !c->closing && !c->gone &&
            now - c->request_start_ns > API_REQUEST_TIMEOUT_NS) {
            c->refuse = 408;
            c->refuse_reason = "the request did not arrive whole within 20 s (a body shorter than its "
                               "Content-Length?)";
            enqueue(c);
        }
}

static int http_gone(void *ctx) {
    struct http_conn *c = ctx;
    net_poll(); /* between tokens: new requests queue, a hang-up is seen */
    refuse_slow_requests();
    answer_refusals();
    return c->gone || c->stream->closed(c->stream->ctx);
}

/* After an answer: the next pipelined request, or the connection closes. */
static void finish_conn(struct http_conn *c) {
    c->busy = 0;
    if (c->gone) {
        free_conn(c);
        return;
    }
    int keep = c->parser.req.keep_alive && !c->refuse && !c->streaming;
    if (!keep) {
        c->closing = 1;
        net_close(c->stream->ctx);
        return;
    }
    http_parser_reset(&c->parser);
    c->refuse = 0;
    c->refuse_reason = NULL;
    char *pending = c->pending;
    size_t n = c->pending_len;
    c->pending = NULL;
    c->pending_len = 0;
    if (pending) feed(c, pending, n);
    free(pending);
}

static void answer(struct session *s, struct http_conn *c) {
    dequeue(c);
    c->busy = 1;
    struct api_reply reply = {c, http_send, http_event, http_end, http_gone};
    if (c->refuse) {
        api_send_error(&reply, c->refuse, c->refuse_reason ? c->refuse_reason : "bad request");
        kprintf("api: %s %s %d (%s)\n", c->parser.req.method[0] ? c->parser.req.method : "-",
                c->parser.req.path[0] ? c->parser.req.path : "-", c->refuse,
                c->refuse_reason ? c->refuse_reason : "");
    } else {
        const struct http_request *r = &c->parser.req;
        api_handle(s, r->method, r->path, r->body, r->body_len, &reply);
    }
    finish_conn(c);
}

/* Refusals cost nothing: they are answered even while a generation runs. */
static void answer_refusals(void) {
    for (struct http_conn *c = queue_head, *next; c; c = next) {
        next = c->next_queued;
        if (c->refuse && !c->busy) answer(NULL, c);
    }
}

int api_poll(struct session *s) {
    if (serving) return 0;
    refuse_slow_requests();
    if (!queue_head) return 0;
    serving = 1;
    answer_refusals();
    if (queue_head) answer(s, queue_head);
    serving = 0;
    return 1;
}

int api_http_start(const char *api_key_value) {
    api_key_len = strlcpy(api_key, api_key_value ? api_key_value : "", sizeof api_key);
    if (api_key_len >= sizeof api_key) api_key_len = sizeof api_key - 1;
    return net_listen(&api_service);
}
