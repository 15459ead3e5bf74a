/* gguf_load.c - building a model from a GGUF file's tensors and
 * metadata (llama, qwen2, qwen3, gemma3, smollm3, qwen3moe). Its run state
 * and KV cache are in gguf_state.c, the forward pass in
 * gguf_forward.c. */
#include "llm/model/gguf_runtime.h"

#include "lib/format.h"
#include "lib/math.h"
#include "lib/stdlib.h"
#include "lib/string.h"
#include "llm/model/arch_gemma3.h"
#include "llm/model/gguf_hparams.h"
#include "llm/model/gguf_model.h"
#include "llm/model/model.h"
#include "llm/format/gguf_split.h"
#include "llm/model/moe.h"

static void reference_weights(GgufModel *m, int on);

/* Finds a tensor and checks its type and shape (ne0 = row length, ne1 = rows;
 * ne1 0 for a vector). Missing optional tensors leave *out zeroed. */
static int bind(GgufModel *m, GTensor *out, const char *name, int ne0, int ne1, int optional, int f32_only,
                char *err, size_t n) {
    memset(out, 0, sizeof(*out));
    const GgufTensorInfo *ti = gguf_find_tensor(&m->file, name);
    if (!ti) {
        if (optional) return 0;
        snprintf(err, n, "gguf: tensor %s is missing", name);
        return -1;
    }
    const GgmlTypeInfo *type = ggml_type_info(ti->type);
    if (!type || !type->supported || (f32_only && ti->type != GGML_TYPE_F32)) {
        snprintf(err, n, "tensor %s has unsupported type %s (%u)", name, ggml_type_name(ti->type), ti->type);
        return -1;
    }
    uint64_t rows = ne1 ? (uint64_t)ne1 : 1;
    if (ti->ne[0] != (uint64_t)ne0 || ti->ne[1] != rows || ti->ne[2] != 1 || ti->ne[3] != 1) {
        snprintf(err, n, "tensor %s has shape [%llu, %llu], expected [%d, %llu]", name,
                 (unsigned long long)ti->ne[0], (unsigned long long)ti->ne[1], ne0, (unsigned long long)rows);
        return -1;
    }
    if (ne0 % (int)type->block_elems) {
        snprintf(err, n, "tensor %s: row length %d is not a multiple of the %s block (%u)", name, ne0,
                 type->name, type->block_elems);
        return -1;
    }
    out->type = ti->type;
    out->data = ti->data;
    out->cols = ne0;
    out->rows = (int)rows;
    out->row_bytes = (size_t)ggml_row_bytes(ti->type, (uint64_t)ne0);
    return 0;
}

static int bind_layer(GgufModel *m, int l, char *err, size_t n) {
    const ModelConfig *c = &m->config;
    GLayer *L = &m->layers[l];
    int q_dim = c->n_heads * c->head_size, kv_dim = c->kv_dim;
    char name[64];
#define T(FIELD, SUFFIX, NE0, NE1, OPT, F32)                                                                 \
    snprintf(name, sizeof name, "blk.%d." SUFFIX, l);                                                        \
    if (bind(m, &L->FIELD, name, NE0, NE1, OPT, F32, err, n)) return -1;
    T(attn_norm, "attn_norm.weight", c->dim, 0, 0, 1)
    T(ffn_norm, "ffn_norm.weight", c->dim, 0, 0, 1)
    T(wq, "attn_q.weight", c->dim, q_dim, 0, 0)
    T(wk, "attn_k.weight", c->dim, kv_dim, 0, 0)
    T(wv, "attn_v.weight", c->dim, kv_dim, 0, 0)
    T(wo, "attn_output.weight", q_dim, c->dim, 0, 0)
    if (!m->n_experts) {
        T(w1, "ffn_gate.weight", c->dim, c->hidden_dim, 0, 0)
        T(w3, "ffn_up.weight", c->dim, c->hidden_dim, 0, 0)
        T(w2, "ffn_down.weight", c->hidden_dim, c->dim, 0, 0)
    } else if (moe_bind_layer(m, l, err, n)) {
        return -1;
    }
    int qwen2 = m->arch == GGUF_ARCH_QWEN2,
        qwen3 = m->arch == GGUF_ARCH_QWEN3 || m->arch == GGUF_ARCH_QWEN3MOE || m->arch == GGUF_ARCH_GEMMA3;
    int gemma3 = m->arch == GGUF_ARCH_GEMMA3;
    /* Biases: required by qwen2, accepted when present otherwise. */
    T(bq, "attn_q.bias", q_dim, 0, !qwen2, 1)
    T(bk, "attn_k.bias", kv_dim, 0, !qwen2, 1)
    T(bv, "attn_v.bias", kv_dim, 0, !qwen2, 1)
    T(q_norm, "attn_q_norm.weight", c->head_size, 0, !qwen3, 1)
    T(k_norm, "attn_k_norm.weight", c->head_size, 0, !qwen3, 1)
    T(post_attn_norm, "post_attention_norm.weight", c->dim, 0, !gemma3, 1)
    T(post_ffn_norm, "post_ffw_norm.weight", c->dim, 0, !gemma3, 1)
#undef T
    return 0;
}

