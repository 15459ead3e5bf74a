/* gguf_forward.c - the forward pass of GGUF llama/qwen2/qwen3
 * models, for one position or a batch of them (prefill): RMSNorm with the
 * file's epsilon, q/k/v (+ qwen2 biases, qwen3 per-head q/k norms), RoPE
 * (llama: adjacent pairs, because the converter permuted wq/wk; qwen: NeoX
 * halves), grouped-query attention over a KV cache of f16 (default), q8_0 or f32, SwiGLU,
 * classifier (tied to the embedding when output.weight is absent); gemma3's
 * additions (llm/model/arch_gemma3.h) where its fields say. The matmuls
 * (llm/model/gguf_matmul.c) dispatch on each tensor's own type. */
#include "lib/math.h"
#include "lib/string.h"
#include "llm/model/arch_gemma3.h"
#include "llm/model/gguf_matmul.h"
#include "llm/model/gguf_model.h"
#include "llm/compute/kernels.h"
#include "llm/model/kv_cache.h"
#include "llm/model/moe.h"
#include "llm/compute/parallel.h"
#include "llm/model/gguf_runtime.h"

static void add_bias(float *x, const GTensor *b) {
    if (b->data) kernels_active()->add(x, (const float *)b->data, b->cols);
}

/* out = x / sqrt(mean(x^2) + eps) * weight; the sum of squares in double. */
static void rmsnorm(float *out, const float *x, const float *weight, int n, float eps) {
    double ss = 0;
    for (int i = 0; i < n; i++) ss += (double)x[i] * x[i];
    float scale = 1.0f / sqrtf((float)(ss / n) + eps);
    for (int i = 0; i < n; i++) out[i] = (x[i] * scale) * weight[i];
}

/* cos/sin of each rotated pair's angle at this position, into cs. */
static void rope_angles(const GgufModel *m, int pos, float *cs) {
    int half = m->n_rot / 2;
    for (int i = 0; i < half; i++) {
        float angle = (float)pos * m->rope_pos_scale * m->rope_freq[i];
        cs[2 * i] = cosf(angle);
        cs[2 * i + 1] = sinf(angle);
    }
}

static void rope_heads(const GgufModel *m, float *vec, int heads, const float *cs) {
    int hs = m->config.head_size, half = m->n_rot / 2;
    for (int h = 0; h < heads; h++) {
        float *v = vec + (size_t)h * hs;
        for (int i = 0; i < half; i++) {
            int a = m->rope_neox ? i : 2 * i, b = m->rope_neox ? i + half : 2 * i + 1;
            float c = cs[2 * i], s = cs[2 * i + 1];
            float v0 = v[a], v1 = v[b];
            v[a] = v0 * c - v1 * s;
            v[b] = v0 * s + v1 * c;
        }
    }
}

static void head_norm(const GgufModel *m, float *vec, int heads, const GTensor *w) {
    int hs = m->config.head_size;
    for (int h = 0; h < heads; h++)
        rmsnorm(vec + (size_t)h * hs, vec + (size_t)h * hs, (const float *)w->data, hs, m->config.norm_eps);
}

typedef struct {
    GgufModel *m;
    int layer, start, batch;
} AttentionJob;

/* The first scratch row of the query heads of key/value head kv: each
 * group owns max(kv_mul, ATTEND_TILE) rows of m->att (gguf_state.c). */
static float *group_att(const GgufModel *m, int kv) {
    int kv_mul = m->config.n_heads / m->config.n_kv_heads, rows = kv_mul > ATTEND_TILE ? kv_mul : ATTEND_TILE;
    return m->att + (size_t)kv * rows * m->config.seq_len;
}

/* Positions b0..b0+count-1 of the batch for query heads h..h+n_q-1 (of
 * key/value head kv, count * n_q <= ATTEND_TILE) as one tiled call, when
 * the kernel set has one and they all see the cache from its first row.
 * Returns 0 when it did nothing. */
