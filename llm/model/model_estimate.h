/* model_estimate.h - how much heap a model file's run state needs for a
 * given context, without loading it: "does it fit" listings, and the
 * memory check (and context choice) before every load. */
#ifndef LLM_MODEL_ESTIMATE_H
#define LLM_MODEL_ESTIMATE_H

#include <stddef.h>
#include <stdint.h>

#include "llm/model/model.h"

/* What the run state's size depends on, read from a file's headers. */
typedef struct {
    ModelRuntime runtime; /* whose measure applies (llm/model/model.h) */
    int trained_ctx;      /* GGUF <arch>.context_length (2048 when absent), llama2.c seq_len */
    uint64_t dim, hidden, layers, heads, kv_dim, head_size, q_dim, vocab, n_rot;
    /* GGUF: the KV cache type the sizes below assume (llm/model/kv_cache.h; model_shape_read
     * sets the default, f16; a caller may choose another). llama2.c: always fp32. */
    uint32_t kv_type;
    /* GGUF: blk.0.attn_q.weight's type, which sets the run state's rows (gguf_prefill_rows) */
    uint32_t weight_type;
    /* gemma3: local layers keep a ring of the window's positions (llm/model/sliding_window.h); 0 otherwise */
    int swa_window, swa_pattern;
} ModelShape;

/* Reads only the headers of a llama2.c checkpoint or GGUF file held in
 * memory, allocates nothing. 0, or -1 when the file is neither, or its
 * header is malformed or names an unsupported architecture. */
int model_shape_read(ModelShape *shape, const void *file, size_t size);
/* Bytes of run state (activations, attention scores, logits, KV cache, RoPE
 * tables / quantised-activation buffers) that model_create allocates
 * for ctx positions: exactly model_state_bytes() after that load, with the
 * KV cache of shape->kv_type (int8
 * copies made by model_quantize, the GGUF index and the tokenizer are
 * not included). 0 when it would overflow. */
uint64_t model_shape_state_bytes(const ModelShape *shape, int ctx);
/* Of which the KV cache (keys and values of every layer). */
uint64_t model_shape_kv_bytes(const ModelShape *shape, int ctx);
/* The largest context in 1..wanted whose run state fits in budget bytes;
 * 0 when not even one position does. */
int model_ctx_that_fits(const ModelShape *shape, int wanted, uint64_t budget);

/* model_state_bytes at the trained context; -1 when model_shape_read fails. */
int64_t model_state_bytes_estimate(const void *file, size_t size);
/* The same with a GGUF model's KV cache of kv_type (llm/model/kv_cache.h; the
 * function above assumes the default, f16; a model that refuses q8_0, its
 * head size not a multiple of 32, keeps f16); llama2.c checkpoints keep fp32. */
int64_t model_state_bytes_estimate_kv(const void *file, size_t size, uint32_t kv_type);

#endif
