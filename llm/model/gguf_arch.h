/* gguf_arch.h - what sets a GGUF model's architecture apart, for reports
 * (/model, llmrun), and a switch for tests that turns it off. */
#ifndef LLM_GGUF_ARCH_H
#define LLM_GGUF_ARCH_H

#include <stddef.h>
#include <stdint.h>

struct GgufModel;

/* One line such as "experts 8, 2 used per token (expert ffn 256)" or
 * "NoPE layers 3, 7 (RoPE skipped on every 4th)", then the architecture's
 * own facts (gemma3's sliding window and head_dim), "; " between them, or ""
 * when the model has none of these. Returns out. */
const char *gguf_model_features(const struct GgufModel *m, char *out, size_t n);

/* Parameters: the elements of every tensor in the file for a
 * mixture-of-experts model, whose config alone does not give them; the
 * dense count of the config for the others. */
uint64_t gguf_model_param_count(const struct GgufModel *m);

/* Tests only: computes the model without its special feature (qwen3moe: the
 * chosen experts' weights not renormalised; smollm3: RoPE on every layer;
 * llama with rope_freqs: the plain frequencies), to show that the reference
 * logits catch its absence. No effect on other models. */
void gguf_model_disable_feature(struct GgufModel *m);

#endif