static int attend_tiled(AttentionJob *j, attend_kv_tile_fn *tile, int h, int n_q, int kv, int b0, int count) {
    GgufModel *m = j->m;
    const ModelConfig *c = &m->config;
    int hs = c->head_size, first;
    kv_visible(m, j->layer, j->start + b0 + count - 1, &first);
    if (!tile || first != 0 || count * n_q > ATTEND_TILE) return 0;
    AttendQuery queries[ATTEND_TILE];
    int n = 0;
    for (int b = b0; b < b0 + count; b++)
        for (int i = 0; i < n_q; i++, n++)
            queries[n] = (AttendQuery){m->q + (size_t)b * m->q_dim + (size_t)(h + i) * hs,
                                       m->xb + (size_t)b * m->wide + (size_t)(h + i) * hs,
                                       group_att(m, kv) + (size_t)n * c->seq_len, j->start + b + 1};
    size_t head_offset = kv_offset(m, j->layer, kv, 0);
    tile(queries, n, m->key_cache + head_offset, m->value_cache + head_offset, m->kv_head_bytes, hs,
         m->attn_scale);
    return 1;
}

/* Heads h0..h1-1 (one worker's share) for every position of the batch, in
 * order: a head's scratch row of m->att is reused position after position.
 * Position b attends to the cache up to its own position (the batch's
 * later keys are there already, but not looked at). With a tiled kernel,
 * ATTEND_TILE queries (positions x the heads of one key/value head) at a time
 * read each cached row once. */
static void attention_heads(void *ctx, int h0, int h1) {
    AttentionJob *j = ctx;
    GgufModel *m = j->m;
    const ModelConfig *c = &m->config;
    int hs = c->head_size, kv_mul = c->n_heads / c->n_kv_heads;
    float scale = m->attn_scale;
    attend_kv_fn *typed = m->kv_type == GGML_TYPE_F16    ? kernels_active()->attend_f16
                          : m->kv_type == GGML_TYPE_Q8_0 ? kernels_active()->attend_q8_0
                                                         : kernels_active()->attend_f32;
    attend_kv_tile_fn *tile = m->kv_type == GGML_TYPE_F16    ? kernels_active()->attend_f16_tile
                              : m->kv_type == GGML_TYPE_Q8_0 ? kernels_active()->attend_q8_0_tile
                                                             : kernels_active()->attend_f32_tile;
    /* The query heads of this share that use one key/value head go together
     * (a typed kernel may read the cache once for all of them). */
    for (int h = h0, n_q; h < h1; h += n_q) {
        int kv = h / kv_mul;
        n_q = (kv + 1) * kv_mul < h1 ? (kv + 1) * kv_mul - h : h1 - h;
        int per_tile = n_q < ATTEND_TILE ? ATTEND_TILE / n_q : 1;
        for (int b = 0, step; b < j->batch; b += step) {
            step = j->batch - b < per_tile ? j->batch - b : per_tile;
            if (step > 1 && attend_tiled(j, tile, h, n_q, kv, b, step)) continue;
            step = 1;
            float *out = m->xb + (size_t)b * m->wide + (size_t)h * hs,
                  *att = group_att(m, kv) + (size_t)(h - kv * kv_mul) * c->seq_len;
            const float *q = m->q + (size_t)b * m->q_dim + (size_t)h * hs;
            int first;
            int n_pos = kv_visible(m, j->layer, j->start + b, &first);
            size_t head_offset = kv_offset(m, j->layer, kv, first);
            const uint8_t *keys = m->key_cache + head_offset, *values = m->value_cache + head_offset;
            typed(out, att, c->seq_len, q, n_q, keys, values, m->kv_head_bytes, n_pos, hs, scale);
        }
    }
}

/* Positions start..start+batch-1 (batch <= GGUF_PREFILL_MAX) through every
 * layer together; logits of the last one when compute_logits. Row b of each
 * per-position array holds position start + b; a batch of one is the
 * single-position forward. */
