/* model_estimate.c - run-state sizes from file headers alone: llama2.c
 * checkpoints through checkpoint_parse (allocates nothing), GGUF through
 * gguf_create and gguf_hparams_read, as a load reads them. The sizes come from the
 * allocators' own measures (llama2c_state_bytes in
 * llm/model/llama2c.c, gguf_state_bytes in llm/model/gguf_state.c);
 * tests/host/test_model_estimate.c checks them against real loads. */
#include "llm/model/model_estimate.h"

#include "llm/model/gguf_runtime.h"

#include "lib/string.h"
#include "llm/format/checkpoint.h"
#include "llm/tensor/ggml_types.h"
#include "llm/format/gguf.h"
#include "llm/model/gguf_hparams.h"
#include "llm/model/kv_cache.h"
#include "llm/tensor/quant.h"

static int checkpoint_shape(ModelShape *shape, const void *file, size_t size) {
    ModelConfig c;
    Llama2cWeights w;
    char err[8];
    if (checkpoint_parse(&c, &w, file, size, err, sizeof err) != 0) return -1;
    *shape = (ModelShape){.runtime = MODEL_RUNTIME_LLAMA2C,
                          .trained_ctx = c.seq_len,
                          .dim = (uint64_t)c.dim,
                          .hidden = (uint64_t)c.hidden_dim,
                          .layers = (uint64_t)c.n_layers,
                          .heads = (uint64_t)c.n_heads,
                          .kv_dim = (uint64_t)c.kv_dim,
                          .head_size = (uint64_t)c.head_size,
                          .q_dim = (uint64_t)c.dim,
                          .vocab = (uint64_t)c.vocab_size};
    return 0;
}

/* The allocator's own measure (llm/model/llama2c.c). */
static uint64_t checkpoint_state_bytes(const ModelShape *s, uint64_t seq) {
    ModelConfig c = {.dim = (int)s->dim,
                     .hidden_dim = (int)s->hidden,
                     .n_layers = (int)s->layers,
                     .n_heads = (int)s->heads,
                     .vocab_size = (int)s->vocab,
                     .seq_len = (int)seq,
                     .kv_dim = (int)s->kv_dim,
                     .head_size = (int)s->head_size};
    return llama2c_state_bytes(&c);
}

/* GGUF: the one parser (llm/format/gguf.c) and the load's own reading of
 * the hyper-parameters (gguf_hparams.c). gguf_create's index is
 * n_kv * sizeof(GgufKeyValue) + n_tensors * sizeof(GgufTensorInfo) bytes of
 * heap, freed before returning. */
static int gguf_shape(ModelShape *shape, const void *file, size_t size) {
    GgufFile f;
    GgufHparams h;
    char err[160];
    if (gguf_create(&f, file, size, err, sizeof err) != 0) return -1;
    int rc = gguf_hparams_read(&f, &h, err, sizeof err);
    const GgufTensorInfo *q = gguf_find_tensor(&f, "blk.0.attn_q.weight");
    uint32_t weight_type = q ? q->type : GGML_TYPE_LIMIT;
    gguf_destroy(&f);
    if (rc) return -1;
    uint64_t heads = (uint64_t)h.heads, head_size = (uint64_t)h.head_size;
    *shape = (ModelShape){.runtime = MODEL_RUNTIME_GGUF,
                          .trained_ctx = h.trained_ctx,
                          .dim = (uint64_t)h.dim,
                          .hidden = (uint64_t)h.hidden,
                          .layers = (uint64_t)h.layers,
                          .heads = heads,
                          .kv_dim = (uint64_t)h.kv_heads * head_size,
                          .head_size = head_size,
                          .q_dim = heads * head_size,
                          .vocab = (uint64_t)h.vocab,
                          .n_rot = (uint64_t)h.n_rot,
                          .kv_type = KV_TYPE_DEFAULT,
                          .weight_type = weight_type,
                          .swa_window = h.swa_window,
                          .swa_pattern = h.swa_pattern};
    return 0;
}

int model_shape_read(ModelShape *shape, const void *file, size_t size) {
    if (!file) return -1;
    if (gguf_is_gguf(file, size)) return gguf_shape(shape, file, size);
    return checkpoint_shape(shape, file, size);
}

/* The cache type a load gives: a model that cannot take q8_0 keeps the default. */
static uint32_t shape_kv_type(const ModelShape *s) {
    return s->kv_type == GGML_TYPE_Q8_0 && s->head_size % QK32 ? KV_TYPE_DEFAULT : s->kv_type;
}

uint64_t model_shape_state_bytes(const ModelShape *s, int ctx) {
    if (ctx < 1) return 0;
    if (s->runtime != MODEL_RUNTIME_GGUF) return checkpoint_state_bytes(s, (uint64_t)ctx);
    return gguf_state_bytes(s->dim, s->hidden, s->q_dim, s->kv_dim, s->heads, s->layers, (uint64_t)ctx,
                            s->vocab, s->n_rot, shape_kv_type(s), s->swa_window, s->swa_pattern,
                            gguf_prefill_rows(s->weight_type));
}

uint64_t model_shape_kv_bytes(const ModelShape *s, int ctx) {
    uint64_t positions = (uint64_t)(ctx > 0 ? ctx : 0);
    if (s->runtime != MODEL_RUNTIME_GGUF) return 2 * s->layers * positions * s->kv_dim * sizeof(float);
    return gguf_kv_cache_bytes_swa(s->layers, positions, s->kv_dim, shape_kv_type(s), s->swa_window,
                                   s->swa_pattern);
}

int model_ctx_that_fits(const ModelShape *s, int wanted, uint64_t budget) {
    /* The run state grows with the context: the largest fitting one by bisection. */
    int lo = 0, hi = wanted;
    while (lo < hi) {
        int mid = lo + (hi - lo + 1) / 2;
        uint64_t bytes = model_shape_state_bytes(s, mid);
        if (bytes && bytes <= budget)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

int64_t model_state_bytes_estimate_kv(const void *file, size_t size, uint32_t kv_type) {
    ModelShape shape;
    if (model_shape_read(&shape, file, size) != 0) return -1;
    shape.kv_type = kv_type; /* a llama2.c cache is fp32 whatever it says */
    uint64_t bytes = model_shape_state_bytes(&shape, shape.trained_ctx);
    return bytes ? (int64_t)bytes : -1;
}

int64_t model_state_bytes_estimate(const void *file, size_t size) {
    return model_state_bytes_estimate_kv(file, size, KV_TYPE_DEFAULT);
}
