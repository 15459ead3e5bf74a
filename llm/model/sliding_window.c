/* sliding_window.c - which layers are local, and the slots their KV cache
 * keeps (see sliding_window.h). */
#include "llm/model/sliding_window.h"

#include "llm/model/arch_gemma3.h"
#include "llm/model/kv_cache.h"
#include "llm/model/gguf_runtime.h"

int swa_layer_is_local(int window, int pattern, int layer) {
    return window > 0 && (pattern == 0 || layer % pattern < pattern - 1);
}

int swa_ring_positions(int seq_len, int window) {
    int ring = window + GGUF_PREFILL_WINDOW_MAX - 1; /* a batch of up to GGUF_PREFILL_WINDOW_MAX rows */
    /* The ring plus its mirror must save memory, or it is not worth it. */
    return window > 0 && (int64_t)ring + window - 1 < seq_len ? ring : 0;
}

int swa_layer_slots(int seq_len, int window, int pattern, int layer) {
    int ring = swa_ring_positions(seq_len, window);
    return ring && swa_layer_is_local(window, pattern, layer) ? ring + window - 1 : seq_len;
}

uint64_t swa_cache_positions(uint64_t layers, uint64_t seq_len, int window, int pattern) {
    uint64_t total = 0;
    if (seq_len > (1u << 30)) return 0;
    for (uint64_t l = 0; l < layers; l++)
        total += (uint64_t)swa_layer_slots((int)seq_len, window, pattern, (int)l);
    return total;
}

uint64_t gguf_kv_cache_bytes_swa(uint64_t layers, uint64_t seq_len, uint64_t kv_dim, uint32_t kv_type,
                                 int window, int pattern) {
    uint64_t row = kv_row_bytes(kv_type, kv_dim);
    if (layers * seq_len * kv_dim > ((uint64_t)1 << 40)) return 0;
    return 2 * swa_cache_positions(layers, seq_len, window, pattern) * row;
}

/* ------------------------------------------------ the model's KV cache */

uint64_t gguf_kv_layout(GgufModel *m) {
    const ModelConfig *c = &m->config;
    uint64_t row = 0;
    for (int l = 0; l < c->n_layers; l++) {
        GLayer *L = &m->layers[l];
        L->local = swa_layer_is_local(m->swa_window, m->swa_pattern, l);
        L->kv_ring = L->local ? swa_ring_positions(c->seq_len, m->swa_window) : 0;
        L->kv_slots = swa_layer_slots(c->seq_len, m->swa_window, m->swa_pattern, l);
        L->kv_row0 = (size_t)row;
        row += (uint64_t)c->n_kv_heads * (uint64_t)L->kv_slots;
    }
    return row;
}

void kv_store_position(GgufModel *m, int layer, int pos, const float *k, const float *v) {
    const ModelConfig *c = &m->config;
    const GLayer *L = &m->layers[layer];
    int slot = L->kv_ring ? pos % L->kv_ring : pos;
    /* The mirror: the ring's first window - 1 slots again after it. */
    int slots[2] = {slot, slot + L->kv_ring};
    int copies = L->kv_ring && slot < m->swa_window - 1 ? 2 : 1;
    for (int kv = 0; kv < c->n_kv_heads; kv++)
        for (int i = 0; i < copies; i++) {
            size_t at = kv_offset(m, layer, kv, slots[i]);
            kv_store_row(m->kv_type, m->key_cache + at, k + (size_t)kv * c->head_size, c->head_size);
            kv_store_row(m->kv_type, m->value_cache + at, v + (size_t)kv * c->head_size, c->head_size);
        }
}

int kv_visible(const GgufModel *m, int layer, int pos, int *first_slot) {
    const GLayer *L = &m->layers[layer];
    int first = L->local && pos >= m->swa_window ? pos - m->swa_window + 1 : 0;
    *first_slot = L->kv_ring ? first % L->kv_ring : first;
    return pos - first + 1;
}
