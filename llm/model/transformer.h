/* transformer.h - llama2.c-compatible transformer: checkpoint loading (legacy
 * v0, ak42 v1 fp32, ak42 v2 int8 Q8_0), optional int8 quantisation at load,
 * the single-token forward pass and batched prefill. Weights are used in
 * place (pointers into the caller's buffer); the run state, KV cache, RoPE
 * table and batch buffers are allocated once at load time, so
 * transformer_forward and transformer_prefill never allocate. */
#ifndef LLM_TRANSFORMER_H
#define LLM_TRANSFORMER_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    int dim, hidden_dim, n_layers, n_heads, n_kv_heads, vocab_size, seq_len;
    int head_size, kv_dim; /* derived */
    int shared_classifier;
    int version;    /* 0 legacy, 1 ak42 fp32, 2 ak42 int8, 3 GGUF */
    int group_size; /* version 2 */
    /* GGUF models (version 3); llama2.c files get 0 / 10000 / 1e-5. */
    int arch;         /* GgufArch (transformer_gguf.h), 0 for llama2.c files */
    float rope_theta; /* RoPE base */
    float norm_eps;   /* RMSNorm epsilon */
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

/* Positions transformer_prefill runs through each layer together. */
#define TRANSFORMER_MAX_BATCH 16

/* How the matmuls run. */
typedef enum {
    MATMUL_FP32,        /* fp32 weights and activations (v0/v1 files) */
    MATMUL_Q8_FP32_ACT, /* int8 weights whose flattened groups straddle rows
                           (v2 with dim or hidden not a multiple of the group,
                           e.g. stories260K_q80: hidden 172, GS 32): fp32
                           activations, per-run scales */
    MATMUL_Q8_INT,      /* int8 weights in row-aligned groups (v2 files that
                           allow it, or transformer_quantize): activations
                           quantised per group too, integer dot products */
} MatmulPath;

/* The activation arrays hold TRANSFORMER_MAX_BATCH rows (one per position of
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
} TransformerState;

typedef struct Transformer {
    TransformerConfig config;
    TransformerWeights weights;
    TransformerState state;
    MatmulPath matmul_path;
    int quant_group_size; /* group size of the int8 weights (MATMUL_Q8_*) */
    void *quant_block;    /* int8 copies made by transformer_quantize (NULL otherwise) */
    size_t quant_bytes;
    struct GgufModel *gguf; /* GGUF model (version 3): its own weights and run state */
} Transformer;

/* Bytes of a llama2.c checkpoint's run state (KV cache included) for this
 * config: what state_alloc allocates; 0 when too large. */
uint64_t transformer_checkpoint_state_bytes(const TransformerConfig *c);

/* Parses a llama2.c checkpoint or a GGUF file (recognised by its magic) held in memory (used in place, never
 * copied; the buffer must outlive the Transformer) and allocates the run state. Returns 0, or -1 with a
 * one-line reason in err. On failure nothing stays allocated. */
int transformer_create(Transformer *t, const void *data, size_t size, char *err, size_t err_size);
/* The same with the run state sized for ctx positions (config.seq_len):
 * 0 takes the model's trained context (GGUF <arch>.context_length,
 * llama2.c seq_len), uncapped; above it, or negative, is refused. */
int transformer_create_ctx(Transformer *t, const void *data, size_t size, int ctx, char *err,
                           size_t err_size);
/* The context a load with `requested` gets for a model trained for
 * `trained` positions, or -1 with the reason in err. */
int transformer_context(int trained, int requested, char *err, size_t err_size);
/* The same, where a GGUF file may be the first piece of a split model whose
 * other pieces are found through pieces (llm/format/gguf_split.h; NULL: none). */
struct GgufPieces;
int transformer_create_pieces(Transformer *t, const void *data, size_t size, const struct GgufPieces *pieces,
                              int ctx, char *err, size_t err_size);
void transformer_destroy(Transformer *t);
/* Runs one position; returns the logits (vocab_size floats, owned by t). 0 <= pos < seq_len.
 * Out-of-range token or pos returns NULL. */
float *transformer_forward(Transformer *t, int token, int pos);
/* Runs n prompt positions start_pos .. start_pos + n - 1 (tokens forced),
 * TRANSFORMER_MAX_BATCH at a time through each layer as a matrix: fills the
 * KV cache exactly as n transformer_forward calls would (same arithmetic per
 * position) and leaves the LAST position's logits in t->state.logits.
 * Returns 0, or -1 on bad arguments (nothing is run then). */
int transformer_prefill(Transformer *t, const int *tokens, int n, int start_pos);
/* Makes int8 copies (one fp32 scale per group_size values along each row) of
 * every matrix, classifier included, and switches the matmuls to the integer
 * path; the fp32 weights stay untouched (the token embedding lookup keeps
 * using them). group_size must be a multiple of 16 up to 1024 dividing dim
 * and hidden_dim. Returns 0, or -1 with a one-line reason in err (the model
 * then stays as it was). */
int transformer_quantize(Transformer *t, int group_size, char *err, size_t err_size);
/* 1 when the matmuls use int8 weights (version 2 file or transformer_quantize). */
int transformer_is_quantized(const Transformer *t);
/* "fp32", "int8 weights, fp32 activations" or "int8 x int8" (for reports). */
const char *transformer_matmul_name(const Transformer *t);
uint64_t transformer_param_count(const Transformer *t);
size_t transformer_state_bytes(const Transformer *t); /* heap the run state uses (KV cache included) */

#endif
