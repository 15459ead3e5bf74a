/* gguf_model.h - internal: the GGUF model's typed tensors and run state,
 * shared by transformer_gguf.c (loading) and transformer_gguf_forward.c. */
#ifndef LLM_GGUF_MODEL_H
#define LLM_GGUF_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "llm/ggml_types.h"
#include "llm/gguf.h"
#include "llm/transformer.h"

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
    GTensor bq, bk, bv;     /* qwen2 biases (F32) */
    GTensor q_norm, k_norm; /* qwen3 per-head RMSNorm weights (F32, head_dim) */
} GLayer;

typedef struct GgufModel {
    GgufFile file;
    TransformerConfig config;
    int arch;
    int n_rot, q_dim;
    int rope_neox;           /* 1: rotate (i, i + n_rot/2); 0: (2i, 2i+1) */
    float rope_pos_scale;    /* linear rope scaling */
    const float *rope_freqs; /* optional divisors of each frequency (n_rot/2) */
    int reference;           /* dequantise + fp32 matmuls */
    float *ref_weights;      /* reference path: every matrix dequantised once (NULL: per row) */
    GLayer *saved_layers;    /* the typed tensors while ref_weights is in use */
    GTensor saved_output;
    GTensor tok_embd, output, output_norm;
    GLayer *layers;
    int prefill_batch; /* positions per prefill batch; 0: the cache's choice */
    /* run state: GGUF_PREFILL_MAX rows of each per-position array (the
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
    float *rope_cs;   /* cos/sin pairs of each position */
    float *rope_freq; /* each rotated pair's angle per position (n_rot / 2) */
    float *row;       /* one dequantised weight row */
    BlockQ8A *act_a;
    BlockQ8K *act_k;
    int wide;                       /* floats per row of x, xb, xb2: max(dim, hidden, q_dim) */
    int act_a_blocks, act_k_blocks; /* blocks per row of act_a / act_k */
    void *state_block;
    size_t state_bytes;
} GgufModel;

/* Byte offset of a key/value head's row at a position in either cache. */
static inline size_t kv_offset(const GgufModel *m, int layer, int kv_head, int pos) {
    const TransformerConfig *c = &m->config;
    return (((size_t)layer * c->n_kv_heads + (size_t)kv_head) * c->seq_len + (size_t)pos) * m->kv_head_bytes;
}

#endif
