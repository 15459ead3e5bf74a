/* llama2c.c - the llama2.c runtime: run state and the forward pass, following llama2.c run.c:
 * RMSNorm (eps 1e-5), RoPE over pairs of q and k, grouped-query attention
 * with a [layer][seq_len][kv_dim] KV cache, SwiGLU feed-forward, residuals,
 * final norm and classifier. */
#include "llm/model/llama2c.h"

#include "lib/format.h"
#include "lib/math.h"
#include "lib/stdlib.h"
#include "lib/arena.h"
#include "lib/string.h"
#include "llm/format/checkpoint.h"
#include "llm/compute/kernels.h"
#include "llm/compute/parallel.h"
#include "llm/tensor/quant.h"
#include "llm/model/model.h"

/* The run state's arrays, each on 64 bytes: measured when a->base is NULL. */
static void state_take(const ModelConfig *c, Llama2cState *s, Arena *a) {
    const uint64_t B = LLAMA2C_MAX_BATCH;
    uint64_t cache = (uint64_t)c->n_layers * c->seq_len * c->kv_dim;
    uint64_t rope = (uint64_t)c->seq_len * (c->head_size / 2);
    uint64_t widest = (uint64_t)(c->dim > c->hidden_dim ? c->dim : c->hidden_dim);
    s->x = arena_take(a, B * c->dim, sizeof(float), 64);
    s->xb = arena_take(a, B * c->dim, sizeof(float), 64);
    s->xb2 = arena_take(a, B * c->dim, sizeof(float), 64);
    s->hb = arena_take(a, B * c->hidden_dim, sizeof(float), 64);
    s->hb2 = arena_take(a, B * c->hidden_dim, sizeof(float), 64);
    s->q = arena_take(a, B * c->dim, sizeof(float), 64);
    s->att = arena_take(a, (uint64_t)c->n_heads * c->seq_len, sizeof(float), 64);
    s->logits = arena_take(a, c->vocab_size, sizeof(float), 64);
    s->key_cache = arena_take(a, cache, sizeof(float), 64);
    s->value_cache = arena_take(a, cache, sizeof(float), 64);
    s->rope_cos = arena_take(a, rope, sizeof(float), 64);
    s->rope_sin = arena_take(a, rope, sizeof(float), 64);
    /* int16 values (two per float slot); scales for groups of >= 16 values. */
    s->xq = arena_take(a, (B * widest + 1) / 2, sizeof(float), 64);
    s->xq_scales = arena_take(a, B * (widest / QUANT_GROUP_STEP + 1), sizeof(float), 64);
}

/* Over-allocated by 64 bytes so that every array can start on 64. */
uint64_t llama2c_state_bytes(const ModelConfig *c) {
    Arena measure = {0};
    Llama2cState unused;
    state_take(c, &unused, &measure);
    return measure.overflow ? 0 : measure.used + 64;
}

static int state_alloc(Llama2cModel *t, char *err, size_t err_size) {
    Llama2cState *s = &t->state;
    uint64_t bytes = llama2c_state_bytes(&t->config);
    if (bytes == 0) {
        snprintf(err, err_size, "run state too large for this machine");
        return -1;
    }
    void *block = malloc((size_t)bytes);
    if (!block) {
        snprintf(err, err_size, "out of memory: the run state needs %zu bytes", (size_t)bytes);
        return -1;
    }
    s->block = block;
    s->bytes = (size_t)bytes;
    Arena arena = {(uint8_t *)(((uintptr_t)block + 63) & ~(uintptr_t)63), 0, 0};
    state_take(&t->config, s, &arena);
    return 0;
}

/* RoPE rotation angles, computed once: pos * 10000^(-i/head_size) for each
 * even i. Same float expressions as run.c. */
static void rope_table_init(Llama2cModel *t) {
    const ModelConfig *c = &t->config;
    int half = c->head_size / 2;
    for (int i = 0; i < half; i++) {
        float freq = 1.0f / powf(10000.0f, (float)(2 * i) / (float)c->head_size);
        for (int pos = 0; pos < c->seq_len; pos++) {
            float angle = (float)pos * freq;
            t->state.rope_cos[(size_t)pos * half + i] = cosf(angle);
            t->state.rope_sin[(size_t)pos * half + i] = sinf(angle);
        }
    }
}

