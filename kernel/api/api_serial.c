/* api_serial.c - the API without a network: /api on the console (or
 * boot.cfg api=serial) reads one JSON request per line,
 *   {"method":"POST","path":"/v1/completions","body":{...}}
 * and answers with JSON lines through the same handlers as HTTP:
 *   {"status":200,"body":{...}}           a whole answer (or an error)
 *   {"status":200,"data":{...}}           each streamed chunk, then
 *   {"status":200,"data":"[DONE]"}
 * The line "/api off" returns to the shell. Keys are read raw (no echo). */
#include "kernel/api/api.h"

#include "kernel/arch/cpu.h"
#include "kernel/console/console.h"
#include "lib/format.h"
#include "lib/stdlib.h"
#include "lib/string.h"
#include "llm/generate/api_request.h"

#define API_LINE_MAX (1024 * 1024 + 4096) /* a body of HTTP's limit and its envelope */

static void write_line(int status, const char *key, const char *json, size_t len) {
    char head[40];
    int n = snprintf(head, sizeof head, "{\"status\":%d,\"%s\":", status, key);
    console_write(head, (size_t)n);
    console_write(json, len);
    console_write("}\n", 2);
}

static void serial_send(void *ctx, int status, const char *json, size_t len) {
    write_line(status, "body", json, len);
}

static int serial_event(void *ctx, const char *json, size_t len) {
    write_line(200, "data", json, len);
    return 0;
}

static void serial_end(void *ctx) {
    console_write("{\"status\":200,\"data\":\"[DONE]\"}\n", 31);
}

static void handle_line(struct session *s, const char *line, size_t len) {
    struct api_reply reply = {NULL, serial_send, serial_event, serial_end, NULL};
    struct api_request envelope;
    char err[200];
    if (api_request_decode(API_ENVELOPE, line, len, &envelope, err, sizeof err) != 0) {
        api_send_error(&reply, 400, err);
        return;
    }
    api_handle(s, envelope.method, envelope.path, envelope.body, envelope.body_len, &reply);
    api_request_free(&envelope);
}

void api_serial_run(struct session *s) {
    char *line = malloc(API_LINE_MAX);
    if (!line) {
        kprintf("api: out of memory for the line buffer\n");
        return;
    }
    kprintf("api: JSON lines on the console; \"/api off\" returns to the shell\n");
    size_t len = 0;
    int too_long = 0;
    for (;;) {
        int key = console_poll_key();
        if (key == KEY_NONE) {
            api_poll(s); /* HTTP requests are served in this mode too */
            cpu_relax();
            continue;
        }
        if (key >= 0x100) continue; /* arrows and such: never part of JSON */
        if (key != '\n' && key != '\r') {
            if (len < API_LINE_MAX)
                line[len++] = (char)key;
            else
                too_long = 1;
            continue;
        }
        while (len && (line[len - 1] == ' ' || line[len - 1] == '\t')) len--;
        if (too_long) {
            struct api_reply reply = {NULL, serial_send, serial_event, serial_end, NULL};
            api_send_error(&reply, 413, "the line is longer than 1 MiB");
        } else if (len == 8 && memcmp(line, "/api off", 8) == 0) {
            break;
        } else if (len) {
            handle_line(s, line, len);
        }
        len = 0;
        too_long = 0;
    }
    free(line);
    kprintf("api: back to the shell\n");
}