static int read_hparams(GgufModel *m, char *err, size_t n) {
    ModelConfig *c = &m->config;
    GgufHparams h;
    if (gguf_hparams_read(&m->file, &h, err, n)) return -1;
    m->arch = h.arch;
    const char *a = gguf_arch_name(m->arch);
    c->dim = h.dim, c->hidden_dim = h.hidden, c->n_layers = h.layers, c->n_heads = h.heads;
    c->n_kv_heads = h.kv_heads;
    c->head_size = h.head_size;
    c->kv_dim = h.kv_heads * h.head_size;
    c->vocab_size = h.vocab;
    c->seq_len = model_context(h.trained_ctx, c->seq_len, err, n); /* c->seq_len: the one asked for */
    if (c->seq_len < 0) return -1;
    m->n_experts = h.n_experts, m->n_experts_used = h.n_experts_used, m->expert_ffn = h.expert_ffn;
    m->n_rot = h.n_rot;
    m->q_dim = h.heads * h.head_size;
    char key[96];
    float v;
    c->norm_eps = 1e-5f;
    snprintf(key, sizeof key, "%s.attention.layer_norm_rms_epsilon", a);
    if (gguf_get_f32(&m->file, key, &v) == 0) c->norm_eps = v;
    c->rope_theta = 10000.0f;
    snprintf(key, sizeof key, "%s.rope.freq_base", a);
    if (gguf_get_f32(&m->file, key, &v) == 0) c->rope_theta = v;
    if (!(c->norm_eps > 0.0f && c->norm_eps < 1.0f) || !(c->rope_theta > 1.0f && c->rope_theta < 1e12f)) {
        snprintf(err, n, "gguf: rms epsilon or rope base out of range");
        return -1;
    }
    /* Linear rope scaling (positions divided by the factor). */
    m->rope_pos_scale = 1.0f;
    GgufString stype;
    snprintf(key, sizeof key, "%s.rope.scaling.type", a);
    if (gguf_get_string(&m->file, key, &stype) == 0 && gguf_string_eq(stype, "linear")) {
        snprintf(key, sizeof key, "%s.rope.scaling.factor", a);
        if (gguf_get_f32(&m->file, key, &v) == 0 && v > 0.0f) m->rope_pos_scale = 1.0f / v;
    }
    m->rope_neox = m->arch != GGUF_ARCH_LLAMA && m->arch != GGUF_ARCH_SMOLLM3;
    m->nope_period = m->arch == GGUF_ARCH_SMOLLM3 ? 4 : 0; /* llama.cpp's fixed step, no key */
    c->arch = m->arch;
    c->version = 3;
    gguf_arch_defaults(m);
    m->swa_window = h.swa_window, m->swa_pattern = h.swa_pattern;
    return m->arch == GGUF_ARCH_GEMMA3 ? gemma3_read_hparams(m, err, n) : 0;
}

static int build(GgufModel *m, char *err, size_t n) {
    if (read_hparams(m, err, n)) return -1;
    ModelConfig *c = &m->config;
    /* The file's own vocabulary must index the embedding's rows exactly. */
    GgufArray tokens;
    if (gguf_get_array(&m->file, "tokenizer.ggml.tokens", &tokens) == 0 &&
        tokens.count != (uint64_t)c->vocab_size) {
        snprintf(err, n, "gguf: the vocabulary has %llu tokens, token_embd.weight %llu rows",
                 (unsigned long long)tokens.count, (unsigned long long)c->vocab_size);
        return -1;
    }
    if (bind(m, &m->tok_embd, "token_embd.weight", c->dim, c->vocab_size, 0, 0, err, n) ||
        bind(m, &m->output_norm, "output_norm.weight", c->dim, 0, 0, 1, err, n) ||
        bind(m, &m->output, "output.weight", c->dim, c->vocab_size, 1, 0, err, n))
        return -1;
    c->shared_classifier = m->output.data == NULL;
    if (c->shared_classifier) m->output = m->tok_embd;
    /* Llama 3 style per-frequency divisors. */
    GTensor freqs;
    if (bind(m, &freqs, "rope_freqs.weight", m->n_rot / 2, 0, 1, 1, err, n)) return -1;
    m->rope_freqs = freqs.data;
    m->layers = calloc((size_t)c->n_layers, sizeof(GLayer));
    if (!m->layers) {
        snprintf(err, n, "out of memory");
        return -1;
    }
    for (int l = 0; l < c->n_layers; l++)
        if (bind_layer(m, l, err, n)) return -1;
    return gguf_run_state_create(m, err, n);
}

