/* chat_jinja.c - the GGUF's own chat template through the Jinja engine
 * (llm/jinja), set beside the built-in template chosen for it: a probe
 * conversation rendered both ways says whether the two agree, or why the
 * engine refused the template (then the built-in one is the fallback). */
#include "lib/format.h"
#include "lib/stdlib.h"
#include "lib/string.h"
#include "llm/generate/chat.h"
#include "llm/generate/chat_internal.h"
#include "llm/jinja/jinja.h"

static const char probe_system[] = "You are a helpful assistant.";
static const char *const probe_turns[] = {"Hello!", "Hi. How can I help?", "Name a colour."};
#define PROBE_TURNS 3
#define PROBE_OUT 4096

/* {"messages": [...], "add_generation_prompt": true, "bos_token": ..., "eos_token": ...} */
static size_t probe_context(const Tokenizer *tok, char *ctx, size_t cap) {
    size_t o = (size_t)snprintf(ctx, cap, "{\"messages\": [{\"role\": \"system\", \"content\": ");
    o += jinja_json_quote(probe_system, strlen(probe_system), ctx + o, cap - o);
    for (int i = 0; i < PROBE_TURNS && o < cap; i++) {
        o += (size_t)snprintf(ctx + o, cap - o,
                              "}, {\"role\": \"%s\", \"content\": ", i % 2 ? "assistant" : "user");
        o += jinja_json_quote(probe_turns[i], strlen(probe_turns[i]), ctx + o, cap - o);
    }
    o += (size_t)snprintf(ctx + o, cap - o, "}], \"add_generation_prompt\": true");
    const int ids[2] = {tok->bos_id, tok->eos_id};
    const char *names[2] = {"bos_token", "eos_token"};
    for (int k = 0; k < 2 && o < cap; k++) {
        if (ids[k] < 0 || ids[k] >= tok->vocab_size) continue;
        const char *piece = tok->pieces[ids[k]];
        o += (size_t)snprintf(ctx + o, cap - o, ", \"%s\": ", names[k]);
        o += jinja_json_quote(piece, strlen(piece), ctx + o, cap - o);
    }
    o += (size_t)snprintf(ctx + o, cap - o, "}");
    return o < cap ? o : cap - 1;
}

int chat_template_check_jinja(const Tokenizer *tok, ChatTemplate t, char *why, size_t why_size) {
    const char *tmpl = tok->chat_template;
    size_t used = strlen(why);
    if (!tmpl) return -1;
    char *ctx = malloc(2048), *builtin = malloc(PROBE_OUT), *out = NULL, err[160];
    if (!ctx || !builtin) {
        free(ctx);
        free(builtin);
        snprintf(why + used, why_size - used, "; jinja: out of memory");
        return -1;
    }
    size_t ctx_len = probe_context(tok, ctx, 2048), out_len = 0;
    JinjaLimits limits = jinja_default_limits();
    limits.max_memory = 16u << 20;
    int rc = jinja_render(tmpl, strlen(tmpl), ctx, ctx_len, &limits, &out, &out_len, err, sizeof err);
    int result = -1;
    if (rc != 0) {
        snprintf(why + used, why_size - used, "; jinja refused the GGUF's template (%s): %s used", err,
                 chat_template_name(t));
    } else {
        /* the same conversation through the built-in template, the same date */
        ChatOptions o = chat_default_options();
        o.date = "26 July 2024";
        const char *messages[PROBE_TURNS] = {probe_turns[0], probe_turns[1], probe_turns[2]};
        const char *bos =
            chat_template_wants_bos(t, tok) && tok->bos_id >= 0 ? tok->pieces[tok->bos_id] : NULL;
        size_t len = chat_render(t, &o, probe_system, messages, PROBE_TURNS, bos, builtin, PROBE_OUT);
        result = len == out_len && memcmp(builtin, out, len) == 0;
        size_t at = 0;
        while (at < len && at < out_len && builtin[at] == out[at]) at++;
        if (result)
            snprintf(why + used, why_size - used, "; jinja renders the GGUF's template identically");
        else
            snprintf(why + used, why_size - used,
                     "; jinja renders the GGUF's template differently from byte %zu", at);
        free(out);
    }
    free(ctx);
    free(builtin);
    return result;
}
