/* llm_session_internal.h - state shared by llm_session.c (loading,
 * answering) and shell_llm.c (the commands that show and change it). */
#ifndef KERNEL_LLM_SESSION_INTERNAL_H
#define KERNEL_LLM_SESSION_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "kernel/session/llm_session.h"
#include "llm/chat.h"
#include "llm/generate.h"
#include "llm/sampler.h"

#define NAME_MAX_LEN 128

struct loaded_model {
    int loaded;
    Transformer transformer;
    Tokenizer tokenizer;
    char model_name[NAME_MAX_LEN];
    char tokenizer_name[NAME_MAX_LEN];
    size_t file_bytes;
    uint64_t load_ms;
};

struct settings {
    float temperature, topp, min_p, repeat_penalty;
    int top_k, steps;
    uint64_t seed; /* 0: a fresh seed from the TSC for every answer */
    int simd;      /* 0 scalar, 1 sse2, 2 avx2 */
    int hide_think; /* /set think hide: Qwen3's <think> block is not printed */
};

/* The conversation of /chat: the KV cache holds its history between turns. */
struct chat_session {
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
    struct settings sampler_settings;
};

struct answer_history {
    int answers;
    GenerateStats last;
    uint64_t total_tokens, total_decode_ns;
};

extern struct loaded_model current;
extern struct settings settings;
extern struct answer_history history;
extern struct chat_session chat;
extern const char *const simd_names[4];
int avx512_usable(void);

/* Loads a model (tokenizer NULL or "" picks one); on failure the previous model stays. */
int load_model(const char *model_name, const char *tokenizer_name, int quantize_q8);
void apply_simd(int simd);
int avx2_usable(void);
/* Starts (or restarts) the conversation with the current settings; 0 or -1 (reported). */
int chat_start(void);
void chat_stop(void);
/* Forgets the conversation's sampler (the next turn makes a new one). */
void chat_drop_sampler(void);
/* Answers one user turn of the conversation. */
void chat_answer(const char *line);

#endif
