/* transformer.c - run state and the forward pass, following llama2.c run.c:
 * RMSNorm (eps 1e-5), RoPE over pairs of q and k, grouped-query attention
 * with a [layer][seq_len][kv_dim] KV cache, SwiGLU feed-forward, residuals,
 * final norm and classifier. */
#include "llm/transformer.h"

#include "lib/format.h"
#include "lib/math.h"
#include "lib/stdlib.h"
#include "lib/string.h"
#include "llm/checkpoint.h"
#include "llm/kernels.h"

/* Adds an array of count floats to the run-state block (64-byte aligned). */
static size_t state_reserve(size_t *offset, uint64_t count, int *overflow) {
    size_t at = (*offset + 63) & ~(size_t)63;
    uint64_t bytes, end;
    if (__builtin_mul_overflow(count, (uint64_t)sizeof(float), &bytes) ||
        __builtin_add_overflow(at, bytes, &end) || end > (uint64_t)SIZE_MAX - 64) {
        *overflow = 1;
        return 0;
    }
    *offset = (size_t)end;
    return at;
}

static int state_alloc(Transformer *t, char *err, size_t err_size) {
    const TransformerConfig *c = &t->config;
    TransformerState *s = &t->state;
    uint64_t cache = (uint64_t)c->n_layers * c->seq_len * c->kv_dim;
    uint64_t rope = (uint64_t)c->seq_len * (c->head_size / 2);
    size_t offset = 0;
    int overflow = 0;
    size_t o_x = state_reserve(&offset, c->dim, &overflow);
    size_t o_xb = state_reserve(&offset, c->dim, &overflow);
    size_t o_xb2 = state_reserve(&offset, c->dim, &overflow);
    size_t o_hb = state_reserve(&offset, c->hidden_dim, &overflow);
    size_t o_hb2 = state_reserve(&offset, c->hidden_dim, &overflow);
    size_t o_q = state_reserve(&offset, c->dim, &overflow);
    size_t o_att = state_reserve(&offset, (uint64_t)c->n_heads * c->seq_len, &overflow);
    size_t o_logits = state_reserve(&offset, c->vocab_size, &overflow);
    size_t o_kc = state_reserve(&offset, cache, &overflow);
    size_t o_vc = state_reserve(&offset, cache, &overflow);
    size_t o_cos = state_reserve(&offset, rope, &overflow);
    size_t o_sin = state_reserve(&offset, rope, &overflow);
    if (overflow) {
        snprintf(err, err_size, "run state too large for this machine");
        return -1;
    }
    /* Over-allocate by 63 bytes so every array can be 64-byte aligned. */
    void *block = malloc(offset + 64);
    if (!block) {
        snprintf(err, err_size, "out of memory: the run state needs %zu bytes", offset + 64);
        return -1;
    }
    uint8_t *base = (uint8_t *)(((uintptr_t)block + 63) & ~(uintptr_t)63);
    s->block = block;
    s->bytes = offset + 64;
    s->x = (float *)(base + o_x);
    s->xb = (float *)(base + o_xb);
    s->xb2 = (float *)(base + o_xb2);
    s->hb = (float *)(base + o_hb);
    s->hb2 = (float *)(base + o_hb2);
    s->q = (float *)(base + o_q);
    s->att = (float *)(base + o_att);
    s->logits = (float *)(base + o_logits);
    s->key_cache = (float *)(base + o_kc);
    s->value_cache = (float *)(base + o_vc);
    s->rope_cos = (float *)(base + o_cos);
    s->rope_sin = (float *)(base + o_sin);
    return 0;
}

/* RoPE rotation angles, computed once: pos * 10000^(-i/head_size) for each
 * even i. Same float expressions as run.c. */
