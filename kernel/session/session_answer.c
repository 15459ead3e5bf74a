/* session_answer.c - answering a prompt: the answer streams to the console
 * token by token, then one line with its figures. */
#include "kernel/session/session_generate.h"

#include "kernel/arch/cpu.h"
#include "kernel/console/console.h"
#include "kernel/console/status.h"
#include "kernel/drivers/timer.h"

static void emit_text(void *ctx, const char *text, size_t len) {
    int *column = ctx;
    console_write(text, len);
    *column = text[len - 1] == '\n' ? 0 : 1;
}

static int ctrl_c_pressed(void *ctx) {
    /* Keys typed while an answer streams are dropped, except Ctrl-C. */
    for (int key; (key = console_poll_key()) != KEY_NONE;)
        if (key == 3) return 1;
    return 0;
}

static uint64_t now_ns(void *ctx) {
    return timer_ns();
}

GenerateIO session_console_io(int *column) {
    GenerateIO io = {emit_text, ctrl_c_pressed, now_ns, NULL, column};
    return io;
}

static double per_second(uint64_t count, uint64_t ns) {
    return ns ? (double)count * 1e9 / (double)ns : 0.0;
}

SamplerConfig session_sampler_config(const struct session *s) {
    const struct session_settings *set = &s->settings;
    SamplerConfig sc = sampler_default_config();
    sc.temperature = set->temperature;
    sc.topp = set->topp;
    sc.top_k = set->top_k;
    sc.min_p = set->min_p;
    sc.repeat_penalty = set->repeat_penalty;
    sc.seed = set->seed ? set->seed : (rdtsc() | 1);
    return sc;
}

int session_sampler_create(const struct session *s, Sampler *sampler) {
    SamplerConfig sc = session_sampler_config(s);
    char err[200];
    if (sampler_create(sampler, s->model.llm.model.config.vocab_size, &sc, err, sizeof err) != 0) {
        kprintf("error: %s\n", err);
        return -1;
    }
    return 0;
}

void session_report_answer(struct session *s, const GenerateStats *st) {
    if (st->reason == STOP_USER) kprintf("^C\n");
    console_flush_input();
    int decoded = st->positions - st->prompt_tokens;
    if (decoded < 0) decoded = 0;
    uint64_t ms_per_token_x100 = decoded > 0 ? st->decode_ns / 10000 / (uint64_t)decoded : 0;
    double decode_speed = per_second((uint64_t)decoded, st->decode_ns);
    kprintf("[%d tokens, prefill %.1f tok/s, decode %.1f tok/s, %llu.%02llu ms/token, stop: %s]\n",
            st->generated_tokens, per_second((uint64_t)st->prompt_tokens, st->prefill_ns), decode_speed,
            (unsigned long long)(ms_per_token_x100 / 100), (unsigned long long)(ms_per_token_x100 % 100),
            stop_reason_name(st->reason));
    struct session_history *h = &s->history;
    h->answers++;
    h->last = *st;
    h->total_tokens += (uint64_t)decoded;
    h->total_decode_ns += st->decode_ns;
    status_set_speed(decode_speed);
}

void session_answer(struct session *s, const char *prompt) {
    if (!s->model.loaded) {
        kprintf("no model loaded: /load a checkpoint from the ramdisk first (see /ls)\n");
        return;
    }
    session_use_workers(0); /* the count that pays off now: the host's load may have changed */
    if (s->chat.active) {
        session_chat_answer(s, prompt);
        return;
    }
    Sampler sampler;
    if (session_sampler_create(s, &sampler) != 0) return;
    char err[200];
    int column = 0;
    GenerateIO io = session_console_io(&column);
    GenerateStats st;
    int rc = session_complete(s, &sampler, prompt, s->settings.steps, &io, &st, err, sizeof err);
    sampler_destroy(&sampler);
    if (column) console_write("\n", 1);
    if (rc != 0) {
        kprintf("error: %s\n", err);
        return;
    }
    session_report_answer(s, &st);
}

int session_complete(struct session *s, Sampler *sampler, const char *prompt, int steps, const GenerateIO *io,
                     GenerateStats *st, char *err, size_t err_size) {
    /* generate() overwrites the KV cache from position 0: a /chat conversation re-prefills its next turn. */
    if (s->chat.active) s->chat.chat.pos = 0;
    return generate(&s->model.llm.model, &s->model.llm.tokenizer, sampler, prompt, steps, io, st, err,
                    err_size);
}
