/* model_config.h - a model's shape, the same fields for either runtime
 * (llama2c.h, gguf_runtime.h): what callers read through Model.config. */
#ifndef LLM_MODEL_CONFIG_H
#define LLM_MODEL_CONFIG_H

#include <stdint.h>

typedef struct {
    int dim, hidden_dim, n_layers, n_heads, n_kv_heads, vocab_size, seq_len;
    int head_size, kv_dim; /* derived */
    int shared_classifier;
    int version;    /* 0 legacy, 1 ak42 fp32, 2 ak42 int8, 3 GGUF */
    int group_size; /* version 2 */
    /* GGUF models (version 3); llama2.c files get 0 / 10000 / 1e-5. */
    int arch;         /* GgufArch (gguf_runtime.h), 0 for llama2.c files */
    float rope_theta; /* RoPE base */
    float norm_eps;   /* RMSNorm epsilon */
} ModelConfig;

/* Parameters of a dense model of this shape (embedding, layers, final norm,
 * a separate classifier unless shared). */
static inline uint64_t model_config_params(const ModelConfig *c) {
    uint64_t D = c->dim, H = c->hidden_dim, L = c->n_layers, V = c->vocab_size, KV = c->kv_dim;
    uint64_t per_layer = 2 * D + 2 * D * D + 2 * D * KV + 3 * D * H;
    return V * D + L * per_layer + D + (c->shared_classifier ? 0 : V * D);
}

#endif
