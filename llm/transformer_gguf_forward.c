/* transformer_gguf_forward.c - the forward pass of GGUF llama/qwen2/qwen3
 * models: RMSNorm with the file's epsilon, q/k/v (+ qwen2 biases, qwen3
 * per-head q/k norms), RoPE (llama: adjacent pairs, because the converter
 * permuted wq/wk; qwen: NeoX halves), grouped-query attention over an fp32
 * KV cache, SwiGLU, classifier (tied to the embedding when output.weight is
 * absent). Matmuls dispatch on each tensor's own type. */
#include "lib/math.h"
#include "lib/string.h"
#include "llm/gguf_model.h"
#include "llm/kernels.h"
#include "llm/parallel.h"
#include "llm/transformer_gguf.h"

/* The input of one or more matmuls, quantised at most once per format. */
typedef struct {
    const float *x;
    int n;
    int have_a, have_k;
} MatmulInput;

static MatmulInput input_of(const float *x, int n) {
    MatmulInput in = {x, n, 0, 0};
    return in;
}

typedef struct {
    ggml_matmul_fn fn;
    float *out;
    const uint8_t *rows;
    size_t row_bytes;
    const void *act;
    int n;
} TypedMatmulJob;

static void typed_matmul_rows(void *ctx, int r0, int r1) {
    TypedMatmulJob *j = ctx;
    j->fn(j->out + r0, j->rows + (size_t)r0 * j->row_bytes, j->row_bytes, j->act, j->n, r1 - r0);
}

static void matmul(GgufModel *m, MatmulInput *in, float *out, const GTensor *w) {
    int n = w->cols, d = w->rows;
    const uint8_t *rows = w->data;
    if (w->type == GGML_TYPE_F32) {
        parallel_matmul(out, in->x, (const float *)w->data, n, d);
        return;
    }
    if (m->reference) {
        for (int i = 0; i < d; i++) {
            ggml_dequantize_row(w->type, rows + (size_t)i * w->row_bytes, m->row, n);
            out[i] = kernels->dot(m->row, in->x, n);
        }
        return;
    }
    const void *act = in->x;
    switch (ggml_type_info(w->type)->act) {
    case ACT_Q8A:
        if (!in->have_a) ggml_quantize_act_q8a(m->act_a, in->x, n), in->have_a = 1;
        act = m->act_a;
        break;
    case ACT_Q8K:
        if (!in->have_k) ggml_quantize_act_q8k(m->act_k, in->x, n), in->have_k = 1;
        act = m->act_k;
        break;
    case ACT_F32:
        break;
    }
    ggml_matmul_fn fn = ggml_matmul_best(w->type);
    if (fn) {
        /* chunks of whole row pairs, the kernels' unit */
        TypedMatmulJob job = {fn, out, rows, w->row_bytes, act, n};
        parallel_for(d, 2, (uint64_t)n * (uint64_t)d, typed_matmul_rows, &job);
        return;
    }
    ggml_vec_dot_fn dot = ggml_vec_dot_best(w->type);
    parallel_matmul_rows(out, dot, rows, w->row_bytes, act, n, d);
}

static void add_bias(float *x, const GTensor *b) {
    if (b->data) kernels->add(x, (const float *)b->data, b->cols);
}

/* out = x / sqrt(mean(x^2) + eps) * weight; the sum of squares in double. */
static void rmsnorm(float *out, const float *x, const float *weight, int n, float eps) {
    double ss = 0;
    for (int i = 0; i < n; i++) ss += (double)x[i] * x[i];
    float scale = 1.0f / sqrtf((float)(ss / n) + eps);
    for (int i = 0; i < n; i++) out[i] = (x[i] * scale) * weight[i];
}

/* cos/sin of each rotated pair's angle at this position. */
static void rope_angles(GgufModel *m, int pos) {
    int half = m->n_rot / 2;
    for (int i = 0; i < half; i++) {
        float freq = powf(m->config.rope_theta, -(float)(2 * i) / (float)m->n_rot);
        if (m->rope_freqs) freq /= m->rope_freqs[i];
        float angle = (float)pos * m->rope_pos_scale * freq;
        m->rope_cs[2 * i] = cosf(angle);
        m->rope_cs[2 * i + 1] = sinf(angle);
    }
}