GgufModel *gguf_model_create(const void *data, size_t size, const GgufPieces *pieces, int ctx, char *err,
                             size_t err_size) {
    GgufModel *m = calloc(1, sizeof(GgufModel));
    if (!m) {
        snprintf(err, err_size, "out of memory");
        return NULL;
    }
    m->config.seq_len = ctx; /* read_hparams checks it against the trained context */
    if (gguf_create_pieces(&m->file, data, size, pieces, err, err_size) != 0 ||
        build(m, err, err_size) != 0) {
        gguf_model_destroy(m);
        return NULL;
    }
    return m;
}

void gguf_model_destroy(GgufModel *m) {
    if (!m) return;
    if (m->layers) reference_weights(m, 0);
    gguf_destroy(&m->file);
    free(m->layers);
    gguf_run_state_destroy(m);
    free(m);
}

/* Switches every non-F32 matrix to a dequantised F32 copy (or back). */
static void reference_weights(GgufModel *m, int on) {
    int L = m->config.n_layers;
    if (!on) {
        if (!m->ref_weights) return;
        memcpy(m->layers, m->saved_layers, (size_t)L * sizeof(GLayer));
        m->output = m->saved_output;
        free(m->ref_weights), free(m->saved_layers);
        m->ref_weights = NULL, m->saved_layers = NULL;
        return;
    }
    if (m->ref_weights) return;
    uint64_t total = 0;
    for (int l = 0; l < L; l++) {
        GTensor *ts = &m->layers[l].wq;
        for (int i = 0; i < 7; i++) total += (uint64_t)ts[i].rows * ts[i].cols;
    }
    total += (uint64_t)m->output.rows * m->output.cols;
    if (total > SIZE_MAX / 8) return;
    float *block = malloc((size_t)total * sizeof(float));
    GLayer *saved = malloc((size_t)L * sizeof(GLayer));
    if (!block || !saved) {
        free(block), free(saved);
        return; /* the per-row path still works */
    }
    memcpy(saved, m->layers, (size_t)L * sizeof(GLayer));
    m->saved_output = m->output;
    float *p = block;
    for (int l = 0; l <= L; l++) {
        GTensor *ts = l < L ? &m->layers[l].wq : &m->output;
        int count = l < L ? 7 : 1;
        for (int i = 0; i < count; i++) {
            GTensor *w = &ts[i];
            for (int r = 0; r < w->rows; r++)
                ggml_dequantize_row(w->type, (const uint8_t *)w->data + (size_t)r * w->row_bytes,
                                    p + (size_t)r * w->cols, w->cols);
            w->type = GGML_TYPE_F32, w->data = p, w->row_bytes = (size_t)w->cols * sizeof(float);
            p += (size_t)w->rows * w->cols;
        }
    }
    m->ref_weights = block;
    m->saved_layers = saved;
}

void gguf_model_set_reference(GgufModel *m, int on) {
    m->reference = on != 0;
    reference_weights(m, on != 0);
}

static const char *const arch_names[GGUF_ARCH_COUNT] = {
    "?", "llama", "qwen2", "qwen3", "gemma3", "smollm3", "qwen3moe",
};

GgufArch gguf_arch_from_name(const char *name, size_t len) {
    for (int i = 1; i < GGUF_ARCH_COUNT; i++)
        if (strlen(arch_names[i]) == len && memcmp(arch_names[i], name, len) == 0) return (GgufArch)i;
    return 0;
}

const char *gguf_arch_name(GgufArch arch) {
    return arch > 0 && arch < GGUF_ARCH_COUNT ? arch_names[arch] : arch_names[0];
}

const char *gguf_model_arch_name(const GgufModel *m) {
    return gguf_arch_name(m->arch);
}

uint32_t gguf_model_pieces(const GgufModel *m, uint64_t *bytes) {
    *bytes = m->file.pieces_bytes;
    return m->file.n_pieces;
}

const char *gguf_model_weight_type(const GgufModel *m) {
    return m->layers ? ggml_type_name(m->layers[0].wq.type) : "F32";
}

const ModelConfig *gguf_model_config(const GgufModel *m) {
    return &m->config;
}

float *gguf_model_logits(const GgufModel *m) {
    return m->logits;
}

void gguf_model_describe(const GgufModel *m, char *out, size_t n) {
    int at = snprintf(out, n, "GGUF, arch %s, tensors %s (mostly)", gguf_model_arch_name(m),
                      gguf_model_weight_type(m));
    if (m->file.n_pieces > 1 && at >= 0 && (size_t)at < n)
        snprintf(out + at, n - (size_t)at, ", split in %u pieces", m->file.n_pieces);
}