static void forward_batch(GgufModel *m, const int *tokens, int batch, int start, int compute_logits) {
    const ModelConfig *c = &m->config;
    int dim = c->dim, hidden = c->hidden_dim, kv_dim = c->kv_dim, q_dim = m->q_dim, W = m->wide;
    float eps = c->norm_eps;
    for (int b = 0; b < batch; b++) {
        ggml_dequantize_row(m->tok_embd.type,
                            (const uint8_t *)m->tok_embd.data + (size_t)tokens[b] * m->tok_embd.row_bytes,
                            m->x + (size_t)b * W, dim);
        if (m->embed_scale != 1.0f)
            for (int i = 0; i < dim; i++) m->x[(size_t)b * W + i] *= m->embed_scale;
        rope_angles(m, start + b, m->rope_cs + (size_t)b * m->n_rot);
        if (m->swa_window) rope_angles_local(m, start + b, m->rope_cs_local + (size_t)b * m->n_rot);
    }
    for (int l = 0; l < c->n_layers; l++) {
        const GLayer *L = &m->layers[l];
        for (int b = 0; b < batch; b++)
            rmsnorm(m->xb + (size_t)b * W, m->x + (size_t)b * W, (const float *)L->attn_norm.data, dim, eps);
        MatmulInput in = gguf_matmul_input(m->xb, dim, batch, W);
        gguf_matmuls(m, &in, 3, (float *const[]){m->q, m->k, m->v}, (const int[]){q_dim, kv_dim, kv_dim},
                     (const GTensor *const[]){&L->wq, &L->wk, &L->wv});
        for (int b = 0; b < batch; b++) {
            float *q = m->q + (size_t)b * q_dim, *k = m->k + (size_t)b * kv_dim,
                  *v = m->v + (size_t)b * kv_dim;
            const float *cs = (L->local ? m->rope_cs_local : m->rope_cs) + (size_t)b * m->n_rot;
            add_bias(q, &L->bq);
            add_bias(k, &L->bk);
            add_bias(v, &L->bv);
            if (L->q_norm.data) head_norm(m, q, c->n_heads, &L->q_norm);
            if (L->k_norm.data) head_norm(m, k, c->n_kv_heads, &L->k_norm);
            if (gguf_layer_has_rope(m, l)) {
                rope_heads(m, q, c->n_heads, cs);
                rope_heads(m, k, c->n_kv_heads, cs);
            }
            kv_store_position(m, l, start + b, k, v);
        }
        AttentionJob job = {m, l, start, batch};
        /* Chunks of whole key/value-head groups, so their query heads stay together. */
        parallel_for(c->n_heads, c->n_heads / c->n_kv_heads,
                     (uint64_t)(start + batch) * (uint64_t)batch * (uint64_t)q_dim, attention_heads, &job);

        in = gguf_matmul_input(m->xb, q_dim, batch, W);
        gguf_matmuls(m, &in, 1, (float *const[]){m->xb2}, (const int[]){W}, (const GTensor *const[]){&L->wo});
        for (int b = 0; b < batch; b++) {
            float *o = m->xb2 + (size_t)b * W;
            if (L->post_attn_norm.data) rmsnorm(o, o, (const float *)L->post_attn_norm.data, dim, eps);
            kernels_active()->add(m->x + (size_t)b * W, o, dim);
        }

        for (int b = 0; b < batch; b++)
            rmsnorm(m->xb + (size_t)b * W, m->x + (size_t)b * W, (const float *)L->ffn_norm.data, dim, eps);
        if (L->router.data) {
            moe_ffn(m, L, batch);
            continue;
        }
        in = gguf_matmul_input(m->xb, dim, batch, W);
        gguf_matmuls(m, &in, 2, (float *const[]){m->hb, m->hb2}, (const int[]){hidden, hidden},
                     (const GTensor *const[]){&L->w1, &L->w3});
        for (int b = 0; b < batch; b++) {
            float *gate = m->hb + (size_t)b * hidden, *up = m->hb2 + (size_t)b * hidden;
            if (m->ffn_gelu)
                gelu_tanh_mul(gate, up, hidden);
            else
                kernels_active()->swiglu(gate, up, hidden);
        }
        in = gguf_matmul_input(m->hb, hidden, batch, hidden);
        gguf_matmuls(m, &in, 1, (float *const[]){m->xb}, (const int[]){W}, (const GTensor *const[]){&L->w2});
        for (int b = 0; b < batch; b++) {
            float *f = m->xb + (size_t)b * W;
            if (L->post_ffn_norm.data) rmsnorm(f, f, (const float *)L->post_ffn_norm.data, dim, eps);
            kernels_active()->add(m->x + (size_t)b * W, f, dim);
        }
    }
    if (!compute_logits) return;
    float *x = m->x + (size_t)(batch - 1) * W;
    rmsnorm(x, x, (const float *)m->output_norm.data, dim, eps);
    MatmulInput in = gguf_matmul_input(x, dim, 1, W);
    gguf_matmuls(m, &in, 1, (float *const[]){m->logits}, (const int[]){0},
                 (const GTensor *const[]){&m->output});
    if (m->softcap > 0.0f) logits_softcap(m->logits, c->vocab_size, m->softcap);
}

