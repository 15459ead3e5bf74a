/* loaded_model.h - the one load sequence every program runs: a model file's
 * bytes (and a split model's other pieces) to a Model with the load options
 * applied (int8 copies, KV cache type, reference matmuls), then its
 * tokenizer, then a sampler, and one teardown for whatever was made. The
 * kernel's session, llmrun and the benches call it; each keeps only its own
 * I/O: finding and reading the files, and printing the notes. */
#ifndef LLM_LOADED_MODEL_H
#define LLM_LOADED_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "llm/generate/sampler.h"
#include "llm/model/model.h"
#include "llm/tokenizer/tokenizer.h"

typedef struct {
    int ctx;                         /* positions the run state holds; 0: the trained context */
    const struct GgufPieces *pieces; /* a split model's other pieces (NULL: none) */
    /* int8 copies of an fp32 llama2.c model's matrices: 1 in groups of the
     * largest multiple of 16 up to 64 that divides dim and hidden_dim, more
     * in groups of that many values (a bench's fixed group); 0: none */
    int quantize_q8;
    /* the KV cache's type (llm/model/kv_cache.h); -1: the runtime's default.
     * Silently kept by a model whose cache type is fixed (model_kv_fixed). */
    int kv_type;
    int reference; /* every matmul on dequantised fp32 rows (the reference path) */
} LoadOptions;

/* One line about an option the model could not take; the load goes on. The
 * line starts with ": " or " " so that "load: NAME" + line reads well. */
typedef void (*LoadNote)(void *ctx, const char *line);

typedef struct {
    Model model;
    Tokenizer tokenizer;
    Sampler sampler;
    int have_model, have_tokenizer, have_sampler;
    int quantized_q8; /* quantize_q8 made int8 copies */
    const void *data; /* the model file's bytes (not owned) */
    size_t size;
} LoadedModel;

/* The model of the file held in memory (used in place: data must outlive l),
 * options applied (NULL: none). A refused option is reported through note
 * (may be NULL) and the model stays as loaded. 0, or -1 with a one-line
 * reason in err and nothing allocated. */
int loaded_model_open(LoadedModel *l, const void *data, size_t size, const LoadOptions *options,
                      LoadNote note, void *note_ctx, char *err, size_t err_size);
/* The tokenizer: a llama2.c tokenizer.bin held in memory (copied; those
 * beyond the model's vocabulary are left unread: compare
 * l->tokenizer.bytes_read with the size), or with tok_data NULL the
 * vocabulary of the model file itself, which must match the model's. 0, or -1
 * with the reason (nothing allocated). */
int loaded_model_tokenizer(LoadedModel *l, const void *tok_data, size_t tok_size, char *err, size_t err_size);
/* The tokenizer from a GGUF file's vocabulary alone, with or without a model
 * (vocabulary-only files, architectures no runtime runs). 0, or -1 with the
 * reason. */
int loaded_model_vocabulary(LoadedModel *l, const void *data, size_t size, char *err, size_t err_size);
/* Frees the tokenizer alone (one that did not fit), so that another may be tried. */
void loaded_model_drop_tokenizer(LoadedModel *l);
/* A sampler over the model's vocabulary. 0, or -1 with the reason. */
int loaded_model_sampler(LoadedModel *l, const SamplerConfig *config, char *err, size_t err_size);
/* Frees whatever was made, in reverse order; l is zeroed. */
void loaded_model_close(LoadedModel *l);

#endif
