/* transformer.h - llama2.c-compatible transformer: checkpoint loading (legacy
 * v0, ak42 v1 fp32, ak42 v2 int8 Q8_0) and the single-token forward pass.
 * Weights are used in place (pointers into the caller's buffer); the run
 * state, KV cache and RoPE table are allocated once at load time, so
 * transformer_forward never allocates. */
#ifndef LLM_TRANSFORMER_H
#define LLM_TRANSFORMER_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    int dim, hidden_dim, n_layers, n_heads, n_kv_heads, vocab_size, seq_len;
    int head_size, kv_dim; /* derived */
    int shared_classifier;
    int version;    /* 0 legacy, 1 ak42 fp32, 2 ak42 int8 */
    int group_size; /* version 2 */
} TransformerConfig;

/* An int8 tensor with one fp32 scale per group_size values of the flattened
 * tensor: value[i] = q[i] * s[i / group_size]. Per-layer tensors are stored
 * as layer 0's values and scales, then layer 1's, ...: layer l's q and s lie
 * l * layer_stride bytes after layer 0's. */
typedef struct {
    const int8_t *q;
    const float *s;
    size_t layer_stride;
} QuantTensor;

/* Per-layer tensors are stored back to back for all layers; fp32 pointers are
 * used by versions 0/1, the *_q tensors by version 2. */
typedef struct {
    const float *token_embedding;   /* (vocab, dim) */
    const float *rms_att;           /* (layers, dim) */
    const float *rms_ffn;           /* (layers, dim) */
    const float *rms_final;         /* (dim) */
    const float *wq, *wk, *wv, *wo; /* (layers, dim|kv_dim, dim) */
    const float *w1, *w2, *w3;      /* (layers, hidden, dim) / (layers, dim, hidden) */
    const float *wcls;              /* (vocab, dim) */
    QuantTensor token_embedding_q, wq_q, wk_q, wv_q, wo_q, w1_q, w2_q, w3_q, wcls_q;
} TransformerWeights;

typedef struct {
    float *x, *xb, *xb2;            /* (dim) activations */
    float *hb, *hb2;                /* (hidden_dim) */
    float *q;                       /* (dim) */
    float *att;                     /* (n_heads, seq_len) */
    float *logits;                  /* (vocab) */
    float *key_cache, *value_cache; /* (layers, seq_len, kv_dim) */
    float *rope_cos, *rope_sin;     /* (seq_len, head_size/2) */
    void *block;                    /* the single allocation all of the above live in */
    size_t bytes;
} TransformerState;

typedef struct Transformer {
    TransformerConfig config;
    TransformerWeights weights;
    TransformerState state;
} Transformer;

/* Parses a llama2.c checkpoint held in memory (used in place, never copied; the
 * buffer must outlive the Transformer) and allocates the run state. Returns 0,
 * or -1 with a one-line reason in err. On failure nothing stays allocated. */
int transformer_load(Transformer *t, const void *data, size_t size, char *err, size_t err_size);
void transformer_free(Transformer *t);
/* Runs one position; returns the logits (vocab_size floats, owned by t). 0 <= pos < seq_len.
 * Out-of-range token or pos returns NULL. */
float *transformer_forward(Transformer *t, int token, int pos);
uint64_t transformer_param_count(const Transformer *t);
size_t transformer_state_bytes(const Transformer *t); /* heap the run state uses (KV cache included) */

#endif
