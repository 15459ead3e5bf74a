/* gguf_runtime.h - the GGUF runtime (one of model.h's two): llama / qwen2 /
 * qwen3 / gemma3 / smollm3 / qwen3moe models from GGUF files, typed tensors
 * used in place (any type of ggml_types.h), hyper-parameters from the
 * {arch}.* metadata, and the forward pass. model_create calls in here when
 * the buffer starts with the GGUF magic; callers outside llm/model use
 * model.h, tests and benches of this runtime may use it directly. */
#ifndef LLM_GGUF_RUNTIME_H
#define LLM_GGUF_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#include "llm/tensor/ggml_types.h"
#include "llm/model/model_config.h"

struct GgufModel;
struct GgufPieces;

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

/* The model of a GGUF file held in memory (used in place), its run state
 * sized for ctx positions (0: the trained context; see model_context).
 * pieces: how to find the other pieces of a split model
 * (llm/format/gguf_split.h), or NULL. Returns the model, or NULL with a
 * one-line reason (nothing stays allocated then). */
struct GgufModel *gguf_model_create(const void *data, size_t size, const struct GgufPieces *pieces, int ctx,
                                    char *err, size_t err_size);
void gguf_model_destroy(struct GgufModel *m);
const ModelConfig *gguf_model_config(const struct GgufModel *m);
/* The logits of the last position run (vocab_size floats, owned by m). */
float *gguf_model_logits(const struct GgufModel *m);
/* One position; NULL when out of range. compute_logits 0 skips the classifier. */
float *gguf_model_forward(struct GgufModel *m, int token, int pos, int compute_logits);
/* Positions start_pos..start_pos+n-1 (checked by the caller), a batch at a
 * time: each weight block is decoded once for the whole batch. The logits
 * of the last position, the KV cache and everything after are
 * bit-identical to n calls of gguf_model_forward. */
void gguf_model_prefill(struct GgufModel *m, const int *tokens, int n, int start_pos);
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
 * (llm/model/gguf_forward.c), so that quantised models do not carry
 * rows they never use (12.5 MiB on the Llama-3.2-1B shape). */
static inline int gguf_prefill_rows(uint32_t weight_type) {
    return weight_type == GGML_TYPE_F32 ? GGUF_PREFILL_MAX : GGUF_PREFILL_QUANT_MAX;
}
int gguf_model_prefill_batch(const struct GgufModel *m);
void gguf_model_set_prefill_batch(struct GgufModel *m, int batch);
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
/* Bytes of the loaded model's KV cache. */
uint64_t gguf_model_kv_bytes(const struct GgufModel *m);
/* Heap the run state and KV cache use. */
size_t gguf_model_state_bytes(const struct GgufModel *m);
/* The KV cache's element type (llm/model/kv_cache.h: f16 after loading). Setting
 * it re-creates the cache, so the positions run so far are forgotten (a
 * conversation must start over). 0, or -1 with a one-line reason and the
 * type unchanged: not a GGUF model (llama2.c checkpoints keep fp32), q8_0
 * with a head size that is not a multiple of 32, out of memory. */
int gguf_model_set_kv_type(struct GgufModel *m, uint32_t kv_type, char *err, size_t err_size);
/* 0 when gguf_model_set_kv_type would take this type (it can then fail
 * only for memory), else -1 with its reason; changes nothing. */
int gguf_model_kv_type_check(const struct GgufModel *m, uint32_t kv_type, char *err, size_t err_size);
uint32_t gguf_model_kv_type(const struct GgufModel *m);
/* 1: every matmul dequantises its weight rows to fp32 and multiplies by fp32
 * activations (the reference path, matches a dequantised-F32 model). 0
 * (default): activations quantised to int8 blocks, integer dot products. */
void gguf_model_set_reference(struct GgufModel *m, int on);
/* "llama" / "qwen2" / "qwen3" / "gemma3". */
const char *gguf_model_arch_name(const struct GgufModel *m);
/* One line of the architecture's particulars (gemma3: head_dim, sliding
 * window, pattern, RoPE bases, local KV cache); "" when there are none. */
void gguf_model_arch_details(const struct GgufModel *m, char *out, size_t n);
/* The files the model is made of (1, or a split model's pieces) and their
 * bytes together. */
uint32_t gguf_model_pieces(const struct GgufModel *m, uint64_t *bytes);
/* Type of most matrices ("Q4_K"), for reports. */
const char *gguf_model_weight_type(const struct GgufModel *m);
/* One line for reports: "GGUF, arch llama, tensors Q4_K (mostly)" (", split in N pieces"). */
void gguf_model_describe(const struct GgufModel *m, char *out, size_t n);

/* The GGUF runtime behind a model (llm/model/model.h), NULL when it runs on
 * another: for this runtime's tests and benches, which look inside. */
struct Model;
struct GgufModel *gguf_model_of(const struct Model *m);

#endif
