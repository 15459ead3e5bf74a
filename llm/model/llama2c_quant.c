/* llama2c_quant.c - int8 copies of an fp32 model's matrices, made at load
 * time so the matmuls can run on integer dot products (MATMUL_Q8_INT). The
 * copies use the version 2 layout (each layer's values, then its scales), so
 * the forward pass reads them exactly like a version 2 file. */
#include "lib/format.h"
#include "lib/stdlib.h"
#include "lib/string.h"
#include "llm/tensor/quant.h"
#include "llm/model/llama2c.h"

/* Bytes of one layer's int8 values plus scales; 0 on overflow. */
static uint64_t quant_stride(uint64_t numel, int group_size) {
    uint64_t scale_bytes = numel / (uint64_t)group_size * 4, stride;
    if (__builtin_add_overflow(numel, scale_bytes, &stride)) return 0;
    return stride;
}

/* Quantises `layers` consecutive (numel)-value tensors from src into *dst and
 * describes them in qt; advances *dst. */
static void quantize_tensor(QuantTensor *qt, uint8_t **dst, const float *src, int layers, uint64_t numel,
                            int group_size) {
    uint64_t stride = quant_stride(numel, group_size);
    qt->q = (const int8_t *)*dst;
    qt->s = (const float *)(*dst + numel);
    qt->layer_stride = (size_t)stride;
    for (int l = 0; l < layers; l++) {
        uint8_t *at = *dst + (size_t)l * stride;
        quant_weights((int8_t *)at, (float *)(at + numel), src + (size_t)l * numel, (size_t)numel,
                      group_size);
    }
    *dst += (size_t)layers * stride;
}

int llama2c_quantize(Llama2cModel *t, int group_size, char *err, size_t err_size) {
    const ModelConfig *c = &t->config;
    if (!t->state.block) {
        snprintf(err, err_size, "quantize: no model loaded");
        return -1;
    }
    if (t->matmul_path != MATMUL_FP32 || c->version == 2) {
        snprintf(err, err_size, "quantize: the model already has int8 weights");
        return -1;
    }
    if (!quant_group_supported(group_size)) {
        snprintf(err, err_size, "quantize: group size %d unsupported (a multiple of %d from %d to %d)",
                 group_size, QUANT_GROUP_STEP, QUANT_GROUP_STEP, QUANT_MAX_GROUP);
        return -1;
    }
    if (c->dim % group_size != 0 || c->hidden_dim % group_size != 0) {
        snprintf(err, err_size, "quantize: dim %d and hidden_dim %d must be multiples of the group size %d",
                 c->dim, c->hidden_dim, group_size);
        return -1;
    }
    uint64_t L = c->n_layers, D = c->dim, H = c->hidden_dim, KV = c->kv_dim, V = c->vocab_size;
    uint64_t s_qo = quant_stride(D * D, group_size), s_kv = quant_stride(D * KV, group_size);
    uint64_t s_ffn = quant_stride(D * H, group_size), s_cls = quant_stride(V * D, group_size);
    uint64_t total = 0;
    int overflow = !s_qo || !s_kv || !s_ffn || !s_cls;
    uint64_t parts[] = {s_qo, s_qo, s_kv, s_kv, s_ffn, s_ffn, s_ffn};
    for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++) {
        uint64_t bytes;
        if (__builtin_mul_overflow(parts[i], L, &bytes) || __builtin_add_overflow(total, bytes, &total))
            overflow = 1;
    }
    if (__builtin_add_overflow(total, s_cls, &total) || total > (uint64_t)SIZE_MAX - 64) overflow = 1;
    if (overflow) {
        snprintf(err, err_size, "quantize: model too large for this machine");
        return -1;
    }
    void *block = malloc((size_t)total + 64);
    if (!block) {
        snprintf(err, err_size, "quantize: out of memory: the int8 weights need %llu bytes",
                 (unsigned long long)total + 64);
        return -1;
    }
    Llama2cWeights *w = &t->weights;
    uint8_t *dst = (uint8_t *)(((uintptr_t)block + 63) & ~(uintptr_t)63);
    quantize_tensor(&w->wq_q, &dst, w->wq, c->n_layers, D * D, group_size);
    quantize_tensor(&w->wk_q, &dst, w->wk, c->n_layers, D * KV, group_size);
    quantize_tensor(&w->wv_q, &dst, w->wv, c->n_layers, D * KV, group_size);
    quantize_tensor(&w->wo_q, &dst, w->wo, c->n_layers, D * D, group_size);
    quantize_tensor(&w->w1_q, &dst, w->w1, c->n_layers, D * H, group_size);
    quantize_tensor(&w->w2_q, &dst, w->w2, c->n_layers, D * H, group_size);
    quantize_tensor(&w->w3_q, &dst, w->w3, c->n_layers, D * H, group_size);
    /* Shared classifier: quantise the embedding as the classifier; the
     * embedding lookup keeps the fp32 table. */
    quantize_tensor(&w->wcls_q, &dst, w->wcls, 1, V * D, group_size);
    t->quant_block = block;
    t->quant_bytes = (size_t)total + 64;
    t->quant_group_size = group_size;
    t->matmul_path = MATMUL_Q8_INT;
    return 0;
}

int llama2c_is_quantized(const Llama2cModel *t) {
    return t->matmul_path != MATMUL_FP32;
}

const char *llama2c_matmul_name(const Llama2cModel *t) {
    switch (t->matmul_path) {
    case MATMUL_FP32:
        return "fp32";
    case MATMUL_Q8_FP32_ACT:
        return "int8 weights, fp32 activations";
    case MATMUL_Q8_INT:
        return "int8 x int8";
    }
    return "unknown";
}