float *gguf_model_forward(GgufModel *m, int token, int pos, int compute_logits) {
    const ModelConfig *c = &m->config;
    if (token < 0 || token >= c->vocab_size || pos < 0 || pos >= c->seq_len || !m->key_cache) return NULL;
    forward_batch(m, &token, 1, pos, compute_logits);
    return m->logits;
}

/* The cache share a batch's activations may take: the batch is as many
 * positions as keep the widest matmul's quantised input and float output
 * in 4 MiB. More positions read each weight block for more of them; the
 * AVX-512 Q8_0/Q4_0 gemm reads every weight once per batch and streams the
 * activations, so on the Llama-3.2-1B shape 64 positions instead of the 16
 * a 512 KiB share gave measured 15-17% less CPU time for pp128 (Q8_0,
 * Q4_0; Q4_K_M 8%) and the same on the 110M shape (64 instead of 40),
 * where quantised batches stay (GGUF_PREFILL_QUANT_MAX, their run state's
 * rows). */
#define PREFILL_ACT_BUDGET (4096 * 1024)

static int choose_prefill_batch(const GgufModel *m) {
    if (m->prefill_batch) return m->prefill_batch;
    /* fp32 weights are 4 bytes a multiply-add: the batch's reuse of each
     * weight read from memory bounds the prefill, more than the cache
     * (measured, 110M shape, 1 thread: 128 positions instead of 64 gave
     * pp128 +4.5%, pp512 +5.5%). */
    if (m->prefill_rows == GGUF_PREFILL_MAX) return m->prefill_rows;
    size_t per_position = (size_t)m->wide * (sizeof(float) + sizeof(BlockQ8A) / 32 + 1);
    size_t fit = PREFILL_ACT_BUDGET / per_position / 8 * 8;
    return fit < GGUF_PREFILL_BATCH        ? GGUF_PREFILL_BATCH
           : fit > (size_t)m->prefill_rows ? m->prefill_rows
                                           : (int)fit;
}

int gguf_model_prefill_batch(const GgufModel *m) {
    int batch = choose_prefill_batch(m);
    return m->swa_window && batch > GGUF_PREFILL_WINDOW_MAX ? GGUF_PREFILL_WINDOW_MAX : batch;
}

void gguf_model_set_prefill_batch(GgufModel *m, int batch) {
    int most = m->prefill_rows;
    m->prefill_batch = batch < 0 ? 0 : batch > most ? most : batch;
}

void gguf_model_prefill(GgufModel *m, const int *tokens, int n, int start_pos) {
    if (!m->key_cache) return; /* a failed KV type change left none */
    int most = gguf_model_prefill_batch(m);
    for (int done = 0; done < n; done += most) {
        int batch = n - done < most ? n - done : most;
        forward_batch(m, tokens + done, batch, start_pos + done, done + batch == n);
    }
}
