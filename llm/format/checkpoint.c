/* checkpoint.c - llama2.c checkpoint formats, parsed in place.
 *
 * Legacy (v0): seven int32 (dim, hidden_dim, n_layers, n_heads, n_kv_heads,
 *   vocab_size, seq_len; negative vocab_size = separate classifier), then fp32
 *   token_embedding, rms_att, wq, wk, wv, wo, rms_ffn, w1, w2, w3, rms_final,
 *   freq_cis_real, freq_cis_imag (skipped), [wcls].
 * ak42 version 1: 256-byte header (magic, version, the seven params, uint8
 *   shared_classifier), then fp32 rms_att, rms_ffn, rms_final, token_embedding,
 *   wq, wk, wv, wo, w1, w2, w3, [wcls].
 * ak42 version 2: as version 1 plus int32 group_size after the flag; the fp32
 *   norms, then each tensor (each layer's separately) as int8 values followed by
 *   fp32 scales, one per group_size values of the flattened tensor. */
#include <stdint.h>

#include "lib/format.h"
#include "lib/string.h"
#include "llm/format/checkpoint.h"

/* Sanity limits: far above any model this runs, low enough that no size
 * computed from them can overflow an int index in one matrix row. */
#define MAX_DIM (1 << 16)
#define MAX_HIDDEN (1 << 18)
#define MAX_LAYERS 1024
#define MAX_VOCAB (1 << 20)
#define MAX_SEQ (1 << 20)
#define MAX_GROUP (1 << 16)

/* Walks the file layout computing byte offsets; any overflow is sticky. */
typedef struct {
    uint64_t offset;
    int overflow;
} Cursor;

static uint64_t cursor_take(Cursor *c, uint64_t count, uint64_t elem_size) {
    uint64_t at = c->offset, bytes, end;
    if (__builtin_mul_overflow(count, elem_size, &bytes) || __builtin_add_overflow(at, bytes, &end)) {
        c->overflow = 1;
        return 0;
    }
    c->offset = end;
    return at;
}

static uint64_t product3(uint64_t a, uint64_t b, uint64_t c, int *overflow) {
    uint64_t ab, abc;
    if (__builtin_mul_overflow(a, b, &ab) || __builtin_mul_overflow(ab, c, &abc)) {
        *overflow = 1;
        return 0;
    }
    return abc;
}

static int32_t read_i32(const uint8_t *p) {
    int32_t v;
    memcpy(&v, p, 4);
    return v;
}

static int validate_config(const ModelConfig *c, char *err, size_t err_size) {
    const char *what = NULL;
    long value = 0, limit = 0;
#define CHECK_RANGE(field, max)                                                                              \
    if (!what && (c->field <= 0 || c->field > (max))) {                                                      \
        what = #field;                                                                                       \
        value = c->field;                                                                                    \
        limit = (max);                                                                                       \
    }
    CHECK_RANGE(dim, MAX_DIM)
    CHECK_RANGE(hidden_dim, MAX_HIDDEN)
    CHECK_RANGE(n_layers, MAX_LAYERS)
    CHECK_RANGE(n_heads, MAX_DIM)
    CHECK_RANGE(n_kv_heads, MAX_DIM)
    CHECK_RANGE(vocab_size, MAX_VOCAB)
    CHECK_RANGE(seq_len, MAX_SEQ)
#undef CHECK_RANGE
    if (what) {
        snprintf(err, err_size, "bad checkpoint header: %s = %ld (must be 1..%ld)", what, value, limit);
        return -1;
    }
    if (c->dim % c->n_heads != 0) {
        snprintf(err, err_size, "bad checkpoint header: n_heads %d does not divide dim %d", c->n_heads,
                 c->dim);
        return -1;
    }
    if (c->n_kv_heads > c->n_heads || c->n_heads % c->n_kv_heads != 0) {
        snprintf(err, err_size, "bad checkpoint header: n_kv_heads %d does not divide n_heads %d",
                 c->n_kv_heads, c->n_heads);
        return -1;
    }
    if ((c->dim / c->n_heads) % 2 != 0) {
        snprintf(err, err_size, "bad checkpoint header: head size %d is odd (RoPE needs pairs)",
                 c->dim / c->n_heads);
        return -1;
    }
    if (c->version == 2 && (c->group_size <= 0 || c->group_size > MAX_GROUP)) {
        snprintf(err, err_size, "bad checkpoint header: group_size = %d (must be 1..%d)", c->group_size,
                 MAX_GROUP);
        return -1;
    }
    return 0;
}

