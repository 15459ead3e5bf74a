/* model_estimate.c - run-state sizes from file headers alone: llama2.c
 * checkpoints through checkpoint_parse (allocates nothing), GGUF through a
 * bounded walk of the metadata and tensor infos. The sizes come from the
 * allocators' own measures (llama2c_state_bytes in
 * llm/model/llama2c.c, gguf_state_bytes in llm/model/gguf_state.c);
 * tests/host/test_model_estimate.c checks them against real loads. */
#include "llm/model/model_estimate.h"

#include "llm/model/gguf_runtime.h"

#include "lib/string.h"
#include "llm/format/checkpoint.h"
#include "llm/tensor/ggml_types.h"
#include "llm/format/gguf.h"
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

/* ------------------------------------------------------------ GGUF walk */

typedef struct {
    const uint8_t *p, *end;
} Cursor;

static int take(Cursor *c, uint64_t n, const uint8_t **out) {
    if (n > (uint64_t)(c->end - c->p)) return -1;
    *out = c->p;
    c->p += n;
    return 0;
}

static int read_u(Cursor *c, int bytes, uint64_t *out) {
    const uint8_t *q;
    if (take(c, (uint64_t)bytes, &q)) return -1;
    uint64_t v = 0;
    for (int i = bytes - 1; i >= 0; i--) v = (v << 8) | q[i];
    *out = v;
    return 0;
}

static int scalar_bytes(uint64_t type) {
    static const int sizes[GGUF_TYPE_COUNT] = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};
    return type < GGUF_TYPE_COUNT ? sizes[type] : -1;
}

static int skip_value(Cursor *c, uint64_t type, int depth) {
    const uint8_t *q;
    uint64_t n, elem;
    int sz = scalar_bytes(type);
    if (sz > 0) return take(c, (uint64_t)sz, &q);
    if (type == GGUF_TYPE_STRING) return read_u(c, 8, &n) || take(c, n, &q);
    if (type != GGUF_TYPE_ARRAY || depth > 8 || read_u(c, 4, &elem) || read_u(c, 8, &n)) return -1;
    sz = scalar_bytes(elem);
    if (sz < 0) return -1;
    if (sz > 0) return n > (uint64_t)(c->end - c->p) / (uint64_t)sz ? -1 : take(c, n * (uint64_t)sz, &q);
    if (n > (uint64_t)(c->end - c->p) / 8) return -1;
    for (uint64_t i = 0; i < n; i++)
        if (skip_value(c, elem, depth + 1)) return -1;
    return 0;
}

/* A key compared with prefix "." suffix (prefix may be NULL: whole key). */
static int key_is(const uint8_t *key, uint64_t len, const char *prefix, uint64_t prefix_len,
                  const char *suffix) {
    uint64_t slen = strlen(suffix);
    if (!prefix) return len == slen && memcmp(key, suffix, slen) == 0;
    return len == prefix_len + 1 + slen && memcmp(key, prefix, prefix_len) == 0 && key[prefix_len] == '.' &&
           memcmp(key + prefix_len + 1, suffix, slen) == 0;
}

/* Integer value of any integer type (not bool) that fits in 32 bits unsigned. */
static int int_value(Cursor *c, uint64_t type, int64_t *out) {
    static const int is_int[GGUF_TYPE_COUNT] = {1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 0};
    uint64_t v;
    if (type >= GGUF_TYPE_COUNT || !is_int[type] || read_u(c, scalar_bytes(type), &v)) return -1;
    int bits = scalar_bytes(type) * 8;
    int is_signed = type == GGUF_TYPE_INT8 || type == GGUF_TYPE_INT16 || type == GGUF_TYPE_INT32 ||
                    type == GGUF_TYPE_INT64;
    if (is_signed && bits < 64 && (v >> (bits - 1)) & 1) return -1; /* negative */
    if (is_signed && bits == 64 && (int64_t)v < 0) return -1;
    if (v > 0xFFFFFFFFu) return -1;
    *out = (int64_t)v;
    return 0;
}

enum { H_DIM, H_HIDDEN, H_LAYERS, H_HEADS, H_CTX, H_KV_HEADS, H_KEY, H_VALUE, H_ROT, H_USED, H_EFF, H_COUNT };

