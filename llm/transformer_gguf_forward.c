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

/* One matrix of a group of matmuls that share their input: rows
 * first..first+count-1 of the group's row numbering. A typed row kernel
 * (fn) when the type has one, else one dot product per row. */
typedef struct {
    ggml_matmul_fn fn;
    ggml_vec_dot_fn dot;
    float *out;
    const uint8_t *rows;
    size_t row_bytes;
    const void *act;
    int first, count;
} MatmulPart;

#define MAX_GROUP 3

typedef struct {
    MatmulPart part[MAX_GROUP];
    int parts, n;
} MatmulGroup;

/* Rows r0..r1-1 of the group, cut at the matrices' borders. Each kernel
 * computes a row the same way whatever rows it is called with, so results
 * do not depend on how the rows are split. */
static void group_rows(void *ctx, int r0, int r1) {
    MatmulGroup *g = ctx;
    for (int p = 0; p < g->parts; p++) {
        const MatmulPart *part = &g->part[p];
        int lo = r0 > part->first ? r0 - part->first : 0;
        int hi = r1 - part->first < part->count ? r1 - part->first : part->count;
        if (lo >= hi) continue;
        const uint8_t *rows = part->rows + (size_t)lo * part->row_bytes;
        if (part->fn) {
            part->fn(part->out + lo, rows, part->row_bytes, part->act, g->n, hi - lo);
            continue;
        }
        for (int i = lo; i < hi; i++, rows += part->row_bytes)
            part->out[i] = part->dot(rows, part->act, g->n);
    }
}

/* The activations in the format w's type multiplies with, quantised once
 * per input. */
static const void *activations_for(GgufModel *m, MatmulInput *in, const GTensor *w) {
    switch (ggml_type_info(w->type)->act) {
    case ACT_Q8A:
        if (!in->have_a) ggml_act_quantizer_best(ACT_Q8A)(m->act_a, in->x, in->n), in->have_a = 1;
        return m->act_a;
    case ACT_Q8K:
        if (!in->have_k) ggml_act_quantizer_best(ACT_Q8K)(m->act_k, in->x, in->n), in->have_k = 1;
        return m->act_k;
    default:
        return in->x;
    }
}

/* outs[i] = ws[i] x for matrices with the same input, as one parallel job
 * (the workers meet once for q, k and v, or gate and up, instead of once per
 * matrix). F32 weights and the reference path run one matrix at a time. */
static void matmuls(GgufModel *m, MatmulInput *in, int count, float *const outs[],
                    const GTensor *const ws[]) {
    int n = in->n;
    MatmulGroup g = {.parts = 0, .n = n};
    int total = 0;
    for (int i = 0; i < count; i++) {
        const GTensor *w = ws[i];
        if (w->type == GGML_TYPE_F32) {
            parallel_matmul(outs[i], in->x, (const float *)w->data, n, w->rows);
            continue;
        }
        if (m->reference) {
            for (int r = 0; r < w->rows; r++) {
                ggml_dequantize_row(w->type, (const uint8_t *)w->data + (size_t)r * w->row_bytes, m->row, n);
                outs[i][r] = kernels->dot(m->row, in->x, n);
            }
            continue;
        }
        MatmulPart *part = &g.part[g.parts++];
        part->fn = ggml_matmul_best(w->type);
        part->dot = part->fn ? NULL : ggml_vec_dot_best(w->type);
        part->out = outs[i];
        part->rows = w->data;
        part->row_bytes = w->row_bytes;
        part->act = activations_for(m, in, w);
        part->first = total;
        part->count = w->rows;
        total += w->rows;
    }
    /* chunks of whole 8-row groups, the AVX-512 kernels' unit */
    if (g.parts) parallel_for(total, 8, (uint64_t)n * (uint64_t)total, group_rows, &g);
}

static void matmul(GgufModel *m, MatmulInput *in, float *out, const GTensor *w) {
    matmuls(m, in, 1, &out, &w);
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
        matmuls(m, &in, 3, (float *const[]){m->q, m->k, m->v},
                (const GTensor *const[]){&L->wq, &L->wk, &L->wv});
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
        matmuls(m, &in, 2, (float *const[]){m->hb, m->hb2}, (const GTensor *const[]){&L->w1, &L->w3});
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
