/* moe.h - internal: the mixture-of-experts FFN of qwen3moe GGUF models
 * (llm/model/moe.c), used by gguf_load.c (loading) and
 * gguf_forward.c. */
#ifndef LLM_MOE_H
#define LLM_MOE_H

#include <stddef.h>

#include "llm/model/gguf_hparams.h"
#include "llm/model/gguf_model.h"

/* Limits of this implementation (Qwen3 MoE files have 128 experts, 8 used). */
#define MOE_MAX_EXPERTS 512
#define MOE_MAX_USED 32

/* Reads ARCH.expert_count, expert_used_count and expert_feed_forward_length
 * into h and sets h->hidden to the used experts' hidden width (the run
 * state holds all of them for a position; gguf_hparams.c). 0, or -1 with a
 * one-line reason: no experts, top-k of 0 or above the expert count, limits. */
int moe_read_hparams(const GgufFile *f, const char *arch, GgufHparams *h, char *err, size_t n);
/* Binds layer l's router and 3-D expert tensors, checking that they hold
 * m->n_experts experts of the right shape. 0, or -1 with the reason. */
int moe_bind_layer(GgufModel *m, int l, char *err, size_t n);
/* x += the layer's expert FFN of xb (already normed), for the batch rows of
 * both (stride m->wide); uses hb, hb2, xb2 and the activation blocks. */
void moe_ffn(GgufModel *m, const GLayer *L, int batch);

#endif