static int gguf_shape(ModelShape *shape, const void *file, size_t size) {
    static const char *const names[H_COUNT] = {"embedding_length",
                                               "feed_forward_length",
                                               "block_count",
                                               "attention.head_count",
                                               "context_length",
                                               "attention.head_count_kv",
                                               "attention.key_length",
                                               "attention.value_length",
                                               "rope.dimension_count",
                                               "expert_used_count",
                                               "expert_feed_forward_length"};
    Cursor c = {(const uint8_t *)file, (const uint8_t *)file + size};
    uint64_t magic, version, n_tensors, n_kv, len, type;
    const uint8_t *key, *arch = NULL;
    uint64_t arch_len = 0;
    if (read_u(&c, 4, &magic) || magic != GGUF_MAGIC || read_u(&c, 4, &version) ||
        (version != 2 && version != 3) || read_u(&c, 8, &n_tensors) || read_u(&c, 8, &n_kv))
        return -1;
    Cursor kv_start = c;
    /* Pass 1: the architecture (its keys may come before it). */
    for (uint64_t i = 0; i < n_kv; i++) {
        if (read_u(&c, 8, &len) || take(&c, len, &key) || read_u(&c, 4, &type)) return -1;
        if (type == GGUF_TYPE_STRING && key_is(key, len, NULL, 0, "general.architecture")) {
            if (read_u(&c, 8, &arch_len) || take(&c, arch_len, &arch)) return -1;
        } else if (skip_value(&c, type, 0)) {
            return -1;
        }
    }
    GgufArch kind = arch ? gguf_arch_from_name((const char *)arch, (size_t)arch_len) : 0;
    if (!kind) return -1;
    int gemma3 = kind == GGUF_ARCH_GEMMA3;
    /* Pass 2: the hyper-parameters. */
    int64_t h[H_COUNT], window = 0, pattern = 6; /* llama.cpp's default pattern */
    int have[H_COUNT] = {0};
    c = kv_start;
    for (uint64_t i = 0; i < n_kv; i++) {
        if (read_u(&c, 8, &len) || take(&c, len, &key) || read_u(&c, 4, &type)) return -1;
        int which = -1;
        for (int k = 0; k < H_COUNT && which < 0; k++)
            if (key_is(key, len, (const char *)arch, arch_len, names[k])) which = k;
        if (which >= 0) {
            if (int_value(&c, type, &h[which]) || h[which] < 1 || h[which] > (1 << 24)) return -1;
            have[which] = 1;
        } else if (gemma3 && key_is(key, len, "gemma3", 6, "attention.sliding_window")) {
            if (int_value(&c, type, &window)) return -1;
        } else if (gemma3 && type != GGUF_TYPE_ARRAY &&
                   key_is(key, len, "gemma3", 6, "attention.sliding_window_pattern")) {
            if (int_value(&c, type, &pattern)) return -1;
        } else if (skip_value(&c, type, 0)) {
            return -1;
        }
    }
    for (int k = 0; k < H_CTX; k++)
        if (!have[k]) return -1;
    if (!have[H_CTX]) h[H_CTX] = 2048;
    if (!have[H_KV_HEADS]) h[H_KV_HEADS] = h[H_HEADS];
    if (!have[H_KEY]) h[H_KEY] = h[H_DIM] / h[H_HEADS];
    if (!have[H_VALUE]) h[H_VALUE] = h[H_KEY];
    if (!have[H_ROT]) h[H_ROT] = h[H_KEY];
    /* Mixture of experts: the run state holds the used experts' hidden rows (llm/model/moe.c). */
    if (arch_len == 8 && !(have[H_USED] && have[H_EFF])) return -1;
    if (arch_len == 8) h[H_HIDDEN] = h[H_USED] * h[H_EFF];
    /* The vocabulary: rows of token_embd.weight; the weights' type: blk.0.attn_q.weight's. */
    int64_t vocab = -1;
    uint64_t weight_type = GGML_TYPE_LIMIT;
    for (uint64_t i = 0; i < n_tensors && (vocab < 0 || weight_type == GGML_TYPE_LIMIT); i++) {
        uint64_t n_dims, ne[GGUF_MAX_DIMS] = {1, 1, 1, 1}, tensor_type, skip;
        if (read_u(&c, 8, &len) || take(&c, len, &key) || read_u(&c, 4, &n_dims) || n_dims < 1 ||
            n_dims > GGUF_MAX_DIMS)
            return -1;
        for (uint64_t d = 0; d < n_dims; d++)
            if (read_u(&c, 8, &ne[d])) return -1;
        if (read_u(&c, 4, &tensor_type) || read_u(&c, 8, &skip)) return -1;
        if (key_is(key, len, NULL, 0, "blk.0.attn_q.weight")) weight_type = tensor_type;
        if (key_is(key, len, NULL, 0, "token_embd.weight")) {
            if (n_dims != 2 || ne[1] < 1 || ne[1] > (1u << 24)) return -1;
            vocab = (int64_t)ne[1];
        }
    }
    if (vocab < 0) return -1;

    uint64_t heads = (uint64_t)h[H_HEADS], kv_heads = (uint64_t)h[H_KV_HEADS], key_len = (uint64_t)h[H_KEY];
    if (h[H_LAYERS] > 1024 || heads > 4096 || kv_heads > heads || heads % kv_heads ||
        key_len != (uint64_t)h[H_VALUE])
        return -1;
    *shape = (ModelShape){.runtime = MODEL_RUNTIME_GGUF,
                          .trained_ctx = (int)h[H_CTX],
                          .dim = (uint64_t)h[H_DIM],
                          .hidden = (uint64_t)h[H_HIDDEN],
                          .layers = (uint64_t)h[H_LAYERS],
                          .heads = heads,
                          .kv_dim = kv_heads * key_len,
                          .head_size = key_len,
                          .q_dim = heads * key_len,
                          .vocab = (uint64_t)vocab,
                          .n_rot = (uint64_t)h[H_ROT],
                          .kv_type = KV_TYPE_DEFAULT,
                          .weight_type = (uint32_t)weight_type,
                          .swa_window = (int)(window > h[H_CTX] ? -1 : window),
                          .swa_pattern = window ? (int)pattern : 0};
    return shape->swa_window < 0 || pattern > (1 << 24) ? -1 : 0;
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
