/* transformer_gguf.h - llama / qwen2 / qwen3 / gemma3 models from GGUF files: typed
 * tensors used in place (any type of ggml_types.h), hyper-parameters from
 * the {arch}.* metadata, and the forward pass. transformer_create calls in
 * here when the buffer starts with the GGUF magic; the rest of the program
 * keeps using transformer_forward / transformer_prefill. */
#ifndef LLM_TRANSFORMER_GGUF_H
#define LLM_TRANSFORMER_GGUF_H

#include <stddef.h>
#include <stdint.h>

#include "llm/tensor/ggml_types.h"
#include "llm/model/transformer.h"

typedef enum {
    GGUF_ARCH_LLAMA = 1,
    GGUF_ARCH_QWEN2 = 2,
    GGUF_ARCH_QWEN3 = 3,
    GGUF_ARCH_GEMMA3 = 4,
    GGUF_ARCH_SMOLLM3 = 5,
    GGUF_ARCH_QWEN3MOE = 6,
    GGUF_ARCH_COUNT
} GgufArch;

/* The architecture general.architecture names (len bytes, not terminated),
 * or 0 when it is none we run. */
GgufArch gguf_arch_from_name(const char *name, size_t len);
/* Its name ("?" for 0). */
const char *gguf_arch_name(GgufArch arch);

/* Fills t (config, t->gguf, t->state.logits), the run state sized for ctx
 * positions (0: the trained context; see transformer_create_ctx). pieces: how
 * to find the other pieces of a split model (llm/format/gguf_split.h), or NULL.
 * Returns 0, or -1 with a one-line reason (nothing stays allocated then). */
int gguf_model_create(Transformer *t, const void *data, size_t size, const struct GgufPieces *pieces, int ctx,
                      char *err, size_t err_size);
void gguf_model_destroy(Transformer *t);
/* One position; NULL when out of range. compute_logits 0 skips the classifier. */
float *gguf_model_forward(Transformer *t, int token, int pos, int compute_logits);
/* Positions start_pos..start_pos+n-1 (checked by the caller), a batch at a
 * time: each weight block is decoded once for the whole batch. The logits
 * of the last position, the KV cache and everything after are
 * bit-identical to n calls of gguf_model_forward. */
void gguf_model_prefill(Transformer *t, const int *tokens, int n, int start_pos);
/* Positions per batch: chosen for the cache (gguf_model_prefill_batch),
 * from GGUF_PREFILL_BATCH to the rows the run state holds
 * (gguf_prefill_rows); gguf_model_set_prefill_batch fixes it (1..those
 * rows, 0: the cache's choice again), for tests and measurements. A sliding-window
 * model's batches take at most GGUF_PREFILL_WINDOW_MAX positions, which
 * its local layers' KV ring is sized for (llm/model/sliding_window.h). */
#define GGUF_PREFILL_BATCH 16
#define GGUF_PREFILL_MAX 128
#define GGUF_PREFILL_QUANT_MAX 64
#define GGUF_PREFILL_WINDOW_MAX 64
/* The rows of the run state (its longest batch) for a model whose
 * attn_q.weight is of this type: GGUF_PREFILL_MAX for fp32 weights, whose
 * prefill gains from the longest batches, GGUF_PREFILL_QUANT_MAX otherwise
 * (llm/model/transformer_gguf_forward.c), so that quantised models do not carry
 * rows they never use (12.5 MiB on the Llama-3.2-1B shape). */
static inline int gguf_prefill_rows(uint32_t weight_type) {
    return weight_type == GGML_TYPE_F32 ? GGUF_PREFILL_MAX : GGUF_PREFILL_QUANT_MAX;
}
int gguf_model_prefill_batch(const Transformer *t);
void gguf_model_set_prefill_batch(Transformer *t, int batch);
/* Heap bytes of the run state for these sizes with a KV cache of kv_type
 * (what the load allocates; model_estimate.c uses it before loading). 0
 * when it would not fit. window, pattern: a sliding-window model's (gemma3;
 * llm/model/sliding_window.h), 0 for the others. */
uint64_t gguf_state_bytes(uint64_t dim, uint64_t hidden, uint64_t q_dim, uint64_t kv_dim, uint64_t heads,
                          uint64_t layers, uint64_t seq_len, uint64_t vocab, uint64_t n_rot, uint32_t kv_type,
                          int window, int pattern, int prefill_rows);
/* Bytes of the KV cache alone (keys and values) with elements of kv_type;
 * 0 when kv_dim does not fill whole blocks of it. */
uint64_t gguf_kv_cache_bytes(uint64_t layers, uint64_t seq_len, uint64_t kv_dim, uint32_t kv_type);
/* The same when the local layers of a sliding-window model keep only a ring
 * of positions (window 0: gguf_kv_cache_bytes). */
uint64_t gguf_kv_cache_bytes_swa(uint64_t layers, uint64_t seq_len, uint64_t kv_dim, uint32_t kv_type,
                                 int window, int pattern);
/* Bytes of the loaded model's KV cache (a llama2.c checkpoint's: fp32, every position). */
uint64_t gguf_model_kv_bytes(const Transformer *t);
/* The KV cache's element type (llm/model/kv_cache.h: f16 after loading). Setting
 * it re-creates the cache, so the positions run so far are forgotten (a
 * conversation must start over). 0, or -1 with a one-line reason and the
 * type unchanged: not a GGUF model (llama2.c checkpoints keep fp32), q8_0
 * with a head size that is not a multiple of 32, out of memory. */
int gguf_model_set_kv_type(Transformer *t, uint32_t kv_type, char *err, size_t err_size);
/* 0 when gguf_model_set_kv_type would take this type (it can then fail
 * only for memory), else -1 with its reason; changes nothing. */
int gguf_model_kv_type_check(const Transformer *t, uint32_t kv_type, char *err, size_t err_size);
uint32_t gguf_model_kv_type(const Transformer *t); /* GGML_TYPE_F32 for a llama2.c checkpoint */
/* 1: every matmul dequantises its weight rows to fp32 and multiplies by fp32
 * activations (the reference path, matches a dequantised-F32 model). 0
 * (default): activations quantised to int8 blocks, integer dot products. */
void gguf_model_set_reference(Transformer *t, int on);
/* "llama" / "qwen2" / "qwen3" / "gemma3". */
const char *gguf_model_arch_name(const Transformer *t);
/* One line of the architecture's particulars (gemma3: head_dim, sliding
 * window, pattern, RoPE bases, local KV cache); "" when there are none. */
void gguf_model_arch_details(const Transformer *t, char *out, size_t n);
/* The files the model is made of (1, or a split model's pieces) and their
 * bytes together; 1 and 0 for a llama2.c checkpoint. */
uint32_t gguf_model_pieces(const Transformer *t, uint64_t *bytes);
/* Type of most matrices ("Q4_K"), for reports. */
const char *gguf_model_weight_type(const Transformer *t);

#endif
