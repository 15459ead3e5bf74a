/* llmrun_modes.h - what llmrun does once the model is loaded: generation's
 * I/O callbacks and closing figures, -m chat, --tokenize (with --cases,
 * --chat-ids) and --logits-out. Header only: every tools/NAME.c is a
 * program of its own (tools/llmrun.c is this one's main). */
#ifndef TOOLS_LLMRUN_MODES_H
#define TOOLS_LLMRUN_MODES_H

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "llm/generate/chat.h"
#include "llm/generate/generate.h"
#include "llm/generate/sampler.h"
#include "llm/model/model.h"
#include "llm/tokenizer/tokenizer.h"
#include "tools/file_util.h"

static void die(const char *what, const char *why) {
    fprintf(stderr, "llmrun: %s%s%s\n", what, why ? ": " : "", why ? why : "");
    exit(EXIT_FAILURE);
}

/* ---------------------------------------------------------------- generation I/O */

static volatile sig_atomic_t interrupted;
static void on_sigint(int sig) {
    interrupted = 1;
}

static void emit_stdout(void *ctx, const char *text, size_t len) {
    fwrite(text, 1, len, stdout);
    fflush(stdout);
}

static int stop_requested(void *ctx) {
    return interrupted;
}

static uint64_t monotonic_ns(void *ctx) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static double per_second(double count, uint64_t ns) {
    return ns ? count / ((double)ns / 1e9) : 0.0;
}

/* ---------------------------------------------------------------- modes */

/* -m chat: each stdin line is a user turn; each answer is printed on one
 * line (figures on stderr). The KV cache is kept across turns unless
 * scratch asks for a from-scratch run of the whole conversation each turn. */
static int run_chat(Model *t, const Tokenizer *tok, Sampler *s, const char *system, const char *template_name,
                    int steps, int scratch, int thinking) {
    char err[256], why[400];
    ChatTemplate tmpl = chat_template_detect_why(tok, why, sizeof why);
    if (template_name && chat_template_parse(template_name, &tmpl) != 0)
        die("--chat-template: not llama3|llama3.1|qwen3|smollm3|gemma|chatml|llama2|zephyr|none:",
            template_name);
    /* The GGUF's own template through the Jinja engine, unless --chat-template chose a built-in one. */
    int jinja = !template_name && chat_template_check_jinja(tok, tmpl, why, sizeof why) == 0;
    fprintf(stderr, "chat: template %s (%s)\n", jinja ? "jinja" : chat_template_name(tmpl),
            template_name ? "chosen by --chat-template" : why);
    Chat chat;
    if (chat_create(&chat, t, tok, tmpl, system, err, sizeof err) != 0) die(err, NULL);
    if (jinja) chat_use_jinja(&chat, tok->chat_template);
    chat.options.enable_thinking = thinking;
    GenerateIO io = {emit_stdout, stop_requested, monotonic_ns, NULL, NULL};
    char line[4096];
    while (fgets(line, sizeof line, stdin)) {
        size_t len = strlen(line);
        while (len && (line[len - 1] == '\n' || line[len - 1] == '\r')) line[--len] = '\0';
        if (scratch) chat.pos = 0;
        GenerateStats st;
        int rc = chat_turn(&chat, t, tok, s, line, steps, &io, &st, err, sizeof err);
        if (rc == CHAT_NO_ROOM) {
            fprintf(stderr, "llmrun: chat: %s\n", err);
            printf("\n");
            break;
        }
        if (rc != 0) die(err, NULL);
        printf("\n");
        fflush(stdout);
        fprintf(stderr, "turn: prefill %d tokens, %d generated, stop: %s, %d of %d context used\n",
                st.prompt_tokens, st.generated_tokens, stop_reason_name(st.reason), chat.count,
                chat.capacity);
    }
    chat_destroy(&chat);
    return 0;
}

/* Prints the ids of text (no BOS) on one line. */
static void print_ids(const Tokenizer *tok, const char *text) {
    size_t max_tokens = tokenizer_max_tokens(strlen(text));
    int *ids = malloc(max_tokens * sizeof(int));
    char err[160];
    int n = ids ? tokenizer_encode(tok, text, 0, 0, ids, max_tokens, err, sizeof err) : -1;
    if (n < 0) die(ids ? err : "out of memory", NULL);
    for (int i = 0; i < n; i++) printf("%s%d", i ? " " : "", ids[i]);
    printf("\n");
    free(ids);
}

/* --tokenize: stdin's text is one input; with --cases it is llama.cpp's
 * test-tokenizer-0 layout (each input followed by CASE_SEPARATOR), and each
 * input's ids get a line of their own, as that test's .out files hold them. */
#define CASE_SEPARATOR "\n__ggml_vocab_test__\n"
/* --chat-ids: the inputs are the system prompt, then the messages. */
static const char *chat_ids_template; /* --template-file with --chat-ids: instead of the GGUF's */