int llama2c_create(Llama2cModel *t, const void *data, size_t size, int ctx, char *err, size_t err_size) {
    memset(t, 0, sizeof(*t));
    /* Parsed with the file's seq_len (legacy files store RoPE tables of that
     * length between the weights), then the run state sized for ctx. */
    if (checkpoint_parse(&t->config, &t->weights, data, size, err, err_size) != 0 ||
        (t->config.seq_len = model_context(t->config.seq_len, ctx, err, err_size)) < 0) {
        memset(t, 0, sizeof(*t));
        return -1;
    }
    if (state_alloc(t, err, err_size) != 0) {
        memset(t, 0, sizeof(*t));
        return -1;
    }
    rope_table_init(t);
    t->config.rope_theta = 10000.0f;
    t->config.norm_eps = 1e-5f;
    t->matmul_path = MATMUL_FP32;
    if (t->config.version == 2) {
        /* Integer dot products need groups that line up with every row. */
        int gs = t->config.group_size;
        int aligned = quant_group_supported(gs) && t->config.dim % gs == 0 && t->config.hidden_dim % gs == 0;
        t->matmul_path = aligned ? MATMUL_Q8_INT : MATMUL_Q8_FP32_ACT;
        t->quant_group_size = gs;
    }
    return 0;
}

void llama2c_destroy(Llama2cModel *t) {
    if (!t) return;
    free(t->state.block);
    free(t->quant_block);
    memset(t, 0, sizeof(*t));
}

uint64_t llama2c_param_count(const Llama2cModel *t) {
    return model_config_params(&t->config);
}

void llama2c_describe(const Llama2cModel *t, char *out, size_t n) {
    static const char *const formats[] = {"llama2.c legacy (v0) fp32", "llama2.c v1 fp32",
                                          "llama2.c v2 int8"};
    int v = t->config.version;
    size_t at = (size_t)snprintf(out, n, "%s", v >= 0 && v < 3 ? formats[v] : "?");
    if (v == 2 && at < n) snprintf(out + at, n - at, ", group size %d", t->config.group_size);
}

/* Layer l's slice of a quantised per-layer tensor. */
static inline const int8_t *quant_values(const QuantTensor *qt, int layer) {
    return qt->q + (size_t)layer * qt->layer_stride;
}

static inline const float *quant_scales(const QuantTensor *qt, int layer) {
    return (const float *)((const uint8_t *)qt->s + (size_t)layer * qt->layer_stride);
}

/* The batch rows of x (batch, n) quantised once for the matmuls that read them. */
static void prepare_input(Llama2cModel *t, const float *x, int batch, int n) {
    if (t->matmul_path != MATMUL_Q8_INT) return;
    int gs = t->quant_group_size, groups = n / gs;
    for (int b = 0; b < batch; b++)
        quant_activations(t->state.xq + (size_t)b * n, t->state.xq_scales + (size_t)b * groups,
                          x + (size_t)b * n, n, gs);
}

/* out[b] = W(layer) @ x[b] for b < batch, W being (d, n), for the active
 * weight format (MATMUL_Q8_INT reads the input prepare_input quantised). */
static void layer_matmul(Llama2cModel *t, float *out, const float *x, int batch, const float *w_fp32,
                         const QuantTensor *w_q, int layer, int n, int d) {
    int gs = t->quant_group_size;
    switch (t->matmul_path) {
    case MATMUL_FP32:
        parallel_matmul_batch(out, d, x, n, batch, w_fp32 + (size_t)layer * n * d, n, d);
        break;
    case MATMUL_Q8_FP32_ACT:
        parallel_matmul_q8(out, x, batch, quant_values(w_q, layer), quant_scales(w_q, layer), n, d, gs);
        break;
    case MATMUL_Q8_INT:
        parallel_matmul_q8q(out, t->state.xq, t->state.xq_scales, batch, quant_values(w_q, layer),
                            quant_scales(w_q, layer), n, d, gs);
        break;
    }
}