/* Offsets of every tensor, computed before any pointer is formed. */
typedef struct {
    uint64_t emb, rms_att, rms_ffn, rms_final, wq, wk, wv, wo, w1, w2, w3, wcls;
    /* version 2: bytes per layer of each quantised tensor (values + scales) */
    uint64_t stride_emb, stride_q, stride_kv, stride_o, stride_ffn, stride_cls;
} Layout;

static int fp32_layout(const ModelConfig *c, Cursor *cur, Layout *lay) {
    uint64_t L = c->n_layers, D = c->dim, H = c->hidden_dim, V = c->vocab_size, KV = c->kv_dim;
    int of = 0;
    uint64_t n_qo = product3(L, D, D, &of), n_kv = product3(L, D, KV, &of), n_ffn = product3(L, D, H, &of);
    uint64_t n_emb = product3(V, D, 1, &of), n_norm = product3(L, D, 1, &of);
    uint64_t n_freq = product3(c->seq_len, c->head_size / 2, 1, &of);
    if (c->version == 0) {
        lay->emb = cursor_take(cur, n_emb, 4);
        lay->rms_att = cursor_take(cur, n_norm, 4);
        lay->wq = cursor_take(cur, n_qo, 4);
        lay->wk = cursor_take(cur, n_kv, 4);
        lay->wv = cursor_take(cur, n_kv, 4);
        lay->wo = cursor_take(cur, n_qo, 4);
        lay->rms_ffn = cursor_take(cur, n_norm, 4);
        lay->w1 = cursor_take(cur, n_ffn, 4);
        lay->w2 = cursor_take(cur, n_ffn, 4);
        lay->w3 = cursor_take(cur, n_ffn, 4);
        lay->rms_final = cursor_take(cur, D, 4);
        cursor_take(cur, n_freq, 4); /* freq_cis_real: RoPE is recomputed */
        cursor_take(cur, n_freq, 4); /* freq_cis_imag */
    } else {
        lay->rms_att = cursor_take(cur, n_norm, 4);
        lay->rms_ffn = cursor_take(cur, n_norm, 4);
        lay->rms_final = cursor_take(cur, D, 4);
        lay->emb = cursor_take(cur, n_emb, 4);
        lay->wq = cursor_take(cur, n_qo, 4);
        lay->wk = cursor_take(cur, n_kv, 4);
        lay->wv = cursor_take(cur, n_kv, 4);
        lay->wo = cursor_take(cur, n_qo, 4);
        lay->w1 = cursor_take(cur, n_ffn, 4);
        lay->w2 = cursor_take(cur, n_ffn, 4);
        lay->w3 = cursor_take(cur, n_ffn, 4);
    }
    lay->wcls = c->shared_classifier ? lay->emb : cursor_take(cur, n_emb, 4);
    return of ? -1 : 0;
}

/* One int8 tensor per layer (count of them), each numel values + scales. */
static uint64_t quant_take(Cursor *cur, uint64_t count, uint64_t numel, int group_size, uint64_t *stride,
                           int *bad_group) {
    if (numel % (uint64_t)group_size != 0) *bad_group = 1;
    uint64_t scales = numel / (uint64_t)group_size, scale_bytes = 0;
    if (__builtin_mul_overflow(scales, 4, &scale_bytes) || __builtin_add_overflow(numel, scale_bytes, stride))
        cur->overflow = 1;
    return cursor_take(cur, count, *stride);
}

