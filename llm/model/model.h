/* model.h - the one model interface every caller uses: a file's bytes in (a
 * llama2.c checkpoint or a GGUF model, told apart by magic), positions run,
 * logits out. Two runtimes sit behind it, side by side: llama2.c's
 * (llama2c.h) and GGUF's (gguf_runtime.h); model.c alone picks between them.
 * Weights stay in the caller's buffer, which must outlive the model; the run
 * state and KV cache are allocated at create, so forward and prefill never
 * allocate. */
#ifndef LLM_MODEL_H
#define LLM_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "llm/model/model_config.h"

struct GgufPieces;
struct Llama2cModel;
struct GgufModel;

/* Which runtime runs the model: model.c's switch reads it, nothing else. */
typedef enum { MODEL_RUNTIME_NONE, MODEL_RUNTIME_LLAMA2C, MODEL_RUNTIME_GGUF } ModelRuntime;

typedef struct Model {
    ModelConfig config; /* the shape (read only; seq_len is the context the run state holds) */
    ModelRuntime runtime;
    union {
        struct Llama2cModel *llama2c;
        struct GgufModel *gguf;
    } impl;
} Model;

typedef struct {
    int ctx; /* positions the run state holds: 0 the trained context, above it refused */
    /* how to find the other pieces of a split GGUF model
     * (llm/format/gguf_split.h); NULL: none */
    const struct GgufPieces *pieces;
} ModelOptions;

/* Parses the file held in memory (used in place, never copied) and allocates
 * the run state. options NULL: the trained context, no pieces. Returns 0, or
 * -1 with a one-line reason in err; on failure nothing stays allocated and m
 * is zeroed. */
int model_create(Model *m, const void *data, size_t size, const ModelOptions *options, char *err,
                 size_t err_size);
void model_destroy(Model *m);
/* The context a load with `requested` positions gets for a model trained
 * for `trained`, or -1 with the reason in err. */
int model_context(int trained, int requested, char *err, size_t err_size);

/* Runs one position; returns the logits (vocab_size floats, owned by m).
 * 0 <= pos < seq_len; an out-of-range token or pos returns NULL. */
float *model_forward(Model *m, int token, int pos);
/* Runs n prompt positions start_pos .. start_pos + n - 1 (tokens forced), a
 * batch at a time: the KV cache ends exactly as after n model_forward calls
 * and model_logits gives the last position's logits. Returns 0, or -1 on
 * bad arguments (nothing is run then). */
int model_prefill(Model *m, const int *tokens, int n, int start_pos);
/* The logits of the last position run (vocab_size floats, owned by m). */
float *model_logits(const Model *m);

/* The KV cache: its element type (llm/model/kv_cache.h), its bytes. */
uint32_t model_kv_type(const Model *m);
uint64_t model_kv_bytes(const Model *m);
/* 1 when the cache's type cannot change (why: the reason), 0 when
 * model_set_kv_type may change it. */
int model_kv_fixed(const Model *m, char *why, size_t n);
/* 0 when model_set_kv_type would take this type (it can then fail only for
 * memory), else -1 with its reason; changes nothing. */
int model_kv_type_check(const Model *m, uint32_t kv_type, char *err, size_t err_size);
/* Re-creates the cache with elements of kv_type: the positions run so far
 * are forgotten (a conversation starts over). 0, or -1 with a one-line
 * reason and the type unchanged. */
int model_set_kv_type(Model *m, uint32_t kv_type, char *err, size_t err_size);

/* Makes int8 copies of an fp32 model's matrices (group_size values per
 * scale) and runs its matmuls on integer dot products; a model with its own
 * weight types refuses. 0, or -1 with a one-line reason (m unchanged). */
int model_quantize(Model *m, int group_size, char *err, size_t err_size);
/* 1 when model_quantize may make int8 copies: fp32 llama2.c weights not
 * yet quantised (a GGUF model keeps its own tensor types). */
int model_can_quantize(const Model *m);
/* Values per scale of int8 llama2.c weights (a v2 file or model_quantize's
 * copies); 0 for other models. */
int model_quant_group_size(const Model *m);
/* 1 when the matmuls read quantised weights. */
int model_is_quantized(const Model *m);
/* 1: the matmuls dequantise every weight row to fp32 (the reference path,
 * matching a dequantised-F32 model); 0 (default): the fast path. No effect
 * on a model whose weights are fp32 or int8 copies. */
void model_set_reference(Model *m, int on);
/* Tests only: the architecture's special feature switched off (see
 * gguf_arch.h); no effect on models without one. */
void model_disable_feature(Model *m);

/* Reports. */
/* One line of the format: "llama2.c v1 fp32", "GGUF, arch llama, tensors Q4_K (mostly)". */
void model_describe(const Model *m, char *out, size_t n);
/* "llama2.c", or the GGUF architecture ("llama", "qwen3", ...). */
const char *model_arch_name(const Model *m);
/* The weights' format for figures: "fp32", "int8 x int8", "Q4_K", ... */
const char *model_matmul_name(const Model *m);
/* One line of the architecture's particulars ("" when none). Returns out. */
const char *model_features(const Model *m, char *out, size_t n);
uint64_t model_param_count(const Model *m);
size_t model_state_bytes(const Model *m); /* heap of the run state and KV cache */
/* The files the model is made of (1, or a split model's pieces) and their
 * bytes together (0 for a single file). */
uint32_t model_pieces(const Model *m, uint64_t *bytes);
/* 1 when the file carries its own vocabulary (a GGUF model). */
int model_has_vocabulary(const Model *m);

#endif
