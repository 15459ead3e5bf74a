/* gguf_state.c - a GGUF model's run state (the per-position arrays of a
 * prefill batch, attention scores, logits) and its KV cache, of the type
 * chosen at run time; their sizes for the memory estimate. */
#include "lib/arena.h"
#include "lib/format.h"
#include "lib/math.h"
#include "lib/stdlib.h"
#include "lib/string.h"
#include "llm/model/arch_gemma3.h"
#include "llm/model/gguf_model.h"
#include "llm/compute/kernels.h"
#include "llm/model/kv_cache.h"
#include "llm/model/sliding_window.h"
#include "llm/model/gguf_runtime.h"

/* Per-position arrays, m->prefill_rows rows each (gguf_prefill_rows): x, xb, xb2 (wide),
 * hb, hb2 (hidden), q, k, v, rope cos/sin, and the quantised activations;
 * then att, logits, one dequantised row and the RoPE pair frequencies. The
 * KV cache is an allocation of its own (a type change re-creates it). */
#define STATE_ARRAYS 20    /* takes below, each may waste up to 63 bytes aligning; 3 also shifted */
#define KV_ALIGN_SLACK 128 /* the keys and the values each start on 64 bytes */

/* Rows of attention weights, seq_len floats each: one per query head, and
 * at least ATTEND_TILE per key/value head for a tiled kernel's queries
 * (the group of key/value head kv owns rows kv * (rows / kv heads) on). */
static uint64_t attention_rows(uint64_t heads, uint64_t q_dim, uint64_t kv_dim) {
    uint64_t kv_heads = q_dim ? kv_dim * heads / q_dim : heads;
    return kv_heads * ATTEND_TILE > heads ? kv_heads * ATTEND_TILE : heads;
}

/* count items of size bytes on 64 bytes plus shift (see gguf_run_state_create). */
static void *take_shifted(Arena *a, uint64_t count, uint64_t size, uint64_t shift) {
    return (uint8_t *)arena_take(a, count * size + shift, 1, 64) + shift;
}

static uint64_t state_block_bytes(uint64_t dim, uint64_t hidden, uint64_t q_dim, uint64_t kv_dim,
                                  uint64_t heads, uint64_t seq_len, uint64_t vocab, uint64_t n_rot,
                                  uint64_t rows) {
    uint64_t wide = dim > hidden ? dim : hidden;
    if (q_dim > wide) wide = q_dim;
    if (wide > ((uint64_t)1 << 24) || vocab > ((uint64_t)1 << 24)) return 0;
    uint64_t per_position = 3 * wide + 2 * hidden + q_dim + 2 * kv_dim + 2 * n_rot;
    uint64_t act = (wide / 32 + 1) * sizeof(BlockQ8A) + (wide / 256 + 1) * sizeof(BlockQ8K);
    uint64_t floats = rows * per_position + attention_rows(heads, q_dim, kv_dim) * seq_len + vocab + wide +
                      2 * (n_rot / 2 + 1);
    return floats * 4 + rows * act + 64 * (STATE_ARRAYS + 1);
}

uint64_t gguf_kv_cache_bytes(uint64_t layers, uint64_t seq_len, uint64_t kv_dim, uint32_t kv_type) {
    return gguf_kv_cache_bytes_swa(layers, seq_len, kv_dim, kv_type, 0, 0);
}

uint64_t gguf_state_bytes(uint64_t dim, uint64_t hidden, uint64_t q_dim, uint64_t kv_dim, uint64_t heads,
                          uint64_t layers, uint64_t seq_len, uint64_t vocab, uint64_t n_rot, uint32_t kv_type,
                          int window, int pattern, int prefill_rows) {
    uint64_t block =
        state_block_bytes(dim, hidden, q_dim, kv_dim, heads, seq_len, vocab, n_rot, (uint64_t)prefill_rows);
    uint64_t cache = gguf_kv_cache_bytes_swa(layers, seq_len, kv_dim, kv_type, window, pattern);
    return block && cache ? block + cache + KV_ALIGN_SLACK : 0;
}

static void free_kv(GgufModel *m) {
    free(m->kv_block);
    m->kv_block = NULL, m->key_cache = m->value_cache = NULL, m->kv_bytes = 0;
}