static int quant_layout(const ModelConfig *c, Cursor *cur, Layout *lay, char *err, size_t err_size) {
    uint64_t L = c->n_layers, D = c->dim, H = c->hidden_dim, V = c->vocab_size, KV = c->kv_dim;
    int gs = c->group_size, bad_group = 0;
    lay->rms_att = cursor_take(cur, L * D, 4);
    lay->rms_ffn = cursor_take(cur, L * D, 4);
    lay->rms_final = cursor_take(cur, D, 4);
    lay->emb = quant_take(cur, 1, V * D, gs, &lay->stride_emb, &bad_group);
    lay->wq = quant_take(cur, L, D * D, gs, &lay->stride_q, &bad_group);
    lay->wk = quant_take(cur, L, D * KV, gs, &lay->stride_kv, &bad_group);
    lay->wv = quant_take(cur, L, D * KV, gs, &lay->stride_kv, &bad_group);
    lay->wo = quant_take(cur, L, D * D, gs, &lay->stride_o, &bad_group);
    lay->w1 = quant_take(cur, L, D * H, gs, &lay->stride_ffn, &bad_group);
    lay->w2 = quant_take(cur, L, D * H, gs, &lay->stride_ffn, &bad_group);
    lay->w3 = quant_take(cur, L, D * H, gs, &lay->stride_ffn, &bad_group);
    if (c->shared_classifier) {
        lay->wcls = lay->emb;
        lay->stride_cls = lay->stride_emb;
    } else {
        lay->wcls = quant_take(cur, 1, V * D, gs, &lay->stride_cls, &bad_group);
    }
    if (bad_group) {
        snprintf(err, err_size, "bad checkpoint header: group_size %d does not divide every tensor size", gs);
        return -1;
    }
    return 0;
}

static int parse_header(ModelConfig *c, const uint8_t *p, size_t size, uint64_t *header_bytes, char *err,
                        size_t err_size) {
    memset(c, 0, sizeof(*c));
    if (size < CHECKPOINT_HEADER_V0) {
        snprintf(err, err_size, "checkpoint truncated: %zu bytes is too small for a header", size);
        return -1;
    }
    const uint8_t *params;
    if ((uint32_t)read_i32(p) == CHECKPOINT_MAGIC) {
        if (size < CHECKPOINT_HEADER_AK42) {
            snprintf(err, err_size, "checkpoint truncated: needs %d header bytes, file has %zu",
                     CHECKPOINT_HEADER_AK42, size);
            return -1;
        }
        c->version = read_i32(p + 4);
        if (c->version != 1 && c->version != 2) {
            snprintf(err, err_size, "unsupported checkpoint version %d (expected 1 or 2)", c->version);
            return -1;
        }
        params = p + 8;
        c->shared_classifier = p[36] != 0;
        if (c->version == 2) c->group_size = read_i32(p + 37);
        *header_bytes = CHECKPOINT_HEADER_AK42;
    } else {
        c->version = 0;
        params = p;
        *header_bytes = CHECKPOINT_HEADER_V0;
    }
    c->dim = read_i32(params);
    c->hidden_dim = read_i32(params + 4);
    c->n_layers = read_i32(params + 8);
    c->n_heads = read_i32(params + 12);
    c->n_kv_heads = read_i32(params + 16);
    c->vocab_size = read_i32(params + 20);
    c->seq_len = read_i32(params + 24);
    if (c->version == 0) {
        c->shared_classifier = c->vocab_size > 0;
        if (c->vocab_size < 0 && c->vocab_size != INT32_MIN) c->vocab_size = -c->vocab_size;
    }
    if (validate_config(c, err, err_size) != 0) return -1;
    c->head_size = c->dim / c->n_heads;
    c->kv_dim = c->dim / c->n_heads * c->n_kv_heads;
    return 0;
}

static const float *fp32_at(const uint8_t *base, uint64_t offset, int *misaligned) {
    const uint8_t *p = base + offset;
    if ((uintptr_t)p % 4 != 0) *misaligned = 1;
    return (const float *)p;
}