static int print_chat_ids(const Tokenizer *tok, char *text, int thinking) {
    const char *inputs[256];
    int n = 0;
    for (char *input = text, *end; n < 256 && (end = strstr(input, CASE_SEPARATOR));
         input = end + strlen(CASE_SEPARATOR)) {
        *end = '\0';
        inputs[n++] = input;
    }
    if (n < 2) die("--chat-ids: stdin holds the system prompt and at least one message", NULL);
    size_t tlen;
    char *tmpl = chat_ids_template ? file_read_all(chat_ids_template, &tlen) : NULL;
    if (chat_ids_template && !tmpl) die("--template-file: cannot read", chat_ids_template);
    if (!tmpl && !tok->chat_template) die("--chat-ids: the vocabulary has no tokenizer.chat_template", NULL);
    ChatOptions o = chat_default_options();
    o.enable_thinking = thinking;
    int *ids;
    char err[300];
    int count = chat_jinja_encode(tok, tmpl ? tmpl : tok->chat_template, &o, inputs[0], inputs + 1, n - 1,
                                  &ids, err, sizeof err);
    free(tmpl);
    if (count < 0) die("--chat-ids", err);
    for (int i = 0; i < count; i++) printf("%s%d", i ? " " : "", ids[i]);
    printf("\n");
    free(ids);
    return 0;
}

static int run_tokenize(const Tokenizer *tok, int cases, int chat_ids, int thinking) {
    size_t cap = 1 << 16, len = 0;
    char *text = malloc(cap + 1);
    for (;;) {
        if (!text) die("out of memory reading stdin", NULL);
        len += fread(text + len, 1, cap - len, stdin);
        if (len < cap) break;
        cap *= 2;
        text = realloc(text, cap + 1);
    }
    text[len] = '\0';
    if (chat_ids) {
        print_chat_ids(tok, text, thinking);
    } else if (!cases) {
        print_ids(tok, text);
    } else {
        for (char *input = text, *end; (end = strstr(input, CASE_SEPARATOR));
             input = end + strlen(CASE_SEPARATOR)) {
            *end = '\0';
            print_ids(tok, input);
        }
    }
    free(text);
    return 0;
}

static int run_logits(Model *t, const char *out_path, const char *token_list) {
    const ModelConfig *c = &t->config;
    int *ids = malloc((size_t)c->seq_len * sizeof(int));
    int n = 0;
    const char *s = token_list;
    for (;;) {
        while (*s == ' ' || *s == '\t' || *s == ',' || *s == '\n') s++;
        if (!*s) break;
        char *end;
        errno = 0;
        long v = strtol(s, &end, 10);
        if (end == s || errno) die("--tokens: not a token id near", s);
        if (v < 0 || v >= c->vocab_size) {
            fprintf(stderr, "llmrun: --tokens: id %ld is outside the vocabulary (0..%d)\n", v,
                    c->vocab_size - 1);
            exit(EXIT_FAILURE);
        }
        if (n == c->seq_len) {
            fprintf(stderr, "llmrun: --tokens: more than %d ids, the context length\n", c->seq_len);
            exit(EXIT_FAILURE);
        }
        ids[n++] = (int)v;
        s = end;
    }
    if (n == 0) die("--tokens: no token ids given", NULL);
    FILE *out = fopen(out_path, "wb");
    if (!out) {
        fprintf(stderr, "llmrun: cannot create %s: %s\n", out_path, strerror(errno));
        exit(EXIT_FAILURE);
    }
    for (int pos = 0; pos < n; pos++) {
        float *logits = model_forward(t, ids[pos], pos);
        if (!logits) die("forward pass failed", NULL);
        if (fwrite(logits, sizeof(float), (size_t)c->vocab_size, out) != (size_t)c->vocab_size)
            die("write error on", out_path);
    }
    if (fclose(out) != 0) die("write error on", out_path);
    free(ids);
    return 0;
}

/* The closing figures of a generate run on stderr. */
static void print_generate_stats(const GenerateStats *stats) {
    /* llama2.c's figure: positions after the first, timed from the end of the first. */
    if (stats->positions > 1)
        fprintf(stderr, "achieved tok/s: %f\n", per_second(stats->positions - 1, stats->after_first_ns));
    int decoded = stats->positions - stats->prompt_tokens;
    if (decoded < 0) decoded = 0;
    fprintf(
        stderr,
        "prompt %d tokens in %.1f ms (%.1f tok/s), generated %d tokens in %.1f ms (%.1f tok/s), stop: %s\n",
        stats->prompt_tokens, stats->prefill_ns / 1e6,
        per_second(stats->positions < stats->prompt_tokens ? stats->positions : stats->prompt_tokens,
                   stats->prefill_ns),
        stats->generated_tokens, stats->decode_ns / 1e6, per_second(decoded, stats->decode_ns),
        stop_reason_name(stats->reason));
}

#endif