/* 0 when this model's KV cache can hold `type`, else -1 with the reason. */
static int kv_type_usable(const GgufModel *m, uint32_t type, char *err, size_t n) {
    if (kv_row_bytes(type, (uint64_t)m->config.kv_dim) == 0 && type != GGML_TYPE_Q8_0) {
        snprintf(err, n, "KV type %u is not f32, f16 or q8_0", type);
        return -1;
    }
    /* q8_0 blocks must not straddle heads: each head is read on its own. */
    if (type == GGML_TYPE_Q8_0 && m->config.head_size % QK32) {
        snprintf(err, n, "a q8_0 KV cache needs a head size that is a multiple of 32 (this model's: %d)",
                 m->config.head_size);
        return -1;
    }
    return 0;
}

/* The KV cache of this type (nothing allocated when it is refused). */
static int alloc_kv(GgufModel *m, uint32_t type, char *err, size_t n) {
    const ModelConfig *c = &m->config;
    if (kv_type_usable(m, type, err, n)) return -1;
    gguf_kv_layout(m);
    uint64_t bytes = gguf_kv_cache_bytes_swa((uint64_t)c->n_layers, (uint64_t)c->seq_len, (uint64_t)c->kv_dim,
                                             type, m->swa_window, m->swa_pattern);
    if (bytes == 0 || bytes > (uint64_t)SIZE_MAX / 2) {
        snprintf(err, n, "gguf: the %s KV cache is too large", kv_type_name(type));
        return -1;
    }
    /* Not cleared: attention reads only the positions written before. */
    uint8_t *block = malloc((size_t)bytes + KV_ALIGN_SLACK);
    if (!block) {
        snprintf(err, n, "out of memory: the %s KV cache needs %llu MiB", kv_type_name(type),
                 (unsigned long long)(bytes >> 20));
        return -1;
    }
    m->kv_block = block;
    m->kv_bytes = (size_t)bytes + KV_ALIGN_SLACK;
    m->kv_type = type;
    m->kv_head_bytes = (size_t)kv_row_bytes(type, (uint64_t)c->head_size);
    m->key_cache = (uint8_t *)(((uintptr_t)block + 63) & ~(uintptr_t)63);
    m->value_cache = (uint8_t *)(((uintptr_t)m->key_cache + (size_t)bytes / 2 + 63) & ~(uintptr_t)63);
    return 0;
}

int gguf_model_kv_type_check(const GgufModel *m, uint32_t kv_type, char *err, size_t err_size) {
    return kv_type_usable(m, kv_type, err, err_size);
}

int gguf_model_set_kv_type(GgufModel *m, uint32_t kv_type, char *err, size_t err_size) {
    if (gguf_model_kv_type_check(m, kv_type, err, err_size)) return -1;
    if (kv_type == m->kv_type && m->key_cache) return 0;
    uint32_t old = m->kv_type;
    free_kv(m);
    int ok = alloc_kv(m, kv_type, err, err_size) == 0;
    if (!ok && alloc_kv(m, old, NULL, 0) != 0) {
        size_t len = strlen(err);
        snprintf(err + len, err_size - len, "; no KV cache is left (load the model again)");
    }
    return ok ? 0 : -1;
}

uint32_t gguf_model_kv_type(const GgufModel *m) {
    return m->kv_type;
}

/* Each rotated pair's frequency, once: base^(-2i/n_rot), divided by
 * Llama 3's rope_freqs factor when the file has them. */
void gguf_rope_frequencies(GgufModel *m) {
    for (int i = 0; i < m->n_rot / 2; i++) {
        m->rope_freq[i] = powf(m->config.rope_theta, -(float)(2 * i) / (float)m->n_rot);
        if (m->rope_freqs) m->rope_freq[i] /= m->rope_freqs[i];
        /* gemma3's local (sliding-window) layers have their own base */
        m->rope_freq_local[i] = powf(m->rope_base_local, -(float)(2 * i) / (float)m->n_rot);
    }
}

