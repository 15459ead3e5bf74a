/* gguf_model.h - internal: the GGUF model's typed tensors and run state,
 * shared by gguf_load.c (loading) and gguf_forward.c. */
#ifndef LLM_GGUF_MODEL_H
#define LLM_GGUF_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "llm/tensor/ggml_types.h"
#include "llm/format/gguf.h"
#include "llm/model/model_config.h"

/* A matrix (rows x cols, row-major, rows of row_bytes) or vector of any ggml
 * type, used in place. data NULL: absent optional tensor. */
typedef struct {
    uint32_t type;
    const void *data;
    int rows, cols;
    size_t row_bytes;
} GTensor;

typedef struct {
    GTensor attn_norm, ffn_norm; /* F32 (dim) */
    GTensor wq, wk, wv, wo, w1, w2, w3;
    GTensor bq, bk, bv;                    /* qwen2 biases (F32) */
    GTensor q_norm, k_norm;                /* qwen3 per-head RMSNorm weights (F32, head_dim) */
    GTensor post_attn_norm, post_ffn_norm; /* gemma3: on each sublayer's output (F32, dim) */
    /* qwen3moe (llm/model/moe.c): the router (experts x dim) and the experts'
     * matrices, expert e's rows e * rows .. (e + 1) * rows - 1 of the 3-D tensor */
    GTensor router, gate_exps, up_exps, down_exps;
    /* KV cache: this layer's rows start at row kv_row0 (rows of
     * kv_head_bytes), kv_slots per key/value head; a sliding-window (local)
     * layer may keep positions modulo kv_ring (llm/model/sliding_window.h). */
    size_t kv_row0;
    int kv_slots, kv_ring, local;
} GLayer;

typedef struct GgufModel {
    GgufFile file;
    ModelConfig config;
    int arch;
    int n_rot, q_dim;
    int rope_neox;           /* 1: rotate (i, i + n_rot/2); 0: (2i, 2i+1) */
    float rope_pos_scale;    /* linear rope scaling */
    const float *rope_freqs; /* optional divisors of each frequency (n_rot/2) */
    /* smollm3: layers l with (l + 1) % nope_period == 0 skip RoPE (0: none) */
    int nope_period;
    /* qwen3moe (0: a dense FFN); hidden_dim is n_experts_used * expert_ffn */
    int n_experts, n_experts_used, expert_ffn;
    /* tests: the architecture's special feature disabled */
    int feature_off;
    int reference; /* dequantise + fp32 matmuls */
    /* gemma3 (llm/model/arch_gemma3.c); other architectures: 0, 0, 1, 0, 0 */
    int swa_window, swa_pattern; /* local layers see swa_window keys (sliding_window.h) */
    float rope_base_local;       /* RoPE base of the local layers */
    float embed_scale;           /* input embedding multiplier (gemma3: sqrt(dim)) */
    float softcap;               /* final logits = softcap * tanh(logits / softcap) */
    int ffn_gelu;                /* GeGLU (tanh GELU) instead of SwiGLU */
    float attn_scale;            /* q.k multiplier (1/sqrt(head_size) but for Gemma 3 27B) */
    float *ref_weights;          /* reference path: every matrix dequantised once (NULL: per row) */
    GLayer *saved_layers;        /* the typed tensors while ref_weights is in use */
    GTensor saved_output;
    GTensor tok_embd, output, output_norm;
    GLayer *layers;
    int prefill_batch; /* positions per prefill batch; 0: the cache's choice */
    int prefill_rows;  /* the run state's rows, the longest batch (gguf_prefill_rows) */
    /* run state: prefill_rows rows of each per-position array (the
     * single-position forward uses row 0), strides in the *_stride fields */
    float *x, *xb, *xb2, *hb, *hb2, *q, *k, *v, *att, *logits;
    /* (layers, kv heads, seq_len, head_size) values of kv_type (kv_cache.h):
     * each key/value head's positions one contiguous run of rows of
     * kv_head_bytes (kv_offset), so attention streams them; an allocation
     * of its own, re-created by a type change */
    uint8_t *key_cache, *value_cache;
    uint32_t kv_type;
    size_t kv_head_bytes;
    void *kv_block;
    size_t kv_bytes;
    float *rope_cs;                         /* cos/sin pairs of each position */
    float *rope_freq;                       /* each rotated pair's angle per position (n_rot / 2) */
    float *rope_cs_local, *rope_freq_local; /* the same for local layers (base rope_base_local) */
    float *row;                             /* one dequantised weight row */
    BlockQ8A *act_a;
    BlockQ8K *act_k;
    int wide;                       /* floats per row of x, xb, xb2: max(dim, hidden, q_dim) */
    int act_a_blocks, act_k_blocks; /* blocks per row of act_a / act_k */
    void *state_block;
    size_t state_bytes;
} GgufModel;

/* Byte offset of a key/value head's row at a cache slot (the position,
 * unless the layer keeps a ring) in either cache. */
static inline size_t kv_offset(const GgufModel *m, int layer, int kv_head, int slot) {
    const GLayer *L = &m->layers[layer];
    return (L->kv_row0 + (size_t)kv_head * L->kv_slots + (size_t)slot) * m->kv_head_bytes;
}

/* smollm3: RoPE is skipped on layers l with (l + 1) % nope_period == 0. */
static inline int gguf_layer_has_rope(const GgufModel *m, int layer) {
    return !m->nope_period || (layer + 1) % m->nope_period != 0 || m->feature_off;
}

/* Fills m->rope_freq from the base, n_rot and m->rope_freqs. */
void gguf_rope_frequencies(GgufModel *m);

/* gguf_state.c: the run state and a KV cache of the default type for the
 * model's config (0, or -1 with the reason); both freed by destroy. */
int gguf_run_state_create(GgufModel *m, char *err, size_t n);
void gguf_run_state_destroy(GgufModel *m);

#endif
