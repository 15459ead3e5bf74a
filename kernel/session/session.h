/* session.h - the model the shell talks to: which checkpoint and tokenizer
 * from the ramdisk are loaded, the sampling settings, the figures of past
 * answers and the /chat conversation, all in one struct session that its
 * owner (the shell) passes to every function here. */
#ifndef KERNEL_SESSION_H
#define KERNEL_SESSION_H

#include <stddef.h>
#include <stdint.h>

#include "llm/compute/isa.h"
#include "llm/generate/chat.h"
#include "llm/generate/generate.h"
#include "llm/generate/loaded_model.h"
#include "llm/generate/sampler.h"

#define SESSION_NAME_MAX 257 /* any ramdisk file name (lib/tar.h TAR_NAME_MAX) */
/* A context lowered to fit in RAM keeps at least this many positions (or
 * the trained context when shorter); a model that cannot is refused. */
#define SESSION_MIN_CTX 2048
/* tokenizer_name of a GGUF model using the vocabulary in its file. */
#define SESSION_OWN_VOCABULARY "its own vocabulary"

struct session_model {
    int loaded;
    LoadedModel llm; /* the model and its tokenizer */
    char model_name[SESSION_NAME_MAX];
    char tokenizer_name[SESSION_NAME_MAX];
    size_t file_bytes; /* every piece of a split GGUF model together */
    uint32_t pieces;   /* files the model is made of: 1, or a split model's pieces */
    uint64_t load_ms;
};

struct session_settings {
    float temperature, topp, min_p, repeat_penalty;
    int top_k, steps;
    uint64_t seed;  /* 0: a fresh seed from the TSC for every answer */
    int simd;       /* enum isa (llm/compute/isa.h) */
    int hide_think; /* /set think hide: Qwen3's <think> block is not printed */
    int no_think;   /* /set think off: a template's thinking switch (Qwen3, SmolLM3) is off in /chat */
    int ctx; /* context positions asked for (/set ctx, boot.cfg ctx=); 0: the model's own, fitted to RAM */
    uint32_t kv_type; /* GGUF KV cache (llm/model/kv_cache.h: f16, q8_0, f32); llama2.c keeps fp32 */
};

/* The conversation of /chat: the KV cache holds its history between turns. */
struct session_chat {
    int active;
    Chat chat;
    int template_override; /* -1: the model's own template, else a ChatTemplate */
    char system[512];      /* /system TEXT */
    int full;              /* the last turn did not fit: /chat reset or /chat slide */
    char pending[512];     /* that turn, answered after /chat slide */
    /* One sampler for the whole conversation (its random sequence goes on
     * from turn to turn, as in llmrun -m chat), remade when a sampling
     * setting changes and dropped when the conversation starts over. */
    int have_sampler;
    Sampler sampler;
    struct session_settings sampler_settings;
};

struct session_history {
    int answers;
    GenerateStats last;
    uint64_t total_tokens, total_decode_ns;
};

struct session {
    struct session_model model;
    struct session_settings settings;
    struct session_history history;
    struct session_chat chat;
};

/* session_load.c: the default settings, the SIMD kernels (measured), every
 * worker, then the default model named by boot.cfg (model=, tokenizer=) or
 * the first checkpoint in the ramdisk. A failure is reported; the shell
 * still runs. */
void session_init(struct session *s);
/* Loads a model (tokenizer NULL or "" picks one); 0, or -1 (reported) with
 * the previous model still loaded. quantize_q8: int8 copies of an fp32
 * checkpoint's matrices. */
int session_load(struct session *s, const char *model_name, const char *tokenizer_name, int quantize_q8);
/* The KV cache type for GGUF models from now on (/set kv, boot.cfg kv=):
 * re-creates the loaded model's cache, ending a /chat conversation (said
 * so). 0, or -1 (reported) with the setting and cache unchanged. */
int session_set_kv_type(struct session *s, uint32_t kv_type);

/* session_context.c: the context `file` is loaded with (0: the load will
 * report that the file is no model): settings.ctx, else the trained
 * context, lowered to what fits in free RAM when it is the model's own or
 * no model is loaded yet (reported with the numbers); -1 (reported with the
 * bytes needed and free) when it does not fit. */
struct ramdisk_file;
/* Bytes a model's run state may take now (free RAM less a reserve, within
 * the longest free run of pages); *free_bytes: the free RAM. */
uint64_t session_state_budget(uint64_t *free_bytes);
int session_context_for(const struct session *s, const struct ramdisk_file *file);
/* /set ctx: ctx positions (0: the model's own) from now on, the current
 * model loaded again with it; 0, or -1 (reported) with the model and the
 * setting as they were. */
int session_set_context(struct session *s, int ctx);

/* session_simd.c: how the model's arithmetic runs. */
/* The fastest kernel set on this machine, measured on a small matmul. */
enum isa session_simd_fastest(void);
void session_simd_apply(struct session *s, enum isa simd);
/* Uses `limit` workers (0: those measured to pay off at boot) for llm/ from now on; returns the count. */
int session_use_workers(int limit);

/* session_answer.c: streams the answer to `prompt`, then one line "[...]"
 * with its figures. In /chat mode the line is the user's next turn. */
void session_answer(struct session *s, const char *prompt);

/* The settings' sampling as a sampler configuration (seed 0: one from the TSC). */
SamplerConfig session_sampler_config(const struct session *s);
/* The generation session_answer runs, with the caller's sampler, output and
 * step limit (positions, prompt included): for the API. Returns generate()'s. */
int session_complete(struct session *s, Sampler *sampler, const char *prompt, int steps, const GenerateIO *io,
                     GenerateStats *st, char *err, size_t err_size);

/* One conversation that is not kept (the API's chat requests), rendered
 * with that template: turns[] alternate user, assistant, ..., user (count
 * odd); the earlier answers are history, the last turn is answered like a
 * /chat turn. Returns chat_turn's result (CHAT_NO_ROOM: it does not fit). */
int session_chat_once(struct session *s, Sampler *sampler, const char *system, const char *const *turns,
                      int count, int max_new, const GenerateIO *io, GenerateStats *st, char *err,
                      size_t err_size);

/* session_chat.c: creates the conversation with the current settings and
 * template (destroying the current one first, so it also restarts); 0, or
 * -1 (reported). */
int session_chat_create(struct session *s);
/* Ends the conversation (nothing when there is none). */
void session_chat_destroy(struct session *s);
/* Destroys the conversation's sampler; the next turn creates a new one. */
void session_chat_sampler_destroy(struct session *s);
/* Answers one user turn of the conversation. */
void session_chat_answer(struct session *s, const char *line);

#endif