static QuantTensor quant_at(const uint8_t *base, uint64_t offset, uint64_t stride, int group_size,
                            int *misaligned) {
    QuantTensor t;
    uint64_t numel = (stride / (4 + group_size)) * group_size; /* stride = numel + 4 * numel / gs */
    t.q = (const int8_t *)(base + offset);
    t.s = fp32_at(base, offset + numel, misaligned);
    t.layer_stride = stride;
    if (stride % 4 != 0) *misaligned = 1;
    return t;
}

int checkpoint_parse(ModelConfig *cfg, Llama2cWeights *w, const void *data, size_t size, char *err,
                     size_t err_size) {
    const uint8_t *base = data;
    uint64_t header_bytes = 0;
    memset(w, 0, sizeof(*w));
    if (!data) {
        snprintf(err, err_size, "no checkpoint data");
        return -1;
    }
    if (parse_header(cfg, base, size, &header_bytes, err, err_size) != 0) return -1;

    Cursor cur = {header_bytes, 0};
    Layout lay;
    memset(&lay, 0, sizeof(lay));
    if (cfg->version == 2) {
        if (quant_layout(cfg, &cur, &lay, err, err_size) != 0) return -1;
    } else if (fp32_layout(cfg, &cur, &lay) != 0) {
        cur.overflow = 1;
    }
    if (cur.overflow) {
        snprintf(err, err_size, "bad checkpoint header: model size overflows 64 bits");
        return -1;
    }
    if (cur.offset > size) {
        snprintf(err, err_size, "checkpoint truncated: needs %llu bytes, file has %zu",
                 (unsigned long long)cur.offset, size);
        return -1;
    }
    if (cur.offset < size) {
        snprintf(err, err_size, "checkpoint size mismatch: header implies %llu bytes, file has %zu",
                 (unsigned long long)cur.offset, size);
        return -1;
    }

    int misaligned = 0;
    w->rms_att = fp32_at(base, lay.rms_att, &misaligned);
    w->rms_ffn = fp32_at(base, lay.rms_ffn, &misaligned);
    w->rms_final = fp32_at(base, lay.rms_final, &misaligned);
    if (cfg->version == 2) {
        int gs = cfg->group_size;
        w->token_embedding_q = quant_at(base, lay.emb, lay.stride_emb, gs, &misaligned);
        w->wq_q = quant_at(base, lay.wq, lay.stride_q, gs, &misaligned);
        w->wk_q = quant_at(base, lay.wk, lay.stride_kv, gs, &misaligned);
        w->wv_q = quant_at(base, lay.wv, lay.stride_kv, gs, &misaligned);
        w->wo_q = quant_at(base, lay.wo, lay.stride_o, gs, &misaligned);
        w->w1_q = quant_at(base, lay.w1, lay.stride_ffn, gs, &misaligned);
        w->w2_q = quant_at(base, lay.w2, lay.stride_ffn, gs, &misaligned);
        w->w3_q = quant_at(base, lay.w3, lay.stride_ffn, gs, &misaligned);
        w->wcls_q = quant_at(base, lay.wcls, lay.stride_cls, gs, &misaligned);
    } else {
        w->token_embedding = fp32_at(base, lay.emb, &misaligned);
        w->wq = fp32_at(base, lay.wq, &misaligned);
        w->wk = fp32_at(base, lay.wk, &misaligned);
        w->wv = fp32_at(base, lay.wv, &misaligned);
        w->wo = fp32_at(base, lay.wo, &misaligned);
        w->w1 = fp32_at(base, lay.w1, &misaligned);
        w->w2 = fp32_at(base, lay.w2, &misaligned);
        w->w3 = fp32_at(base, lay.w3, &misaligned);
        w->wcls = fp32_at(base, lay.wcls, &misaligned);
    }
    if (misaligned) {
        memset(w, 0, sizeof(*w));
        snprintf(
            err, err_size,
            "checkpoint misaligned: fp32 weights must sit at 4-byte-aligned addresses (load the file at an "
            "aligned address%s)",
            cfg->version == 2 ? "; group_size must be a multiple of 4" : "");
        return -1;
    }
    return 0;
}