static void rope_table_init(Transformer *t) {
    const TransformerConfig *c = &t->config;
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

int transformer_load(Transformer *t, const void *data, size_t size, char *err, size_t err_size) {
    memset(t, 0, sizeof(*t));
    if (checkpoint_parse(&t->config, &t->weights, data, size, err, err_size) != 0) {
        memset(t, 0, sizeof(*t));
        return -1;
    }
    if (state_alloc(t, err, err_size) != 0) {
        memset(t, 0, sizeof(*t));
        return -1;
    }
    rope_table_init(t);
    return 0;
}

void transformer_free(Transformer *t) {
    if (!t) return;
    free(t->state.block);
    memset(t, 0, sizeof(*t));
}

uint64_t transformer_param_count(const Transformer *t) {
    const TransformerConfig *c = &t->config;
    uint64_t D = c->dim, H = c->hidden_dim, L = c->n_layers, V = c->vocab_size, KV = c->kv_dim;
    uint64_t per_layer = 2 * D + 2 * D * D + 2 * D * KV + 3 * D * H;
    return V * D + L * per_layer + D + (c->shared_classifier ? 0 : V * D);
}

size_t transformer_state_bytes(const Transformer *t) {
    return t->state.bytes;
}

/* Layer l's slice of a quantised per-layer tensor. */
static inline const int8_t *quant_values(const QuantTensor *qt, int layer) {
    return qt->q + (size_t)layer * qt->layer_stride;
}

static inline const float *quant_scales(const QuantTensor *qt, int layer) {
    return (const float *)((const uint8_t *)qt->s + (size_t)layer * qt->layer_stride);
}

/* out = W(layer) @ x, W being (d, n), for either weight format. */
static inline void layer_matmul(const Transformer *t, float *out, const float *x, const float *w_fp32,
                                const QuantTensor *w_q, int layer, int n, int d) {
    if (t->config.version == 2)
        kernels->matmul_q8(out, x, quant_values(w_q, layer), quant_scales(w_q, layer), n, d,
                           t->config.group_size);
    else
        kernels->matmul(out, x, w_fp32 + (size_t)layer * n * d, n, d);
}

static void embed_token(Transformer *t, int token) {
    const TransformerConfig *c = &t->config;
    float *x = t->state.x;
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

static void attention(Transformer *t, int layer, int pos) {
    const TransformerConfig *c = &t->config;
    TransformerState *s = &t->state;
    int hs = c->head_size, kv_mul = c->n_heads / c->n_kv_heads;
    size_t layer_offset = (size_t)layer * c->seq_len * c->kv_dim;
    float inv_sqrt = 1.0f / sqrtf((float)hs);
    for (int h = 0; h < c->n_heads; h++) {
        const float *q = s->q + (size_t)h * hs;
        float *att = s->att + (size_t)h * c->seq_len;
        size_t head_offset = layer_offset + (size_t)(h / kv_mul) * hs;
        for (int p = 0; p <= pos; p++) {
            const float *k = s->key_cache + head_offset + (size_t)p * c->kv_dim;
            att[p] = kernels->dot(q, k, hs) * inv_sqrt;
        }
        kernels->softmax(att, pos + 1);
        float *out = s->xb + (size_t)h * hs;
        memset(out, 0, (size_t)hs * sizeof(float));
        for (int p = 0; p <= pos; p++) {
            const float *v = s->value_cache + head_offset + (size_t)p * c->kv_dim;
            kernels->axpy(out, att[p], v, hs);
        }
    }
}

float *transformer_forward(Transformer *t, int token, int pos) {
    const TransformerConfig *c = &t->config;
    const TransformerWeights *w = &t->weights;
    TransformerState *s = &t->state;
    if (!s->block || token < 0 || token >= c->vocab_size || pos < 0 || pos >= c->seq_len) return NULL;
    int dim = c->dim, kv_dim = c->kv_dim, hidden = c->hidden_dim, half = c->head_size / 2;
    const float *cosines = s->rope_cos + (size_t)pos * half, *sines = s->rope_sin + (size_t)pos * half;

    embed_token(t, token);
    for (int l = 0; l < c->n_layers; l++) {
        size_t cache_row = ((size_t)l * c->seq_len + pos) * kv_dim;
        float *k = s->key_cache + cache_row, *v = s->value_cache + cache_row;

        kernels->rmsnorm(s->xb, s->x, w->rms_att + (size_t)l * dim, dim);
        layer_matmul(t, s->q, s->xb, w->wq, &w->wq_q, l, dim, dim);
        layer_matmul(t, k, s->xb, w->wk, &w->wk_q, l, dim, kv_dim);
        layer_matmul(t, v, s->xb, w->wv, &w->wv_q, l, dim, kv_dim);
        rope_rotate(s->q, dim, c->head_size, cosines, sines);
        rope_rotate(k, kv_dim, c->head_size, cosines, sines);

        attention(t, l, pos);
        layer_matmul(t, s->xb2, s->xb, w->wo, &w->wo_q, l, dim, dim);
        kernels->add(s->x, s->xb2, dim);

        kernels->rmsnorm(s->xb, s->x, w->rms_ffn + (size_t)l * dim, dim);
        layer_matmul(t, s->hb, s->xb, w->w1, &w->w1_q, l, dim, hidden);
        layer_matmul(t, s->hb2, s->xb, w->w3, &w->w3_q, l, dim, hidden);
        kernels->swiglu(s->hb, s->hb2, hidden);
        layer_matmul(t, s->xb, s->hb, w->w2, &w->w2_q, l, hidden, dim);
        kernels->add(s->x, s->xb, dim);
    }
    kernels->rmsnorm(s->x, s->x, w->rms_final, dim);
    layer_matmul(t, s->logits, s->x, w->wcls, &w->wcls_q, 0, dim, c->vocab_size);
    return s->logits;
}