static void rope_heads(GgufModel *m, float *vec, int heads) {
    int hs = m->config.head_size, half = m->n_rot / 2;
    for (int h = 0; h < heads; h++) {
        float *v = vec + (size_t)h * hs;
        for (int i = 0; i < half; i++) {
            int a = m->rope_neox ? i : 2 * i, b = m->rope_neox ? i + half : 2 * i + 1;
            float c = m->rope_cs[2 * i], s = m->rope_cs[2 * i + 1];
            float v0 = v[a], v1 = v[b];
            v[a] = v0 * c - v1 * s;
            v[b] = v0 * s + v1 * c;
        }
    }
}

static void head_norm(GgufModel *m, float *vec, int heads, const GTensor *w) {
    int hs = m->config.head_size;
    for (int h = 0; h < heads; h++)
        rmsnorm(vec + (size_t)h * hs, vec + (size_t)h * hs, (const float *)w->data, hs, m->config.norm_eps);
}

typedef struct {
    GgufModel *m;
    int layer, pos;
    float *out;
} AttentionJob;

/* Heads h0..h1-1 (one worker's share). */
static void attention_heads(void *ctx, int h0, int h1) {
    AttentionJob *j = ctx;
    GgufModel *m = j->m;
    const TransformerConfig *c = &m->config;
    int layer = j->layer, pos = j->pos;
    float *out_all = j->out;
    int hs = c->head_size, kv_mul = c->n_heads / c->n_kv_heads;
    size_t layer_offset = (size_t)layer * c->seq_len * c->kv_dim;
    float inv_sqrt = 1.0f / sqrtf((float)hs);
    for (int h = h0; h < h1; h++) {
        size_t head_offset = layer_offset + (size_t)(h / kv_mul) * hs;
        kernels->attend(out_all + (size_t)h * hs, m->att + (size_t)h * c->seq_len, m->q + (size_t)h * hs,
                        m->key_cache + head_offset, m->value_cache + head_offset, c->kv_dim, pos + 1, hs,
                        inv_sqrt);
    }
}

float *gguf_model_forward(Transformer *t, int token, int pos, int compute_logits) {
    GgufModel *m = t->gguf;
    const TransformerConfig *c = &m->config;
    if (token < 0 || token >= c->vocab_size || pos < 0 || pos >= c->seq_len) return NULL;
    int dim = c->dim, hidden = c->hidden_dim, kv_dim = c->kv_dim;
    float eps = c->norm_eps;
    float *x = m->x, *xb = m->xb, *xb2 = m->xb2;

    ggml_dequantize_row(m->tok_embd.type,
                        (const uint8_t *)m->tok_embd.data + (size_t)token * m->tok_embd.row_bytes, x, dim);
    rope_angles(m, pos);
    for (int l = 0; l < c->n_layers; l++) {
        const GLayer *L = &m->layers[l];
        rmsnorm(xb, x, (const float *)L->attn_norm.data, dim, eps);
        MatmulInput in = input_of(xb, dim);
        matmul(m, &in, m->q, &L->wq);
        matmul(m, &in, m->k, &L->wk);
        matmul(m, &in, m->v, &L->wv);
        add_bias(m->q, &L->bq);
        add_bias(m->k, &L->bk);
        add_bias(m->v, &L->bv);
        if (L->q_norm.data) head_norm(m, m->q, c->n_heads, &L->q_norm);
        if (L->k_norm.data) head_norm(m, m->k, c->n_kv_heads, &L->k_norm);
        rope_heads(m, m->q, c->n_heads);
        rope_heads(m, m->k, c->n_kv_heads);
        size_t cache_row = ((size_t)l * c->seq_len + pos) * kv_dim;
        memcpy(m->key_cache + cache_row, m->k, (size_t)kv_dim * sizeof(float));
        memcpy(m->value_cache + cache_row, m->v, (size_t)kv_dim * sizeof(float));
        AttentionJob job = {m, l, pos, xb};
        parallel_for(c->n_heads, 1, (uint64_t)(pos + 1) * m->q_dim, attention_heads, &job);

        in = input_of(xb, m->q_dim);
        matmul(m, &in, xb2, &L->wo);
        kernels->add(x, xb2, dim);

        rmsnorm(xb, x, (const float *)L->ffn_norm.data, dim, eps);
        in = input_of(xb, dim);
        matmul(m, &in, m->hb, &L->w1);
        matmul(m, &in, m->hb2, &L->w3);
        kernels->swiglu(m->hb, m->hb2, hidden);
        in = input_of(m->hb, hidden);
        matmul(m, &in, xb, &L->w2);
        kernels->add(x, xb, dim);
    }
    if (!compute_logits) return m->logits;
    rmsnorm(x, x, (const float *)m->output_norm.data, dim, eps);
    MatmulInput in = input_of(x, dim);
    matmul(m, &in, m->logits, &m->output);
    return m->logits;
}
