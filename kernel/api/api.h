/* api.h - the OpenAI-compatible API (llama-server's routes and field
 * names) over any transport: a request (method, path, body) goes to
 * api_handle, which answers through a struct api_reply; HTTP (api_http.c)
 * and the console's JSON-lines mode (api_serial.c) are two such replies.
 * Generation runs the session's loops (session_complete, session_chat_once),
 * one request at a time. */
#ifndef KERNEL_API_H
#define KERNEL_API_H

#include <stddef.h>

struct session;

/* How an answer goes back; ctx is the transport's. */
struct api_reply {
    void *ctx;
    /* A whole answer: the status and its JSON body. */
    void (*send)(void *ctx, int status, const char *json, size_t len);
    /* One streamed chunk (status 200; the first call starts the stream);
     * returns -1 once the client is gone. */
    int (*event)(void *ctx, const char *json, size_t len);
    /* The stream's end ("[DONE]"). */
    void (*end)(void *ctx);
    /* Non-zero when the client went away: generation stops at once. Polled
     * between tokens (HTTP polls the network here). May be NULL. */
    int (*gone)(void *ctx);
};

/* Answers one request (body may be NULL when len is 0); prints the
 * console's "api: METHOD PATH STATUS, N tokens, X tok/s" line. Returns the
 * status sent. */
int api_handle(struct session *s, const char *method, const char *path, const char *body, size_t len,
               struct api_reply *reply);
/* An error answer: {"error":{"code":status,"message":...,"type":...}}. */
void api_send_error(struct api_reply *reply, int status, const char *message);

/* api_http.c: the HTTP service on TCP port 8080 (boot.cfg api_key=KEY:
 * every request needs "Authorization: Bearer KEY"); 0, or -1 (reported by
 * the network: off, port taken). */
int api_http_start(const char *api_key);
/* Answers the next queued HTTP request, if any (and every queued refusal);
 * 1 when it answered something.
 * Called by the shell while it waits for a key, never from inside a
 * generation: console prompts and API requests take turns. */
int api_poll(struct session *s);

/* api_serial.c: /api on the console (boot.cfg api=serial): JSON lines
 * until the line "/api off". */
void api_serial_run(struct session *s);

#endif
