/* session_chat.c - the /chat conversation: llm/generate/chat.c keeps the turns in the
 * KV cache; here is its one sampler and what happens when the context is
 * full (the turn waits for /chat reset or /chat slide). */
#include "kernel/session/session_generate.h"

#include "kernel/console/console.h"
#include "lib/string.h"

static ChatTemplate session_chat_template(const struct session *s, char *why, size_t why_size) {
    if (s->chat.template_override >= 0) {
        strlcpy(why, "chosen by /chat template", why_size);
        return (ChatTemplate)s->chat.template_override;
    }
    return chat_template_detect_why(&s->model.llm.tokenizer, why, why_size);
}

int session_chat_create(struct session *s) {
    struct session_chat *c = &s->chat;
    if (!s->model.loaded) {
        kprintf("chat: no model loaded (see /ls and /load)\n");
        return -1;
    }
    if (c->active) chat_destroy(&c->chat);
    session_chat_sampler_destroy(s);
    c->active = 0;
    c->full = 0;
    c->pending[0] = '\0';
    char err[200], why[400];
    ChatTemplate tmpl = session_chat_template(s, why, sizeof why);
    /* The GGUF's own template through the Jinja engine, unless /chat template chose a built-in one. */
    int jinja = c->template_override < 0 &&
                chat_template_check_jinja(&s->model.llm.tokenizer, tmpl, why, sizeof why) == 0;
    kprintf("chat: template %s (%s)\n", jinja ? "jinja" : chat_template_name(tmpl), why);
    if (chat_create(&c->chat, &s->model.llm.model, &s->model.llm.tokenizer, tmpl, c->system, err,
                    sizeof err) != 0) {
        kprintf("chat: %s\n", err);
        return -1;
    }
    if (jinja) chat_use_jinja(&c->chat, s->model.llm.tokenizer.chat_template);
    c->chat.options.enable_thinking = !s->settings.no_think;
    c->active = 1;
    return 0;
}

void session_chat_destroy(struct session *s) {
    if (s->chat.active) chat_destroy(&s->chat.chat);
    session_chat_sampler_destroy(s);
    s->chat.active = 0;
    s->chat.full = 0;
}

void session_chat_sampler_destroy(struct session *s) {
    if (s->chat.have_sampler) sampler_destroy(&s->chat.sampler);
    s->chat.have_sampler = 0;
}

static int same_sampling(const struct session_settings *a, const struct session_settings *b) {
    return a->temperature == b->temperature && a->topp == b->topp && a->min_p == b->min_p &&
           a->repeat_penalty == b->repeat_penalty && a->top_k == b->top_k && a->seed == b->seed;
}

/* The conversation's sampler, made on its first turn or after a sampling
 * setting changed; NULL when it cannot be made (reported). */
static Sampler *chat_sampler(struct session *s) {
    struct session_chat *c = &s->chat;
    if (c->have_sampler && !same_sampling(&c->sampler_settings, &s->settings))
        session_chat_sampler_destroy(s);
    if (!c->have_sampler) {
        if (session_sampler_create(s, &c->sampler) != 0) return NULL;
        c->have_sampler = 1;
        c->sampler_settings = s->settings;
    }
    return &c->sampler;
}

void session_chat_answer(struct session *s, const char *line) {
    struct session_chat *c = &s->chat;
    if (c->full) {
        kprintf(
            "chat: the context is full: /chat reset (start over) or /chat slide (drop the oldest turns)\n");
        return;
    }
    Sampler *sampler = chat_sampler(s);
    if (!sampler) return;
    c->chat.hide_think = s->settings.hide_think;
    char err[200];
    int column = 0;
    GenerateIO io = session_console_io(&column);
    GenerateStats st;
    int rc = chat_turn(&c->chat, &s->model.llm.model, &s->model.llm.tokenizer, sampler, line,
                       s->settings.steps, &io, &st, err, sizeof err);
    if (column) console_write("\n", 1);
    if (rc == CHAT_NO_ROOM) {
        c->full = 1;
        strlcpy(c->pending, line, sizeof c->pending);
        kprintf("chat: %s\n", err);
        kprintf("chat: the context is full: /chat reset (start over) or /chat slide (drop the oldest turns, "
                "then this line is answered)\n");
        return;
    }
    if (rc != 0) {
        kprintf("error: %s\n", err);
        return;
    }
    session_report_answer(s, &st);
}

int session_chat_once(struct session *s, Sampler *sampler, const char *system, const char *const *turns,
                      int count, int max_new, const GenerateIO *io, GenerateStats *st, char *err,
                      size_t err_size) {
    char why[200];
    Chat chat;
    if (chat_create(&chat, &s->model.llm.model, &s->model.llm.tokenizer,
                    session_chat_template(s, why, sizeof why), system, err, err_size) != 0)
        return -1;
    chat.options.enable_thinking = !s->settings.no_think;
    chat.hide_think = s->settings.hide_think;
    /* Its turns overwrite the KV cache: a /chat conversation re-prefills its next turn. */
    if (s->chat.active) s->chat.chat.pos = 0;
    int rc = 0;
    for (int i = 0; rc == 0 && i + 1 < count; i += 2)
        rc = chat_add_answered_turn(&chat, &s->model.llm.tokenizer, turns[i], turns[i + 1], err, err_size);
    if (rc == 0)
        rc = chat_turn(&chat, &s->model.llm.model, &s->model.llm.tokenizer, sampler, turns[count - 1],
                       max_new, io, st, err, err_size);
    chat_destroy(&chat);
    return rc;
}
