/* model_estimate.h - how much heap a model file's run state needs, without
 * loading it (for "does it fit" listings). */
#ifndef LLM_MODEL_ESTIMATE_H
#define LLM_MODEL_ESTIMATE_H

#include <stddef.h>
#include <stdint.h>

/* Bytes of run state (activations, attention scores, logits, KV cache, RoPE
 * tables / quantised-activation buffers) that transformer_load would
 * allocate for this llama2.c checkpoint or GGUF file held in memory: exactly
 * what transformer_state_bytes() reports after a successful load (GGUF: with
 * the default f16 KV cache) (int8
 * copies made by transformer_quantize, the GGUF index and the tokenizer are
 * not included). Reads only the headers, allocates nothing. Returns -1 when
 * the file is neither, or its header is malformed or names an unsupported
 * architecture. */
int64_t transformer_state_bytes_estimate(const void *file, size_t size);
/* The same with a GGUF model's KV cache of kv_type (llm/kv_cache.h; the
 * function above assumes the default, f16; a model that refuses q8_0, its
 * head size not a multiple of 32, keeps f16); llama2.c checkpoints keep fp32. */
int64_t transformer_state_bytes_estimate_kv(const void *file, size_t size, uint32_t kv_type);

#endif
