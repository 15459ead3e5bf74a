/* llm_session_internal.h - state shared by llm_session.c (loading,
 * answering) and shell_llm.c (the commands that show and change it). */
#ifndef KERNEL_LLM_SESSION_INTERNAL_H
#define KERNEL_LLM_SESSION_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "kernel/llm_session.h"
#include "llm/generate.h"

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
};

struct answer_history {
    int answers;
    GenerateStats last;
    uint64_t total_tokens, total_decode_ns;
};

extern struct loaded_model current;
extern struct settings settings;
extern struct answer_history history;
extern const char *const simd_names[3];

/* Loads a model (tokenizer NULL or "" picks one); on failure the previous model stays. */
int load_model(const char *model_name, const char *tokenizer_name);
void apply_simd(int simd);
int avx2_usable(void);

#endif
