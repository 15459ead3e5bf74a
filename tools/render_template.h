/* render_template.h - llmrun --template-file FILE.jinja --render MESSAGES.json:
 * prints what the Jinja engine (llm/jinja) renders, so anyone can compare it
 * with another renderer (tests/reference/render_template.mjs). Header only:
 * every tools/NAME.c is a program of its own. */
#ifndef TOOLS_RENDER_TEMPLATE_H
#define TOOLS_RENDER_TEMPLATE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "llm/jinja/jinja.h"
#include "tools/file_util.h"

typedef struct {
    const char *template_file, *messages_file;
    const char *bos_token, *eos_token; /* NULL: not defined for the template */
    int generation_prompt;
} RenderRequest;

/* Appends `"key": value-as-JSON-string` to a context being built. */
static inline size_t render_put_string(char *ctx, size_t o, size_t cap, const char *key, const char *value) {
    o += (size_t)snprintf(ctx + o, cap - o, ", \"%s\": ", key);
    return o + jinja_json_quote(value, strlen(value), ctx + o, cap - o);
}

/* MESSAGES.json is the messages array, or an object whose keys (messages,
 * tools, ...) all become variables. Returns the exit status. */
static inline int render_template_main(const RenderRequest *r) {
    size_t tlen, mlen;
    char *tmpl = file_read_all(r->template_file, &tlen);
    char *messages = file_read_all(r->messages_file, &mlen);
    if (!tmpl || !messages) {
        fprintf(stderr, "llmrun: cannot read %s\n", !tmpl ? r->template_file : r->messages_file);
        return EXIT_FAILURE;
    }
    size_t cap = mlen + 2 * (r->bos_token ? strlen(r->bos_token) * 6 : 0) +
                 2 * (r->eos_token ? strlen(r->eos_token) * 6 : 0) + 256;
    char *ctx = malloc(cap);
    if (!ctx) return EXIT_FAILURE;
    const char *p = messages;
    while (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r') p++;
    size_t o;
    if (*p == '{') { /* an object: its keys, then the options */
        const char *end = messages + mlen;
        while (end > p && end[-1] != '}') end--;
        o = (size_t)snprintf(ctx, cap, "%.*s", (int)(end - p - 1), p);
        o += (size_t)snprintf(ctx + o, cap - o, ", \"add_generation_prompt\": %s",
                              r->generation_prompt ? "true" : "false");
    } else {
        o = (size_t)snprintf(ctx, cap, "{\"messages\": %s, \"add_generation_prompt\": %s", messages,
                             r->generation_prompt ? "true" : "false");
    }
    if (r->bos_token) o = render_put_string(ctx, o, cap, "bos_token", r->bos_token);
    if (r->eos_token) o = render_put_string(ctx, o, cap, "eos_token", r->eos_token);
    o += (size_t)snprintf(ctx + o, cap - o, "}");

    JinjaLimits limits = jinja_default_limits();
    time_t now = time(NULL);
    struct tm tm;
    localtime_r(&now, &tm);
    limits.now = (JinjaDate){tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min};
    char *out, err[256];
    size_t out_len;
    int rc = jinja_render(tmpl, tlen, ctx, o, &limits, &out, &out_len, err, sizeof err);
    free(tmpl);
    free(messages);
    free(ctx);
    if (rc != 0) {
        fprintf(stderr, "llmrun: %s: %s\n", r->template_file, err);
        return EXIT_FAILURE;
    }
    fwrite(out, 1, out_len, stdout);
    free(out);
    return EXIT_SUCCESS;
}

#endif
