/* llama2c.h - the llama2.c runtime (one of model.h's two): checkpoint
 * loading (legacy v0, ak42 v1 fp32, ak42 v2 int8 Q8_0), optional int8
 * quantisation at load, the single-token forward pass and batched prefill,
 * after llama2.c's run.c. Weights are used in place (pointers into the
 * caller's buffer); the run state, KV cache, RoPE table and batch buffers are
 * allocated once at load time, so llama2c_forward and llama2c_prefill never
 * allocate. Callers outside llm/model use model.h; tests of this runtime's
 * arithmetic may use it directly. */
#ifndef LLM_LLAMA2C_H
#define LLM_LLAMA2C_H

#include <stddef.h>
#include <stdint.h>

#include "llm/model/model_config.h"

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
} Llama2cWeights;

/* Positions llama2c_prefill runs through each layer together. */
#define LLAMA2C_MAX_BATCH 16

/* How the matmuls run. */
typedef enum {
    MATMUL_FP32,        /* fp32 weights and activations (v0/v1 files) */
    MATMUL_Q8_FP32_ACT, /* int8 weights whose flattened groups straddle rows
                           (v2 with dim or hidden not a multiple of the group,
                           e.g. stories260K_q80: hidden 172, GS 32): fp32
                           activations, per-run scales */
    MATMUL_Q8_INT,      /* int8 weights in row-aligned groups (v2 files that
                           allow it, or llama2c_quantize): activations
                           quantised per group too, integer dot products */
} MatmulPath;

/* The activation arrays hold LLAMA2C_MAX_BATCH rows (one per position of
 * a prefill chunk); a single forward uses row 0. */
typedef struct {
    float *x, *xb, *xb2;            /* (batch, dim) activations */
    float *hb, *hb2;                /* (batch, hidden_dim) */
    float *q;                       /* (batch, dim) */
    float *att;                     /* (n_heads, seq_len) */
    float *logits;                  /* (vocab) */
    float *key_cache, *value_cache; /* (layers, seq_len, kv_dim) */
    float *rope_cos, *rope_sin;     /* (seq_len, head_size/2) */
    int16_t *xq;                    /* (batch, max(dim, hidden)) quantised matmul input */
    float *xq_scales;               /* its group scales */
    void *block;                    /* the single allocation all of the above live in */
    size_t bytes;
} Llama2cState;

typedef struct Llama2cModel {
    ModelConfig config;
    Llama2cWeights weights;
    Llama2cState state;
    MatmulPath matmul_path;
    int quant_group_size; /* group size of the int8 weights (MATMUL_Q8_*) */
    void *quant_block;    /* int8 copies made by llama2c_quantize (NULL otherwise) */
    size_t quant_bytes;
} Llama2cModel;

/* Bytes of a llama2.c checkpoint's run state (KV cache included) for this
 * config: what the load allocates and what model_estimate.c reports; 0 when
 * too large. */
uint64_t llama2c_state_bytes(const ModelConfig *c);

/* Parses a llama2.c checkpoint held in memory (used in place, never copied;
 * the buffer must outlive the model) and allocates the run state for ctx
 * positions (model_context). Returns 0, or -1 with a one-line reason in err.
 * On failure nothing stays allocated. */
int llama2c_create(Llama2cModel *t, const void *data, size_t size, int ctx, char *err, size_t err_size);
void llama2c_destroy(Llama2cModel *t);
/* Runs one position; returns the logits (vocab_size floats, owned by t). 0 <= pos < seq_len.
 * Out-of-range token or pos returns NULL. */
float *llama2c_forward(Llama2cModel *t, int token, int pos);
/* Runs n prompt positions start_pos .. start_pos + n - 1 (tokens forced),
 * LLAMA2C_MAX_BATCH at a time through each layer as a matrix: fills the
 * KV cache exactly as n llama2c_forward calls would (same arithmetic per
 * position) and leaves the LAST position's logits in t->state.logits.
 * Returns 0, or -1 on bad arguments (nothing is run then). */
int llama2c_prefill(Llama2cModel *t, const int *tokens, int n, int start_pos);
/* Makes int8 copies (one fp32 scale per group_size values along each row) of
 * every matrix, classifier included, and switches the matmuls to the integer
 * path; the fp32 weights stay untouched (the token embedding lookup keeps
 * using them). group_size must be a multiple of 16 up to 1024 dividing dim
 * and hidden_dim. Returns 0, or -1 with a one-line reason in err (the model
 * then stays as it was). */
int llama2c_quantize(Llama2cModel *t, int group_size, char *err, size_t err_size);
/* 1 when the matmuls use int8 weights (version 2 file or llama2c_quantize). */
int llama2c_is_quantized(const Llama2cModel *t);
/* "fp32", "int8 weights, fp32 activations" or "int8 x int8" (for reports). */
const char *llama2c_matmul_name(const Llama2cModel *t);
uint64_t llama2c_param_count(const Llama2cModel *t);
/* One line for reports: "llama2.c v1 fp32" (", group size 32" for v2 files). */
void llama2c_describe(const Llama2cModel *t, char *out, size_t n);

/* The llama2.c runtime behind a model (llm/model/model.h), NULL when it runs
 * on another: for this runtime's tests, which look inside. */
struct Model;
Llama2cModel *llama2c_model_of(const struct Model *m);

#endif