static void embed_token(Llama2cModel *t, int token, float *x) {
    const ModelConfig *c = &t->config;
    if (c->version == 2) {
        const QuantTensor *e = &t->weights.token_embedding_q;
        size_t base = (size_t)token * c->dim;
        for (int i = 0; i < c->dim; i++) x[i] = (float)e->q[base + i] * e->s[(base + i) / c->group_size];
    } else {
        memcpy(x, t->weights.token_embedding + (size_t)token * c->dim, (size_t)c->dim * sizeof(float));
    }
}

/* Rotates consecutive pairs of vec (n values, heads of head_size) by the
 * angles for this position. */
static void rope_rotate(float *vec, int n, int head_size, const float *cosines, const float *sines) {
    for (int i = 0; i < n; i += 2) {
        int pair = (i % head_size) / 2;
        float fcr = cosines[pair], fci = sines[pair];
        float v0 = vec[i], v1 = vec[i + 1];
        vec[i] = v0 * fcr - v1 * fci;
        vec[i + 1] = v0 * fci + v1 * fcr;
    }
}

/* Attention of one position (its query q, dim floats) over the cache, into
 * out_all: one kernel call per head, for heads h0..h1-1. */
static void attention(Llama2cModel *t, int layer, int pos, const float *query, float *out_all, int h0,
                      int h1) {
    const ModelConfig *c = &t->config;
    Llama2cState *s = &t->state;
    int hs = c->head_size, kv_mul = c->n_heads / c->n_kv_heads;
    size_t layer_offset = (size_t)layer * c->seq_len * c->kv_dim;
    float inv_sqrt = 1.0f / sqrtf((float)hs);
    for (int h = h0; h < h1; h++) {
        size_t head_offset = layer_offset + (size_t)(h / kv_mul) * hs;
        kernels_active()->attend(out_all + (size_t)h * hs, s->att + (size_t)h * c->seq_len,
                                 query + (size_t)h * hs, s->key_cache + head_offset,
                                 s->value_cache + head_offset, c->kv_dim, pos + 1, hs, inv_sqrt);
    }
}

/* Heads h0..h1-1 of every position of a chunk (one worker's share). */
typedef struct {
    Llama2cModel *t;
    int layer, pos0, batch;
    const float *q;
    float *out;
} AttentionJob;

static void attention_heads(void *ctx, int h0, int h1) {
    AttentionJob *j = ctx;
    int dim = j->t->config.dim;
    for (int b = 0; b < j->batch; b++)
        attention(j->t, j->layer, j->pos0 + b, j->q + (size_t)b * dim, j->out + (size_t)b * dim, h0, h1);
}

/* Runs positions pos0 .. pos0 + batch - 1 (batch <= LLAMA2C_MAX_BATCH)
 * through every layer, row b of each activation array holding position
 * pos0 + b; the K/V rows of the chunk are written straight into the cache,
 * where they are contiguous. Leaves the last position's logits when
 * `logits` (a prompt's earlier chunks skip the classifier: under QEMU TCG it
 * costs about as much as the layers of a token). */
