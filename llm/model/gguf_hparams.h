/* gguf_hparams.h - the hyper-parameters of a GGUF model read from its
 * metadata ({arch}.* keys) and token_embd.weight, each default and limit
 * written once: the load (gguf_load.c) and the estimate before a load
 * (model_estimate.c) both ask here, so they cannot disagree. */
#ifndef LLM_GGUF_HPARAMS_H
#define LLM_GGUF_HPARAMS_H

#include <stddef.h>

#include "llm/format/gguf.h"
#include "llm/model/gguf_runtime.h"

typedef struct {
    GgufArch arch;
    int dim, hidden, layers, heads, kv_heads;
    int head_size; /* key length = value length */
    int n_rot;     /* rotated dimensions per head */
    int trained_ctx;
    int vocab;                                 /* rows of token_embd.weight */
    int n_experts, n_experts_used, expert_ffn; /* qwen3moe (0: dense); hidden is then used * expert_ffn */
    int swa_window, swa_pattern;               /* gemma3's sliding window (0: none) */
} GgufHparams;

/* Reads and checks them. 0, or -1 with a one-line reason (unsupported
 * architecture, missing or out-of-range key, shapes we cannot run). */
int gguf_hparams_read(const GgufFile *f, GgufHparams *h, char *err, size_t n);

#endif