int gguf_run_state_create(GgufModel *m, char *err, size_t n) {
    const ModelConfig *c = &m->config;
    const GTensor *wq = c->n_layers > 0 ? &m->layers[0].wq : NULL;
    m->prefill_rows = gguf_prefill_rows(wq ? wq->type : GGML_TYPE_LIMIT);
    uint64_t bytes =
        state_block_bytes((uint64_t)c->dim, (uint64_t)c->hidden_dim, (uint64_t)m->q_dim, (uint64_t)c->kv_dim,
                          (uint64_t)c->n_heads, (uint64_t)c->seq_len, (uint64_t)c->vocab_size,
                          (uint64_t)m->n_rot, (uint64_t)m->prefill_rows);
    if (bytes == 0 || bytes > (uint64_t)SIZE_MAX / 2) {
        snprintf(err, n, "gguf: run state too large");
        return -1;
    }
    uint8_t *block = malloc((size_t)bytes);
    if (!block) {
        snprintf(err, n, "out of memory: the run state needs %llu bytes", (unsigned long long)bytes);
        return -1;
    }
    memset(block, 0, (size_t)bytes);
    m->state_block = block;
    m->state_bytes = (size_t)bytes;
    m->wide = c->dim > c->hidden_dim ? c->dim : c->hidden_dim;
    if (m->q_dim > m->wide) m->wide = m->q_dim;
    m->act_a_blocks = m->wide / 32 + 1;
    m->act_k_blocks = m->wide / 256 + 1;
    const uint64_t B = (uint64_t)m->prefill_rows;
    /* The fp32 matmuls' inputs (x, xb, hb) start as far into a cache line
     * as the fp32 weights (GGUF aligns tensors to 32 bytes), so the
     * AVX-512 matmul reads both on line boundaries (llm/compute/avx512/f32_avx512.c). */
    uint64_t shift = wq && wq->type == GGML_TYPE_F32 && ((uintptr_t)wq->data & 63) == 32 ? 32 : 0;
    Arena a = {(uint8_t *)(((uintptr_t)block + 63) & ~(uintptr_t)63), 0, 0};
    m->x = take_shifted(&a, B * m->wide, sizeof(float), shift);
    m->xb = take_shifted(&a, B * m->wide, sizeof(float), shift);
    m->xb2 = arena_take(&a, B * m->wide, sizeof(float), 64);
    m->hb = take_shifted(&a, B * c->hidden_dim, sizeof(float), shift);
    m->hb2 = arena_take(&a, B * c->hidden_dim, sizeof(float), 64);
    m->q = arena_take(&a, B * m->q_dim, sizeof(float), 64);
    m->k = arena_take(&a, B * c->kv_dim, sizeof(float), 64);
    m->v = arena_take(&a, B * c->kv_dim, sizeof(float), 64);
    m->rope_cs = arena_take(&a, B * m->n_rot, sizeof(float), 64);
    m->act_a = arena_take(&a, B * m->act_a_blocks, sizeof(BlockQ8A), 64);
    m->act_k = arena_take(&a, B * m->act_k_blocks, sizeof(BlockQ8K), 64);
    m->att = arena_take(
        &a, attention_rows((uint64_t)c->n_heads, (uint64_t)m->q_dim, (uint64_t)c->kv_dim) * c->seq_len,
        sizeof(float), 64);
    m->logits = arena_take(&a, c->vocab_size, sizeof(float), 64);
    m->row = arena_take(&a, m->wide, sizeof(float), 64);
    m->rope_freq = arena_take(&a, m->n_rot / 2 + 1, sizeof(float), 64);
    m->rope_cs_local = arena_take(&a, B * m->n_rot, sizeof(float), 64);
    m->rope_freq_local = arena_take(&a, m->n_rot / 2 + 1, sizeof(float), 64);
    gguf_rope_frequencies(m);
    return alloc_kv(m, KV_TYPE_DEFAULT, err, n);
}

void gguf_run_state_destroy(GgufModel *m) {
    free(m->state_block);
    m->state_block = NULL;
    free_kv(m);
}

uint64_t gguf_model_kv_bytes(const GgufModel *m) {
    return m->key_cache ? m->kv_bytes - KV_ALIGN_SLACK : 0;
}

size_t gguf_model_state_bytes(const GgufModel *m) {
    return m->state_bytes + m->kv_bytes;
}