static void forward_chunk(Llama2cModel *t, const int *tokens, int batch, int pos0, int logits) {
    const ModelConfig *c = &t->config;
    const Llama2cWeights *w = &t->weights;
    Llama2cState *s = &t->state;
    int dim = c->dim, kv_dim = c->kv_dim, hidden = c->hidden_dim, half = c->head_size / 2;
    float *x = s->x, *xb = s->xb, *xb2 = s->xb2, *q = s->q, *hb = s->hb, *hb2 = s->hb2;

    for (int b = 0; b < batch; b++) embed_token(t, tokens[b], x + (size_t)b * dim);
    for (int l = 0; l < c->n_layers; l++) {
        size_t cache_row = ((size_t)l * c->seq_len + pos0) * kv_dim;
        float *k = s->key_cache + cache_row, *v = s->value_cache + cache_row;

        for (int b = 0; b < batch; b++)
            kernels_active()->rmsnorm(xb + (size_t)b * dim, x + (size_t)b * dim, w->rms_att + (size_t)l * dim,
                                      dim);
        prepare_input(t, xb, batch, dim);
        layer_matmul(t, q, xb, batch, w->wq, &w->wq_q, l, dim, dim);
        layer_matmul(t, k, xb, batch, w->wk, &w->wk_q, l, dim, kv_dim);
        layer_matmul(t, v, xb, batch, w->wv, &w->wv_q, l, dim, kv_dim);
        for (int b = 0; b < batch; b++) {
            const float *cosines = s->rope_cos + (size_t)(pos0 + b) * half;
            const float *sines = s->rope_sin + (size_t)(pos0 + b) * half;
            rope_rotate(q + (size_t)b * dim, dim, c->head_size, cosines, sines);
            rope_rotate(k + (size_t)b * kv_dim, kv_dim, c->head_size, cosines, sines);
        }
        /* Causal: position pos0 + b only reads cache rows up to itself. */
        AttentionJob job = {t, l, pos0, batch, q, xb};
        parallel_for(c->n_heads, 1, (uint64_t)batch * (pos0 + batch) * dim, attention_heads, &job);

        prepare_input(t, xb, batch, dim);
        layer_matmul(t, xb2, xb, batch, w->wo, &w->wo_q, l, dim, dim);
        for (int b = 0; b < batch; b++) {
            kernels_active()->add(x + (size_t)b * dim, xb2 + (size_t)b * dim, dim);
            kernels_active()->rmsnorm(xb + (size_t)b * dim, x + (size_t)b * dim, w->rms_ffn + (size_t)l * dim,
                                      dim);
        }
        prepare_input(t, xb, batch, dim);
        layer_matmul(t, hb, xb, batch, w->w1, &w->w1_q, l, dim, hidden);
        layer_matmul(t, hb2, xb, batch, w->w3, &w->w3_q, l, dim, hidden);
        for (int b = 0; b < batch; b++)
            kernels_active()->swiglu(hb + (size_t)b * hidden, hb2 + (size_t)b * hidden, hidden);
        prepare_input(t, hb, batch, hidden);
        layer_matmul(t, xb, hb, batch, w->w2, &w->w2_q, l, hidden, dim);
        for (int b = 0; b < batch; b++) kernels_active()->add(x + (size_t)b * dim, xb + (size_t)b * dim, dim);
    }
    /* Logits only for the last position (the others are forced prompt tokens). */
    if (!logits) return;
    float *last = x + (size_t)(batch - 1) * dim;
    kernels_active()->rmsnorm(last, last, w->rms_final, dim);
    prepare_input(t, last, 1, dim);
    layer_matmul(t, s->logits, last, 1, w->wcls, &w->wcls_q, 0, dim, c->vocab_size);
}

float *llama2c_forward(Llama2cModel *t, int token, int pos) {
    const ModelConfig *c = &t->config;
    if (!t->state.block || token < 0 || token >= c->vocab_size || pos < 0 || pos >= c->seq_len) return NULL;
    forward_chunk(t, &token, 1, pos, 1);
    return t->state.logits;
}

int llama2c_prefill(Llama2cModel *t, const int *tokens, int n, int start_pos) {
    const ModelConfig *c = &t->config;
    if (!t->state.block || !tokens || n < 1 || start_pos < 0 || start_pos > c->seq_len - n) return -1;
    for (int i = 0; i < n; i++)
        if (tokens[i] < 0 || tokens[i] >= c->vocab_size) return -1;
    for (int done = 0, chunk = kernels_q8q_batch(LLAMA2C_MAX_BATCH); done < n; done += chunk) {
        int batch = n - done < chunk ? n - done : chunk;
        forward_chunk(t, tokens + done, batch, start_pos + done, done + batch == n);
    }
    return 0;
}
